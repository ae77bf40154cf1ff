"""Indexing: ``x[key]``, take, index_select, gather, scatter, scatter_add, scatter_reduce and
masked_fill.

``x[key]`` follows PyTorch (``dparray.ops._index_key`` normalises a key): ints, slices, ``None``
and ``...`` are *basic* and applied first, as a view whose gradient is written back into zeros;
then the *advanced* entries -- integer tensors (or lists of ints) and boolean masks -- index
that view together: several integer arrays are broadcast together, a mask stands for the
positions of its True entries (so the result's shape depends on the data), and the broadcast
axes of the result take the arrays' place when they are next to each other in the view,
otherwise they come first. An int is basic, so ``x[0, :, index]`` keeps ``index``'s axis
where it is (NumPy, which counts the int as an advanced index, moves it first). Advanced keys
are computed portably, as one ``take`` at a linear position into the indexed axes; the
gradient goes through the backend's ``scatter_add``, so repeated positions accumulate.

Negative positions count from the end everywhere (in ``gather`` and ``scatter`` too); a position
out of range is an ``IndexError`` raised before anything is computed. Checking the range reads
the index's extremes on the host once per call (on a GPU, a synchronisation).
"""

from __future__ import annotations

import math
from typing import Any

from dparray import dtypes as _dtypes
from dparray._checks import (
    check_bool,
    check_choice,
    check_int,
    check_number,
    check_tensor,
    describe,
    normalize_axis,
)
from dparray.autograd import Function, SliceGradient
from dparray.backend import Backend
from dparray.ops._index_key import index_tensor, normalize_key, placement
from dparray.ops._util import PYTHON_SCALARS, broadcast_shapes
from dparray.ops.elementwise import where
from dparray.ops.scatter_reduce import REDUCTIONS, ScatterReduce
from dparray.tensor import Tensor, from_op

__all__ = [
    "getitem",
    "take",
    "gather",
    "index_select",
    "masked_fill",
    "scatter",
    "scatter_add",
    "scatter_reduce",
]


class GetItem(Function):
    """``x[key]`` for a basic key that names every axis. Its gradient is a ``SliceGradient``,
    which the engine adds into one buffer for all the slices taken of ``x``."""

    def __init__(self, key: tuple[Any, ...]) -> None:
        self.key = key

    def forward(self, x: Any) -> Any:
        self.input_shape, self.dtype = tuple(x.shape), x.dtype
        return x[self.key]

    def backward(self, grad: Any) -> SliceGradient:
        key = self.key
        if any(k is None for k in key):  # None only added size-1 axes: drop them
            kept = [k for k in key if not isinstance(k, int)]  # the entries that keep an axis
            shape = tuple(n for k, n in zip(kept, grad.shape, strict=True) if k is not None)
            key = tuple(k for k in key if k is not None)
            grad = self.xp.reshape(grad, shape)
        return SliceGradient(self.xp, self.input_shape, self.dtype, key, grad)


class Take(Function):
    """Rows ``index`` of ``x`` along ``axis``; ``index`` may have any shape."""

    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, x: Any, index: Any) -> Any:
        xp = self.xp
        axis = normalize_axis(self.axis, x.ndim, "take")
        flat = xp.reshape(checked_positions(self.backend, index, x.shape[axis], "take", axis),
                          (-1,))
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
        rest = math.prod(moved_shape[1:])
        rows = xp.reshape(xp.permute_dims(grad, order), (flat.shape[0], rest))
        target = xp.zeros((shape[axis], rest), dtype=self.dtype)
        summed = xp.reshape(_scatter_add(self.backend, target, flat, rows), moved_shape)
        return xp.permute_dims(summed, _inverse(order)), None


