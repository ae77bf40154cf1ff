"""im2col and its adjoint as PyTorch names them: ``F.unfold`` and ``nn.Unfold`` take every
sliding window of an image into a column, ``F.fold`` and ``nn.Fold`` sum columns back into an
image (overlapping windows add up). Both take batched ``(N, ...)`` or unbatched input, as
PyTorch's do; the functional forms are re-exported by ``dparray.nn.functional``.

Not to be confused with ``Tensor.unfold`` (``dparray.ops.unfold``), the windows along one
axis. Each call is one graph node: ``dparray.ops.nn.unfold`` (whose gradient is col2im) and
``dparray.ops.fold`` (whose gradient is im2col), reshaped to PyTorch's layout: the column of
window ``l`` (row-major over the ``L`` window positions) holds, for each channel, that
window's ``kh * kw`` entries row-major, channel by channel.

Unlike PyTorch's, which refuse integer tensors, both take any numeric dtype (``unfold`` bools
too): they only copy and add.
"""

from __future__ import annotations

import math
from typing import Any

from dparray._checks import check_int_tuple, check_tensor
from dparray.nn.module import Module
from dparray.nn.unbatched import refuse_in_chunk
from dparray.ops import fold as _fold
from dparray.ops import nn as _nn
from dparray.ops._windows import Sizes, Windows
from dparray.ops.shape import reshape
from dparray.tensor import Tensor

__all__ = ["Fold", "Unfold", "fold", "unfold"]


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """Every ``kernel_size`` window of ``(N, C, H, W)`` input, zero-padded by ``padding`` on
    each side, as one column of ``(N, C * kh * kw, L)`` (``(C * kh * kw, L)`` for unbatched
    ``(C, H, W)`` input), ``L`` the number of window positions. Each size is an int or two.
    A convolution is this followed by one matrix product with the flattened weight.

    Examples:
        >>> import dparray as dp
        >>> x = dp.arange(9.0).reshape(1, 1, 3, 3)
        >>> dp.nn.functional.unfold(x, 2)[0].tolist()
        [[0.0, 1.0, 3.0, 4.0], [1.0, 2.0, 4.0, 5.0], [3.0, 4.0, 6.0, 7.0], [4.0, 5.0, 7.0, 8.0]]
    """
    where = "unfold"
    return _unfold(where, input, _windows(where, kernel_size, dilation, padding, stride))


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1,
         padding: Any = 0, stride: Any = 1) -> Tensor:
    """The adjoint of ``unfold``: ``(N, C * kh * kw, L)`` columns (or unbatched
    ``(C * kh * kw, L)``) summed into ``(N, C, *output_size)`` images, each column's entries
    added to the pixels of its window (entries that fall in the padding are dropped). ``L``
    must be the number of windows that fit ``output_size``. ``fold(unfold(x))`` is ``x``
    times the number of windows covering each pixel.

    Examples:
        >>> import dparray as dp
        >>> ones = dp.ones(1, 4, 4)
        >>> dp.nn.functional.fold(ones, (3, 3), 2)[0, 0].tolist()
        [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    """
    where = "fold"
    return _fold_columns(where, input, _output_size(where, output_size),
                         _windows(where, kernel_size, dilation, padding, stride))


class Unfold(Module):
    """Every sliding window of ``(N, C, H, W)`` or ``(C, H, W)`` input as a column (see
    ``unfold``).

    Examples:
        >>> import dparray as dp
        >>> dp.nn.Unfold(kernel_size=(2, 3), padding=1)(dp.ones(2, 5, 3, 4)).shape
        (2, 30, 16)
    """

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self._geometry = _windows("Unfold", kernel_size, dilation, padding, stride)
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, x: Tensor) -> Tensor:
        return _unfold("Unfold", x, self._geometry)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """Sums ``(N, C * kh * kw, L)`` or ``(C * kh * kw, L)`` columns into images of
    ``output_size`` (see ``fold``).

    Examples:
        >>> import dparray as dp
        >>> dp.nn.Fold(output_size=(4, 5), kernel_size=2, stride=(2, 1))(dp.ones(2, 12, 8)).shape
        (2, 3, 4, 5)
    """

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self._size = _output_size("Fold", output_size)
        self._geometry = _windows("Fold", kernel_size, dilation, padding, stride)
        self.output_size, self.kernel_size, self.dilation = output_size, kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, x: Tensor) -> Tensor:
        return _fold_columns("Fold", x, self._size, self._geometry)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


