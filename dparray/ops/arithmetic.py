"""Arithmetic with broadcasting and Python scalars: ``+ - * / ** // %``, ``fmod``, negation and
``lerp``.

Python scalars stay Python scalars all the way into the backend, so a float32 tensor times 0.5
stays float32 (NumPy's NEP 50 rules; the array API's). Broadcasting is undone by the engine.
An integer tensor meets a Python float, or is divided (``/``), in the default float dtype
(``dparray.get_default_dtype()``), as in PyTorch.
"""

from __future__ import annotations

import math
from typing import Any

from dparray._checks import check_choice, check_tensor
from dparray.autograd import Function
from dparray.kernels import reference, resolve
from dparray.ops._promote import as_float, is_integer, kind, promote
from dparray.ops._util import PYTHON_SCALARS, as_operands, check_same_kind
from dparray.tensor import Tensor

__all__ = [
    "add",
    "div",
    "mul",
    "neg",
    "pow",
    "sub",
    "floor_divide",
    "fmod",
    "lerp",
    "remainder",
]


class Add(Function):
    """``a + b``."""

    def forward(self, a: Any, b: Any) -> Any:
        a, b = promote(self.backend, a, b)
        return a + b

    def backward(self, grad: Any) -> tuple[Any, Any]:
        return grad, grad


class Sub(Function):
    """``a - b``."""

    def forward(self, a: Any, b: Any) -> Any:
        a, b = promote(self.backend, a, b)
        return a - b

    def backward(self, grad: Any) -> tuple[Any, Any]:
        return grad, (-grad if self.needs_grad(1) else None)


class Mul(Function):
    """``a * b``."""

    def forward(self, a: Any, b: Any) -> Any:
        a, b = promote(self.backend, a, b)
        self.save(a, b)
        return a * b

    def backward(self, grad: Any) -> tuple[Any, Any]:
        a, b = self.saved
        return (grad * b if self.needs_grad(0) else None,
                grad * a if self.needs_grad(1) else None)


class Div(Function):
    """``a / b``; integers are divided in the default float."""

    def forward(self, a: Any, b: Any) -> Any:
        a, b = promote(self.backend, a, b)
        a, b = as_float(self.backend, a), as_float(self.backend, b)
        self.save(a, b)
        return a / b

    def backward(self, grad: Any) -> tuple[Any, Any]:
        a, b = self.saved
        grad_a = grad / b
        return (grad_a if self.needs_grad(0) else None,
                -grad_a * a / b if self.needs_grad(1) else None)


@reference("pow")
class Pow(Function):
    """``a ** b``, with PyTorch's gradients where the base is 0 or negative. Integers to a
    negative Python int power are refused; to a tensor of powers they follow PyTorch
    (``_integer_power``).

    The base's gradient ``b * a ** (b - 1)`` is 0 where ``b == 0`` (so ``d/dx x ** 0`` is 0 at
    ``x = 0``); the exponent's ``a ** b * log(a)`` is 0 where ``a == 0`` and ``b >= 0``, -inf
    where ``a == 0`` and ``b < 0``, NaN where ``a < 0``. Neither direction warns about a zero
    base (``0 ** -1`` is inf, as in IEEE arithmetic and PyTorch), and a negative zero keeps its
    sign under odd integer powers (``(-0.0) ** -1`` is -inf, ``(-0.0) ** 3`` is -0.0), as IEEE's
    ``pow`` has it; the gradients follow from those values.
    """

    def forward(self, a: Any, b: Any) -> Any:
        a, b = promote(self.backend, a, b)
        if is_integer(self.backend, a) and is_integer(self.backend, b):
            if not hasattr(b, "dtype") and b < 0:
                raise ValueError(
                    "pow: integers to negative integer powers are not allowed; cast the base "
                    "to a floating dtype first"
                )
            out = _integer_power(self.xp, a, b)
        elif isinstance(a, PYTHON_SCALARS):
            out = a**b if a != 0 else _signed_zero_power(
                self.xp, _zero_power(self.xp, b), math.copysign(1.0, a) < 0, b)
        elif isinstance(b, PYTHON_SCALARS) and b >= 0:
            out = a**b  # the common x ** 2: no zero base can divide by zero
        else:
            out = _power(self.xp, a, b)
        self.save(a, b, out)
        return out

    def backward(self, grad: Any) -> tuple[Any, Any]:
        a, b, out = self.saved
        grad_a = grad_b = None
        if self.needs_grad(0):
            grad_a = grad * _base_derivative(self.xp, a, b)
        if self.needs_grad(1):
            grad_b = grad * _exponent_derivative(self.xp, a, b, out)
        return grad_a, grad_b


