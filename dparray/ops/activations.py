"""Activation functions beyond ReLU, GELU, tanh and sigmoid, each one elementwise ``Function``
with its derivative beside it, defined as PyTorch defines them.

At a kink the gradient is PyTorch's (``docs/decisions.md`` lists them): ``leaky_relu`` and
``prelu`` take the negative side's slope at 0, ``elu`` and ``selu`` too; ``hardtanh`` and
``relu6`` pass no gradient at their bounds, nor ``hardsigmoid`` at -3 and 3; ``hardswish`` has
gradient 0 at -3 and 1 at 3; ``softplus`` is linear only strictly above its threshold.
Integer tensors are computed in the default float dtype, as by every floating op.
"""

from __future__ import annotations

from typing import Any

from dparray._checks import check_number, check_tensor
from dparray.autograd import Function
from dparray.kernels import reference, resolve
from dparray.ops._portable import clip as portable_clip
from dparray.ops._promote import as_float
from dparray.tensor import Tensor

__all__ = [
    "leaky_relu",
    "prelu",
    "elu",
    "selu",
    "celu",
    "silu",
    "mish",
    "hardswish",
    "hardsigmoid",
    "hardtanh",
    "relu6",
    "softsign",
    "logsigmoid",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _sigmoid(xp: Any, x: Any) -> Any:
    """``1 / (1 + exp(-x))`` without overflow for any ``x``."""
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _softplus(xp: Any, x: Any) -> Any:
    """``log(1 + exp(x))`` without overflow for any ``x``."""
    return xp.maximum(x, 0.0) + xp.log1p(xp.exp(-xp.abs(x)))


@reference("leaky_relu")
class LeakyRelu(Function):
    """``x`` where ``x > 0``, else ``negative_slope * x``."""

    def __init__(self, negative_slope: float) -> None:
        self.negative_slope = negative_slope

    def forward(self, x: Any) -> Any:
        x = as_float(self.backend, x)
        self.save(x)
        return self.xp.where(x > 0, x, self.negative_slope * x)

    def backward(self, grad: Any) -> Any:
        (x,) = self.saved
        return self.xp.where(x > 0, grad, self.negative_slope * grad)


class Prelu(Function):
    """``x`` where ``x > 0``, else ``weight * x``; ``weight`` arrives shaped to broadcast."""

    def forward(self, x: Any, weight: Any) -> Any:
        x = as_float(self.backend, x)
        self.save(x, weight)
        return self.xp.where(x > 0, x, weight * x)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        xp = self.xp
        x, weight = self.saved
        positive = x > 0
        grad_x = xp.where(positive, grad, weight * grad) if self.needs_grad(0) else None
        grad_weight = xp.where(positive, 0.0, x * grad) if self.needs_grad(1) else None
        return grad_x, grad_weight


@reference("elu")
class Elu(Function):
    """``scale * x`` where ``x > 0``, else ``scale * alpha * (exp(input_scale * x) - 1)``:
    ELU, and with other constants SELU and CELU (as PyTorch computes all three)."""

    def __init__(self, alpha: float, scale: float = 1.0, input_scale: float = 1.0) -> None:
        self.alpha, self.scale, self.input_scale = alpha, scale, input_scale

    def forward(self, x: Any) -> Any:
        xp = self.xp
        x = as_float(self.backend, x)
        self.save(x)
        # exp of the positive side unused; where, not minimum, keeps -0.0 (expm1(-0.0) = -0.0)
        negative = self.input_scale * xp.where(x > 0, 0.0, x)
        return xp.where(x > 0, self.scale * x, (self.scale * self.alpha) * xp.expm1(negative))

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (x,) = self.saved
        negative = self.input_scale * xp.where(x > 0, 0.0, x)
        slope = (self.scale * self.alpha * self.input_scale) * xp.exp(negative)
        return grad * xp.where(x > 0, self.scale, slope)


@reference("silu")
class Silu(Function):
    """``x * sigmoid(x)`` (the swish)."""

    def forward(self, x: Any) -> Any:
        x = as_float(self.backend, x)
        s = _sigmoid(self.xp, x)
        self.save(x, s)
        return x * s

    def backward(self, grad: Any) -> Any:
        x, s = self.saved
        return grad * s * (1.0 + x * (1.0 - s))


@reference("mish")
class Mish(Function):
    """``x * tanh(softplus(x))``."""

    def forward(self, x: Any) -> Any:
        xp = self.xp
        x = as_float(self.backend, x)
        t = xp.tanh(_softplus(xp, x))
        self.save(x, t)
        return x * t

    def backward(self, grad: Any) -> Any:
        x, t = self.saved
        return grad * (t + x * (1.0 - t * t) * _sigmoid(self.xp, x))


@reference("hardswish")
class Hardswish(Function):
    """``x * relu6(x + 3) / 6``."""

    def forward(self, x: Any) -> Any:
        xp = self.xp
        x = as_float(self.backend, x)
        self.save(x)
        return x * portable_clip(xp, x + 3.0, 0.0, 6.0) / 6.0

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (x,) = self.saved
        # NaN takes the middle formula: a NaN input gets a NaN gradient, as in PyTorch
        slope = xp.where(x <= -3.0, 0.0, xp.where(x >= 3.0, 1.0, x / 3.0 + 0.5))
        return grad * slope


@reference("hardsigmoid")
class Hardsigmoid(Function):
    """``relu6(x + 3) / 6``."""

    def forward(self, x: Any) -> Any:
        xp = self.xp
        x = as_float(self.backend, x)
        self.save(x)
        return portable_clip(xp, x + 3.0, 0.0, 6.0) / 6.0

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (x,) = self.saved
        inside = xp.logical_and(x > -3.0, x < 3.0)
        return xp.where(inside, grad / 6.0, 0.0)


@reference("hardtanh")
class Hardtanh(Function):
    """``x`` limited to ``[min_val, max_val]``; the gradient passes strictly inside (not at
    NaN)."""

    def __init__(self, min_val: float, max_val: float) -> None:
        self.min_val, self.max_val = min_val, max_val

    def forward(self, x: Any) -> Any:
        x = as_float(self.backend, x)
        self.save(x)
        return portable_clip(self.xp, x, self.min_val, self.max_val)

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (x,) = self.saved
        inside = xp.logical_and(x > self.min_val, x < self.max_val)
        return xp.where(inside, grad, 0.0)


@reference("softplus_with_threshold")
class Softplus(Function):
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``
    (PyTorch's form, for ``nn.Softplus``; ``dparray.softplus`` has no threshold)."""

    def __init__(self, beta: float, threshold: float) -> None:
        self.beta, self.threshold = beta, threshold

    def forward(self, x: Any) -> Any:
        xp = self.xp
        x = as_float(self.backend, x)
        z = self.beta * x
        self.save(z)
        return xp.where(z > self.threshold, x, _softplus(xp, z) / self.beta)

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (z,) = self.saved
        return xp.where(z > self.threshold, grad, grad * _sigmoid(xp, z))


class Softsign(Function):
    """``x / (1 + |x|)``."""

    def forward(self, x: Any) -> Any:
        xp = self.xp
        x = as_float(self.backend, x)
        denominator = 1.0 + xp.abs(x)
        self.save(denominator)
        return x / denominator

    def backward(self, grad: Any) -> Any:
        (denominator,) = self.saved
        return grad / (denominator * denominator)


@reference("logsigmoid")
class LogSigmoid(Function):
    """``log(sigmoid(x)) = -softplus(-x)``, without overflow for any ``x``."""

    def forward(self, x: Any) -> Any:
        xp = self.xp
        x = as_float(self.backend, x)
        self.save(x)
        return xp.minimum(x, 0.0) - xp.log1p(xp.exp(-xp.abs(x)))

    def backward(self, grad: Any) -> Any:
        (x,) = self.saved
        return grad * _sigmoid(self.xp, -x)


# ------------------------------------------------------------------ argument checks
def check_bounds(low: Any, high: Any, where: str, names: tuple[str, str] = ("min_val", "max_val")
                 ) -> tuple[float, float]:
    """``(low, high)`` as floats (``names`` in messages: hardtanh's by default); a ValueError
    if ``low > high``."""
    first = check_number(low, names[0], where)
    second = check_number(high, names[1], where)
    if first > second:
        raise ValueError(f"{where}: {names[0]} must not be greater than {names[1]}, got "
                         f"{low!r} > {high!r}")
    return first, second


def check_celu_alpha(alpha: Any, where: str) -> float:
    """CELU's ``alpha``: a finite number other than 0 (it divides the input)."""
    value = check_number(alpha, "alpha", where)
    if value == 0.0:
        raise ValueError(f"{where}: alpha must not be 0 (CELU divides by it), got {alpha!r}")
    return value


def check_softplus(beta: Any, threshold: Any, where: str) -> tuple[float, float]:
    """Softplus's ``beta`` (positive) and ``threshold`` (finite), as floats."""
    return (check_number(beta, "beta", where, above=0.0),
            check_number(threshold, "threshold", where))


def prelu_weight(x: Tensor, weight: Tensor, where: str) -> Tensor:
    """``weight`` (``(1,)`` or one slope per channel, axis 1) shaped to broadcast against
    ``x``; a ValueError if it fits neither."""
    channels = x.shape[1] if x.ndim >= 2 else 1
    if weight.ndim != 1 or weight.shape[0] not in (1, channels):
        raise ValueError(f"{where}: weight must have shape (1,) or ({channels},) for input of "
                         f"shape {x.shape}, got {weight.shape}")
    if not weight.dtype.is_floating:
        raise TypeError(f"{where}: weight must be floating, got {weight.dtype.name}")
    if weight.shape[0] == 1:
        return weight.reshape(())
    return weight.reshape(channels, *([1] * (x.ndim - 2)))


# ------------------------------------------------------------------ functions
def leaky_relu(x: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``x`` where positive, else ``negative_slope * x``.

    Examples:
        >>> import dparray as dp
        >>> dp.leaky_relu(dp.tensor([-2.0, 0.0, 3.0]), 0.25).tolist()
        [-0.5, 0.0, 3.0]
    """
    where = "leaky_relu"
    slope = check_number(negative_slope, "negative_slope", where)
    x = check_tensor(x, "x", where)
    return resolve(x.backend, LeakyRelu)(slope)(x)


def prelu(x: Tensor, weight: Tensor) -> Tensor:
    """Leaky ReLU with learned slopes: ``weight`` holds one slope, or one per channel (axis
    1 of ``x``); both ``x`` and ``weight`` receive gradients."""
    where = "prelu"
    check_tensor(x, "x", where)
    check_tensor(weight, "weight", where)
    return Prelu()(x, prelu_weight(x, weight, where))


def elu(x: Tensor, alpha: float = 1.0) -> Tensor:
    """``x`` where positive, else ``alpha * (exp(x) - 1)``."""
    where = "elu"
    x = check_tensor(x, "x", where)
    return resolve(x.backend, Elu)(check_number(alpha, "alpha", where))(x)


def selu(x: Tensor) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants ``alpha = 1.6733`` and
    ``scale = 1.0507`` (to 4 decimals)."""
    x = check_tensor(x, "x", "selu")
    return resolve(x.backend, Elu)(_SELU_ALPHA, _SELU_SCALE)(x)


def celu(x: Tensor, alpha: float = 1.0) -> Tensor:
    """``x`` where positive, else ``alpha * (exp(x / alpha) - 1)``; ``alpha`` is not 0."""
    where = "celu"
    value = check_celu_alpha(alpha, where)
    x = check_tensor(x, "x", where)
    return resolve(x.backend, Elu)(value, 1.0, 1.0 / value)(x)


def silu(x: Tensor) -> Tensor:
    """``x * sigmoid(x)``."""
    x = check_tensor(x, "x", "silu")
    return resolve(x.backend, Silu)()(x)


def mish(x: Tensor) -> Tensor:
    """``x * tanh(softplus(x))``."""
    x = check_tensor(x, "x", "mish")
    return resolve(x.backend, Mish)()(x)


def hardswish(x: Tensor) -> Tensor:
    """``x * relu6(x + 3) / 6``, the piecewise-quadratic swish."""
    x = check_tensor(x, "x", "hardswish")
    return resolve(x.backend, Hardswish)()(x)


def hardsigmoid(x: Tensor) -> Tensor:
    """``relu6(x + 3) / 6``, the piecewise-linear sigmoid."""
    x = check_tensor(x, "x", "hardsigmoid")
    return resolve(x.backend, Hardsigmoid)()(x)


def hardtanh(x: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``x`` limited to ``[min_val, max_val]``; no gradient at or beyond the bounds.

    Examples:
        >>> import dparray as dp
        >>> dp.hardtanh(dp.tensor([-3.0, 0.5, 2.0])).tolist()
        [-1.0, 0.5, 1.0]
    """
    where = "hardtanh"
    low, high = check_bounds(min_val, max_val, where)
    x = check_tensor(x, "x", where)
    return resolve(x.backend, Hardtanh)(low, high)(x)


def relu6(x: Tensor) -> Tensor:
    """``min(max(x, 0), 6)``; no gradient at 0 and 6."""
    x = check_tensor(x, "x", "relu6")
    return resolve(x.backend, Hardtanh)(0.0, 6.0)(x)


def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """PyTorch's ``softplus``: ``log(1 + exp(beta * x)) / beta``, reverting to ``x`` where
    ``beta * x > threshold``; ``beta`` must be positive."""
    where = "softplus"
    beta, threshold = check_softplus(beta, threshold, where)
    x = check_tensor(x, "x", where)
    return resolve(x.backend, Softplus)(beta, threshold)(x)


def softsign(x: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    return Softsign()(check_tensor(x, "x", "softsign"))


def logsigmoid(x: Tensor) -> Tensor:
    """``log(sigmoid(x))``, finite for every finite ``x``.

    Examples:
        >>> import dparray as dp
        >>> dp.logsigmoid(dp.tensor([-1000.0, 1000.0], dtype="float64")).tolist()
        [-1000.0, 0.0]
    """
    x = check_tensor(x, "x", "logsigmoid")
    return resolve(x.backend, LogSigmoid)()(x)
