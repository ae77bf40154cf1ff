"""Pooling over sequences ``(N, C, L)``, images ``(N, C, H, W)`` and volumes
``(N, C, D, H, W)``, or unbatched input without ``N`` -- max, average and adaptive -- and max
unpooling, with PyTorch's arguments; each call is one graph node (``dparray.ops.pooling``,
``dparray.ops.pool3d``, ``dparray.ops.adaptive_pool``, ``dparray.ops.unpool``). The layers
keep PyTorch's attributes (``kernel_size``, ``stride``, ... as given) and print as PyTorch's
do."""

from __future__ import annotations

from typing import Any, ClassVar

from dparray._checks import check_bool, check_int, check_int_tuple
from dparray.nn._geometry import (
    adaptive_output_size,
    check_pool_input,
    pool_geometry,
    unpool_size,
)
from dparray.nn.adaptive_pooling import adaptive_pool
from dparray.nn.module import Module
from dparray.nn.unbatched import as_batch_of_one
from dparray.ops import pool3d as _pool3d
from dparray.ops import unpool as _unpool
from dparray.tensor import Tensor


class _MaxPoolNd(Module):
    """What ``MaxPool1d``, ``MaxPool2d`` and ``MaxPool3d`` share; ``dims`` is the number of
    spatial axes."""

    dims: ClassVar[int] = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        where = type(self).__name__
        self.windows = pool_geometry(where, kernel_size, stride, padding, dilation, ceil_mode,
                                     self.dims)
        self.return_indices = check_bool(return_indices, "return_indices", where)
        self.kernel_size, self.stride = kernel_size, kernel_size if stride is None else stride
        self.padding, self.dilation, self.ceil_mode = padding, dilation, ceil_mode

    def forward(self, x: Tensor) -> Any:
        """The pooled batched ``(N, C, *spatial)`` or unbatched ``(C, *spatial)`` input."""
        check_pool_input(type(self).__name__, x, self.windows, self.dims)
        return as_batch_of_one(type(self).__name__, x, self.dims, lambda batch: _pool3d.max_pool(
            batch, self.windows, self.return_indices, self.dims))

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """The maximum of each window of ``(N, C, L)`` input: ``MaxPool2d`` along one axis
    (``return_indices`` gives positions along ``L``).

    Examples:
        >>> import dparray as dp
        >>> dp.nn.MaxPool1d(2)(dp.tensor([[[1.0, 3.0, 2.0, 0.0, 5.0]]])).tolist()
        [[[3.0, 2.0]]]
    """

    dims = 1


class MaxPool2d(_MaxPoolNd):
    """The maximum of each window; one winner per window (the first maximum) takes the
    gradient, as in PyTorch. ``padding`` (at most half the kernel) pads with ``-inf``;
    ``ceil_mode`` keeps a last, partial window; ``return_indices`` also returns each winner's
    flat position in its input plane (what ``MaxUnpool2d`` takes in PyTorch).

    Examples:
        >>> import dparray as dp
        >>> pool = dp.nn.MaxPool2d(2)
        >>> pool(dp.arange(16.0).reshape(1, 1, 4, 4)).tolist()
        [[[[5.0, 7.0], [13.0, 15.0]]]]
    """

    dims = 2


class MaxPool3d(_MaxPoolNd):
    """The maximum of each window of ``(N, C, D, H, W)`` input: ``MaxPool2d`` with three
    entries per size (``return_indices`` gives flat positions in each input volume).

    Examples:
        >>> import dparray as dp
        >>> dp.nn.MaxPool3d(2)(dp.arange(8.0).reshape(1, 1, 2, 2, 2)).tolist()
        [[[[[7.0]]]]]
    """

    dims = 3


class _AvgPoolNd(Module):
    """What ``AvgPool1d``, ``AvgPool2d`` and ``AvgPool3d`` share."""

    dims: ClassVar[int] = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        where = type(self).__name__
        self.windows = pool_geometry(where, kernel_size, stride, padding, 1, ceil_mode,
                                     self.dims)
        self.count_include_pad = check_bool(count_include_pad, "count_include_pad", where)
        self.divisor_override = None if divisor_override is None else check_int(
            divisor_override, "divisor_override", where, minimum=1)
        self.kernel_size, self.stride = kernel_size, kernel_size if stride is None else stride
        self.padding, self.ceil_mode = padding, ceil_mode

    def forward(self, x: Tensor) -> Tensor:
        """The pooled batched ``(N, C, *spatial)`` or unbatched ``(C, *spatial)`` input."""
        check_pool_input(type(self).__name__, x, self.windows, self.dims)
        return as_batch_of_one(type(self).__name__, x, self.dims, lambda batch: _pool3d.avg_pool(
            batch, self.windows, self.count_include_pad, self.divisor_override, self.dims))

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """The mean of each window of ``(N, C, L)`` input, with PyTorch's divisor rules
    (``count_include_pad``); ``AvgPool2d`` along one axis.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.AvgPool1d(2)(dp.tensor([[[1.0, 3.0, 2.0, 0.0, 5.0]]])).tolist()
        [[[2.0, 1.0]]]
    """

    dims = 1

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)
        # PyTorch keeps AvgPool1d's sizes as 1-tuples
        self.kernel_size = check_int_tuple(kernel_size, "kernel_size", "AvgPool1d", 1)
        self.stride = self.kernel_size if stride is None else check_int_tuple(
            stride, "stride", "AvgPool1d", 1)
        self.padding = check_int_tuple(padding, "padding", "AvgPool1d", 1)