def _integer_power(xp: Any, a: Any, b: Any) -> Any:
    """``a ** b`` for integers, PyTorch's: where an exponent tensor is negative, ``1 ** b`` is
    1, ``(-1) ** b`` is 1 or -1 by parity, and every other base gives 0 (``1 / a`` truncated)."""
    if not hasattr(b, "dtype") or not bool(xp.any(b < 0)):
        return a**b  # an integer 0 ** b, b >= 0, divides by nothing
    base = a if hasattr(a, "dtype") else xp.asarray(a, dtype=b.dtype)
    negative = b < 0
    power = base ** xp.where(negative, 0, b)
    parity = 1 - 2 * xp.astype(xp.remainder(b, 2), power.dtype)  # (-1) ** b
    reciprocal = xp.where(base == 1, 1, xp.where(base == -1, parity, 0))
    return xp.where(negative, xp.astype(reciprocal, power.dtype), power)


def _base_derivative(xp: Any, a: Any, b: Any) -> Any:
    """``b * a ** (b - 1)``, 0 where ``b == 0``; ``a`` is an array."""
    if isinstance(b, PYTHON_SCALARS):
        if b == 0:
            return xp.zeros_like(a)
        return b * (a ** (b - 1) if b >= 1 else _power(xp, a, b - 1))
    # where b == 0 the exponent b - 1 becomes 0, so the product is 0 * 1 even at a == 0
    return b * _power(xp, a, xp.where(b == 0, 1.0, b) - 1.0)


def _power(xp: Any, a: Any, e: Any) -> Any:
    """``a ** e`` for an array ``a``, with IEEE's values where ``a == 0`` computed without a
    division-by-zero warning."""
    zero = a == 0
    out = xp.where(zero, _zero_power(xp, e), xp.where(zero, 1.0, a) ** e)
    return _signed_zero_power(xp, out, xp.logical_and(zero, xp.signbit(a)), e)


def _zero_power(xp: Any, e: Any) -> Any:
    """``0 ** e``: 0, 1 or inf as ``e`` is positive, zero or negative (NaN for NaN), without
    dividing by zero."""
    if isinstance(e, PYTHON_SCALARS):
        return math.inf if e < 0 else 0.0**e
    return xp.where(e < 0, math.inf, 0.0 ** xp.where(e < 0, 1.0, e))


def _signed_zero_power(xp: Any, out: Any, negative_zero: Any, e: Any) -> Any:
    """``out`` (powers of ``+0.0`` where ``negative_zero``) with IEEE's sign for a base of
    ``-0.0``: ``(-0.0) ** e`` is ``-(0.0 ** e)`` where ``e`` is an odd integer (-inf, -0.0)."""
    if isinstance(e, PYTHON_SCALARS):
        if not (math.isfinite(e) and e % 2 == 1):
            return out
        return xp.where(negative_zero, -out, out)
    finite = xp.isfinite(e)
    odd = xp.logical_and(finite, xp.remainder(xp.where(finite, e, 0.0), 2.0) == 1.0)
    return xp.where(xp.logical_and(negative_zero, odd), -out, out)