def _windows(where: str, kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> Windows:
    """The geometry, checked as PyTorch checks it: one int or two for each size; the kernel,
    dilation and stride at least 1, the padding at least 0."""
    return Windows(check_int_tuple(kernel_size, "kernel_size", where, 2, minimum=1),
                   check_int_tuple(stride, "stride", where, 2, minimum=1),
                   check_int_tuple(padding, "padding", where, 2, minimum=0),
                   check_int_tuple(dilation, "dilation", where, 2, minimum=1))


def _output_size(where: str, output_size: Any) -> Sizes:
    return check_int_tuple(output_size, "output_size", where, 2, minimum=1)


def _blocks(where: str, windows: Windows, size: Sizes) -> Sizes:
    """How many windows fit along each axis of an image of ``size``; a ValueError if none."""
    try:
        return windows.output_size(size)
    except ValueError:
        raise ValueError(f"{where}: a kernel of size {windows.kernel} (dilation "
                         f"{windows.dilation}, padding {windows.padding}, stride "
                         f"{windows.stride}) does not fit an image of spatial size "
                         f"{tuple(size)}") from None


def _unfold(where: str, x: Any, windows: Windows) -> Tensor:
    check_tensor(x, "input", where)
    if x.ndim not in (3, 4) or 0 in x.shape[-3:]:
        raise ValueError(f"{where}: expected a non-empty (C, H, W) or (N, C, H, W) input (the "
                         f"batch may be empty), got shape {x.shape}")
    batched = x.ndim == 4
    images = x if batched else reshape(x, (1, *x.shape))
    n, c, h, w = images.shape
    oh, ow = _blocks(where, windows, (h, w))
    zero = False if x.dtype.kind == "bool" else 0  # the padding, in the input's kind
    columns = _nn.unfold(images, (windows.kernel[0], windows.kernel[1]),
                         (windows.stride[0], windows.stride[1]),
                         (windows.padding[0], windows.padding[1]),
                         (windows.dilation[0], windows.dilation[1]), pad_value=zero)
    shape = (c * windows.count, oh * ow)
    return reshape(columns, (n, *shape) if batched else shape)


def _fold_columns(where: str, x: Any, size: Sizes, windows: Windows) -> Tensor:
    check_tensor(x, "input", where)
    if x.ndim not in (2, 3) or 0 in x.shape[-2:]:
        raise ValueError(f"{where}: expected a non-empty (C * kh * kw, L) or "
                         f"(N, C * kh * kw, L) input (the batch may be empty), got shape "
                         f"{x.shape}")
    refuse_in_chunk(where, x, 1)  # unbatched: a chunk's rows may cut a channel's kernel
    if x.dtype.kind == "bool":
        raise TypeError(f"{where}: input must be a numeric tensor (its columns are summed), "
                        f"got {x.dtype.name}")
    rows, count = x.shape[-2:]
    if rows % windows.count:
        raise ValueError(f"{where}: the input's axis -2 ({rows}) must be divisible by the "
                         f"kernel's size {windows.kernel} ({windows.count} entries), got shape "
                         f"{x.shape}")
    blocks = _blocks(where, windows, size)
    if math.prod(blocks) != count:
        raise ValueError(f"{where}: an output of size {size} holds {blocks[0]} x {blocks[1]} "
                         f"= {math.prod(blocks)} windows (kernel {windows.kernel}, dilation "
                         f"{windows.dilation}, padding {windows.padding}, stride "
                         f"{windows.stride}), but the input's last axis has {count}; got "
                         f"shape {x.shape}")
    n = x.shape[0] if x.ndim == 3 else 1
    c = rows // windows.count
    columns = reshape(x, (n, c, windows.count, *blocks))
    images = _fold.fold(columns, windows, size)
    return images if x.ndim == 3 else reshape(images, (c, *size))
