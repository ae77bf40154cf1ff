"""Exponentials, logarithms and their relatives: ``exp2``, ``expm1``, ``log2``, ``log10``,
``log1p``, ``logaddexp``, ``rsqrt`` and the error function ``erf``.

``expm1`` and ``log1p`` are accurate near 0 where ``exp(x) - 1`` and ``log(1 + x)`` are not;
``logaddexp`` never overflows. Integer tensors are computed in the default float dtype.
"""

from __future__ import annotations

import math
from typing import Any

from dparray.autograd import Function
from dparray.ops._promote import as_float, promote
from dparray.ops._util import as_operands
from dparray.tensor import Tensor

__all__ = [
    "exp2",
    "expm1",
    "log2",
    "log10",
    "log1p",
    "rsqrt",
    "erf",
    "logaddexp",
]

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


class Exp2(Function):
    """``2 ** x``."""

    def forward(self, x: Any) -> Any:
        out = 2.0 ** as_float(self.backend, x)
        self.save(out)
        return out

    def backward(self, grad: Any) -> Any:
        (out,) = self.saved
        return grad * out * _LN2


class Expm1(Function):
    """``exp(x) - 1``, accurate for small ``x``."""

    def forward(self, x: Any) -> Any:
        out = self.xp.expm1(as_float(self.backend, x))
        self.save(out)
        return out

    def backward(self, grad: Any) -> Any:
        (out,) = self.saved
        return grad * (out + 1.0)


class Log2(Function):
    """``log2(x)``."""

    def forward(self, x: Any) -> Any:
        x = as_float(self.backend, x)
        self.save(x)
        return self.xp.log2(x)

    def backward(self, grad: Any) -> Any:
        (x,) = self.saved
        return grad / (x * _LN2)


class Log10(Function):
    """``log10(x)``."""

    def forward(self, x: Any) -> Any:
        x = as_float(self.backend, x)
        self.save(x)
        return self.xp.log10(x)

    def backward(self, grad: Any) -> Any:
        (x,) = self.saved
        return grad / (x * _LN10)


class Log1p(Function):
    """``log(1 + x)``, accurate for small ``x``."""

    def forward(self, x: Any) -> Any:
        x = as_float(self.backend, x)
        self.save(x)
        return self.xp.log1p(x)

    def backward(self, grad: Any) -> Any:
        (x,) = self.saved
        return grad / (1.0 + x)


class Rsqrt(Function):
    """``1 / sqrt(x)``."""

    def forward(self, x: Any) -> Any:
        out = 1.0 / self.xp.sqrt(as_float(self.backend, x))
        self.save(out)
        return out

    def backward(self, grad: Any) -> Any:
        (out,) = self.saved
        return grad * -0.5 * out * out * out


class Erf(Function):
    """The error function ``2 / sqrt(pi) * integral of exp(-t^2) from 0 to x`` (the array API
    has none: the backend's ``erf``)."""

    def forward(self, x: Any) -> Any:
        x = as_float(self.backend, x)
        self.save(x)
        return self.backend.erf(x)

    def backward(self, grad: Any) -> Any:
        (x,) = self.saved
        return grad * _TWO_OVER_SQRT_PI * self.xp.exp(-x * x)


class LogAddExp(Function):
    """``log(exp(a) + exp(b))``, computed without overflow."""

    def forward(self, a: Any, b: Any) -> Any:
        a, b = promote(self.backend, a, b)
        xp = self.xp
        a, b = as_float(self.backend, a), as_float(self.backend, b)
        if not hasattr(a, "dtype"):  # the standard's logaddexp takes arrays only
            a = xp.asarray(a, dtype=b.dtype)
        if not hasattr(b, "dtype"):
            b = xp.asarray(b, dtype=a.dtype)
        self.save(a, b)
        return xp.logaddexp(a, b)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        # d/da = exp(a) / (exp(a) + exp(b)) = sigmoid(a - b), written so that an infinite input
        # gives the finite limit (logaddexp(inf, 1) passes 1 to a, 0 to b), as PyTorch's does;
        # exp(a - out) would be exp(inf - inf) = NaN there
        a, b = self.saved
        return (grad * _sigmoid(self.xp, a - b) if self.needs_grad(0) else None,
                grad * _sigmoid(self.xp, b - a) if self.needs_grad(1) else None)


def _sigmoid(xp: Any, t: Any) -> Any:
    """``1 / (1 + exp(-t))`` without overflow for any ``t`` (NaN for NaN)."""
    e = xp.exp(-xp.abs(t))
    return xp.where(t >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def exp2(x: Tensor) -> Tensor:
    """Elementwise ``2 ** x``."""
    return Exp2()(x)


def expm1(x: Tensor) -> Tensor:
    """Elementwise ``exp(x) - 1``, accurate where ``x`` is near 0."""
    return Expm1()(x)


def log2(x: Tensor) -> Tensor:
    """Elementwise base-2 logarithm."""
    return Log2()(x)


def log10(x: Tensor) -> Tensor:
    """Elementwise base-10 logarithm."""
    return Log10()(x)


def log1p(x: Tensor) -> Tensor:
    """Elementwise ``log(1 + x)``, accurate where ``x`` is near 0."""
    return Log1p()(x)


def rsqrt(x: Tensor) -> Tensor:
    """Elementwise ``1 / sqrt(x)``."""
    return Rsqrt()(x)


def erf(x: Tensor) -> Tensor:
    """Elementwise error function, to the precision of ``x``'s dtype.

    Examples:
        >>> import dparray
        >>> round(dparray.erf(dparray.tensor([1.0], dtype="float64")).item(), 12)
        0.84270079295
    """
    return Erf()(x)


def logaddexp(a: Any, b: Any) -> Tensor:
    """Elementwise ``log(exp(a) + exp(b))``, with broadcasting, without overflow.

    Examples:
        >>> import dparray
        >>> dparray.logaddexp(dparray.tensor([1000.0]), dparray.tensor([1000.0])).tolist()
        [1000.6931762695312]
    """
    return LogAddExp()(*as_operands(a, b))