def _exponent_derivative(xp: Any, a: Any, b: Any, out: Any) -> Any:
    """``a ** b * log(a)`` with PyTorch's values where ``a <= 0``; ``b`` is an array."""
    if isinstance(a, PYTHON_SCALARS):
        if a > 0:
            return out * math.log(a)
        if a < 0:
            return out * math.nan
        return xp.where(b >= 0, 0.0, xp.where(b >= 0, 1.0, out) * -math.inf)
    positive = a > 0
    log_a = xp.where(positive, xp.log(xp.where(positive, a, 1.0)),
                     xp.where(a == 0, -math.inf, xp.full_like(a, math.nan)))
    vanishing = xp.logical_and(a == 0, b >= 0)
    # masked before multiplying: 0 * -inf would be a NaN (and a warning) where PyTorch has 0
    return xp.where(vanishing, 0.0, xp.where(vanishing, 1.0, out) * log_a)


class Neg(Function):
    """``-a``."""

    def forward(self, a: Any) -> Any:
        return -a

    def backward(self, grad: Any) -> Any:
        return -grad


class _Division(Function):
    """Shared checks of ``//`` and ``%``: numbers only; an integer divisor of 0 is a
    ZeroDivisionError, as in Python and PyTorch (NumPy would return 0 with a warning)."""

    name = "division"

    def prepare(self, a: Any, b: Any) -> tuple[Any, Any]:
        backend = self.backend
        a, b = promote(backend, a, b)
        kinds = (kind(backend, a), kind(backend, b))
        if "bool" in kinds:
            raise TypeError(f"{self.name} needs numbers, got a bool operand")
        if is_integer(backend, a) and is_integer(backend, b):
            zero = bool(self.xp.any(b == 0)) if hasattr(b, "dtype") else b == 0
            if zero:
                raise ZeroDivisionError(f"{self.name}: integer division by zero")
        return a, b


class FloorDivide(_Division):
    """``floor(a / b)``; its gradient is 0 (PyTorch's ``div(rounding_mode="floor")``)."""

    name = "floor_divide"

    def forward(self, a: Any, b: Any) -> Any:
        a, b = self.prepare(a, b)
        return a // b

    def backward(self, grad: Any) -> tuple[Any, Any]:
        zeros = self.xp.zeros_like(grad)
        return (zeros if self.needs_grad(0) else None, zeros if self.needs_grad(1) else None)