class IndexArrays(Function):
    """``y`` indexed at ``axes`` by integer arrays broadcast together (NumPy's advanced
    indexing), as one take at a linear position into those axes."""

    def __init__(self, axes: tuple[int, ...], names: tuple[int, ...]) -> None:
        self.axes = axes  # the indexed axes of y
        self.names = names  # the same axes as the caller's tensor numbers them (for messages)

    def forward(self, y: Any, *indices: Any) -> Any:
        xp = self.xp
        shapes = [tuple(i.shape) for i in indices]
        try:
            shape = broadcast_shapes("indexing", *shapes)
        except ValueError:
            raise IndexError(
                f"indexing: index arrays of shapes {', '.join(map(str, shapes))} cannot be "
                "broadcast together"
            ) from None
        sizes = tuple(y.shape[a] for a in self.axes)
        linear = None
        for index, size, name in zip(indices, sizes, self.names, strict=True):
            position = checked_positions(self.backend, index, size, "indexing", name)
            linear = position if linear is None else linear * size + position
        linear = xp.reshape(xp.broadcast_to(linear, shape), (-1,))
        rest = tuple(a for a in range(y.ndim) if a not in self.axes)
        self.order = (*self.axes, *rest)
        self.moved_shape = tuple(y.shape[a] for a in self.order)
        self.rest_size = math.prod(y.shape[a] for a in rest)
        self.placement = placement(self.axes, len(shape), len(rest))
        self.dtype = y.dtype
        self.save(linear)
        rows = xp.reshape(xp.permute_dims(y, self.order), (math.prod(sizes), self.rest_size))
        picked = xp.reshape(xp.take(rows, linear, axis=0), (*shape, *self.moved_shape[len(sizes):]))
        return xp.permute_dims(picked, self.placement)

    def backward(self, grad: Any) -> tuple[Any, ...]:
        xp = self.xp
        (linear,) = self.saved
        values = xp.reshape(xp.permute_dims(grad, _inverse(self.placement)),
                            (linear.shape[0], self.rest_size))
        target = xp.zeros((math.prod(self.moved_shape[:len(self.axes)]), self.rest_size),
                          dtype=self.dtype)
        rows = xp.reshape(_scatter_add(self.backend, target, linear, values), self.moved_shape)
        return (xp.permute_dims(rows, _inverse(self.order)), *(None for _ in self.axes))


class Gather(Function):
    """PyTorch's ``gather``: along axis 0, ``out[i, j] = x[index[i, j], j]``, and so on."""

    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, x: Any, index: Any) -> Any:
        xp = self.xp
        axis = normalize_axis(self.axis, x.ndim, "gather")
        _check_index_shape("gather", tuple(x.shape), tuple(index.shape), axis)
        position = checked_positions(self.backend, index, x.shape[axis], "gather", axis)
        linear = _linear_positions(xp, position, axis, tuple(x.shape))
        self.input_shape, self.dtype = tuple(x.shape), x.dtype
        self.save(linear)
        return xp.reshape(xp.take(xp.reshape(x, (-1,)), linear, axis=0), tuple(index.shape))

    def backward(self, grad: Any) -> tuple[Any, None]:
        xp = self.xp
        (linear,) = self.saved
        target = xp.zeros((math.prod(self.input_shape),), dtype=self.dtype)
        summed = _scatter_add(self.backend, target, linear, xp.reshape(grad, (-1,)))
        return xp.reshape(summed, self.input_shape), None


class Scatter(Function):
    """PyTorch's ``scatter``, out of place: ``x`` with ``src`` (an array of the index's shape,
    or a Python scalar) written at ``index`` along ``axis``; where a position is written more
    than once, the last write wins, as in NumPy's ``put_along_axis``."""

    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, x: Any, index: Any, src: Any) -> Any:
        xp = self.xp
        axis = normalize_axis(self.axis, x.ndim, "scatter")
        _check_index_shape("scatter", tuple(x.shape), tuple(index.shape), axis)
        scalar = isinstance(src, PYTHON_SCALARS)
        if not scalar and (tuple(src.shape) != tuple(index.shape) or src.dtype != x.dtype):
            raise ValueError(
                f"scatter: src needs the index's shape {tuple(index.shape)} and the tensor's "
                f"dtype, got shape {tuple(src.shape)} of {src.dtype}"
            )
        position = checked_positions(self.backend, index, x.shape[axis], "scatter", axis)
        linear = _linear_positions(xp, position, axis, tuple(x.shape))
        size = math.prod(x.shape)
        if linear.shape[0]:
            hit, source = last_writes(xp, linear, size)
        else:
            hit, source = xp.zeros((size,), dtype=xp.bool), xp.zeros((size,), dtype=xp.int64)
        self.input_shape, self.index_shape = tuple(x.shape), tuple(index.shape)
        self.save(hit, linear, source)
        if not linear.shape[0]:  # nothing written (an empty index): x as it is
            return x
        values = src if scalar else xp.take(xp.reshape(src, (-1,)), source, axis=0)
        return xp.reshape(xp.where(hit, values, xp.reshape(x, (-1,))), self.input_shape)

    def backward(self, grad: Any) -> tuple[Any, None, Any]:
        xp = self.xp
        hit, linear, source = self.saved
        flat = xp.reshape(grad, (-1,))
        grad_x = grad_src = None
        if self.needs_grad(0):
            grad_x = xp.reshape(xp.where(hit, 0.0, flat), self.input_shape)
        if self.needs_grad(2):  # only the write that won reaches the output
            won = xp.take(source, linear, axis=0) == xp.arange(linear.shape[0], dtype=xp.int64)
            picked = xp.where(won, xp.take(flat, linear, axis=0), 0.0)
            grad_src = xp.reshape(picked, self.index_shape)
        return grad_x, None, grad_src


