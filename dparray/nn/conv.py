"""Convolution and pooling over images ``(N, C, H, W)``."""

from __future__ import annotations

import math
from typing import Any

from dparray.nn import functional as F
from dparray.nn import init
from dparray.nn.module import Module
from dparray.tensor import Tensor


class Conv2d(Module):
    """2-D convolution (cross-correlation, as in every framework) with PyTorch's arguments and
    weight layout ``(out_channels, in_channels, kh, kw)``; ``groups=1``.

    Weight and bias start from ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``,
    ``fan_in = in_channels * kh * kw``, as in PyTorch.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 dtype: Any = None) -> None:
        super().__init__()
        if groups != 1:
            raise ValueError(f"Conv2d: only groups=1 is supported, got groups={groups}")
        kernel = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, kernel
        self.stride, self.padding, self.dilation = stride, padding, dilation
        fan_in = in_channels * math.prod(kernel)
        self.weight = init.fan_in_uniform((out_channels, in_channels, *kernel), fan_in, dtype)
        self.bias = init.fan_in_uniform((out_channels,), fan_in, dtype) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim != 4 or x.shape[1] != self.in_channels:
            raise ValueError(
                f"{self!r}: expected (N, {self.in_channels}, H, W) input, got shape {x.shape}"
            )
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation)

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}, dilation={self.dilation}, "
                f"bias={self.bias is not None}")


class _Pool2d(Module):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def _check(self, x: Tensor) -> Tensor:
        if x.ndim != 4:
            raise ValueError(f"{self!r}: expected an (N, C, H, W) input, got shape {x.shape}")
        return x

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride or self.kernel_size}, "
                f"padding={self.padding}")


class MaxPool2d(_Pool2d):
    """Maximum over each window (tied maxima share the gradient equally)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.max_pool2d(self._check(x), self.kernel_size, self.stride, self.padding)


class AvgPool2d(_Pool2d):
    """Mean over each window (zero padding counted, as PyTorch's default)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.avg_pool2d(self._check(x), self.kernel_size, self.stride, self.padding)
