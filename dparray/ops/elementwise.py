"""Elementwise math and activations, each with its derivative beside it.

Functions whose values are floating (``exp``, ``log``, ``sqrt``, ``tanh``, ...) compute an integer
tensor in the default float dtype, as PyTorch does.
"""

from __future__ import annotations

import math
from typing import Any

from dparray import dtypes as _dtypes
from dparray._checks import check_number
from dparray.autograd import Function
from dparray.kernels import reference, resolve
from dparray.ops._portable import clip as portable_clip
from dparray.ops._promote import as_float, promote
from dparray.ops._util import as_operands
from dparray.tensor import Tensor, from_op

__all__ = [
    "abs",
    "astype",
    "clip",
    "clamp",
    "exp",
    "gelu",
    "log",
    "maximum",
    "minimum",
    "relu",
    "sigmoid",
    "softplus",
    "sqrt",
    "tanh",
    "where",
]

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_CUBIC = 0.044715


class Exp(Function):
    """``exp(x)``."""
    saved_values = "output"  # only its output, which create_graph reaches through this node


    def forward(self, x: Any) -> Any:
        out = self.xp.exp(as_float(self.backend, x))
        self.save(out)
        return out

    def backward(self, grad: Any) -> Any:
        (out,) = self.saved
        return grad * out


class Log(Function):
    """``log(x)``."""

    def forward(self, x: Any) -> Any:
        x = as_float(self.backend, x)
        self.save(x)
        return self.xp.log(x)

    def backward(self, grad: Any) -> Any:
        (x,) = self.saved
        return grad / x


class Sqrt(Function):
    """``sqrt(x)``."""
    saved_values = "output"  # only its output, which create_graph reaches through this node


    def forward(self, x: Any) -> Any:
        out = self.xp.sqrt(as_float(self.backend, x))
        self.save(out)
        return out

    def backward(self, grad: Any) -> Any:
        (out,) = self.saved
        return grad / (2.0 * out)


class Abs(Function):
    """``|x|``; the gradient at 0 is 0."""

    def forward(self, x: Any) -> Any:
        self.save(x)
        return self.xp.abs(x)

    def backward(self, grad: Any) -> Any:
        (x,) = self.saved
        return grad * self.xp.sign(x)


@reference("tanh")
class Tanh(Function):
    """``tanh(x)``."""
    saved_values = "output"  # only its output, which create_graph reaches through this node


    def forward(self, x: Any) -> Any:
        out = self.xp.tanh(as_float(self.backend, x))
        self.save(out)
        return out

    def backward(self, grad: Any) -> Any:
        (out,) = self.saved
        return grad * (1.0 - out * out)


@reference("sigmoid")
class Sigmoid(Function):
    """``1 / (1 + exp(-x))``, computed without overflow for any ``x``."""
    saved_values = "output"  # only its output, which create_graph reaches through this node


    def forward(self, x: Any) -> Any:
        xp = self.xp
        x = as_float(self.backend, x)
        e = xp.exp(-xp.abs(x))
        out = xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
        self.save(out)
        return out

    def backward(self, grad: Any) -> Any:
        (out,) = self.saved
        return grad * out * (1.0 - out)


@reference("relu")
class Relu(Function):
    """``max(x, 0)``; the gradient at 0 is 0, and at NaN passes (as in PyTorch).

    Backward needs where ``x <= 0``, which is where the output is ``<= 0`` (and NaN where it
    is NaN), so the op keeps its output, as PyTorch does: the next op usually keeps that array
    anyway, and the input can be freed.
    """
    saved_values = "constants"  # the output only as a mask


    def forward(self, x: Any) -> Any:
        out = self.xp.maximum(x, 0)  # an int 0 keeps int tensors int; faster than where
        self.save(out)
        return out

    def backward(self, grad: Any) -> Any:
        (out,) = self.saved
        return grad * self.xp.astype(self.xp.logical_not(out <= 0), grad.dtype)


