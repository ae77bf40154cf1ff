"""Trigonometric and hyperbolic functions and their inverses, with ``atan2``.

Angles are in radians. Integer tensors are computed in the default float dtype.
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function
from dparray.ops._promote import as_float, promote
from dparray.ops._util import as_operands
from dparray.tensor import Tensor

__all__ = [
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
]


class Sin(Function):
    """``sin(x)``."""

    def forward(self, x: Any) -> Any:
        x = as_float(self.backend, x)
        self.save(x)
        return self.xp.sin(x)

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (x,) = self.saved
        return grad * xp.cos(x)


class Cos(Function):
    """``cos(x)``."""

    def forward(self, x: Any) -> Any:
        x = as_float(self.backend, x)
        self.save(x)
        return self.xp.cos(x)

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (x,) = self.saved
        return -grad * xp.sin(x)


class Tan(Function):
    """``tan(x)``."""

    def forward(self, x: Any) -> Any:
        out = self.xp.tan(as_float(self.backend, x))
        self.save(out)
        return out

    def backward(self, grad: Any) -> Any:
        (out,) = self.saved
        return grad * (1.0 + out * out)


class Asin(Function):
    """``asin(x)`` on ``[-1, 1]``."""

    def forward(self, x: Any) -> Any:
        x = as_float(self.backend, x)
        self.save(x)
        return self.xp.asin(x)

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (x,) = self.saved
        return grad / xp.sqrt(1.0 - x * x)


class Acos(Function):
    """``acos(x)`` on ``[-1, 1]``."""

    def forward(self, x: Any) -> Any:
        x = as_float(self.backend, x)
        self.save(x)
        return self.xp.acos(x)

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (x,) = self.saved
        return -grad / xp.sqrt(1.0 - x * x)


class Atan(Function):
    """``atan(x)``."""

    def forward(self, x: Any) -> Any:
        x = as_float(self.backend, x)
        self.save(x)
        return self.xp.atan(x)

    def backward(self, grad: Any) -> Any:
        (x,) = self.saved
        return grad / (1.0 + x * x)


class Sinh(Function):
    """``sinh(x)``."""

    def forward(self, x: Any) -> Any:
        x = as_float(self.backend, x)
        self.save(x)
        return self.xp.sinh(x)

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (x,) = self.saved
        return grad * xp.cosh(x)


class Cosh(Function):
    """``cosh(x)``."""

    def forward(self, x: Any) -> Any:
        x = as_float(self.backend, x)
        self.save(x)
        return self.xp.cosh(x)

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (x,) = self.saved
        return grad * xp.sinh(x)


class Asinh(Function):
    """``asinh(x)``."""

    def forward(self, x: Any) -> Any:
        x = as_float(self.backend, x)
        self.save(x)
        return self.xp.asinh(x)

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (x,) = self.saved
        return grad / xp.sqrt(x * x + 1.0)


class Acosh(Function):
    """``acosh(x)`` on ``[1, inf)``."""

    def forward(self, x: Any) -> Any:
        x = as_float(self.backend, x)
        self.save(x)
        return self.xp.acosh(x)

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (x,) = self.saved
        return grad / xp.sqrt(x * x - 1.0)


class Atanh(Function):
    """``atanh(x)`` on ``(-1, 1)``."""

    def forward(self, x: Any) -> Any:
        x = as_float(self.backend, x)
        self.save(x)
        return self.xp.atanh(x)

    def backward(self, grad: Any) -> Any:
        (x,) = self.saved
        return grad / (1.0 - x * x)


class Atan2(Function):
    """``atan2(y, x)``: the angle of the point ``(x, y)``, in ``(-pi, pi]``; the gradient at
    the origin is 0, as in PyTorch."""

    def forward(self, y: Any, x: Any) -> Any:
        y, x = promote(self.backend, y, x)
        y, x = as_float(self.backend, y), as_float(self.backend, x)
        self.save(y, x)
        return self.xp.atan2(y, x)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        xp = self.xp
        y, x = self.saved
        radius2 = x * x + y * y
        radius2 = xp.where(radius2 == 0, 1.0, radius2)  # at the origin y = x = 0: gradient 0
        return (grad * x / radius2 if self.needs_grad(0) else None,
                -grad * y / radius2 if self.needs_grad(1) else None)


def sin(x: Tensor) -> Tensor:
    """Elementwise sine (radians).

    Examples:
        >>> import math, dparray
        >>> dparray.sin(dparray.tensor([0.0, math.pi / 2])).tolist()
        [0.0, 1.0]
    """
    return Sin()(x)


def cos(x: Tensor) -> Tensor:
    """Elementwise cosine (radians)."""
    return Cos()(x)


def tan(x: Tensor) -> Tensor:
    """Elementwise tangent (radians)."""
    return Tan()(x)


def asin(x: Tensor) -> Tensor:
    """Elementwise inverse sine, in ``[-pi/2, pi/2]``."""
    return Asin()(x)


def acos(x: Tensor) -> Tensor:
    """Elementwise inverse cosine, in ``[0, pi]``."""
    return Acos()(x)


def atan(x: Tensor) -> Tensor:
    """Elementwise inverse tangent, in ``(-pi/2, pi/2)``."""
    return Atan()(x)


def sinh(x: Tensor) -> Tensor:
    """Elementwise hyperbolic sine."""
    return Sinh()(x)


def cosh(x: Tensor) -> Tensor:
    """Elementwise hyperbolic cosine."""
    return Cosh()(x)


def asinh(x: Tensor) -> Tensor:
    """Elementwise inverse hyperbolic sine."""
    return Asinh()(x)


def acosh(x: Tensor) -> Tensor:
    """Elementwise inverse hyperbolic cosine."""
    return Acosh()(x)


def atanh(x: Tensor) -> Tensor:
    """Elementwise inverse hyperbolic tangent."""
    return Atanh()(x)


def atan2(y: Any, x: Any) -> Tensor:
    """Elementwise angle of ``(x, y)`` in ``(-pi, pi]``, with broadcasting (note the order:
    ``y`` first, as in ``math.atan2``)."""
    return Atan2()(*as_operands(y, x))
