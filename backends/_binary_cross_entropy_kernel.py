"""Binary cross-entropy on NumPy: the reference's arithmetic in compiled passes.

The reference (``dparray.ops.binary_cross_entropy``) takes about a dozen NumPy passes forward
(the range check, the two logarithms, the clamps and the weighted sum) and five backward.
Here the check is one compiled pass, ``log x`` is NumPy's own, sliced over the cores
(``_core_split``), and the rest is one compiled pass each way, in the arrays' type.

``log(1 - x)`` is where the time went: NumPy's ``log1p`` is libm's, one element at a time, on
CPUs without AVX-512 (float32: 18 ns an element on an AVX2 EPYC, ten times its ``log``). In
float64 the kernel takes NumPy's, so every value and gradient is the reference's to the bit.
In float32 a compiled loop computes it in float64 and rounds once
(``_numba_loops.log_one_minus_float32``): the correctly rounded logarithm, where libm's float32
``log1p`` is an ulp away for about one value in twenty, so the loss can differ from the
reference's by an ulp of that term; the input's gradient needs no logarithm and is the
reference's to the bit. On the VAE's 128 x 784 float32 probabilities the forward took 0.65 ms
instead of 1.54 (both alternated in one process), and the VAE's training step (W12) 0.82-0.86x
its time. The target's gradient, rarely asked for, is the reference's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dparray.ops.binary_cross_entropy import (
    BCE_EPSILON,
    LOG_FLOOR,
    NOT_PROBABILITIES,
    BinaryCrossEntropy,
)

from ._core_split import apply
from ._fallback import Fallback, floating
from ._numba_setup import loops as _loops


class BinaryCrossEntropyKernel(Fallback, BinaryCrossEntropy):
    """See the module docstring."""

    def forward(self, x: Any, t: Any) -> Any:
        if not floating(x, t) or x.shape != t.shape:
            return self.reference_forward(x, t)
        flat, target = x.ravel(), t.ravel()
        loops = _loops()
        if loops.outside_unit_interval(flat):
            raise ValueError(NOT_PROBABILITIES)
        self.save(x, t)
        kind = flat.dtype.type
        if flat.dtype == np.float32:
            log_rest = np.empty_like(flat)
            loops.log_one_minus_float32(flat, log_rest)
        else:
            rest = np.negative(flat)
            log_rest = apply(np.log1p, rest, rest)
        out = apply(np.log, flat, np.empty_like(flat))
        loops.binary_cross_entropy(target, out, log_rest, kind(LOG_FLOOR), kind(1), out)
        return out.reshape(x.shape)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, t = self.saved
        if self.fallback or self.needs_grad(1) or not floating(x, grad) or grad.shape != x.shape:
            return self.reference_backward(grad)
        kind = x.dtype.type
        out = np.empty(x.shape, x.dtype)
        _loops().binary_cross_entropy_backward(grad.ravel(), x.ravel(), t.ravel(), kind(1),
                                               kind(BCE_EPSILON), out.reshape(-1))
        return out, None