class ScatterAdd(Function):
    """PyTorch's ``scatter_add``, out of place: ``x`` plus ``src`` added at ``index`` along
    ``axis``; repeated positions accumulate."""

    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, x: Any, index: Any, src: Any) -> Any:
        xp = self.xp
        axis = normalize_axis(self.axis, x.ndim, "scatter_add")
        _check_index_shape("scatter_add", tuple(x.shape), tuple(index.shape), axis)
        if tuple(src.shape) != tuple(index.shape) or src.dtype != x.dtype or x.dtype == xp.bool:
            raise ValueError(
                f"scatter_add: src needs the index's shape {tuple(index.shape)} and the "
                f"tensor's numeric dtype, got shape {tuple(src.shape)} of {src.dtype}"
            )
        position = checked_positions(self.backend, index, x.shape[axis], "scatter_add", axis)
        linear = _linear_positions(xp, position, axis, tuple(x.shape))
        self.index_shape = tuple(index.shape)
        self.save(linear)
        summed = _scatter_add(self.backend, xp.reshape(x, (-1,)), linear, xp.reshape(src, (-1,)))
        return xp.reshape(summed, tuple(x.shape))

    def backward(self, grad: Any) -> tuple[Any, None, Any]:
        xp = self.xp
        (linear,) = self.saved
        picked = xp.take(xp.reshape(grad, (-1,)), linear, axis=0)
        return grad, None, xp.reshape(picked, self.index_shape)


def getitem(x: Tensor, key: Any) -> Tensor:
    """``x[key]`` with PyTorch's rules: basic indexing (ints, slices, ``None``, ``...``) first,
    then integer arrays (several broadcast together) and boolean masks; differentiable in
    ``x``.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        >>> x[:, [2, 0]].tolist()
        [[3.0, 1.0], [6.0, 4.0]]
        >>> x[[0, 1, 1], [2, 0, -1]].tolist()
        [3.0, 4.0, 6.0]
        >>> x[x > 2.5].tolist()
        [3.0, 4.0, 5.0, 6.0]
    """
    normalized = normalize_key(x, key)
    whole = normalized.view_is_whole
    view = x if whole else GetItem(normalized.basic)(x)
    if not normalized.indices:
        return view
    if whole and len(normalized.indices) == 1:  # the common case: rows along one axis
        return Take(normalized.axes[0])(x, normalized.indices[0])
    return IndexArrays(normalized.axes, normalized.names)(view, *normalized.indices)


def take(x: Tensor, index: Any, axis: int = 0) -> Tensor:
    """Elements of ``x`` at integer positions ``index`` along ``axis`` (like ``numpy.take``,
    ``index`` may have any shape; negative positions count from the end)."""
    check_tensor(x, "x", "take")
    return Take(check_int(axis, "axis", "take"))(x, _index_argument(index, x, "take"))


def index_select(x: Tensor, axis: int, index: Any) -> Tensor:
    """PyTorch's ``index_select``: the entries at the 1-D integer positions ``index`` along
    ``axis``, that axis keeping its place.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        >>> dparray.index_select(x, 1, dparray.tensor([2, 0])).tolist()
        [[3.0, 1.0], [6.0, 4.0]]
    """
    check_tensor(x, "x", "index_select")
    axis = check_int(axis, "axis", "index_select")
    index = _index_argument(index, x, "index_select")
    if index.ndim > 1:
        raise ValueError(f"index_select: index must be 1-D, got shape {index.shape}")
    return Take(axis)(x, index if index.ndim else index.reshape(1))


