"""The sigmoid, SiLU (the swish, ``x * sigmoid(x)``) and tanh on NumPy: the references'
arithmetic in compiled passes around NumPy's SIMD ``exp`` and ``tanh``.

Both start from the stable sigmoid's ``exp(-|x|)``: ``-|x|`` in one compiled pass, NumPy's
``exp`` of it sliced over the cores (``_core_split``), so every element gets the bits the
reference's ``exp`` gives it. The sigmoid is then one compiled pass each way (the reference
takes nine forward, three backward).

SiLU's reference (``dparray.ops.activations.Silu``) takes about ten NumPy passes forward -- the
stable sigmoid's ``exp(-|x|)``, its two branches and the ``where`` between them, the product --
and five backward, each over an array the size of the input: SiLU over 4096 x 512 float32
took 24 ms forward and backward against PyTorch's 3.3-3.9; here, after the exponential, the
sigmoid and the product are one more pass, and the backward one pass (4.1 ms, ``python -m
bench.activations``). The arithmetic of both kernels is the references', in the arrays' type,
so values and gradients are the references' to the bit; each saves what its reference saves,
so ``create_graph`` replays the reference.

Tanh is NumPy's ``tanh`` sliced over the cores, and its backward ``grad * (1 - t * t)`` one
compiled pass instead of three NumPy ones; below ``SERIAL_BELOW`` elements (W2's 32 x 64
layers) the reference's four calls cost less than the kernel's own, and the reference runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dparray.ops.activations import Silu
from dparray.ops.elementwise import Sigmoid, Tanh

from ._core_split import apply, exp
from ._fallback import Fallback, floating
from ._numba_setup import SERIAL_BELOW
from ._numba_setup import loops as _loops


def sigmoid_exponentials(flat: Any) -> Any:
    """``exp(-|x|)`` of a 1-d array, as the reference's stable sigmoid computes it: ``-|x|`` in
    one compiled pass, NumPy's ``exp`` of it over the cores."""
    out = np.empty_like(flat)
    _loops().negative_magnitude(flat, out)
    return exp(out, out=out)


class SigmoidKernel(Fallback, Sigmoid):
    """See the module docstring."""

    def forward(self, x: Any) -> Any:
        if not floating(x):
            return self.reference_forward(x)
        flat = np.ascontiguousarray(x).reshape(-1)
        out = sigmoid_exponentials(flat)
        _loops().sigmoid(flat, out, flat.dtype.type(1))
        out = out.reshape(x.shape)
        self.save(out)
        return out

    def backward(self, grad: Any) -> Any:
        (kept,) = self.saved
        if self.fallback or not floating(kept, grad) or grad.shape != kept.shape:
            return self.reference_backward(grad)
        out = np.empty(kept.shape, kept.dtype)
        _loops().sigmoid_backward(np.ascontiguousarray(grad).reshape(-1), kept.ravel(),
                                  kept.dtype.type(1), out.reshape(-1))
        return out


class SiluKernel(Fallback, Silu):
    """See the module docstring."""

    def forward(self, x: Any) -> Any:
        if not floating(x):
            return self.reference_forward(x)
        flat = np.ascontiguousarray(x).reshape(-1)
        sigmoid = sigmoid_exponentials(flat)
        out = np.empty_like(flat)
        _loops().silu(flat, sigmoid, flat.dtype.type(1), out)
        self.save(flat.reshape(x.shape), sigmoid.reshape(x.shape))  # the reference's arrays
        return out.reshape(x.shape)

    def backward(self, grad: Any) -> Any:
        x, sigmoid = self.saved
        if self.fallback or not floating(x, grad) or grad.shape != x.shape:
            return self.reference_backward(grad)
        out = np.empty(x.shape, x.dtype)
        _loops().silu_backward(np.ascontiguousarray(grad).reshape(-1), x.reshape(-1),
                               sigmoid.reshape(-1), x.dtype.type(1), out.reshape(-1))
        return out


class TanhKernel(Fallback, Tanh):
    """See the module docstring."""

    def forward(self, x: Any) -> Any:
        if x.size < SERIAL_BELOW or not floating(x):
            return self.reference_forward(x)
        flat = np.ascontiguousarray(x).reshape(-1)
        out = apply(np.tanh, flat, np.empty_like(flat)).reshape(x.shape)
        self.save(out)
        return out

    def backward(self, grad: Any) -> Any:
        (out,) = self.saved
        if self.fallback or not floating(out, grad) or grad.shape != out.shape:
            return self.reference_backward(grad)
        result = np.empty(out.shape, out.dtype)
        _loops().tanh_backward(np.ascontiguousarray(grad).reshape(-1), out.reshape(-1),
                               out.dtype.type(1), result.reshape(-1))
        return result
