"""Convolution and pooling over images ``(N, C, H, W)``, with PyTorch's arguments, weight
layout and initialisation. Each call is one graph node (``dparray.ops.conv``,
``dparray.ops.pooling``)."""

from __future__ import annotations

import math
from typing import Any

from dparray._checks import check_bool, check_int, check_int_tuple
from dparray.nn import init
from dparray.nn._geometry import check_conv_input, check_image, conv_geometry, pool_geometry
from dparray.nn.module import Module
from dparray.ops import conv as _conv
from dparray.ops import pooling as _pooling
from dparray.tensor import Tensor


class Conv2d(Module):
    """2-D convolution (cross-correlation, as in every framework) with weight
    ``(out_channels, in_channels / groups, kh, kw)``; ``groups`` splits the channels into
    independent groups (``groups == in_channels`` is a depthwise convolution).

    Weight and bias start from ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``,
    ``fan_in = in_channels / groups * kh * kw``, as in PyTorch.

    Examples:
        >>> import dparray as dp
        >>> conv = dp.nn.Conv2d(3, 6, kernel_size=3, padding=1, groups=3)
        >>> conv(dp.ones(2, 3, 8, 8)).shape, conv.weight.shape
        ((2, 6, 8, 8), (6, 1, 3, 3))
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 dtype: Any = None) -> None:
        super().__init__()
        where = "Conv2d"
        self.in_channels = check_int(in_channels, "in_channels", where, minimum=1)
        self.out_channels = check_int(out_channels, "out_channels", where, minimum=1)
        self.kernel_size = check_int_tuple(kernel_size, "kernel_size", where, 2, minimum=1)
        self.stride, self.padding, self.dilation, self.groups = conv_geometry(
            where, stride, padding, dilation, groups)
        if in_channels % self.groups or out_channels % self.groups:
            raise ValueError(f"{where}: in_channels ({in_channels}) and out_channels "
                             f"({out_channels}) must be divisible by groups ({groups})")
        check_bool(bias, "bias", where)
        fan_in = in_channels // self.groups * math.prod(self.kernel_size)
        shape = (out_channels, in_channels // self.groups, *self.kernel_size)
        self.weight = init.fan_in_uniform(shape, fan_in, dtype)
        self.bias = init.fan_in_uniform((out_channels,), fan_in, dtype) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        check_conv_input("Conv2d", x, self.weight, self.bias, self.groups)
        return _conv.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                            self.groups)

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}, dilation={self.dilation}, "
                f"groups={self.groups}, bias={self.bias is not None}")


class MaxPool2d(Module):
    """The maximum of each window; one winner per window (the first maximum) takes the
    gradient, as in PyTorch. ``return_indices`` also returns each winner's flat position in
    its input plane (what ``MaxUnpool2d`` takes in PyTorch).

    Examples:
        >>> import dparray as dp
        >>> pool = dp.nn.MaxPool2d(2)
        >>> pool(dp.arange(16.0).reshape(1, 1, 4, 4)).tolist()
        [[[[5.0, 7.0], [13.0, 15.0]]]]
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.windows = pool_geometry("MaxPool2d", kernel_size, stride, padding, dilation,
                                     ceil_mode)
        self.return_indices = check_bool(return_indices, "return_indices", "MaxPool2d")

    def forward(self, x: Tensor) -> Any:
        return _pooling.max_pool2d(check_image("MaxPool2d", x), self.windows,
                                   self.return_indices)

    def extra_repr(self) -> str:
        w = self.windows
        return (f"kernel_size={w.kernel}, stride={w.stride}, padding={w.padding}, "
                f"dilation={w.dilation}, ceil_mode={w.ceil_mode}")


class AvgPool2d(Module):
    """The mean of each window, with PyTorch's divisor rules: ``count_include_pad`` counts
    the zero padding in the divisor, ``divisor_override`` replaces it."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        where = "AvgPool2d"
        self.windows = pool_geometry(where, kernel_size, stride, padding, 1, ceil_mode)
        self.count_include_pad = check_bool(count_include_pad, "count_include_pad", where)
        self.divisor_override = None if divisor_override is None else check_int(
            divisor_override, "divisor_override", where, minimum=1)

    def forward(self, x: Tensor) -> Tensor:
        return _pooling.avg_pool2d(check_image("AvgPool2d", x), self.windows,
                                   self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        w = self.windows
        return (f"kernel_size={w.kernel}, stride={w.stride}, padding={w.padding}, "
                f"ceil_mode={w.ceil_mode}, count_include_pad={self.count_include_pad}")