def gather(x: Tensor, axis: int, index: Any) -> Tensor:
    """PyTorch's ``gather(input, dim, index)``: the result has the index's shape, and along
    ``axis`` each entry is read at the position the index gives (elsewhere at its own
    coordinates). ``index`` has ``x``'s number of dimensions, and no axis longer than ``x``'s
    except ``axis`` itself. The gradient is a ``scatter_add`` of the output's.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> dparray.gather(x, 1, dparray.tensor([[0, 0], [1, 0]])).tolist()
        [[1.0, 1.0], [4.0, 3.0]]
    """
    check_tensor(x, "x", "gather")
    axis = check_int(axis, "axis", "gather")
    return Gather(axis)(x, _index_argument(index, x, "gather"))


def scatter(x: Tensor, axis: int, index: Any, src: Any = None, *, value: Any = None,
            reduce: str | None = None) -> Tensor:
    """PyTorch's ``scatter``, out of place: a copy of ``x`` with the entries of ``src`` (a
    tensor at least as large as ``index`` in every axis, or a Python number; or ``value=``)
    written where ``index`` points along ``axis``. Where a position is written more than once,
    the last write wins (PyTorch leaves that undefined). Differentiable in ``x`` (zero where
    written) and ``src`` (the gradient at the written positions). PyTorch's ``reduce="add"``
    or ``"multiply"`` combines the entries with ``x``'s instead: ``scatter_reduce`` with
    ``"sum"`` or ``"prod"`` and ``include_self=True``.

    Examples:
        >>> import dparray
        >>> x = dparray.zeros(2, 3)
        >>> src = dparray.tensor([[5.0], [7.0]])
        >>> dparray.scatter(x, 1, dparray.tensor([[2], [0]]), src).tolist()
        [[0.0, 0.0, 5.0], [7.0, 0.0, 0.0]]
        >>> dparray.scatter(x, 0, dparray.tensor([[1, 0, 1]]), value=-1.0).tolist()
        [[0.0, -1.0, 0.0], [-1.0, 0.0, -1.0]]
    """
    check_tensor(x, "x", "scatter")
    axis = check_int(axis, "axis", "scatter")
    index = _index_argument(index, x, "scatter")
    if (src is None) == (value is None):
        raise TypeError("scatter: give exactly one of src and value")
    if reduce is not None:
        mode = check_choice(reduce, "reduce", "scatter", ("add", "multiply"))
        given = src if value is None else value
        if not isinstance(given, Tensor):
            given = fill_value(given, x, "scatter", "src" if value is None else "value")
            given = from_op(x.backend.xp.full(index.shape, given, dtype=x.data.dtype),
                            x.backend, None)
        return _scatter_reduce("scatter", x, axis, index, given,
                               "sum" if mode == "add" else "prod", True)
    if value is not None or not isinstance(src, Tensor):
        given, name = (src, "src") if value is None else (value, "value")
        return Scatter(axis)(x, index, fill_value(given, x, "scatter", name))
    return Scatter(axis)(x, index, _source(src, index, x, "scatter"))


def scatter_add(x: Tensor, axis: int, index: Any, src: Tensor) -> Tensor:
    """PyTorch's ``scatter_add``, out of place: a copy of ``x`` with the entries of ``src``
    (at least as large as ``index`` in every axis) added where ``index`` points along ``axis``;
    repeated positions accumulate. Differentiable in ``x`` and ``src``.

    Examples:
        >>> import dparray
        >>> x = dparray.zeros(4)
        >>> dparray.scatter_add(x, 0, dparray.tensor([0, 2, 0]), dparray.ones(3)).tolist()
        [2.0, 0.0, 1.0, 0.0]
    """
    check_tensor(x, "x", "scatter_add")
    axis = check_int(axis, "axis", "scatter_add")
    index = _index_argument(index, x, "scatter_add")
    check_tensor(src, "src", "scatter_add")
    return ScatterAdd(axis)(x, index, _source(src, index, x, "scatter_add"))


