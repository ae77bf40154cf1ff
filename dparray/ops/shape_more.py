"""PyTorch's rearranging ops beyond the array API's: ``unbind``, ``movedim`` (``moveaxis``),
``swapaxes`` (``swapdims``), ``narrow``, ``cartesian_prod`` and ``diff``.

Each is made of slices, ``permute``, ``reshape``, ``stack`` and ``sub``, so each is
differentiable as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dparray._checks import check_int, check_tensor, describe, normalize_axis
from dparray.ops.arithmetic import sub
from dparray.ops.construct import meshgrid
from dparray.ops.shape import cat, permute, reshape, stack, transpose
from dparray.tensor import Tensor, from_op

__all__ = [
    "unbind",
    "movedim",
    "moveaxis",
    "swapaxes",
    "swapdims",
    "narrow",
    "cartesian_prod",
    "diff",
]


def unbind(x: Tensor, axis: int = 0) -> tuple[Tensor, ...]:
    """The slices of ``x`` along ``axis``, each without that axis (PyTorch's ``unbind``).

    Examples:
        >>> import dparray
        >>> rows = dparray.unbind(dparray.tensor([[1, 2], [3, 4]]), dim=1)
        >>> [r.tolist() for r in rows]
        [[1, 3], [2, 4]]
    """
    check_tensor(x, "x", "unbind")
    if x.ndim == 0:
        raise ValueError("unbind: a 0-d tensor has no axis to unbind")
    a = normalize_axis(axis, x.ndim, "unbind")
    keys = [(*(slice(None),) * a, i) for i in range(x.shape[a])]  # (no star in [] on 3.10)
    return tuple(x[key] for key in keys)


def movedim(x: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    """``x`` with its axes ``source`` moved to the positions ``destination`` (ints, or
    sequences of one length), the other axes keeping their order: PyTorch's ``movedim``, the
    array API's ``moveaxis``.

    Examples:
        >>> import dparray
        >>> dparray.movedim(dparray.ones(2, 3, 4), 0, -1).shape
        (3, 4, 2)
        >>> dparray.movedim(dparray.ones(2, 3, 4), (0, 1), (2, 0)).shape
        (3, 4, 2)
    """
    check_tensor(x, "x", "movedim")
    sources = _axes(source, x.ndim, "source")
    destinations = _axes(destination, x.ndim, "destination")
    if len(sources) != len(destinations):
        raise ValueError(f"movedim: {len(sources)} source axes but {len(destinations)} "
                         "destinations")
    order = [a for a in range(x.ndim) if a not in sources]
    for place, a in sorted(zip(destinations, sources, strict=True)):
        order.insert(place, a)
    return x if order == list(range(x.ndim)) else permute(x, tuple(order))


moveaxis = movedim


def swapaxes(x: Tensor, axis0: int, axis1: int) -> Tensor:
    """``x`` with axes ``axis0`` and ``axis1`` exchanged (PyTorch's ``swapaxes`` and
    ``swapdims``, whose ``dim0``/``dim1`` are accepted; ``transpose`` with both axes given).

    Examples:
        >>> import dparray
        >>> dparray.swapdims(dparray.ones(2, 3, 4), 0, 2).shape
        (4, 3, 2)
    """
    check_tensor(x, "x", "swapaxes")
    return transpose(x, normalize_axis(axis0, x.ndim, "swapaxes"),
                     normalize_axis(axis1, x.ndim, "swapaxes"))


swapdims = swapaxes


def narrow(x: Tensor, axis: int, start: Any, length: int) -> Tensor:
    """``length`` entries along ``axis`` from ``start`` (negative: from the end; an int or a
    0-d integer tensor), as PyTorch's ``narrow(input, dim, start, length)``; differentiable.

    Examples:
        >>> import dparray
        >>> dparray.narrow(dparray.tensor([[1, 2, 3], [4, 5, 6]]), 1, -2, 2).tolist()
        [[2, 3], [5, 6]]
    """
    check_tensor(x, "x", "narrow")
    axis = normalize_axis(axis, x.ndim, "narrow")
    size = x.shape[axis]
    if isinstance(start, Tensor) and start.ndim == 0 and start.dtype.kind in ("int", "uint"):
        start = start.item()
    start = check_int(start, "start", "narrow", minimum=-size, maximum=size)
    start %= size if size else 1
    length = check_int(length, "length", "narrow", minimum=0)
    if start + length > size:
        raise ValueError(f"narrow: start ({start}) + length ({length}) exceeds the size "
                         f"{size} of axis {axis}")
    return x[(slice(None),) * axis + (slice(start, start + length),)]


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one entry from each 1-D tensor, one per row, the last tensor's
    entry changing fastest: shape ``(n1 * n2 * ..., k)`` for ``k`` tensors, and a single
    tensor itself (PyTorch's ``cartesian_prod``; the tensors share one dtype, as there).

    Examples:
        >>> import dparray
        >>> a, b = dparray.tensor([1, 2]), dparray.tensor([3, 4, 5])
        >>> dparray.cartesian_prod(a, b).tolist()
        [[1, 3], [1, 4], [1, 5], [2, 3], [2, 4], [2, 5]]
    """
    if not tensors:
        raise TypeError("cartesian_prod: needs at least one tensor")
    for i, t in enumerate(tensors):
        check_tensor(t, f"tensors[{i}]", "cartesian_prod")
        if t.ndim != 1:
            raise ValueError(f"cartesian_prod: tensors[{i}] must be 1-D, got shape {t.shape}")
        if t.dtype is not tensors[0].dtype:
            raise TypeError(f"cartesian_prod: the tensors need one dtype, got "
                            f"{tensors[0].dtype.name} and {t.dtype.name}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return reshape(stack(grids, axis=-1), (-1, len(tensors)))


def diff(x: Tensor, n: int = 1, axis: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference along ``axis``, ``out[i] = x[i + 1] - x[i]`` applied
    ``n`` times, after joining ``prepend`` and ``append`` (tensors of ``x``'s shape but along
    ``axis``) to either end (PyTorch's and the array API's ``diff``). Of a bool tensor, whether
    neighbours differ, as PyTorch's.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([1, 3, 6, 10])
        >>> dparray.diff(x).tolist(), dparray.diff(x, n=2).tolist()
        ([2, 3, 4], [1, 1])
        >>> dparray.diff(x, prepend=dparray.tensor([0])).tolist()
        [1, 2, 3, 4]
    """
    check_tensor(x, "x", "diff")
    if x.ndim == 0:
        raise ValueError("diff: needs at least 1 dimension, got a 0-d tensor")
    n = check_int(n, "n", "diff", minimum=0)
    a = normalize_axis(axis, x.ndim, "diff")
    pieces = [x]
    for name, extra in (("prepend", prepend), ("append", append)):
        if extra is None:
            continue
        if not isinstance(extra, Tensor):
            raise TypeError(f"diff: {name} must be a Tensor, got {describe(extra)}")
        if extra.ndim != x.ndim or any(m != k for i, (m, k) in
                                       enumerate(zip(extra.shape, x.shape, strict=True))
                                       if i != a):
            raise ValueError(f"diff: {name} of shape {extra.shape} must match the tensor's "
                             f"shape {x.shape} outside axis {a}")
        pieces.insert(0 if name == "prepend" else len(pieces), extra)
    if len(pieces) > 1:
        x = cat(pieces, axis=a)
    after, before = (*(slice(None),) * a, slice(1, None)), (*(slice(None),) * a, slice(None, -1))
    for _ in range(n):
        if x.shape[a] == 0:
            break
        later, earlier = x[after], x[before]
        if x.dtype.kind == "bool":
            xp = x.backend.xp
            x = from_op(xp.not_equal(later.data, earlier.data), x.backend, None)
        else:
            x = sub(later, earlier)
    return x


def _axes(value: Any, ndim: int, name: str) -> list[int]:
    """``movedim``'s ``source`` or ``destination`` as distinct non-negative axes."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    axes = [normalize_axis(check_int(a, name, "movedim"), ndim, "movedim") for a in items]
    if len(set(axes)) != len(axes):
        raise ValueError(f"movedim: repeated axis in {name} {value!r}")
    return axes