@reference("gelu")
class Gelu(Function):
    """``x * Phi(x)``, exact (through the backend's erf) or with PyTorch's tanh approximation."""

    def __init__(self, approximate: str = "none") -> None:
        if approximate not in ("none", "tanh"):
            raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x: Any) -> Any:
        xp = self.xp
        x = as_float(self.backend, x)
        if self.approximate == "tanh":
            t = xp.tanh(_SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x))
            self.save(x, t)
            return 0.5 * x * (1.0 + t)
        cdf = 0.5 * (1.0 + self.backend.erf(x * _SQRT_HALF))
        self.save(x, cdf)
        return x * cdf

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        if self.approximate == "tanh":
            x, t = self.saved
            inner = _SQRT_2_OVER_PI * (1.0 + 3.0 * _GELU_CUBIC * x * x)
            return grad * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * inner)
        x, cdf = self.saved
        return grad * (cdf + x * xp.exp(-0.5 * x * x) * _INV_SQRT_2PI)


@reference("softplus")
class Softplus(Function):
    """``log(1 + exp(beta * x)) / beta``, computed without overflow."""

    def __init__(self, beta: float = 1.0) -> None:
        if not beta > 0:
            raise ValueError(f"softplus: beta must be positive, got {beta!r}")
        self.beta = float(beta)

    def forward(self, x: Any) -> Any:
        xp = self.xp
        x = as_float(self.backend, x)
        z = self.beta * x
        self.save(z)
        # max(x, 0) on x's own scale: beta * x may overflow (1e308 * 2) where the result won't
        return xp.maximum(x, 0.0) + xp.log1p(xp.exp(-xp.abs(z))) / self.beta

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (z,) = self.saved
        e = xp.exp(-xp.abs(z))
        return grad * xp.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


class Maximum(Function):
    """``max(a, b)`` elementwise; at ties each side gets half the gradient, where one is NaN
    both get all of it (PyTorch's rule)."""

    def forward(self, a: Any, b: Any) -> Any:
        a, b = promote(self.backend, a, b)
        self.save(a, b)
        return self.xp.maximum(a, b)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        a, b = self.saved
        return _select_gradients(self, grad, first_loses=a < b, second_loses=a > b)


class Minimum(Function):
    """``min(a, b)`` elementwise; at ties each side gets half the gradient, where one is NaN
    both get all of it (PyTorch's rule)."""

    def forward(self, a: Any, b: Any) -> Any:
        a, b = promote(self.backend, a, b)
        self.save(a, b)
        return self.xp.minimum(a, b)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        a, b = self.saved
        return _select_gradients(self, grad, first_loses=a > b, second_loses=a < b)


def _select_gradients(op: Function, grad: Any, first_loses: Any, second_loses: Any
                      ) -> tuple[Any, Any]:
    """Each side's gradient: none where it loses, half at a tie, all of it otherwise -- so
    where either is NaN (neither loses nor ties) both get it, as in PyTorch."""
    xp = op.xp
    a, b = op.saved
    shared = xp.where(a == b, 0.5 * grad, grad)
    grad_a = xp.where(first_loses, 0.0, shared) if op.needs_grad(0) else None
    grad_b = xp.where(second_loses, 0.0, shared) if op.needs_grad(1) else None
    return grad_a, grad_b


class Clip(Function):
    """``x`` limited to ``[low, high]``; the gradient passes where ``low <= x <= high``.

    As in PyTorch, ``low > high`` gives ``high`` everywhere (and no gradient anywhere).
    """

    def __init__(self, low: float | None, high: float | None) -> None:
        if low is None and high is None:
            raise ValueError("clip: at least one of min and max must be given")
        self.low = None if low is None else _bound(low, "min")
        self.high = None if high is None else _bound(high, "max")

    def forward(self, x: Any) -> Any:
        xp = self.xp
        if isinstance(self.low, float) or isinstance(self.high, float):
            x = as_float(self.backend, x)
        self.save(x)
        if self.low is not None and self.high is not None and self.low > self.high:
            return xp.full_like(x, self.high)
        return portable_clip(xp, x, self.low, self.high)

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (x,) = self.saved
        inside = xp.ones_like(x, dtype=xp.bool)
        if self.low is not None:
            inside = xp.logical_and(inside, x >= self.low)
        if self.high is not None:
            inside = xp.logical_and(inside, x <= self.high)
        return xp.where(inside, grad, 0.0)