def scatter_reduce(x: Tensor, axis: int, index: Any, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """PyTorch's ``scatter_reduce``, out of place: a copy of ``x`` where every position that
    ``index`` names along ``axis`` holds the ``reduce`` -- ``"sum"``, ``"prod"``, ``"mean"``,
    ``"amax"`` or ``"amin"`` -- of the entries of ``src`` sent there, and of ``x``'s own value
    there when ``include_self`` (positions no entry names keep ``x``'s value). An integer mean
    rounds down, as in PyTorch. Differentiable in ``x`` and ``src``; ties of ``amax`` and
    ``amin`` share the gradient equally, as in PyTorch.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([1.0, 2.0, 3.0])
        >>> src = dparray.tensor([5.0, 6.0, 7.0, 8.0])
        >>> index = dparray.tensor([0, 0, 2, 2])
        >>> dparray.scatter_reduce(x, 0, index, src, "amax").tolist()
        [6.0, 2.0, 8.0]
        >>> dparray.scatter_reduce(x, 0, index, src, "mean", include_self=False).tolist()
        [5.5, 2.0, 7.5]
    """
    check_tensor(x, "x", "scatter_reduce")
    check_tensor(src, "src", "scatter_reduce")
    mode = check_choice(reduce, "reduce", "scatter_reduce", REDUCTIONS)
    include_self = check_bool(include_self, "include_self", "scatter_reduce")
    return _scatter_reduce("scatter_reduce", x, axis, index, src, mode, include_self)


def _scatter_reduce(where: str, x: Tensor, axis: Any, index: Any, src: Tensor, mode: str,
                    include_self: bool) -> Tensor:
    axis = normalize_axis(check_int(axis, "axis", where), x.ndim, where)
    index = _index_argument(index, x, where)
    if x.dtype.kind == "bool":
        raise TypeError(f"{where}: needs a tensor of numbers, got {x.dtype.name}")
    src = _source(src, index, x, where)
    _check_index_shape(where, x.shape, index.shape, axis)
    xp = x.backend.xp
    position = checked_positions(x.backend, index.data, x.shape[axis], where, axis)
    linear = _linear_positions(xp, position, axis, x.shape)
    return ScatterReduce(mode, include_self, linear)(x, src)


def masked_fill(x: Tensor, mask: Tensor, value: Any) -> Tensor:
    """``x`` with ``value`` (a Python number or a 0-d tensor) where the boolean ``mask`` (which
    broadcasts to ``x``'s shape) is True; the gradient is zero at the filled places.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> causal = dparray.tensor([[False, True], [False, False]])
        >>> dparray.masked_fill(x, causal, float("-inf")).tolist()
        [[1.0, -inf], [3.0, 4.0]]
    """
    check_tensor(x, "x", "masked_fill")
    check_tensor(mask, "mask", "masked_fill")
    if mask.dtype.kind != "bool":
        raise TypeError(f"masked_fill: mask must be a bool tensor, got {mask.dtype.name}")
    try:
        fits = broadcast_shapes("masked_fill", mask.shape, x.shape) == x.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"masked_fill: a mask of shape {mask.shape} does not broadcast to the tensor's "
            f"shape {x.shape}"
        )
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"masked_fill: a tensor value must be 0-d, got shape {value.shape}")
        if value.dtype.kind != x.dtype.kind:
            raise TypeError(
                f"masked_fill: value of dtype {value.dtype.name} does not fit a tensor of "
                f"{x.dtype.name}"
            )
        value = value if value.dtype is x.dtype else value.astype(x.dtype)
    else:
        value = fill_value(value, x, "masked_fill")
    return where(mask, value, x)


def checked_positions(backend: Backend, index: Any, size: int, where: str, axis: int) -> Any:
    """``index`` (an integer array) as int64 positions in ``[0, size)``, negative ones counted
    from the end; an IndexError naming a position out of range, a TypeError for a non-integer
    index."""
    xp = backend.xp
    if index.dtype == xp.bool or not xp.isdtype(index.dtype, "integral"):
        name = _dtypes.from_native(backend, index.dtype).name
        raise TypeError(f"{where}: the index must be an integer tensor, got {name}")
    index = xp.astype(index, xp.int64)
    if math.prod(index.shape):
        low, high = int(xp.min(index)), int(xp.max(index))
        if low < -size or high >= size:
            bad = high if high >= size else low
            raise IndexError(
                f"{where}: index {bad} is out of range for axis {axis} of size {size}"
            )
    return xp.where(index < 0, index + size, index)