class AvgPool2d(_AvgPoolNd):
    """The mean of each window, with PyTorch's divisor rules: ``count_include_pad`` counts
    the zero padding in the divisor, ``divisor_override`` replaces it.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.AvgPool2d(2)(dp.arange(16.0).reshape(1, 1, 4, 4)).tolist()
        [[[[2.5, 4.5], [10.5, 12.5]]]]
    """

    dims = 2


class AvgPool3d(_AvgPoolNd):
    """The mean of each window of ``(N, C, D, H, W)`` input, with PyTorch's divisor rules:
    ``AvgPool2d`` with three entries per size.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.AvgPool3d(2)(dp.arange(8.0).reshape(1, 1, 2, 2, 2)).tolist()
        [[[[[3.5]]]]]
    """

    dims = 3


class MaxUnpool2d(Module):
    """The inverse of ``MaxPool2d(return_indices=True)``, as PyTorch's: ``forward(x, indices,
    output_size=None)`` places each value at its index in zeros (see
    ``dparray.nn.functional.max_unpool2d``).

    Examples:
        >>> import dparray as dp
        >>> pool, unpool = dp.nn.MaxPool2d(2, return_indices=True), dp.nn.MaxUnpool2d(2)
        >>> unpool(*pool(dp.arange(16.0).reshape(1, 1, 4, 4)))[0, 0].tolist()[3]
        [0.0, 13.0, 0.0, 15.0]
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        where = type(self).__name__
        self.kernel_size = check_int_tuple(kernel_size, "kernel_size", where, 2, minimum=1)
        self.stride = self.kernel_size if stride is None else check_int_tuple(
            stride, "stride", where, 2, minimum=1)
        self.padding = check_int_tuple(padding, "padding", where, 2, minimum=0)

    def forward(self, x: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        size = unpool_size(type(self).__name__, x, indices, self.kernel_size, self.stride,
                           self.padding, output_size)
        return _unpool.max_unpool2d(x, indices, size)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}")


class AdaptiveAvgPool2d(Module):
    """The mean over PyTorch's adaptive windows of ``(N, C, H, W)`` (or unbatched ``(C, H, W)``)
    input, to an output of ``output_size`` (an int or a pair; None keeps the input's size along
    that axis) whatever the input's size: output row ``i`` of ``OH`` averages input rows
    ``floor(i * H / OH)`` to ``ceil((i + 1) * H / OH)``.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.AdaptiveAvgPool2d(1)(dp.arange(6.0).reshape(1, 1, 2, 3)).tolist()
        [[[[2.5]]]]
        >>> dp.nn.AdaptiveAvgPool2d((None, 2))(dp.ones(4, 3, 5, 7)).shape
        (4, 3, 5, 2)
        >>> dp.nn.AdaptiveAvgPool2d(2)(dp.ones(3, 5, 7)).shape
        (3, 2, 2)
    """

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self._sizes = adaptive_output_size("AdaptiveAvgPool2d", output_size)
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        return adaptive_pool("AdaptiveAvgPool2d", x, self._sizes, average=True)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool2d(Module):
    """The maximum over PyTorch's adaptive windows (see ``AdaptiveAvgPool2d``), the first
    maximum in each window taking the gradient; ``return_indices`` also returns each winner's
    flat position in its input plane.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.AdaptiveMaxPool2d((1, 2))(dp.arange(6.0).reshape(1, 1, 2, 3)).tolist()
        [[[[4.0, 5.0]]]]
    """

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self._sizes = adaptive_output_size("AdaptiveMaxPool2d", output_size)
        self.output_size = output_size
        self.return_indices = check_bool(return_indices, "return_indices", "AdaptiveMaxPool2d")

    def forward(self, x: Tensor) -> Any:
        return adaptive_pool("AdaptiveMaxPool2d", x, self._sizes, average=False,
                             return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"
