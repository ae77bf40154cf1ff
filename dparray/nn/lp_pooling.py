"""Power-average pooling, PyTorch's ``LPPool1d/2d/3d`` and ``F.lp_pool1d/2d/3d``: each window
gives ``(sum of x ** p) ** (1 / p)`` -- the p-norm of the window for positive input, the sum
pooling at ``p = 1``, the maximum at ``p = inf``. The functional forms are re-exported by
``dparray.nn.functional``.

Computed as PyTorch computes it, from the average pooling nodes: ``avg_pool(x ** p)`` times the
kernel's size, to the power ``1 / p`` (so a window of ``ceil_mode``'s that hangs over the end is
scaled by the whole kernel's size against its own, as in PyTorch), and with ``p = +-inf`` the
max pool of ``|x|`` (of ``-|x|``, negated). Where a window's sum of powers is zero the gradient
is zero, as PyTorch documents (its ``sign * relu(abs)`` has that gradient; here a ``where``).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from dparray import ops
from dparray._checks import check_number
from dparray.nn._geometry import check_batched_or_not, check_pool_input, pool_geometry
from dparray.nn.module import Module
from dparray.ops import pool3d as _pool3d
from dparray.ops._windows import Windows
from dparray.tensor import Tensor

__all__ = ["LPPool1d", "LPPool2d", "LPPool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d"]


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """``(sum of x ** norm_type) ** (1 / norm_type)`` over each window of ``(N, C, L)`` (or
    unbatched ``(C, L)``) input, as ``F.lp_pool1d``; ``stride`` defaults to ``kernel_size``.

    Examples:
        >>> import dparray as dp
        >>> x = dp.tensor([[[3.0, 4.0, 1.0, 0.0]]])
        >>> dp.nn.functional.lp_pool1d(x, 2, 2).tolist()
        [[[5.0, 1.0]]]
    """
    return _lp_pool("lp_pool1d", 1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """``(sum of x ** norm_type) ** (1 / norm_type)`` over each window of ``(N, C, H, W)`` (or
    ``(C, H, W)``) input, as ``F.lp_pool2d``.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.functional.lp_pool2d(dp.ones(1, 1, 2, 4), 1, 2).tolist()
        [[[[4.0, 4.0]]]]
    """
    return _lp_pool("lp_pool2d", 2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """``(sum of x ** norm_type) ** (1 / norm_type)`` over each window of ``(N, C, D, H, W)``
    (or ``(C, D, H, W)``) input, as ``F.lp_pool3d``.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.functional.lp_pool3d(dp.ones(1, 1, 2, 2, 2), 2, 2).reshape(-1).tolist()
        [2.8284270763397217]
    """
    return _lp_pool("lp_pool3d", 3, input, norm_type, kernel_size, stride, ceil_mode)


def _lp_pool(where: str, dims: int, x: Any, norm_type: Any, kernel_size: Any, stride: Any,
             ceil_mode: Any) -> Tensor:
    power = _norm_type(where, norm_type)
    windows = pool_geometry(where, kernel_size, stride, 0, 1, ceil_mode, dims)
    return _pool(where, x, power, windows, dims)


def _pool(where: str, x: Any, power: float, windows: Windows, dims: int) -> Tensor:
    """``x`` checked and pooled (``power`` and ``windows`` are checked already); unbatched
    input as a batch of one, as PyTorch's pools take it."""
    check_batched_or_not(where, x, dims)
    if x.ndim == dims + 1:
        out = _pool(where, x.reshape(1, *x.shape), power, windows, dims)
        return out.reshape(*out.shape[1:])
    check_pool_input(where, x, windows, dims)
    if not x.dtype.is_floating:
        raise TypeError(f"{where}: input must be a floating-point tensor, got {x.dtype.name}")
    if math.isinf(power):
        sign = 1.0 if power > 0 else -1.0
        return _pool3d.max_pool(x.abs() * sign, windows, False, dims) * sign
    mean = _pool3d.avg_pool(x ** power, windows, True, None, dims)
    kept = ops.where(mean != 0, mean, 0.0)  # no gradient through a zero sum (PyTorch's rule)
    return (kept * float(math.prod(windows.kernel))) ** (1.0 / power)


def _norm_type(where: str, norm_type: Any) -> float:
    """``norm_type``: a nonzero number (infinities allowed: PyTorch's max pools of ``|x|``)."""
    power = check_number(norm_type, "norm_type", where, finite=False)
    if power == 0:
        raise ValueError(f"{where}: norm_type must be nonzero, got {norm_type!r}")
    return power


class _LPPoolNd(Module):
    """What ``LPPool1d``, ``LPPool2d`` and ``LPPool3d`` share; ``dims`` is the number of
    spatial axes. The arguments are kept as given, for PyTorch's repr."""

    dims: ClassVar[int] = 2

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        where = type(self).__name__
        self._power = _norm_type(where, norm_type)
        self._windows = pool_geometry(where, kernel_size, stride, 0, 1, ceil_mode, self.dims)
        self.norm_type, self.kernel_size, self.stride = norm_type, kernel_size, stride
        self.ceil_mode = ceil_mode

    def forward(self, x: Tensor) -> Tensor:
        return _pool(type(self).__name__, x, self._power, self._windows, self.dims)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling of ``(N, C, L)`` or ``(C, L)`` input: each window's
    ``(sum of x ** norm_type) ** (1 / norm_type)`` (see ``lp_pool1d``).

    Examples:
        >>> import dparray as dp
        >>> dp.nn.LPPool1d(2, 2)(dp.tensor([[[3.0, 4.0, 1.0, 0.0]]])).tolist()
        [[[5.0, 1.0]]]
    """

    dims = 1


class LPPool2d(_LPPoolNd):
    """Power-average pooling of ``(N, C, H, W)`` or ``(C, H, W)`` input (see ``lp_pool2d``).

    Examples:
        >>> import dparray as dp
        >>> dp.nn.LPPool2d(1, (2, 2), stride=1)(dp.ones(1, 1, 3, 3)).tolist()
        [[[[4.0, 4.0], [4.0, 4.0]]]]
    """

    dims = 2


class LPPool3d(_LPPoolNd):
    """Power-average pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input (see
    ``lp_pool3d``).

    Examples:
        >>> import dparray as dp
        >>> dp.nn.LPPool3d(float("inf"), 2)(dp.ones(2, 3, 4, 4, 4)).shape
        (2, 3, 2, 2, 2)
    """

    dims = 3