def fill_value(value: Any, x: Tensor, where: str, name: str = "value") -> Any:
    """``value`` as a Python scalar that fits ``x``'s dtype: a bool for bool tensors, an int
    for integer ones, a number (infinities allowed) for floating ones."""
    kind = x.dtype.kind
    if kind == "bool":
        return check_bool(value, name, where)
    if kind in ("int", "uint"):
        return check_int(value, name, where)
    return check_number(value, name, where, finite=False)


def _index_argument(index: Any, x: Tensor, where: str) -> Tensor:
    """An integer index given to a function: a tensor as it is, a list as a tensor."""
    if not isinstance(index, Tensor):
        if isinstance(index, bool) or not isinstance(index, (list, tuple)):
            raise TypeError(
                f"{where}: index must be an integer tensor or a list of ints, got "
                f"{describe(index)}"
            )
        index = index_tensor(index, x.backend)
    if index.dtype.kind not in ("int", "uint"):
        raise TypeError(f"{where}: index must be an integer tensor, got {index.dtype.name}")
    return index


def _source(src: Tensor, index: Tensor, x: Tensor, where: str) -> Tensor:
    """``src`` cut down to the index's shape (PyTorch reads only that corner of it)."""
    if src.dtype is not x.dtype:
        raise TypeError(
            f"{where}: src must have the tensor's dtype {x.dtype.name}, got {src.dtype.name}"
        )
    if src.ndim != index.ndim or any(s < i for s, i in zip(src.shape, index.shape,
                                                              strict=True)):
        raise ValueError(
            f"{where}: src of shape {src.shape} must be at least as large as the index "
            f"{index.shape} in every axis"
        )
    if src.shape == index.shape:
        return src
    return GetItem(tuple(slice(0, n) for n in index.shape))(src)


def _check_index_shape(where: str, shape: tuple[int, ...], index_shape: tuple[int, ...],
                       axis: int) -> None:
    if len(index_shape) != len(shape) or any(
            i > n for d, (i, n) in enumerate(zip(index_shape, shape, strict=True)) if d != axis):
        raise ValueError(
            f"{where}: the index of shape {index_shape} must have the tensor's {len(shape)} "
            f"dimensions and be no larger than its shape {shape} outside axis {axis}"
        )


def _linear_positions(xp: Any, position: Any, axis: int, shape: tuple[int, ...]) -> Any:
    """The row-major flat position, in an array of ``shape``, of each entry of ``position``:
    ``position`` itself along ``axis``, the entry's own coordinates along the other axes."""
    linear = None
    stride = 1
    for d in reversed(range(len(shape))):
        if d == axis:
            coordinate = position
        else:
            along = tuple(n if i == d else 1 for i, n in enumerate(position.shape))
            coordinate = xp.reshape(xp.arange(position.shape[d], dtype=xp.int64), along)
        term = coordinate * stride
        linear = term if linear is None else linear + term
        stride *= shape[d]
    return xp.reshape(xp.broadcast_to(linear, tuple(position.shape)), (-1,))


def last_writes(xp: Any, linear: Any, size: int) -> tuple[Any, Any]:
    """For each of ``size`` flat positions: whether ``linear`` writes it, and which entry of
    ``linear`` writes it last (a stable sort, then a search for each position's last entry)."""
    order = xp.argsort(linear, stable=True)
    ordered = xp.take(linear, order, axis=0)
    positions = xp.arange(size, dtype=xp.int64)
    last = xp.clip(xp.searchsorted(ordered, positions, side="right") - 1, 0, None)
    return xp.take(ordered, last, axis=0) == positions, xp.take(order, last, axis=0)


def _scatter_add(backend: Backend, target: Any, index: Any, values: Any) -> Any:
    """``backend.scatter_add``, skipped when there is nothing to add (not every backend's
    accepts an empty index)."""
    return backend.scatter_add(target, index, values) if index.shape[0] else target


def _inverse(order: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted(range(len(order)), key=order.__getitem__))
