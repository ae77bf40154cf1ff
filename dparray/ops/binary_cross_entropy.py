"""Binary cross-entropy of probabilities, and of logits, each as one graph node, for
``binary_cross_entropy`` and ``binary_cross_entropy_with_logits``.

Composed, the loss of probabilities is a dozen elementwise nodes; its node keeps only the
input and the target for backward, where the input's gradient is PyTorch's closed form. The
loss of logits, ``softplus(x) - x * t``, is four nodes composed; its node's backward is the
closed form ``sigmoid(x) - t``.
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function
from dparray.kernels import reference

BCE_EPSILON = 9.999999960041972e-13  # binary_cross_entropy's: 1e-12 rounded to float32, as
# PyTorch's kernel holds it, so that the gradient at 0 and 1 is PyTorch's to the last digit
LOG_FLOOR = -100.0  # PyTorch clamps binary_cross_entropy's logarithms to this
NOT_PROBABILITIES = ("binary_cross_entropy: every input must be a probability in [0, 1] "
                     "(found a value outside it, or NaN)")


@reference("binary_cross_entropy")
class BinaryCrossEntropy(Function):
    """``-(t * log(x) + (1 - t) * log(1 - x))`` elementwise, each log clamped to >= -100;
    the gradients are PyTorch's: ``(x - t) / max(x * (1 - x), ~1e-12)`` for ``x`` and the
    unclamped ``log(1 - x) - log(x)`` for ``t``."""

    def forward(self, x: Any, t: Any) -> Any:
        xp = self.xp
        inside = xp.logical_and(x >= 0.0, x <= 1.0)
        if not bool(xp.all(inside)):  # one look on the host: a clear error beats garbage
            raise ValueError(NOT_PROBABILITIES)
        self.save(x, t)
        log_x, log_rest = _logs(xp, x)
        return -(t * xp.maximum(log_x, LOG_FLOOR) + (1.0 - t) * xp.maximum(log_rest, LOG_FLOOR))

    def backward(self, grad: Any) -> tuple[Any, Any]:
        xp = self.xp
        x, t = self.saved
        grad_x = grad_t = None
        if self.needs_grad(0):
            grad_x = grad * (x - t) / xp.maximum(x * (1.0 - x), BCE_EPSILON)
        if self.needs_grad(1):
            log_x, log_rest = _logs(xp, x)
            grad_t = grad * (log_rest - log_x)
        return grad_x, grad_t


def _logs(xp: Any, x: Any) -> tuple[Any, Any]:
    """``log(x)`` and ``log(1 - x)`` for ``x`` in ``[0, 1]``: ``-inf`` at 0 and 1 (IEEE's
    results; ops run with the backend's warnings about them off, ``quiet_math``)."""
    return xp.log(x), xp.log1p(-x)


@reference("binary_cross_entropy_with_logits")
class BinaryCrossEntropyWithLogits(Function):
    """``softplus(x) - x * t`` elementwise, ``softplus(x) = max(x, 0) + log1p(exp(-|x|))``
    (no logit overflows); the gradients are ``sigmoid(x) - t`` for ``x`` (the stable sigmoid
    from the same ``exp(-|x|)``) and ``-x`` for ``t``."""

    def forward(self, x: Any, t: Any) -> Any:
        xp = self.xp
        self.save(x, t)
        return (xp.maximum(x, 0.0) + xp.log1p(xp.exp(-xp.abs(x)))) - x * t

    def backward(self, grad: Any) -> tuple[Any, Any]:
        xp = self.xp
        x, t = self.saved
        grad_x = grad_t = None
        if self.needs_grad(0):
            e = xp.exp(-xp.abs(x))
            grad_x = grad * (xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)) - t)
        if self.needs_grad(1):
            grad_t = grad * -x
        return grad_x, grad_t
