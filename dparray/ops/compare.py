"""Comparisons and tests of values: elementwise, with broadcasting; they return constant bool
tensors (``allclose`` a Python bool).

An integer tensor compared with a Python float is compared in the default float, as PyTorch
does (``int_tensor < 0.5``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from dparray._checks import check_bool, check_number
from dparray.ops._constant import constant_operands
from dparray.ops._promote import as_float, kind, promote
from dparray.ops._util import check_same_kind
from dparray.tensor import Tensor, from_op

__all__ = [
    "equal",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "not_equal",
    "isclose",
    "allclose",
    "isnan",
    "isinf",
    "isfinite",
]


def _compare(name: str, function: Callable[[Any, Any], Any], a: Any, b: Any) -> Tensor:
    backend, (a, b) = constant_operands(name, a, b)
    a, b = promote(backend, a, b)
    return from_op(function(a, b), backend, None)


def equal(a: Any, b: Any) -> Tensor:
    """Elementwise ``a == b``."""
    return _compare("equal", operator.eq, a, b)


def not_equal(a: Any, b: Any) -> Tensor:
    """Elementwise ``a != b``."""
    return _compare("not_equal", operator.ne, a, b)


def less(a: Any, b: Any) -> Tensor:
    """Elementwise ``a < b``."""
    return _compare("less", operator.lt, a, b)


def less_equal(a: Any, b: Any) -> Tensor:
    """Elementwise ``a <= b``."""
    return _compare("less_equal", operator.le, a, b)


def greater(a: Any, b: Any) -> Tensor:
    """Elementwise ``a > b``."""
    return _compare("greater", operator.gt, a, b)


def greater_equal(a: Any, b: Any) -> Tensor:
    """Elementwise ``a >= b``."""
    return _compare("greater_equal", operator.ge, a, b)


def _test_value(name: str, x: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} needs a Tensor, got {type(x).__name__}")
    backend, data = x.backend, x.data
    if kind(backend, data) == "bool":  # the standard takes numbers only; PyTorch takes bools
        data = as_float(backend, data)
    return from_op(getattr(backend.xp, name)(data), backend, None)


def isnan(x: Tensor) -> Tensor:
    """Where ``x`` is NaN (never, for integer and bool tensors)."""
    return _test_value("isnan", x)


def isinf(x: Tensor) -> Tensor:
    """Where ``x`` is positive or negative infinity."""
    return _test_value("isinf", x)


def isfinite(x: Tensor) -> Tensor:
    """Where ``x`` is neither infinite nor NaN."""
    return _test_value("isfinite", x)


def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Where ``|a - b| <= atol + rtol * |b|``, elementwise (PyTorch's and NumPy's test and
    defaults); equal infinities are close, NaNs only with ``equal_nan``. Integer and bool
    operands are compared in the default float.

    Examples:
        >>> import dparray
        >>> dparray.isclose(dparray.tensor([1.0, 2.0]), dparray.tensor([1.0 + 1e-7, 2.1]))
        ... # doctest: +NORMALIZE_WHITESPACE
        tensor([ True, False], dtype=bool, backend=numpy)
    """
    rtol = check_number(rtol, "rtol", "isclose", minimum=0.0)
    atol = check_number(atol, "atol", "isclose", minimum=0.0)
    check_bool(equal_nan, "equal_nan", "isclose")
    backend, (a, b) = constant_operands("isclose", a, b)
    check_same_kind("isclose", backend, a, b)
    xp = backend.xp
    a, b = as_float(backend, a), as_float(backend, b)
    like = a if hasattr(a, "dtype") else b
    a, b = (x if hasattr(x, "dtype") else xp.asarray(x, dtype=like.dtype) for x in (a, b))
    finite = xp.logical_and(xp.isfinite(a), xp.isfinite(b))
    # infinities and NaNs are zeroed before subtracting, so inf - inf raises no warning
    fa, fb = xp.where(finite, a, 0.0), xp.where(finite, b, 0.0)
    close = xp.logical_and(finite, xp.abs(fa - fb) <= atol + rtol * xp.abs(fb))
    close = xp.logical_or(close, a == b)
    if equal_nan:
        close = xp.logical_or(close, xp.logical_and(xp.isnan(a), xp.isnan(b)))
    return from_op(close, backend, None)


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether ``isclose(a, b, ...)`` holds everywhere, as a Python bool (as in PyTorch).

    Examples:
        >>> import dparray
        >>> dparray.allclose(dparray.ones(3), dparray.ones(3) + 1e-9)
        True
    """
    close = isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return bool(close.backend.xp.all(close.data))
