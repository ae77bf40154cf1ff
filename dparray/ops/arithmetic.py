"""Arithmetic with broadcasting and Python scalars: ``+ - * / **`` and negation.

Python scalars stay Python scalars all the way into the backend, so a float32 tensor times 0.5
stays float32 (NumPy's NEP 50 rules; the array API's). Broadcasting is undone by the engine.
"""

from __future__ import annotations

import math
from typing import Any

from dparray.autograd import Function
from dparray.ops._util import PYTHON_SCALARS, as_operands, check_same_kind
from dparray.tensor import Tensor


class Add(Function):
    """``a + b``."""

    def forward(self, a: Any, b: Any) -> Any:
        check_same_kind("add", self.backend, a, b)
        return a + b

    def backward(self, grad: Any) -> tuple[Any, Any]:
        return grad, grad


class Sub(Function):
    """``a - b``."""

    def forward(self, a: Any, b: Any) -> Any:
        check_same_kind("sub", self.backend, a, b)
        return a - b

    def backward(self, grad: Any) -> tuple[Any, Any]:
        return grad, (-grad if self.needs_grad(1) else None)


class Mul(Function):
    """``a * b``."""

    def forward(self, a: Any, b: Any) -> Any:
        check_same_kind("mul", self.backend, a, b)
        self.save(a, b)
        return a * b

    def backward(self, grad: Any) -> tuple[Any, Any]:
        a, b = self.saved
        return (grad * b if self.needs_grad(0) else None,
                grad * a if self.needs_grad(1) else None)


class Div(Function):
    """``a / b``."""

    def forward(self, a: Any, b: Any) -> Any:
        check_same_kind("div", self.backend, a, b)
        self.save(a, b)
        return a / b

    def backward(self, grad: Any) -> tuple[Any, Any]:
        a, b = self.saved
        grad_a = grad / b
        return (grad_a if self.needs_grad(0) else None,
                -grad_a * a / b if self.needs_grad(1) else None)


class Pow(Function):
    """``a ** b``; the gradient for ``b`` needs ``a > 0``."""

    def forward(self, a: Any, b: Any) -> Any:
        check_same_kind("pow", self.backend, a, b)
        out = a**b
        self.save(a, b, out)
        return out

    def backward(self, grad: Any) -> tuple[Any, Any]:
        a, b, out = self.saved
        grad_a = grad_b = None
        if self.needs_grad(0):
            grad_a = grad * b * a ** (b - 1)
        if self.needs_grad(1):
            log_a = math.log(a) if isinstance(a, PYTHON_SCALARS) else self.xp.log(a)
            grad_b = grad * out * log_a
        return grad_a, grad_b


class Neg(Function):
    """``-a``."""

    def forward(self, a: Any) -> Any:
        return -a

    def backward(self, grad: Any) -> Any:
        return -grad


def _binary(op: type[Function], a: Any, b: Any) -> Tensor:
    if type(a) is Tensor and type(b) is Tensor:  # the common case skips the coercion
        return op()(a, b)
    return op()(*as_operands(a, b))


def add(a: Any, b: Any) -> Tensor:
    """Elementwise ``a + b`` with broadcasting."""
    return _binary(Add, a, b)


def sub(a: Any, b: Any) -> Tensor:
    """Elementwise ``a - b`` with broadcasting."""
    return _binary(Sub, a, b)


def mul(a: Any, b: Any) -> Tensor:
    """Elementwise ``a * b`` with broadcasting."""
    return _binary(Mul, a, b)


def div(a: Any, b: Any) -> Tensor:
    """Elementwise ``a / b`` with broadcasting."""
    return _binary(Div, a, b)


def pow(a: Any, b: Any) -> Tensor:
    """Elementwise ``a ** b`` with broadcasting."""
    return _binary(Pow, a, b)


def neg(a: Tensor) -> Tensor:
    """Elementwise ``-a``."""
    return Neg()(a)
