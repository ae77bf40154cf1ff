"""Logical and, or, xor and not: elementwise, with broadcasting, constant bool results.

Like PyTorch, any dtype is accepted and read as ``x != 0`` (the array API takes bools only).
"""

from __future__ import annotations

from typing import Any

from dparray.backend import Backend
from dparray.ops._constant import constant_operands
from dparray.tensor import Tensor, from_op

__all__ = [
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
]


def _truth(backend: Backend, x: Any) -> Any:
    if not hasattr(x, "dtype"):
        return bool(x)
    return x if x.dtype == backend.xp.bool else x != 0


def _logical(name: str, *values: Any) -> Tensor:
    backend, arrays = constant_operands(name, *values)
    truths = [_truth(backend, x) for x in arrays]
    return from_op(getattr(backend.xp, name)(*truths), backend, None)


def logical_and(a: Any, b: Any) -> Tensor:
    """Elementwise ``a and b``.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([0.5, 2.0, 3.0])
        >>> dparray.logical_and(x > 1, x < 2.5).tolist()
        [False, True, False]
    """
    return _logical("logical_and", a, b)


def logical_or(a: Any, b: Any) -> Tensor:
    """Elementwise ``a or b``."""
    return _logical("logical_or", a, b)


def logical_xor(a: Any, b: Any) -> Tensor:
    """Elementwise ``a != b`` of truth values."""
    return _logical("logical_xor", a, b)


def logical_not(x: Tensor) -> Tensor:
    """Elementwise ``not x`` (also ``~x`` on a bool tensor)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"logical_not needs a Tensor, got {type(x).__name__}")
    return _logical("logical_not", x)
