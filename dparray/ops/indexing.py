"""Indexing: basic keys (ints, slices, None, ...) and integer-array ``take``.

``x[key]`` with ints, slices, ``None`` and ``...`` is a view whose gradient is scattered back
into zeros. An integer tensor (or list of ints) as the key, or as the one non-``:`` entry of a
tuple key, gathers rows along that axis; its gradient goes through the backend's
``scatter_add``, so repeated indices accumulate. Boolean masks are not supported: their result
shape depends on the data (use ``where``).
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function
from dparray.ops._util import normalize_axis
from dparray.tensor import Tensor

_BASIC = (int, slice, type(None), type(Ellipsis))


class GetItem(Function):
    """``x[key]`` for a basic key."""

    def __init__(self, key: tuple[Any, ...]) -> None:
        self.key = key

    def forward(self, x: Any) -> Any:
        self.input_shape, self.dtype = tuple(x.shape), x.dtype
        return x[self.key]

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        out = xp.zeros(self.input_shape, dtype=self.dtype)
        key = tuple(k for k in self.key if k is not None)  # None only added size-1 axes
        out[key] = xp.reshape(grad, out[key].shape)
        return out


class Take(Function):
    """Rows ``index`` of ``x`` along ``axis``; ``index`` may have any shape."""

    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, x: Any, index: Any) -> Any:
        xp = self.xp
        axis = normalize_axis(self.axis, x.ndim, "take")
        length = x.shape[axis]
        if index.dtype == xp.bool or not xp.isdtype(index.dtype, "integral"):
            raise TypeError(f"take: the index must be an integer tensor, got {index.dtype}")
        if index.size and (int(xp.min(index)) < -length or int(xp.max(index)) >= length):
            raise IndexError(
                f"take: an index in [{int(xp.min(index))}, {int(xp.max(index))}] is out of "
                f"range for axis {axis} of size {length}"
            )
        flat = xp.reshape(index, (-1,))
        flat = xp.where(flat < 0, flat + length, flat)
        self.axis, self.input_shape, self.dtype = axis, tuple(x.shape), x.dtype
        self.save(flat)
        gathered = xp.take(x, flat, axis=axis)
        shape = (*x.shape[:axis], *index.shape, *x.shape[axis + 1:])
        return xp.reshape(gathered, shape)

    def backward(self, grad: Any) -> tuple[Any, None]:
        xp = self.xp
        (flat,) = self.saved
        axis, shape = self.axis, self.input_shape
        order = (axis, *(i for i in range(len(shape)) if i != axis))
        moved_shape = tuple(shape[i] for i in order)
        grad = xp.reshape(grad, (*shape[:axis], flat.shape[0], *shape[axis + 1:]))
        rows = xp.reshape(xp.permute_dims(grad, order), (flat.shape[0], -1))
        target = xp.zeros((shape[axis], rows.shape[1]), dtype=self.dtype)
        summed = xp.reshape(self.backend.scatter_add(target, flat, rows), moved_shape)
        inverse = sorted(range(len(order)), key=order.__getitem__)
        return xp.permute_dims(summed, tuple(inverse)), None


def getitem(x: Tensor, key: Any) -> Tensor:
    """``x[key]``: basic indexing, or an integer-array take along one axis."""
    parts = key if isinstance(key, tuple) else (key,)
    arrays = [i for i, k in enumerate(parts) if not isinstance(k, _BASIC)]
    if not arrays:
        if Ellipsis not in parts:
            parts = (*parts, Ellipsis)  # the standard wants every axis named; NumPy implies this
        return GetItem(parts)(x)
    if len(arrays) > 1 or any(k != slice(None) for i, k in enumerate(parts) if i != arrays[0]):
        raise TypeError(
            "indexing with an integer array supports one array, with only ':' beside it; got "
            f"{key!r:.80}"
        )
    return take(x, parts[arrays[0]], axis=arrays[0])


def take(x: Tensor, index: Any, axis: int = 0) -> Tensor:
    """Elements of ``x`` at integer positions ``index`` along ``axis`` (like ``numpy.take``,
    ``index`` may have any shape; negative positions count from the end)."""
    if not isinstance(index, Tensor):
        if isinstance(index, bool) or not isinstance(index, (list, tuple)):
            raise TypeError(
                f"cannot index with {type(index).__name__}; use ints, slices, None, ... or an "
                "integer tensor"
            )
        from dparray.creation import tensor

        index = tensor(index, backend=x.backend)
    return Take(axis)(x, index)
