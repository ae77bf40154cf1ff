"""ELU, SELU and CELU on NumPy (one reference, ``dparray.ops.activations.Elu``): the
reference's arithmetic in compiled passes.

The reference's ``expm1`` is libm's, one element at a time, on CPUs without AVX-512 (float32:
11 ns an element on an AVX2 EPYC), and it takes seven NumPy passes forward and six backward:
ELU forward and backward over 4096 x 512 float32 took 72-74 ms, against PyTorch's 6 (``python
-m bench.activations``). Here forward is one compiled pass; backward is one for the negative
side, NumPy's ``exp`` of it sliced over the cores (``_core_split``), and one more.

Float64 takes libm's ``expm1`` inside the loop, so values are the reference's to the bit.
Float32 takes ``expm1`` computed in float64 and rounded once (``_numba_loops.exp_minus_one``),
within an ulp of libm's float32 ``expm1``: a float32 value is within an ulp or two of the
reference's (docs/decisions.md). Gradients need no ``expm1`` and are the reference's to the bit
in both types. The kernel saves what the reference saves, so ``create_graph`` replays it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dparray.ops.activations import Elu

from ._core_split import exp
from ._fallback import Fallback, finite_in, floating
from ._numba_setup import loops as _loops


class EluKernel(Fallback, Elu):
    """See the module docstring."""

    def forward(self, x: Any) -> Any:
        constants = (self.input_scale, self.scale, self.scale * self.alpha,
                     self.scale * self.alpha * self.input_scale)
        if not floating(x) or not finite_in(x.dtype.type, *constants):
            return self.reference_forward(x)
        kind = x.dtype.type
        flat = np.ascontiguousarray(x).reshape(-1)
        out = np.empty_like(flat)
        _loops().elu(flat, kind(self.input_scale), kind(self.scale),
                     kind(self.scale * self.alpha), kind(1), out)
        self.save(flat.reshape(x.shape))
        return out.reshape(x.shape)

    def backward(self, grad: Any) -> Any:
        (x,) = self.saved
        if self.fallback or not floating(x, grad) or grad.shape != x.shape:
            return self.reference_backward(grad)
        kind = x.dtype.type
        flat = x.reshape(-1)
        e = np.empty_like(flat)
        loops = _loops()
        loops.elu_negative_side(flat, kind(self.input_scale), kind(1), e)
        exp(e, out=e)
        out = np.empty_like(flat)
        loops.elu_backward(np.ascontiguousarray(grad).reshape(-1), flat, e, kind(self.scale),
                           kind(self.scale * self.alpha * self.input_scale), kind(1), out)
        return out.reshape(x.shape)
