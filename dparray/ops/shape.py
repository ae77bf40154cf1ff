"""Ops that move elements without computing on them: reshape, permute, broadcast, join, split,
flip, roll, tile, repeat_interleave, clone."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dparray._checks import check_int, check_tensor, normalize_axes, normalize_axis
from dparray.autograd import Function, PickGradient
from dparray.ops._promote import promote_all
from dparray.ops._util import broadcast_shapes
from dparray.ops.indexing import take
from dparray.tensor import Tensor

__all__ = [
    "broadcast_to",
    "cat",
    "chunk",
    "concat",
    "expand",
    "flatten",
    "permute",
    "reshape",
    "split",
    "squeeze",
    "stack",
    "transpose",
    "unsqueeze",
    "clone",
    "flip",
    "repeat_interleave",
    "roll",
    "tile",
    "unflatten",
]


class Reshape(Function):
    """The same elements in a new shape (one entry may be -1). A gradient of one value per
    row (``PickGradient``: a loss's over logits reshaped to rows) stays one."""

    takes_pick_gradients = True

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape

    def forward(self, x: Any) -> Any:
        self.input_shape = tuple(x.shape)
        return self.xp.reshape(x, _resolve_shape(self.shape, self.input_shape))

    def backward(self, grad: Any) -> Any:
        if type(grad) is PickGradient:
            return grad.reshaped(self.input_shape)
        return self.xp.reshape(grad, self.input_shape)


class Permute(Function):
    """Axes reordered: output axis ``i`` is input axis ``axes[i]``."""

    def __init__(self, axes: tuple[int, ...]) -> None:
        self.axes = axes

    def forward(self, x: Any) -> Any:
        axes = tuple(normalize_axis(a, x.ndim, "permute") for a in self.axes)
        if sorted(axes) != list(range(x.ndim)):
            raise ValueError(
                f"permute: {self.axes} is not a permutation of the {x.ndim} axes of {x.shape}"
            )
        self.axes = axes
        return self.xp.permute_dims(x, axes)

    def backward(self, grad: Any) -> Any:
        inverse = [0] * len(self.axes)
        for i, a in enumerate(self.axes):
            inverse[a] = i
        return self.xp.permute_dims(grad, tuple(inverse))


class BroadcastTo(Function):
    """``x`` repeated along broadcast axes; the engine sums the gradient back."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = tuple(shape)

    def forward(self, x: Any) -> Any:
        try:
            fits = broadcast_shapes("broadcast_to", tuple(x.shape), self.shape) == self.shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(
                f"broadcast_to: cannot broadcast shape {tuple(x.shape)} to {self.shape}"
            )
        return self.xp.broadcast_to(x, self.shape)

    def backward(self, grad: Any) -> Any:
        return grad


class Concat(Function):
    """Tensors joined along an existing axis."""

    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, *arrays: Any) -> Any:
        first = arrays[0]
        axis = normalize_axis(self.axis, first.ndim, "cat") if first.ndim else None
        if axis is None:
            raise ValueError("cat: cannot concatenate 0-d tensors; use stack")
        for a in arrays[1:]:
            same = a.ndim == first.ndim and all(
                m == n
                for i, (m, n) in enumerate(zip(a.shape, first.shape, strict=True))
                if i != axis
            )
            if not same:
                raise ValueError(
                    f"cat: shapes {tuple(first.shape)} and {tuple(a.shape)} differ outside "
                    f"axis {self.axis}"
                )
        self.axis = axis
        self.sizes = [a.shape[axis] for a in arrays]
        return self.xp.concat(promote_all(self.backend, arrays), axis=axis)

    def backward(self, grad: Any) -> tuple[Any, ...]:
        grads, start = [], 0
        for size in self.sizes:
            grads.append(_slice_axis(grad, self.axis, start, start + size))
            start += size
        return tuple(grads)


class Stack(Function):
    """Tensors of one shape joined along a new axis."""

    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, *arrays: Any) -> Any:
        first = arrays[0]
        for a in arrays[1:]:
            if tuple(a.shape) != tuple(first.shape):
                raise ValueError(
                    f"stack: all tensors need one shape, got {tuple(first.shape)} and "
                    f"{tuple(a.shape)}"
                )
        self.axis = normalize_axis(self.axis, first.ndim + 1, "stack")
        return self.xp.stack(promote_all(self.backend, arrays), axis=self.axis)

    def backward(self, grad: Any) -> tuple[Any, ...]:
        n = grad.shape[self.axis]
        keys = [(*(slice(None),) * self.axis, i, Ellipsis) for i in range(n)]
        return tuple(grad[key] for key in keys)


class Flip(Function):
    """``x`` with its entries in reverse order along ``axes``."""

    def __init__(self, axes: tuple[int, ...]) -> None:
        self.axes = axes

    def forward(self, x: Any) -> Any:
        return self.xp.flip(x, axis=self.axes)

    def backward(self, grad: Any) -> Any:
        return self.xp.flip(grad, axis=self.axes)


class Roll(Function):
    """``x`` shifted cyclically by ``shifts`` along ``axes`` (flattened when ``axes`` is None);
    the gradient is shifted back."""

    def __init__(self, shifts: int | tuple[int, ...], axes: tuple[int, ...] | None) -> None:
        self.shifts = shifts
        self.axes = axes

    def forward(self, x: Any) -> Any:
        return self.xp.roll(x, shift=self.shifts, axis=self.axes)

    def backward(self, grad: Any) -> Any:
        shifts = self.shifts
        back = -shifts if isinstance(shifts, int) else tuple(-s for s in shifts)
        return self.xp.roll(grad, shift=back, axis=self.axes)


class Clone(Function):
    """A copy of ``x`` in new memory; the gradient passes through."""

    def forward(self, x: Any) -> Any:
        return self.xp.asarray(x, copy=True)

    def backward(self, grad: Any) -> Any:
        return grad


def _slice_axis(array: Any, axis: int, start: int, stop: int) -> Any:
    key = (*(slice(None),) * axis, slice(start, stop), Ellipsis)  # (no star in [] on 3.10)
    return array[key]


def _resolve_shape(shape: Sequence[int], from_shape: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` with its -1 filled in, or a ValueError naming both shapes."""
    shape = tuple(int(n) for n in shape)
    total = math.prod(from_shape)
    unknown = [i for i, n in enumerate(shape) if n == -1]
    known = math.prod(n for n in shape if n != -1)
    bad = len(unknown) > 1 or any(n < -1 for n in shape)
    if not bad and unknown:
        bad = known == 0 or total % known != 0
        if not bad:
            shape = tuple(total // known if n == -1 else n for n in shape)
    if bad or math.prod(shape) != total:
        raise ValueError(
            f"reshape: cannot view shape {from_shape} ({total} elements) as {tuple(shape)}"
        )
    return shape


def reshape(x: Tensor, shape: Sequence[int]) -> Tensor:
    """The elements of ``x`` in ``shape`` (one entry may be -1), in row-major order."""
    return Reshape(_int_tuple(shape, "shape", "reshape"))(x)


def permute(x: Tensor, axes: Sequence[int]) -> Tensor:
    """``x`` with its axes reordered (the array API's ``permute_dims``)."""
    return Permute(_int_tuple(axes, "axes", "permute"))(x)


def transpose(x: Tensor, axis0: int = -2, axis1: int = -1) -> Tensor:
    """``x`` with two axes swapped (the last two by default)."""
    ndim = x.ndim
    a = normalize_axis(axis0, ndim, "transpose")
    b = normalize_axis(axis1, ndim, "transpose")
    axes = list(range(ndim))
    axes[a], axes[b] = axes[b], axes[a]
    return Permute(tuple(axes))(x)


def broadcast_to(x: Tensor, shape: Sequence[int]) -> Tensor:
    """``x`` broadcast to ``shape`` without copying."""
    return BroadcastTo(_int_tuple(shape, "shape", "broadcast_to"))(x)


def expand(x: Tensor, shape: Sequence[int]) -> Tensor:
    """PyTorch's ``expand``: ``broadcast_to`` where -1 keeps a size."""
    shape = _int_tuple(shape, "shape", "expand")
    offset = len(shape) - x.ndim
    if offset < 0:
        raise ValueError(f"expand: shape {shape} has fewer dimensions than the tensor's {x.shape}")
    resolved = tuple(
        x.shape[i - offset] if n == -1 and i >= offset else n for i, n in enumerate(shape)
    )
    return BroadcastTo(resolved)(x)


def squeeze(x: Tensor, axis: Any = None) -> Tensor:
    """``x`` without the size-1 axes among ``axis`` (an int or a tuple; every axis when None).
    An axis named whose size is not 1 stays, as in PyTorch (the array API raises instead).

    Examples:
        >>> import dparray
        >>> dparray.squeeze(dparray.ones(1, 3, 1), (0, 1)).shape
        (3, 1)
    """
    check_tensor(x, "x", "squeeze")
    # PyTorch takes axis 0 or -1 of a 0-d tensor, which has nothing to squeeze
    named = range(x.ndim) if axis is None else normalize_axes(axis, x.ndim or 1, "squeeze")
    axes = tuple(a for a in named if a < x.ndim and x.shape[a] == 1)
    return Reshape(tuple(n for i, n in enumerate(x.shape) if i not in axes))(x)


def unsqueeze(x: Tensor, axis: int) -> Tensor:
    """``x`` with a new size-1 axis at position ``axis``."""
    a = normalize_axis(axis, x.ndim + 1, "unsqueeze")
    shape = x.shape
    return Reshape((*shape[:a], 1, *shape[a:]))(x)


def flatten(x: Tensor, start_axis: int = 0, end_axis: int = -1) -> Tensor:
    """``x`` with axes ``start_axis .. end_axis`` (inclusive) merged into one."""
    if x.ndim == 0:
        return Reshape((1,))(x)
    start = normalize_axis(start_axis, x.ndim, "flatten")
    end = normalize_axis(end_axis, x.ndim, "flatten")
    if start > end:
        raise ValueError(f"flatten: start_axis {start_axis} comes after end_axis {end_axis}")
    shape = x.shape
    return Reshape((*shape[:start], math.prod(shape[start:end + 1]), *shape[end + 1:]))(x)


def unflatten(x: Tensor, axis: int, sizes: Sequence[int]) -> Tensor:
    """``x`` with ``axis`` split into axes of ``sizes`` (one may be -1), PyTorch's
    ``unflatten``: the inverse of ``flatten``.

    Examples:
        >>> import dparray
        >>> dparray.unflatten(dparray.ones(2, 6), 1, (2, -1)).shape
        (2, 2, 3)
    """
    check_tensor(x, "x", "unflatten")
    a = normalize_axis(axis, x.ndim, "unflatten")
    if not isinstance(sizes, (list, tuple)) or not sizes:
        raise TypeError(f"unflatten: sizes must be a non-empty sequence of ints, got "
                        f"{sizes!r:.60}")
    pieces = _int_tuple(sizes, "sizes", "unflatten")
    try:
        pieces = _resolve_shape(pieces, (x.shape[a],))
    except ValueError:
        raise ValueError(f"unflatten: sizes {tuple(sizes)} do not split axis {a} of size "
                         f"{x.shape[a]}") from None
    return Reshape((*x.shape[:a], *pieces, *x.shape[a + 1:]))(x)


def cat(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    """Tensors joined along an existing ``axis`` (the array API's ``concat``)."""
    tensors = _tensor_sequence(tensors, "cat")
    return Concat(axis)(*tensors)


concat = cat


def stack(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    """Tensors of one shape joined along a new ``axis``."""
    tensors = _tensor_sequence(tensors, "stack")
    return Stack(axis)(*tensors)


def split(x: Tensor, split_size_or_sections: int | Sequence[int],
          axis: int = 0) -> tuple[Tensor, ...]:
    """Pieces of ``x`` along ``axis``, as in PyTorch: an int is the size of every piece (the
    last may be smaller); a sequence gives each piece's size and must add up to the axis."""
    a = normalize_axis(axis, x.ndim, "split")
    length = x.shape[a]
    if not isinstance(split_size_or_sections, (list, tuple)):
        size = check_int(split_size_or_sections, "split_size_or_sections", "split", minimum=1)
        # an empty axis is one empty piece, as in PyTorch
        sizes = [min(size, length - start) for start in range(0, length, size)] or [0]
    else:
        sizes = [check_int(n, "each section size", "split", minimum=0)
                 for n in split_size_or_sections]
        if sum(sizes) != length:
            raise ValueError(f"split: sizes {sizes} do not add up to {length} (axis {axis})")
    pieces, start = [], 0
    prefix = (slice(None),) * a
    for n in sizes:
        key = (*prefix, slice(start, start + n))
        pieces.append(x[key])
        start += n
    return tuple(pieces)


def chunk(x: Tensor, chunks: int, axis: int = 0) -> tuple[Tensor, ...]:
    """``x`` in at most ``chunks`` pieces of ``ceil(n / chunks)`` along ``axis`` (PyTorch's
    rule, so there may be fewer pieces than asked for; an empty axis gives ``chunks`` empty
    pieces, as PyTorch's does)."""
    chunks = check_int(chunks, "chunks", "chunk", minimum=1)
    length = x.shape[normalize_axis(axis, x.ndim, "chunk")]
    if length == 0:
        return split(x, [0] * chunks, axis=axis)
    return split(x, -(-length // chunks), axis=axis)


def flip(x: Tensor, axis: Any = None) -> Tensor:
    """``x`` with its entries in reverse order along ``axis`` (an int, a sequence of ints, or
    None for every axis).

    Examples:
        >>> import dparray
        >>> dparray.flip(dparray.tensor([[1, 2], [3, 4]]), axis=1).tolist()
        [[2, 1], [4, 3]]
    """
    check_tensor(x, "x", "flip")
    return Flip(normalize_axes(axis, x.ndim, "flip"))(x)


def roll(x: Tensor, shift: int | Sequence[int] | None = None,
         axis: int | Sequence[int] | None = None) -> Tensor:
    """``x`` shifted cyclically by ``shift`` places along ``axis`` (the array API's ``roll``;
    PyTorch's names ``shifts`` and ``dims`` are accepted too): entries pushed off one end come
    back at the other. With ``axis=None`` the tensor is rolled as if flattened (a shift given
    as a one-element sequence too, as in PyTorch); a sequence of axes takes one shift each (or
    one int shift for all).

    Examples:
        >>> import dparray
        >>> dparray.roll(dparray.tensor([1, 2, 3, 4]), 1).tolist()
        [4, 1, 2, 3]
        >>> dparray.roll(dparray.tensor([[1, 2], [3, 4]]), shifts=(1, 1), dims=(0, 1)).tolist()
        [[4, 3], [2, 1]]
    """
    check_tensor(x, "x", "roll")
    if shift is None:
        raise TypeError("roll: missing the shift (shifts=)")
    if axis is None:
        if isinstance(shift, (list, tuple)):
            if len(shift) != 1:
                raise ValueError(f"roll: {len(shift)} shifts without axes; give one shift per "
                                 "axis, or one shift to roll the flattened tensor")
            shift = shift[0]
        return Roll(check_int(shift, "shift", "roll"), None)(x)
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    axes = tuple(normalize_axis(a, x.ndim, "roll") for a in axes)
    if isinstance(shift, (list, tuple)):
        shift_tuple = tuple(check_int(s, "shift", "roll") for s in shift)
        if len(shift_tuple) != len(axes):
            raise ValueError(
                f"roll: {len(shift_tuple)} shifts for {len(axes)} axes; give one shift per axis"
            )
    else:
        shift_tuple = (check_int(shift, "shift", "roll"),) * len(axes)
    return Roll(shift_tuple, axes)(x)


def tile(x: Tensor, repetitions: int | Sequence[int]) -> Tensor:
    """``x`` repeated ``repetitions[i]`` times along axis ``i``, as whole blocks (the array
    API's and NumPy's ``tile``, PyTorch's ``Tensor.repeat``). With fewer repetitions than axes
    the leading axes are repeated once; with more, ``x`` gains leading axes of size 1.

    Examples:
        >>> import dparray
        >>> dparray.tile(dparray.tensor([1, 2]), (2, 2)).tolist()
        [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    check_tensor(x, "x", "tile")
    reps = tuple(repetitions) if isinstance(repetitions, (list, tuple)) else (repetitions,)
    reps = tuple(check_int(r, "each repetition", "tile", minimum=0) for r in reps)
    ndim = max(x.ndim, len(reps))
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - x.ndim) + x.shape
    spread = tuple(n for pair in ((1, n) for n in shape) for n in pair)
    repeated = tuple(n for pair in zip(reps, shape, strict=True) for n in pair)
    blocks = BroadcastTo(repeated)(Reshape(spread)(x))
    return Reshape(tuple(r * n for r, n in zip(reps, shape, strict=True)))(blocks)


def repeat_interleave(x: Tensor, repeats: Any, axis: int | None = None) -> Tensor:
    """Each entry of ``x`` repeated ``repeats`` times in place along ``axis`` (PyTorch's
    ``repeat_interleave``, the array API's ``repeat``): ``repeats`` is an int, or one count
    per entry (a 1-D integer tensor or a list). With ``axis=None`` ``x`` is flattened first.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([1, 2, 3])
        >>> dparray.repeat_interleave(x, 2).tolist()
        [1, 1, 2, 2, 3, 3]
        >>> dparray.repeat_interleave(x, [0, 1, 2]).tolist()
        [2, 3, 3]
    """
    check_tensor(x, "x", "repeat_interleave")
    if axis is None:
        x, a = Reshape((-1,))(x), 0
    else:
        a = normalize_axis(axis, x.ndim, "repeat_interleave")
    counts = _repeat_counts(repeats, x.shape[a])
    if isinstance(counts, list):
        positions = [i for i, count in enumerate(counts) for _ in range(count)]
        return take(x, positions, axis=a)
    shape = x.shape
    block = (*shape[:a + 1], 1, *shape[a + 1:])
    spread = BroadcastTo((*shape[:a + 1], counts, *shape[a + 1:]))(Reshape(block)(x))
    return Reshape((*shape[:a], shape[a] * counts, *shape[a + 1:]))(spread)


def clone(x: Tensor) -> Tensor:
    """A copy of ``x`` in new memory, differentiable (the gradient passes through). dparray
    never writes into arrays, so a clone behaves exactly like ``x``; it exists for code
    written for PyTorch."""
    check_tensor(x, "x", "clone")
    return Clone()(x)


def _repeat_counts(repeats: Any, length: int) -> int | list[int]:
    """``repeats`` as one int, or as one non-negative int per entry of an axis of ``length``."""
    if isinstance(repeats, Tensor):
        if repeats.dtype.kind not in ("int", "uint") or repeats.ndim > 1:
            raise TypeError(
                f"repeat_interleave: a repeats tensor must hold integers in at most one "
                f"dimension, got {repeats.dtype.name} of shape {repeats.shape}"
            )
        repeats = repeats.tolist()  # the result's length depends on these values
    if not isinstance(repeats, (list, tuple)):
        return check_int(repeats, "repeats", "repeat_interleave", minimum=0)
    counts = [check_int(r, "each of repeats", "repeat_interleave", minimum=0) for r in repeats]
    if len(counts) == 1:
        return counts[0]
    if len(counts) != length:
        raise ValueError(
            f"repeat_interleave: {len(counts)} repeats for an axis of {length} entries"
        )
    return counts


def _int_tuple(value: Any, name: str, op: str) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple of ints; a TypeError for anything else."""
    if isinstance(value, (list, tuple)):
        return tuple(check_int(n, f"each entry of {name}", op) for n in value)
    return (check_int(value, name, op),)


def _tensor_sequence(tensors: Any, op: str) -> list[Tensor]:
    if isinstance(tensors, Tensor) or not isinstance(tensors, Sequence):
        raise TypeError(f"{op} takes a sequence of tensors, got {type(tensors).__name__}")
    if not tensors:
        raise ValueError(f"{op} needs at least one tensor")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op} takes a sequence of tensors, found {type(t).__name__}")
    return list(tensors)
