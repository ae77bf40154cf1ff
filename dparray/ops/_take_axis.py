"""The adjoint of ``xp.take`` along one axis, for ops that read an axis at positions computed
on the host (adaptive pooling, interpolation).

The gradient of each entry of the input is the sum of the gradient slices of the outputs that
read it. The array API has no scatter-add, and a backend's (``Backend.scatter_add``) is slow on
NumPy and uses atomics on CuPy; but the positions are known on the host, so the sum is built
from takes instead: the ``j``-th reader of every entry is gathered in one take, for each
``j`` up to the largest number of readers of one entry (two for a doubled size). The order of
the sum is fixed, so the result is the same on every run and backend.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

Readers = tuple[tuple[tuple[int, ...], tuple[bool, ...]], ...]


@functools.lru_cache(maxsize=256)
def readers(positions: tuple[int | None, ...], size: int) -> Readers:
    """For each reading depth ``j``: which output reads each of the ``size`` entries ``j``-th
    (0 where none does), and whether one does. A position of None reads nothing."""
    by_entry: list[list[int]] = [[] for _ in range(size)]
    for output, entry in enumerate(positions):
        if entry is not None:
            by_entry[entry].append(output)
    depth = max((len(outputs) for outputs in by_entry), default=0)
    return tuple((tuple(outputs[j] if j < len(outputs) else 0 for outputs in by_entry),
                  tuple(j < len(outputs) for outputs in by_entry)) for j in range(depth))


def take_adjoint(xp: Any, grad: Any, positions: Sequence[int | None], size: int,
                 axis: int) -> Any:
    """The gradient of ``x`` for ``xp.take(x, positions, axis=axis)``, where ``x`` has ``size``
    entries along ``axis``, given the gradient ``grad`` of the result."""
    shape = (1,) * axis + (size,) + (1,) * (grad.ndim - axis - 1)
    total = None
    for outputs, read in readers(tuple(positions), size):
        part = xp.take(grad, xp.asarray(outputs, dtype=xp.int64), axis=axis)
        if not all(read):
            part = xp.where(xp.reshape(xp.asarray(read), shape), part, 0.0)
        total = part if total is None else total + part
    if total is None:
        return xp.zeros((*grad.shape[:axis], size, *grad.shape[axis + 1:]), dtype=grad.dtype)
    return total
