"""Softplus (both forms), log-sigmoid, Mish and the logistic loss
(``binary_cross_entropy_with_logits``) on NumPy: the references' arithmetic in compiled passes
around NumPy's SIMD ``exp``.

Each reference takes ``log1p(exp(-|z|))``, and NumPy's ``log1p`` is libm's, one element at a
time, on CPUs without AVX-512 (float32: 17 ns an element on an AVX2 EPYC, eight times its
``exp``). Softplus forward and backward over 4096 x 512 float32 took 57-68 ms, against
PyTorch's 7 (``python -m bench.activations``). Here ``-|z|`` is one compiled pass, NumPy's
``exp`` of it is sliced over the cores (``_core_split``), and the rest -- the logarithm and the
op's own arithmetic -- is one more compiled pass; backward is one pass, from the
exponentials the forward kept.

Float64 takes libm's ``log1p`` inside the loop, so its values and every gradient are the
references' to the bit where NumPy's ``log1p`` is libm's (CPUs without AVX-512; with it, NumPy
runs its own, accurate to 4 ulps, and the two differ by those ulps). Float32 takes the
logarithm computed in float64 and rounded once (``_numba_loops.log_one_plus``), within an ulp
of libm's float32 ``log1p`` and usually its bits: a float32 value is within an ulp or two of
the reference's (docs/decisions.md), its gradient the reference's to the bit (it needs no
logarithm).

Each kernel saves the reference's arrays plus the exponentials; a backward the loops do not
cover (another gradient dtype) drops them and runs the reference's, and ``create_graph``
replays the reference.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dparray.ops import activations, elementwise
from dparray.ops.binary_cross_entropy import BinaryCrossEntropyWithLogits

from ._core_split import apply, exp
from ._fallback import Fallback, finite_in, floating
from ._numba_setup import loops as _loops
from ._sigmoid_kernels import sigmoid_exponentials


def _flat(x: Any) -> Any:
    return np.ascontiguousarray(x).reshape(-1)


class _KeepsExponentials(Fallback):
    """Backward from the saved arrays and exponentials, when the gradient matches them."""

    def covered(self, grad: Any) -> bool:
        """Whether the compiled backward covers ``grad``; if not, the saved arrays become the
        reference's, for its backward."""
        *kept, e = self.saved
        if not self.fallback and floating(e, grad) and grad.shape == e.shape:
            return True
        if not self.fallback:
            self.saved = tuple(kept)
        return False


class _SoftplusKernel(_KeepsExponentials):
    """Both softplus forms: ``z = beta * x`` and its exponentials, the form's own compiled
    pass (``combine``), one backward pass. ``dparray.softplus`` has no threshold: ``inf``."""

    beta: float
    threshold = math.inf

    def combine(self, x: Any, z: Any, e: Any, out: Any) -> None:
        raise NotImplementedError

    def forward(self, x: Any) -> Any:
        threshold = self.threshold
        if (not floating(x) or not finite_in(x.dtype.type, self.beta)
                or not (math.isinf(threshold) or finite_in(x.dtype.type, threshold))):
            return self.reference_forward(x)
        flat = _flat(x)
        z, e = np.empty_like(flat), np.empty_like(flat)
        _loops().scale_and_negative_magnitude(flat, flat.dtype.type(self.beta), z, e)
        exp(e, out=e)
        out = np.empty_like(flat)
        self.combine(flat, z, e, out)
        self.save(z.reshape(x.shape), e.reshape(x.shape))
        return out.reshape(x.shape)

    def backward(self, grad: Any) -> Any:
        if not self.covered(grad):
            return self.reference_backward(grad)
        z, e = self.saved
        kind = z.dtype.type
        out = np.empty(z.shape, z.dtype)
        _loops().softplus_backward(_flat(grad), z.reshape(-1), e.reshape(-1),
                                   kind(self.threshold), kind(1), out.reshape(-1))
        return out