class Remainder(_Division):
    """``a - b * floor(a / b)``, with the sign of ``b`` (Python's ``%``, the array API's
    ``remainder``); the gradients are 1 for ``a`` and ``-floor(a / b)`` for ``b``."""

    name = "remainder"

    def forward(self, a: Any, b: Any) -> Any:
        a, b = self.prepare(a, b)
        self.save(a, b)
        return a % b

    def backward(self, grad: Any) -> tuple[Any, Any]:
        a, b = self.saved
        return (grad if self.needs_grad(0) else None,
                -grad * (a // b) if self.needs_grad(1) else None)


class TruncDivide(_Division):
    """``trunc(a / b)``, the quotient rounded towards zero (PyTorch's
    ``div(rounding_mode="trunc")``); its gradient is 0."""

    name = "div"

    def forward(self, a: Any, b: Any) -> Any:
        a, b = self.prepare(a, b)
        if is_integer(self.backend, a) and is_integer(self.backend, b):
            quotient = a // b
            inexact = (quotient * b) != a
            return self.xp.where(self.xp.logical_and(inexact, quotient < 0), quotient + 1,
                                 quotient)
        return self.xp.trunc(as_float(self.backend, a) / as_float(self.backend, b))

    def backward(self, grad: Any) -> tuple[Any, Any]:
        zeros = self.xp.zeros_like(grad)
        return (zeros if self.needs_grad(0) else None, zeros if self.needs_grad(1) else None)


class Fmod(_Division):
    """``a - b * trunc(a / b)``, with the sign of ``a`` (C's ``fmod``, PyTorch's ``fmod``),
    computed exactly as the remainder of the magnitudes; the gradients are 1 for ``a`` and
    ``-trunc(a / b)`` for ``b``, as in PyTorch."""

    name = "fmod"

    def forward(self, a: Any, b: Any) -> Any:
        xp = self.xp
        a, b = self.prepare(a, b)
        self.save(a, b)
        size = xp.remainder(xp.abs(a), abs(b) if isinstance(b, PYTHON_SCALARS) else xp.abs(b))
        if is_integer(self.backend, a):
            return xp.where(a < 0, -size, size)
        return xp.copysign(size, a)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        a, b = self.saved
        return (grad if self.needs_grad(0) else None,
                -grad * self.xp.trunc(a / b) if self.needs_grad(1) else None)


class Lerp(Function):
    """``start + weight * (end - start)``, written as PyTorch does so that ``weight = 1``
    gives ``end`` exactly."""

    def forward(self, start: Any, end: Any, weight: Any) -> Any:
        xp = self.xp
        check_same_kind("lerp", self.backend, start, end)
        check_same_kind("lerp", self.backend, start, weight)
        start, end, weight = (as_float(self.backend, x) for x in (start, end, weight))
        self.save(start, end, weight)
        difference = end - start
        if isinstance(weight, PYTHON_SCALARS):
            if weight < 0.5:
                return start + weight * difference
            return end - difference * (1.0 - weight)
        return xp.where(weight < 0.5, start + weight * difference,
                        end - difference * (1.0 - weight))

    def backward(self, grad: Any) -> tuple[Any, Any, Any]:
        start, end, weight = self.saved
        return (grad * (1.0 - weight) if self.needs_grad(0) else None,
                grad * weight if self.needs_grad(1) else None,
                grad * (end - start) if self.needs_grad(2) else None)


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


def div(a: Any, b: Any, *, rounding_mode: str | None = None) -> Tensor:
    """Elementwise ``a / b`` with broadcasting; PyTorch's ``rounding_mode`` rounds the quotient
    towards zero (``"trunc"``) or down (``"floor"``, ``a // b``), keeping integers integers.

    Examples:
        >>> import dparray
        >>> a = dparray.tensor([7, -7])
        >>> dparray.div(a, 2).tolist(), dparray.div(a, 2, rounding_mode="trunc").tolist()
        ([3.5, -3.5], [3, -3])
    """
    if rounding_mode is None:
        return _binary(Div, a, b)
    mode = check_choice(rounding_mode, "rounding_mode", "div", ("trunc", "floor"))
    return _binary(TruncDivide if mode == "trunc" else FloorDivide, a, b)


def pow(a: Any, b: Any) -> Tensor:
    """Elementwise ``a ** b`` with broadcasting."""
    if type(a) is Tensor:  # (a backend kernel may take a tensor to a Python power)
        return resolve(a.backend, Pow)()(*as_operands(a, b))
    return _binary(Pow, a, b)


def neg(a: Tensor) -> Tensor:
    """Elementwise ``-a``."""
    return Neg()(a)


def floor_divide(a: Any, b: Any) -> Tensor:
    """Elementwise ``a // b``: ``floor(a / b)``, also for floats (gradient 0).

    Examples:
        >>> import dparray
        >>> (dparray.tensor([7, -7]) // 2).tolist()
        [3, -4]
    """
    return _binary(FloorDivide, a, b)


def remainder(a: Any, b: Any) -> Tensor:
    """Elementwise ``a % b``, with the sign of ``b`` as in Python.

    Examples:
        >>> import dparray
        >>> (dparray.tensor([7, -7]) % 3).tolist()
        [1, 2]
    """
    return _binary(Remainder, a, b)


def fmod(a: Tensor, b: Any) -> Tensor:
    """Elementwise ``a - b * trunc(a / b)``: the remainder with the sign of ``a`` (C's and
    PyTorch's ``fmod``; ``%`` takes the sign of ``b``).

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([7, -7])
        >>> dparray.fmod(x, 3).tolist(), (x % 3).tolist()
        ([1, -1], [1, 2])
    """
    check_tensor(a, "a", "fmod")
    return _binary(Fmod, a, b)


def lerp(start: Any, end: Any, weight: Any) -> Tensor:
    """Linear interpolation ``start + weight * (end - start)``, elementwise with broadcasting;
    ``weight`` is a number or a tensor.

    Examples:
        >>> import dparray
        >>> dparray.lerp(dparray.tensor([1.0]), dparray.tensor([3.0]), 0.25).tolist()
        [1.5]
    """
    return Lerp()(*as_operands(start, end, weight))
