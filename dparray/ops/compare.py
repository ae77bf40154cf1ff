"""Comparisons: elementwise, with broadcasting; they return constant bool tensors."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from dparray.ops._util import as_operands, check_same_kind
from dparray.tensor import Tensor, from_op


def _compare(name: str, function: Callable[[Any, Any], Any], a: Any, b: Any) -> Tensor:
    a, b = as_operands(a, b)
    backend = (a if isinstance(a, Tensor) else b).backend
    for x in (a, b):
        if isinstance(x, Tensor) and x.backend is not backend:
            raise ValueError(
                f"{name}: cannot combine tensors of backends {backend.name!r} and "
                f"{x.backend.name!r}; move one with .to(...)"
            )
    a = a.data if isinstance(a, Tensor) else a
    b = b.data if isinstance(b, Tensor) else b
    check_same_kind(name, backend, a, b)
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