class SoftplusKernel(_SoftplusKernel, elementwise.Softplus):
    """``dparray.softplus``: ``max(x, 0) + log(1 + e) / beta`` (see the module docstring)."""

    def combine(self, x: Any, z: Any, e: Any, out: Any) -> None:
        kind = x.dtype.type
        _loops().softplus(x, e, kind(self.beta), kind(1), out)


class SoftplusWithThresholdKernel(_SoftplusKernel, activations.Softplus):
    """PyTorch's ``softplus``: ``x`` above the threshold (see the module docstring)."""

    def combine(self, x: Any, z: Any, e: Any, out: Any) -> None:
        kind = x.dtype.type
        _loops().softplus_with_threshold(x, z, e, kind(self.beta), kind(self.threshold),
                                         kind(1), out)


class LogSigmoidKernel(_KeepsExponentials, activations.LogSigmoid):
    """See the module docstring."""

    def forward(self, x: Any) -> Any:
        if not floating(x):
            return self.reference_forward(x)
        flat = _flat(x)
        e = sigmoid_exponentials(flat)
        out = np.empty_like(flat)
        _loops().log_sigmoid(flat, e, flat.dtype.type(1), out)
        self.save(flat.reshape(x.shape), e.reshape(x.shape))
        return out.reshape(x.shape)

    def backward(self, grad: Any) -> Any:
        if not self.covered(grad):
            return self.reference_backward(grad)
        x, e = self.saved
        out = np.empty(x.shape, x.dtype)
        _loops().log_sigmoid_backward(_flat(grad), x.reshape(-1), e.reshape(-1),
                                      x.dtype.type(1), out.reshape(-1))
        return out


class MishKernel(_KeepsExponentials, activations.Mish):
    """``x * tanh(softplus(x))``: the softplus compiled, NumPy's ``tanh`` of it over the cores,
    NumPy's product (see the module docstring)."""

    def forward(self, x: Any) -> Any:
        if not floating(x):
            return self.reference_forward(x)
        one = x.dtype.type(1)
        flat = _flat(x)
        e = sigmoid_exponentials(flat)
        t = np.empty_like(flat)
        _loops().softplus(flat, e, one, one, t)
        apply(np.tanh, t, t)
        self.save(flat.reshape(x.shape), t.reshape(x.shape), e.reshape(x.shape))
        return np.multiply(flat, t).reshape(x.shape)

    def backward(self, grad: Any) -> Any:
        if not self.covered(grad):
            return self.reference_backward(grad)
        x, t, e = self.saved
        out = np.empty(x.shape, x.dtype)
        _loops().mish_backward(_flat(grad), x.reshape(-1), t.reshape(-1), e.reshape(-1),
                               x.dtype.type(1), out.reshape(-1))
        return out


class BinaryCrossEntropyWithLogitsKernel(_KeepsExponentials, BinaryCrossEntropyWithLogits):
    """``softplus(x) - x * t`` and ``grad * (sigmoid(x) - t)``, one compiled pass each way
    (see the module docstring); the target's gradient, rarely asked for, is the
    reference's."""

    def forward(self, x: Any, t: Any) -> Any:
        if not floating(x, t) or x.shape != t.shape:
            return self.reference_forward(x, t)
        flat, target = _flat(x), _flat(t)
        e = sigmoid_exponentials(flat)
        out = np.empty_like(flat)
        _loops().binary_cross_entropy_with_logits(flat, target, e, flat.dtype.type(1), out)
        self.save(flat.reshape(x.shape), target.reshape(x.shape), e.reshape(x.shape))
        return out.reshape(x.shape)

    def backward(self, grad: Any) -> Any:
        if self.needs_grad(1) and not self.fallback:
            self.saved = self.saved[:2]  # the reference's arrays, for its backward
        if self.needs_grad(1) or not self.covered(grad):
            return self.reference_backward(grad)
        x, t, e = self.saved
        out = np.empty(x.shape, x.dtype)
        _loops().binary_cross_entropy_with_logits_backward(
            _flat(grad), x.reshape(-1), t.reshape(-1), e.reshape(-1), x.dtype.type(1),
            out.reshape(-1))
        return out, None
