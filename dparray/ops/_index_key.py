"""A key of ``x[key]`` normalised the way PyTorch applies it: once, for reading and writing.

``normalize_key(x, key)`` splits a key into a *basic* part, applied first as a view, and the
*advanced* index tensors applied to that view together:

* ints (and 0-d integer tensors, read on the host as PyTorch reads them) select, removing their
  axis; ``None`` adds a size-1 axis; slices keep theirs (their bounds brought inside the axis,
  as Python clips them); ``...`` stands for as many full slices as the key leaves axes
  unnamed -- all of them basic, and applied first;
* integer tensors and lists of ints are index arrays, broadcast together; a bool mask stands for
  the positions of its True entries (one index array per axis it covers), so the result's shape
  depends on the data. They index the axes of the view at ``axes``: the broadcast axes of the
  result take their place when those axes are next to each other in the view, else they come
  first (``placement``).

So an int never separates two index arrays, which it does in NumPy (where it counts as an
advanced index): ``x[0, :, i]`` keeps the axis of ``i`` last, as in PyTorch. ``x[key]``
(``dparray.ops.indexing.getitem``) and ``x[key] = value`` both read keys through here.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

from dparray.backend import Backend
from dparray.creation import tensor
from dparray.tensor import Tensor


@dataclass(frozen=True)
class IndexKey:
    """A normalised key: ``x[key]`` is ``x[basic]`` (a view), then that view indexed at
    ``axes`` by ``indices`` (broadcast together), placed as ``placement`` says.

    ``basic`` names every axis of ``x`` (ints, slices and ``None``; a full slice where an index
    array goes); ``indices`` are integer tensors on ``x``'s backend, masks replaced by their
    positions; ``axes`` are the axes of the view they index, and ``names`` the same axes as
    ``x`` numbers them (for messages).
    """

    basic: tuple[Any, ...]
    indices: tuple[Tensor, ...]
    axes: tuple[int, ...]
    names: tuple[int, ...]

    @property
    def view_is_whole(self) -> bool:
        """Whether ``basic`` is all full slices (the view is ``x`` itself)."""
        return all(isinstance(k, slice) and k == slice(None) for k in self.basic)


def normalize_key(x: Tensor, key: Any) -> IndexKey:
    """``key`` (anything ``x[key]`` takes) as an ``IndexKey`` for ``x``: an IndexError for an
    int out of range, too many indices, two ellipses or a mask of the wrong shape; a TypeError
    for an entry that is not an index."""
    parts = _expand(x, key if isinstance(key, tuple) else (key,))
    basic: list[Any] = []
    indices: list[Tensor] = []
    axes: list[int] = []
    names: list[int] = []
    view_axis = x_axis = 0
    for part in parts:
        if part is None:
            basic.append(None)
            view_axis += 1
        elif type(part) is int:
            basic.append(part)
            x_axis += 1
        elif isinstance(part, slice):
            basic.append(_within(part, x.shape[x_axis]))
            view_axis, x_axis = view_axis + 1, x_axis + 1
        else:
            found = _mask_positions(x, part, x_axis) if part.dtype.kind == "bool" else [part]
            for index in found:
                basic.append(slice(None))
                indices.append(index)
                axes.append(view_axis)
                names.append(x_axis)
                view_axis, x_axis = view_axis + 1, x_axis + 1
    return IndexKey(tuple(basic), tuple(indices), tuple(axes), tuple(names))


def _within(part: slice, size: int) -> slice:
    """``part`` with its bounds inside an axis of ``size``, the same positions (Python's and
    PyTorch's rule for bounds past the ends; the array API leaves such bounds unspecified,
    and array_api_strict refuses them)."""
    if part == slice(None):
        return part
    start, stop, step = part.indices(size)
    if step < 0:  # -1 would count from the end: None reaches the front
        return slice(None if start < 0 else start, None if stop < 0 else stop, step)
    return slice(start, stop, step)


def placement(axes: tuple[int, ...], broadcast: int, rest: int) -> tuple[int, ...]:
    """How the axes of a take from a view -- the ``broadcast`` axes of the index arrays, then
    the ``rest`` of the view's axes, in order -- are placed in the result of ``x[key]``: where
    the indexed ``axes`` were when they are next to each other, else first (a permutation)."""
    start = axes[0]
    if axes != tuple(range(start, start + len(axes))):
        return tuple(range(broadcast + rest))
    return (*range(broadcast, broadcast + start), *range(broadcast),
            *range(broadcast + start, broadcast + rest))


def _expand(x: Tensor, key: tuple[Any, ...]) -> list[Any]:
    """The entries of ``key`` naming every axis of ``x``: ``...`` spelled out as slices,
    lists as tensors, 0-d integer tensors as ints, ints checked against their axis."""
    parts = [_entry(x, k) for k in key]
    ellipses = [i for i, p in enumerate(parts) if p is Ellipsis]
    if len(ellipses) > 1:
        raise IndexError("an index can have only one ellipsis ('...')")
    named = sum(_axes_named(p) for p in parts)
    if named > x.ndim:
        raise IndexError(f"too many indices for a tensor of {x.ndim} dimensions: {named} given")
    fill = [slice(None)] * (x.ndim - named)
    if ellipses:
        parts[ellipses[0]:ellipses[0] + 1] = fill
    else:
        parts.extend(fill)
    axis = 0
    for p in parts:
        if type(p) is int and not -x.shape[axis] <= p < x.shape[axis]:
            raise IndexError(f"index {p} is out of range for axis {axis} of size {x.shape[axis]}")
        axis += _axes_named(p)
    return parts


def _entry(x: Tensor, k: Any) -> Any:
    """One entry of a key: basic entries as they are, anything array-like as a tensor (a 0-d
    integer one as an int, which PyTorch applies as basic indexing)."""
    if k is None or k is Ellipsis or isinstance(k, slice):
        return k
    if isinstance(k, bool):
        raise TypeError("cannot index with a bool; use a bool tensor as a mask")
    if isinstance(k, int):
        return k
    if isinstance(k, Tensor):
        index = k
    elif isinstance(k, (list, tuple)) or hasattr(k, "__dlpack__") or hasattr(k, "__array__"):
        if hasattr(k, "__index__") and getattr(k, "ndim", 1) == 0:
            return operator.index(k)  # a NumPy integer is an int
        index = index_tensor(k, x.backend)
    else:
        raise TypeError(
            f"cannot index with {type(k).__name__}; use ints, slices, None, ..., integer "
            "tensors or bool masks"
        )
    if index.dtype.kind not in ("int", "uint", "bool"):
        raise TypeError(f"cannot index with a {index.dtype.name} tensor; use integers or bools")
    if index.backend is not x.backend:
        raise ValueError(
            f"indexing: cannot index a tensor of backend {x.backend.name!r} with one of "
            f"{index.backend.name!r}; move one with .to(...)"
        )
    if index.dtype.kind == "bool" and index.ndim == 0:
        raise IndexError("indexing with a 0-d bool tensor is not supported; use dparray.where")
    if index.ndim == 0:
        return int(index.item())  # read on the host, as PyTorch does (on a GPU, a sync)
    return index


def _axes_named(part: Any) -> int:
    """How many axes of the indexed tensor a key entry uses up."""
    if part is None or part is Ellipsis:
        return 0
    if isinstance(part, Tensor) and part.dtype.kind == "bool":
        return part.ndim
    return 1


def _mask_positions(x: Tensor, mask: Tensor, axis: int) -> list[Tensor]:
    """The positions of the True entries of ``mask``, which covers axes ``axis..`` of ``x``."""
    covered = x.shape[axis:axis + mask.ndim]
    if mask.shape != covered:
        raise IndexError(
            f"a bool mask of shape {mask.shape} does not match the shape {covered} of the axes "
            f"it indexes (from axis {axis})"
        )
    try:
        found = x.backend.xp.nonzero(mask.data)
    except RuntimeError as error:  # array_api_strict with data-dependent shapes switched off
        raise RuntimeError(
            f"indexing with a bool mask gives a shape that depends on the data, which backend "
            f"{x.backend.name!r} refuses here ({error}); use dparray.where instead"
        ) from error
    return [Tensor(positions, x.backend) for positions in found]


def index_tensor(data: Any, backend: Backend) -> Tensor:
    """An index given as a list (or an array of another library) as a tensor on ``backend``;
    an empty list is no positions (int64), not an empty float tensor."""
    index = tensor(data, backend=backend)
    if index.elem_count() == 0 and index.dtype.kind == "float":
        return tensor(data, dtype="int64", backend=backend)
    return index
