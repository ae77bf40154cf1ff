"""Counting and searching: ``bincount``, ``searchsorted`` and ``bucketize``.

Their results are integer positions or counts, constants of the graph (``bincount``'s
weighted sums excepted: they are a ``scatter_add`` of the weights, differentiable in them,
where PyTorch has no derivative). Checking that counted entries are non-negative, and sizing
``bincount``'s result, reads the entries' extremes on the host (on a GPU, a synchronisation).
"""

from __future__ import annotations

from typing import Any

from dparray._checks import check_bool, check_choice, check_int, check_tensor, describe
from dparray.ops._portable import take_along_axis
from dparray.ops._promote import promote
from dparray.ops.elementwise import astype
from dparray.ops.indexing import checked_positions, scatter_add
from dparray.tensor import Tensor, from_op

__all__ = [
    "bincount",
    "searchsorted",
    "bucketize",
]


def bincount(x: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value ``0, 1, ..., max(x)`` occurs in the 1-D non-negative integer
    tensor ``x`` (at least ``minlength`` bins), as int64; with ``weights`` (one per entry), the
    sum of the weights of each value's entries instead, in the weights' floating dtype
    (float64 for integer weights, as in PyTorch). Differentiable in ``weights``.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([0, 2, 2, 5])
        >>> dparray.bincount(x).tolist()
        [1, 0, 2, 0, 0, 1]
        >>> dparray.bincount(x, weights=dparray.tensor([0.5, 1.0, 1.0, 2.0]), minlength=7).tolist()
        [0.5, 0.0, 2.0, 0.0, 0.0, 2.0, 0.0]
    """
    check_tensor(x, "x", "bincount")
    if x.dtype.kind not in ("int", "uint"):
        raise TypeError(f"bincount: needs an integer tensor, got {x.dtype.name}")
    if x.ndim != 1:
        raise ValueError(f"bincount: needs a 1-D tensor, got shape {x.shape}")
    minlength = check_int(minlength, "minlength", "bincount", minimum=0)
    if weights is not None:
        check_tensor(weights, "weights", "bincount")
        if weights.shape != x.shape:
            raise ValueError(f"bincount: weights of shape {weights.shape} must have the "
                             f"tensor's shape {x.shape}")
    xp = x.backend.xp
    index = xp.astype(x.data, xp.int64)
    length = minlength
    if x.elem_count():
        low, high = int(xp.min(index)), int(xp.max(index))
        if low < 0:
            raise ValueError(f"bincount: the entries must be non-negative, got {low}")
        length = max(high + 1, minlength)
    if weights is None:  # each value's run in the sorted entries: no atomics, any backend
        ordered, bins = xp.sort(index), xp.arange(length, dtype=xp.int64)
        counts = (xp.searchsorted(ordered, bins, side="right")
                  - xp.searchsorted(ordered, bins, side="left"))
        return from_op(xp.astype(counts, xp.int64), x.backend, None)
    if not weights.dtype.is_floating:
        weights = astype(weights, "float64")
    bins = from_op(xp.zeros((length,), dtype=weights.data.dtype), x.backend, None)
    return scatter_add(bins, 0, x, weights)


def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None,
                 sorter: Tensor | None = None) -> Tensor:
    """Where each value of ``input`` would go in ``sorted_sequence`` to keep it sorted:
    before the entries equal to it (``side="left"``, the default) or after them
    (``side="right"`` or ``right=True``), as PyTorch's ``searchsorted``. A 1-D sequence
    serves every value; an N-D one is searched row by row along its last axis, ``input``
    having its leading axes. ``sorter`` (positions that sort the sequence along its last axis)
    stands in for a sorted copy. A Python number gives a 0-d result; positions are int64
    (int32 with ``out_int32``). NaN sorts last, as in ``sort``.

    Examples:
        >>> import dparray
        >>> edges = dparray.tensor([1.0, 3.0, 5.0])
        >>> dparray.searchsorted(edges, dparray.tensor([0.0, 3.0, 6.0])).tolist()
        [0, 1, 3]
        >>> dparray.searchsorted(edges, 3.0, right=True).item()
        2
    """
    check_tensor(sorted_sequence, "sorted_sequence", "searchsorted")
    side = _side(check_bool(right, "right", "searchsorted"), side)
    check_bool(out_int32, "out_int32", "searchsorted")
    if sorted_sequence.ndim == 0:
        raise ValueError("searchsorted: sorted_sequence must have at least 1 dimension, got a "
                         "0-d tensor")
    backend = sorted_sequence.backend
    xp = backend.xp
    if isinstance(input, Tensor):
        if input.backend is not backend:
            raise ValueError(f"searchsorted: cannot combine tensors of backends "
                             f"{backend.name!r} and {input.backend.name!r}; move one with "
                             ".to(...)")
        if sorted_sequence.ndim > 1 and input.shape[:-1] != sorted_sequence.shape[:-1]:
            raise ValueError(
                f"searchsorted: an N-D sorted_sequence of shape {sorted_sequence.shape} needs "
                f"input with its leading axes {sorted_sequence.shape[:-1]}, got shape "
                f"{input.shape}")
        sequence, values = promote(backend, sorted_sequence.data, input.data)
    elif isinstance(input, (int, float)) and not isinstance(input, bool):
        if sorted_sequence.ndim > 1:
            raise ValueError("searchsorted: a number is searched in a 1-D sorted_sequence only, "
                             f"got shape {sorted_sequence.shape}")
        sequence, number = promote(backend, sorted_sequence.data, input)
        values = xp.full((), number, dtype=sequence.dtype)
    else:
        raise TypeError(f"searchsorted: input must be a Tensor or a number, got "
                        f"{describe(input)}")
    if sorter is not None:
        sequence = _sorted_by(sequence, sorter, sorted_sequence)
    if sequence.ndim == 1:
        positions = xp.searchsorted(sequence, values, side=side)
    else:
        positions = _row_positions(xp, sequence, values, side)
    dtype = xp.int32 if out_int32 else xp.int64
    return from_op(xp.astype(positions, dtype), backend, None)


def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False,
              right: bool = False) -> Tensor:
    """The bucket of each value of ``input`` between the sorted 1-D ``boundaries``: ``i`` with
    ``boundaries[i - 1] < v <= boundaries[i]``, or ``boundaries[i - 1] <= v < boundaries[i]``
    with ``right=True`` (PyTorch's ``bucketize``: ``searchsorted`` with its arguments the other
    way round).

    Examples:
        >>> import dparray
        >>> edges = dparray.tensor([1, 3, 5])
        >>> dparray.bucketize(dparray.tensor([3, 6, 0]), edges).tolist()
        [1, 3, 0]
        >>> dparray.bucketize(dparray.tensor([3, 6, 0]), edges, right=True).tolist()
        [2, 3, 0]
    """
    check_tensor(boundaries, "boundaries", "bucketize")
    if boundaries.ndim != 1:
        raise ValueError(f"bucketize: boundaries must be 1-D, got shape {boundaries.shape}")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def _side(right: bool, side: Any) -> str:
    if side is None:
        return "right" if right else "left"
    side = check_choice(side, "side", "searchsorted", ("left", "right"))
    if right and side == "left":
        raise ValueError("searchsorted: side='left' and right=True contradict each other")
    return str(side)


def _sorted_by(sequence: Any, sorter: Any, original: Tensor) -> Any:
    """The sequence picked in the order ``sorter`` gives, along its last axis."""
    check_tensor(sorter, "sorter", "searchsorted")
    if sorter.shape != original.shape:
        raise ValueError(f"searchsorted: sorter of shape {sorter.shape} must have the "
                         f"sorted_sequence's shape {original.shape}")
    backend = original.backend
    positions = checked_positions(backend, sorter.data, original.shape[-1], "searchsorted",
                                  original.ndim - 1)
    return take_along_axis(backend.xp, sequence, positions, -1)


def _row_positions(xp: Any, sequence: Any, values: Any, side: str) -> Any:
    """``searchsorted`` row by row along the last axis, for every row at once: each value's
    place in one stable sort of the row's values and entries, less its place among the values
    alone, is the number of entries before it. Values placed before the entries break ties
    for ``"left"``, after them for ``"right"``."""
    n, m = sequence.shape[-1], values.shape[-1]
    joined = xp.concat([values, sequence] if side == "left" else [sequence, values], axis=-1)
    rank = _ranks(xp, joined)
    among_all = rank[..., :m] if side == "left" else rank[..., n:]
    return among_all - _ranks(xp, values)


def _ranks(xp: Any, a: Any) -> Any:
    """Each entry's position in a stable sort of its row (last axis)."""
    return xp.argsort(xp.argsort(a, axis=-1, stable=True), axis=-1, stable=True)
