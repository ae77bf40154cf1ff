"""The positions of a tensor's non-zero entries: ``nonzero`` and ``masked_select``.

Both give results whose shape depends on the data, so they read it on the host once (on a GPU,
a synchronisation); a backend that refuses data-dependent shapes (array_api_strict with that
flag off) gives a RuntimeError pointing to ``where``. ``nonzero`` is a constant;
``masked_select`` is differentiable in the tensor (its gradient lands on the picked entries).
"""

from __future__ import annotations

from typing import Any

from dparray._checks import check_bool, check_tensor
from dparray.backend import Backend
from dparray.ops._util import broadcast_shapes
from dparray.ops.indexing import getitem
from dparray.ops.shape import broadcast_to
from dparray.tensor import Tensor, from_op

__all__ = [
    "masked_select",
    "nonzero",
]


def nonzero(x: Tensor, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
    """The positions of the non-zero (true) entries of ``x``, in row-major order, as PyTorch's
    ``nonzero``: one row of ``x.ndim`` int64 coordinates per entry, or with ``as_tuple`` one
    1-D tensor per axis (what ``x[mask]`` indexes with). A 0-d tensor counts as one entry with
    no coordinates, as in PyTorch.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([[0, 1], [2, 0]])
        >>> dparray.nonzero(x).tolist()
        [[0, 1], [1, 0]]
        >>> [t.tolist() for t in dparray.nonzero(x, as_tuple=True)]
        [[0, 1], [1, 0]]
    """
    check_tensor(x, "x", "nonzero")
    check_bool(as_tuple, "as_tuple", "nonzero")
    backend, xp = x.backend, x.backend.xp
    data = x.data if x.ndim else xp.reshape(x.data, (1,))
    found = _positions(backend, data if x.dtype.kind == "bool" else data != 0, "nonzero")
    if as_tuple:
        return tuple(from_op(xp.astype(p, xp.int64), backend, None) for p in found)
    if x.ndim == 0:
        return from_op(xp.zeros((found[0].shape[0], 0), dtype=xp.int64), backend, None)
    return from_op(xp.astype(xp.stack(found, axis=1), xp.int64), backend, None)


def masked_select(x: Tensor, mask: Tensor) -> Tensor:
    """The entries of ``x`` where the bool ``mask`` is True, as one 1-D tensor in row-major
    order, as PyTorch's ``masked_select``; ``x`` and ``mask`` broadcast together first. The
    gradient goes back to the picked entries.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> dparray.masked_select(x, dparray.tensor([True, False])).tolist()
        [1.0, 3.0]
    """
    check_tensor(x, "x", "masked_select")
    check_tensor(mask, "mask", "masked_select")
    if mask.dtype.kind != "bool":
        raise TypeError(f"masked_select: mask must be a bool tensor, got {mask.dtype.name}")
    shape = broadcast_shapes("masked_select", x.shape, mask.shape)
    if x.shape != shape:
        x = broadcast_to(x, shape)
    if mask.shape != shape:
        mask = from_op(x.backend.xp.broadcast_to(mask.data, shape), mask.backend, None)
    if x.ndim == 0:  # a 0-d mask picks the one entry or none
        x, mask = x.reshape(1), mask.reshape(1)
    return getitem(x, mask)


def _positions(backend: Backend, mask: Any, where: str) -> tuple[Any, ...]:
    try:
        found: tuple[Any, ...] = backend.xp.nonzero(mask)
    except RuntimeError as error:  # array_api_strict with data-dependent shapes switched off
        raise RuntimeError(
            f"{where} gives a shape that depends on the data, which backend {backend.name!r} "
            f"refuses here ({error}); use dparray.where instead"
        ) from error
    return found
