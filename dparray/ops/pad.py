"""``pad``: PyTorch's ``F.pad`` -- constant, reflect, replicate and circular padding, with
negative widths cropping.

Constant padding is one op (a filled array with the input copied into it). The other modes
are built from slices, ``broadcast_to`` and ``cat`` of the input, so their gradients come from
those ops: each padded entry sends its gradient back to the entry it copies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dparray._checks import check_choice, check_int, check_number, check_tensor, describe
from dparray.autograd import Function
from dparray.ops.indexing import fill_value, getitem
from dparray.ops.shape import broadcast_to, cat
from dparray.tensor import Tensor

__all__ = [
    "pad",
]

MODES = ("constant", "reflect", "replicate", "circular")

Widths = tuple[tuple[int, int], ...]


class ConstantPad(Function):
    """``x`` with ``widths[axis] = (before, after)`` entries of ``value`` added at each end of
    every axis (a negative width removes entries instead); padding gets no gradient."""

    def __init__(self, widths: Widths, value: float | int | bool) -> None:
        self.widths = widths
        self.value = value

    def forward(self, x: Any) -> Any:
        xp = self.xp
        shape = tuple(x.shape)
        kept = [_kept(n, before, after) for n, (before, after) in zip(shape, self.widths,
                                                                       strict=True)]
        self.source = tuple(slice(max(-b, 0), max(-b, 0) + k)
                            for (b, _), k in zip(self.widths, kept, strict=True))
        self.target = tuple(slice(max(b, 0), max(b, 0) + k)
                            for (b, _), k in zip(self.widths, kept, strict=True))
        self.input_shape, self.dtype = shape, x.dtype
        out_shape = tuple(k + max(b, 0) + max(a, 0)
                          for (b, a), k in zip(self.widths, kept, strict=True))
        out = xp.full(out_shape, self.value, dtype=x.dtype)
        out[self.target] = x[self.source]
        return out

    def backward(self, grad: Any) -> Any:
        kept = grad[self.target]
        if all(s == slice(0, n) for s, n in zip(self.source, self.input_shape, strict=True)):
            return kept  # nothing was cropped
        out = self.xp.zeros(self.input_shape, dtype=self.dtype)
        out[self.source] = kept
        return out


def pad(x: Tensor, pad: Sequence[int], mode: str = "constant", value: Any = None) -> Tensor:
    """``x`` padded as PyTorch's ``F.pad`` does: ``pad`` holds (before, after) pairs from the
    LAST axis backwards -- ``(left, right)`` pads the last axis, ``(left, right, top, bottom)``
    the last two. A negative width crops.

    Modes: ``"constant"`` fills with ``value`` (0 by default, False for a bool tensor;
    ``float("-inf")`` works, for max pooling); ``"reflect"`` mirrors the entries next to the
    edge, without repeating it (each width below the axis's length); ``"replicate"`` repeats
    the edge entry; ``"circular"`` wraps around (each width at most the axis's length). With
    negative widths, circular wraps what is left after cropping while reflect and replicate
    read the whole axis, as in PyTorch. Unlike PyTorch, any number of leading axes is allowed
    in every mode.
    Differentiable in every mode.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([1.0, 2.0, 3.0])
        >>> dparray.pad(x, (2, 1)).tolist()
        [0.0, 0.0, 1.0, 2.0, 3.0, 0.0]
        >>> dparray.pad(x, (2, 1), mode="reflect").tolist()
        [3.0, 2.0, 1.0, 2.0, 3.0, 2.0]
        >>> dparray.pad(x, (1, -1), mode="circular").tolist()
        [2.0, 1.0, 2.0]
    """
    check_tensor(x, "x", "pad")
    widths = _widths(pad, x.ndim)
    mode = check_choice(mode, "mode", "pad", MODES)
    if mode == "constant":
        for axis, (before, after) in enumerate(widths):
            if _kept(x.shape[axis], before, after) < 0:
                raise ValueError(
                    f"pad: widths ({before}, {after}) crop more than the {x.shape[axis]} "
                    f"entries of axis {axis}"
                )
        if value is None:  # zero, of the tensor's kind: False for a bool tensor
            value = False if x.dtype.kind == "bool" else 0
        fill = fill_value(value, x, "pad")
        if all(w == (0, 0) for w in widths):
            return x
        return ConstantPad(widths, fill)(x)
    if value is not None and (check_number(value, "value", "pad", finite=False) != 0):
        raise ValueError(f"pad: mode {mode!r} takes no value, got {describe(value)}")
    for axis, (before, after) in enumerate(widths):
        _check_mode(mode, axis, x.shape[axis], before, after)
    for axis, (before, after) in enumerate(widths):
        if (before, after) != (0, 0):
            x = _pad_axis(x, axis, before, after, mode)
    return x


def _widths(pad: Any, ndim: int) -> Widths:
    """PyTorch's flat ``pad`` (last axis first) as one ``(before, after)`` per axis."""
    if not isinstance(pad, (list, tuple)):
        raise TypeError(f"pad: pad must be a tuple of ints, got {describe(pad)}")
    widths = [check_int(w, "each entry of pad", "pad") for w in pad]
    if len(widths) % 2:
        raise ValueError(f"pad: pad needs (before, after) pairs, got {len(widths)} entries")
    if len(widths) > 2 * ndim:
        raise ValueError(
            f"pad: {len(widths) // 2} pairs of widths for a tensor of {ndim} dimensions"
        )
    pairs = [(widths[i], widths[i + 1]) for i in range(0, len(widths), 2)]
    return tuple([(0, 0)] * (ndim - len(pairs)) + pairs[::-1])


def _kept(size: int, before: int, after: int) -> int:
    """How many entries of an axis of ``size`` survive the negative widths."""
    return size - max(-before, 0) - max(-after, 0)


def _check_mode(mode: str, axis: int, size: int, before: int, after: int) -> None:
    """The widths that ``mode`` can fill on an axis of ``size`` entries."""
    head, tail = max(before, 0), max(after, 0)
    if size + before + after < 0 or (mode == "circular" and _kept(size, before, after) < 0):
        raise ValueError(
            f"pad: widths ({before}, {after}) crop more than the {size} entries of axis {axis}"
        )
    if mode == "reflect" and 0 < max(head, tail) >= size:  # an unpadded axis: any size
        raise ValueError(
            f"pad: reflect widths must be less than the axis's length; axis {axis} has {size} "
            f"entries, widths ({before}, {after})"
        )
    if mode == "replicate" and max(head, tail) and size == 0:
        raise ValueError(f"pad: replicate needs at least one entry; axis {axis} has none")
    kept = _kept(size, before, after)
    if mode == "circular" and max(head, tail) > kept:
        raise ValueError(
            f"pad: circular widths must be at most the axis's length; axis {axis} has {kept} "
            f"entries to wrap after cropping, widths ({before}, {after})"
        )


def _pad_axis(x: Tensor, axis: int, before: int, after: int, mode: str) -> Tensor:
    """One axis of ``x`` padded by the positive widths and cropped by the negative ones, as
    PyTorch does: circular wraps the entries left after cropping; reflect and replicate read
    the whole axis, so a reflection may reach entries that are then cropped away."""
    head, tail = max(before, 0), max(after, 0)
    if mode == "circular":
        return _extend(_crop(x, axis, before, after), axis, head, tail, mode)
    return _crop(_extend(x, axis, head, tail, mode), axis, before, after)


def _crop(x: Tensor, axis: int, before: int, after: int) -> Tensor:
    """``x`` without the entries that negative widths remove from either end of ``axis``."""
    start, stop = max(-before, 0), x.shape[axis] - max(-after, 0)
    return x if (start, stop) == (0, x.shape[axis]) else _along(x, axis, slice(start, stop))


def _extend(x: Tensor, axis: int, head: int, tail: int, mode: str) -> Tensor:
    """``x`` with ``head`` entries before and ``tail`` after, filled as ``mode`` says."""
    pieces = []
    if head:
        pieces.append(_border(x, axis, head, mode, at_start=True))
    pieces.append(x)
    if tail:
        pieces.append(_border(x, axis, tail, mode, at_start=False))
    return pieces[0] if len(pieces) == 1 else cat(pieces, axis=axis)


def _border(x: Tensor, axis: int, width: int, mode: str, at_start: bool) -> Tensor:
    """The ``width`` entries that ``mode`` puts before (or after) ``axis`` of ``x``."""
    size = x.shape[axis]
    if mode == "reflect":  # the entries next to the edge, mirrored
        if at_start:
            return _along(x, axis, slice(width, 0, -1))
        last = size - 2
        return _along(x, axis, slice(last, last - width if last - width >= 0 else None, -1))
    if mode == "replicate":
        edge = _along(x, axis, slice(0, 1) if at_start else slice(size - 1, size))
        shape = list(x.shape)
        shape[axis] = width
        return broadcast_to(edge, tuple(shape))
    return _along(x, axis, slice(size - width, size) if at_start else slice(0, width))


def _along(x: Tensor, axis: int, part: slice) -> Tensor:
    return getitem(x, (*(slice(None),) * axis, part))
