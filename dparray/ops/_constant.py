"""Operands of elementwise ops whose results are constants: comparisons, predicates, logical
and bitwise ops. They build no graph node, so they unwrap their tensors here instead."""

from __future__ import annotations

from typing import Any

from dparray.backend import Backend
from dparray.ops._util import as_operands
from dparray.tensor import Tensor


def constant_operands(name: str, *values: Any) -> tuple[Backend, list[Any]]:
    """The backend of the tensors among ``values`` and the values as backend arrays (Python
    scalars kept); a TypeError without any tensor, a ValueError for two backends."""
    operands = as_operands(*values)
    backend = next((x.backend for x in operands if isinstance(x, Tensor)), None)
    if backend is None:
        raise TypeError(
            f"{name} needs at least one Tensor, got "
            f"{', '.join(type(x).__name__ for x in values)}"
        )
    arrays = []
    for x in operands:
        if isinstance(x, Tensor):
            if x.backend is not backend:
                raise ValueError(
                    f"{name}: cannot combine tensors of backends {backend.name!r} and "
                    f"{x.backend.name!r}; move one with .to(...)"
                )
            x = x.data
        arrays.append(x)
    return backend, arrays
