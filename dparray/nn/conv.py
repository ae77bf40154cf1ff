"""Convolutions over sequences ``(N, C, L)``, images ``(N, C, H, W)`` and volumes
``(N, C, D, H, W)`` (or unbatched, without ``N``: ``dparray.nn.unbatched``), and their
transposes, with PyTorch's arguments, weight layouts and initialisation. Each call is one graph
node (``dparray.ops.conv``, ``dparray.ops.conv_transpose``, ``dparray.ops.conv3d``), after a
padding node where the convolution node cannot pad by itself (a ``padding_mode`` other than
zeros, an uneven ``padding="same"``)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from dparray._checks import check_bool, check_int_tuple
from dparray.nn import init
from dparray.nn._geometry import (
    check_channels,
    check_conv_fits,
    check_conv_input,
    check_conv_padding,
    check_padding_mode,
    check_transposed_input,
    conv_geometry,
    conv_padding,
    transposed_geometry,
    transposed_output_padding,
)
from dparray.nn.module import Module
from dparray.nn.unbatched import as_batch_of_one
from dparray.ops import conv3d as _conv3d
from dparray.tensor import Tensor


def _parameters(where: str, in_channels: int, out_channels: int, kernel: tuple[int, ...],
                groups: int, bias: Any, dtype: Any,
                transposed: bool) -> tuple[Tensor, Tensor | None]:
    """A new weight and bias from ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``, PyTorch's start:
    ``fan_in`` is the weight's second axis times the kernel's size."""
    check_bool(bias, "bias", where)
    if transposed:
        shape = (in_channels, out_channels // groups, *kernel)
    else:
        shape = (out_channels, in_channels // groups, *kernel)
    fan_in = shape[1] * math.prod(kernel)
    weight = init.fan_in_uniform(shape, fan_in, dtype)
    return weight, init.fan_in_uniform((out_channels,), fan_in, dtype) if bias else None


class _ConvNd(Module):
    """What ``Conv1d``, ``Conv2d`` and ``Conv3d`` share; ``dims`` is the number of spatial
    axes."""

    dims: ClassVar[int] = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", dtype: Any = None) -> None:
        super().__init__()
        where = type(self).__name__
        self.stride, self.dilation, self.groups = conv_geometry(where, stride, dilation, groups,
                                                                self.dims)
        self.in_channels, self.out_channels = check_channels(where, in_channels, out_channels,
                                                             self.groups)
        self.kernel_size = check_int_tuple(kernel_size, "kernel_size", where, self.dims,
                                           minimum=1)
        self.padding_mode = check_padding_mode(where, padding_mode)
        self.padding = check_conv_padding(where, padding, self.dims)
        self._padding = conv_padding(where, self.padding, self.kernel_size, self.stride,
                                     self.dilation, self.padding_mode)
        self.weight, self.bias = _parameters(where, self.in_channels, self.out_channels,
                                             self.kernel_size, self.groups, bias, dtype,
                                             transposed=False)

    def forward(self, x: Tensor) -> Tensor:
        """The convolution of batched ``(N, C, *spatial)`` or unbatched ``(C, *spatial)``
        input."""
        where = type(self).__name__
        check_conv_input(where, x, self.weight, self.bias, self.groups, self.dims)
        check_conv_fits(where, x, self.kernel_size, self.dilation, self._padding)
        return as_batch_of_one(where, x, self.dims, self._convolve)

    def _convolve(self, x: Tensor) -> Tensor:
        return _conv3d.convolve(self._padding.apply(x), self.weight, self.bias, self.stride,
                                self._padding.node, self.dilation, self.groups)

    def extra_repr(self) -> str:
        return _conv_repr(self, output_padding=None, padding_mode=self.padding_mode)


class Conv1d(_ConvNd):
    """1-D convolution (cross-correlation) of ``(N, C, L)`` input with weight
    ``(out_channels, in_channels / groups, k)``; PyTorch's arguments, as ``Conv2d``'s with one
    entry per size.

    Examples:
        >>> import dparray as dp
        >>> conv = dp.nn.Conv1d(2, 4, kernel_size=3, padding="same", padding_mode="circular")
        >>> conv(dp.ones(5, 2, 10)).shape, conv.weight.shape
        ((5, 4, 10), (4, 2, 3))
    """

    dims = 1


class Conv2d(_ConvNd):
    """2-D convolution (cross-correlation, as in every framework) with weight
    ``(out_channels, in_channels / groups, kh, kw)``; ``groups`` splits the channels into
    independent groups (``groups == in_channels`` is a depthwise convolution).

    ``padding`` is an int, a pair, ``"valid"`` (none) or ``"same"`` (the input's size, for
    stride 1; when the total ``dilation * (k - 1)`` is odd, the extra entry goes at the end, as
    in PyTorch). ``padding_mode`` fills the padding with zeros, a reflection, the edge's value
    (``"replicate"``) or the other side (``"circular"``). Weight and bias start from
    ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``, ``fan_in = in_channels / groups * kh * kw``, as in
    PyTorch.

    Examples:
        >>> import dparray as dp
        >>> conv = dp.nn.Conv2d(3, 6, kernel_size=3, padding=1, groups=3)
        >>> conv(dp.ones(2, 3, 8, 8)).shape, conv.weight.shape
        ((2, 6, 8, 8), (6, 1, 3, 3))
        >>> dp.nn.Conv2d(3, 6, 4, padding="same", padding_mode="reflect")(dp.ones(1, 3, 5, 5)).shape
        (1, 6, 5, 5)
    """

    dims = 2


class Conv3d(_ConvNd):
    """3-D convolution (cross-correlation) of ``(N, C, D, H, W)`` input with weight
    ``(out_channels, in_channels / groups, kd, kh, kw)``; PyTorch's arguments, as ``Conv2d``'s
    with three entries per size.

    Examples:
        >>> import dparray as dp
        >>> conv = dp.nn.Conv3d(2, 4, kernel_size=3, padding=1, stride=(1, 2, 2))
        >>> conv(dp.ones(1, 2, 4, 6, 6)).shape, conv.weight.shape
        ((1, 4, 4, 3, 3), (4, 2, 3, 3, 3))
    """

    dims = 3


class _ConvTransposeNd(Module):
    """What ``ConvTranspose1d``, ``ConvTranspose2d`` and ``ConvTranspose3d`` share."""

    dims: ClassVar[int] = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", dtype: Any = None) -> None:
        super().__init__()
        where = type(self).__name__
        (self.stride, self.padding, self.output_padding, self.dilation,
         self.groups) = transposed_geometry(where, stride, padding, output_padding, dilation,
                                            groups, self.dims)
        self.in_channels, self.out_channels = check_channels(where, in_channels, out_channels,
                                                             self.groups)
        self.kernel_size = check_int_tuple(kernel_size, "kernel_size", where, self.dims,
                                           minimum=1)
        if check_padding_mode(where, padding_mode) != "zeros":
            raise ValueError(f"{where}: only padding_mode='zeros' is supported, got "
                             f"{padding_mode!r}")
        self.padding_mode = padding_mode
        self.weight, self.bias = _parameters(where, self.in_channels, self.out_channels,
                                             self.kernel_size, self.groups, bias, dtype,
                                             transposed=True)

    def forward(self, x: Tensor, output_size: Any = None) -> Tensor:
        """The transposed convolution of batched ``(N, C, *spatial)`` or unbatched
        ``(C, *spatial)`` input; ``output_size`` (the spatial sizes, or the whole shape)
        picks one of the sizes that the stride makes possible, in place of
        ``output_padding``."""
        where = type(self).__name__
        check_transposed_input(where, x, self.weight, self.bias, self.groups, self.dims)
        extras = transposed_output_padding(where, x, self.kernel_size, self.stride,
                                           self.padding, self.output_padding, self.dilation,
                                           output_size)
        return as_batch_of_one(where, x, self.dims, lambda batch: _conv3d.conv_transpose(
            batch, self.weight, self.bias, self.stride, self.padding, extras, self.dilation,
            self.groups))

    def extra_repr(self) -> str:
        return _conv_repr(self, output_padding=self.output_padding, padding_mode="zeros")


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution of ``(N, C, L)`` input with weight
    ``(in_channels, out_channels / groups, k)``: ``ConvTranspose2d`` with one entry per size.

    Examples:
        >>> import dparray as dp
        >>> up = dp.nn.ConvTranspose1d(4, 2, kernel_size=3, stride=2, padding=1, output_padding=1)
        >>> up(dp.ones(1, 4, 5)).shape
        (1, 2, 10)
    """

    dims = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution (the gradient of ``Conv2d`` with respect to its input, what
    decoders use to upsample), with weight ``(in_channels, out_channels / groups, kh, kw)``.

    The output's size is ``(H - 1) * stride - 2 * padding + dilation * (kh - 1) +
    output_padding + 1``; ``forward(x, output_size=...)`` picks the output padding that gives a
    requested size instead. Weight and bias start from ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``
    with ``fan_in = out_channels / groups * kh * kw``, as in PyTorch.

    Examples:
        >>> import dparray as dp
        >>> up = dp.nn.ConvTranspose2d(8, 4, kernel_size=3, stride=2, padding=1)
        >>> up(dp.ones(1, 8, 5, 5)).shape, up.weight.shape
        ((1, 4, 9, 9), (8, 4, 3, 3))
        >>> up(dp.ones(1, 8, 5, 5), output_size=(10, 10)).shape
        (1, 4, 10, 10)
    """

    dims = 2


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution of ``(N, C, D, H, W)`` input with weight
    ``(in_channels, out_channels / groups, kd, kh, kw)``: ``ConvTranspose2d`` with three
    entries per size.

    Examples:
        >>> import dparray as dp
        >>> up = dp.nn.ConvTranspose3d(4, 2, kernel_size=2, stride=2)
        >>> up(dp.ones(1, 4, 2, 3, 3)).shape
        (1, 2, 4, 6, 6)
    """

    dims = 3


def _conv_repr(layer: Any, output_padding: tuple[int, ...] | None, padding_mode: str) -> str:
    """PyTorch's repr of a convolution or transposed convolution: the defaults left out."""
    dims = layer.dims
    text = (f"{layer.in_channels}, {layer.out_channels}, kernel_size={layer.kernel_size}, "
            f"stride={layer.stride}")
    if layer.padding != (0,) * dims:
        text += f", padding={layer.padding}"
    if layer.dilation != (1,) * dims:
        text += f", dilation={layer.dilation}"
    if output_padding is not None and output_padding != (0,) * dims:
        text += f", output_padding={output_padding}"
    if layer.groups != 1:
        text += f", groups={layer.groups}"
    if layer.bias is None:
        text += ", bias=False"
    if padding_mode != "zeros":
        text += f", padding_mode={padding_mode}"
    return text