def _bound(value: Any, name: str) -> float | int:
    """A bound of ``clip``: an int stays an int (integer tensors stay integer)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return check_number(value, name, "clip", finite=False)


class Where(Function):
    """``a`` where ``condition`` holds, else ``b``; no gradient for the condition."""
    saved_values = "constants"  # the condition


    def forward(self, condition: Any, a: Any, b: Any) -> Any:
        xp = self.xp
        if getattr(condition, "dtype", None) != xp.bool:
            raise TypeError(f"where: the condition must be a bool tensor, got {condition!r:.60}")
        a, b = promote(self.backend, a, b)
        self.save(condition)
        return xp.where(condition, a, b)

    def backward(self, grad: Any) -> tuple[Any, Any, Any]:
        xp = self.xp
        (condition,) = self.saved
        return (None,
                xp.where(condition, grad, 0.0) if self.needs_grad(1) else None,
                xp.where(condition, 0.0, grad) if self.needs_grad(2) else None)


@reference("astype")
class AsType(Function):
    """A cast between floating dtypes; the gradient is cast back."""

    def __init__(self, native: Any) -> None:
        self.native = native

    def forward(self, x: Any) -> Any:
        return self.xp.astype(x, self.native)

    def backward(self, grad: Any) -> Any:
        return grad  # the engine casts it back to the input's dtype


def exp(x: Tensor) -> Tensor:
    """Elementwise ``e ** x``."""
    return Exp()(x)


def log(x: Tensor) -> Tensor:
    """Elementwise natural logarithm."""
    return Log()(x)


def sqrt(x: Tensor) -> Tensor:
    """Elementwise square root."""
    return Sqrt()(x)


def abs(x: Tensor) -> Tensor:
    """Elementwise absolute value."""
    return Abs()(x)


def tanh(x: Tensor) -> Tensor:
    """Elementwise hyperbolic tangent."""
    return resolve(x.backend, Tanh)()(x)


def sigmoid(x: Tensor) -> Tensor:
    """Elementwise logistic function ``1 / (1 + exp(-x))``."""
    return resolve(x.backend, Sigmoid)()(x)


def relu(x: Tensor) -> Tensor:
    """Elementwise ``max(x, 0)``."""
    return resolve(x.backend, Relu)()(x)


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit; ``approximate="tanh"`` is PyTorch's tanh form."""
    return resolve(x.backend, Gelu)(approximate)(x)


def softplus(x: Tensor, beta: float = 1.0) -> Tensor:
    """Elementwise ``log(1 + exp(beta * x)) / beta`` (a smooth ReLU)."""
    return resolve(x.backend, Softplus)(beta)(x)


def maximum(a: Any, b: Any) -> Tensor:
    """Elementwise maximum with broadcasting."""
    return Maximum()(*as_operands(a, b))


def minimum(a: Any, b: Any) -> Tensor:
    """Elementwise minimum with broadcasting."""
    return Minimum()(*as_operands(a, b))


def clip(x: Tensor, min: float | None = None, max: float | None = None) -> Tensor:
    """``x`` limited to ``[min, max]``; either bound may be None, not both. With
    ``min > max`` the result is ``max`` everywhere, as in PyTorch.

    Examples:
        >>> import dparray
        >>> dparray.clip(dparray.tensor([-2.0, 0.5, 3.0]), -1.0, 1.0).tolist()
        [-1.0, 0.5, 1.0]
    """
    return Clip(min, max)(x)


def clamp(x: Tensor, min: float | None = None, max: float | None = None) -> Tensor:
    """PyTorch's name for ``clip``."""
    return clip(x, min, max)


def where(condition: Tensor, a: Any, b: Any) -> Tensor:
    """``a`` where ``condition`` is True, else ``b``, with broadcasting."""
    if not isinstance(condition, Tensor):
        raise TypeError(f"where: the condition must be a Tensor, got {type(condition).__name__}")
    return Where()(*as_operands(condition, a, b))


def astype(x: Tensor, dtype: Any) -> Tensor:
    """``x`` cast to ``dtype``; differentiable between floating dtypes, a constant otherwise."""
    if not isinstance(x, Tensor):
        raise TypeError(f"astype needs a Tensor, got {type(x).__name__}")
    target = _dtypes.to_dtype(dtype, x.backend)
    native = _dtypes.native_dtype(x.backend, target)
    if target.is_floating and x.dtype.is_floating:
        return resolve(x.backend, AsType)(native)(x)
    return from_op(x.backend.xp.astype(x.data, native), x.backend, None)
