"""Adaptive average and max pooling of sequences ``(N, C, L)`` and volumes ``(N, C, D, H, W)``
to a requested output size, with PyTorch's windows, arguments and index layout; the functional
forms are re-exported by ``dparray.nn.functional``.

Both are built on the 2-D nodes of ``dparray.ops.adaptive_pool`` (and the backends' kernels for
them): a sequence is an image of height one, and a volume is pooled over its ``(H, W)`` planes,
then along ``D`` -- an adaptive window of a volume is the product of one window per axis, so
its mean is the mean along ``D`` of the planes' means, and its maximum the maximum of their
maxima. The first maximum in row-major ``(d, h, w)`` order wins and alone takes the gradient,
as in PyTorch: the plane pool picks the first in ``(h, w)`` order, the pool along ``D`` the
first depth. Indices are flat positions: along ``L``, or ``(d * H + h) * W + w`` in the
volume. Unbatched input (no ``N`` axis) is pooled as a batch of one, as PyTorch's.
"""

from __future__ import annotations

from typing import Any

from dparray._checks import check_bool, check_int
from dparray.nn._geometry import check_batched_or_not
from dparray.nn.module import Module
from dparray.ops import adaptive_pool as _adaptive
from dparray.ops.indexing import gather
from dparray.tensor import Tensor

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool3d",
]

Sizes = tuple[int | None, ...]


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """The mean over PyTorch's adaptive windows of ``(N, C, L)`` (or unbatched ``(C, L)``)
    input, to ``output_size`` entries (an int or one int): output ``i`` of ``O`` averages
    inputs ``floor(i * L / O)`` to ``ceil((i + 1) * L / O)``, as ``F.adaptive_avg_pool1d``.

    Examples:
        >>> import dparray as dp
        >>> x = dp.tensor([[[1.0, 3.0, 2.0, 0.0, 4.0]]])
        >>> dp.nn.functional.adaptive_avg_pool1d(x, 2).tolist()
        [[[2.0, 2.0]]]
    """
    sizes = _output_sizes("adaptive_avg_pool1d", output_size, 1)
    return adaptive_pool("adaptive_avg_pool1d", input, sizes, average=True)


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """The mean over PyTorch's adaptive windows of ``(N, C, D, H, W)`` (or unbatched
    ``(C, D, H, W)``) input, to ``output_size`` (an int or three; None keeps the input's size
    along that axis), as ``F.adaptive_avg_pool3d``.

    Examples:
        >>> import dparray as dp
        >>> x = dp.arange(8.0).reshape(1, 1, 2, 2, 2)
        >>> dp.nn.functional.adaptive_avg_pool3d(x, (1, None, 1)).reshape(-1).tolist()
        [2.5, 4.5]
    """
    sizes = _output_sizes("adaptive_avg_pool3d", output_size, 3)
    return adaptive_pool("adaptive_avg_pool3d", input, sizes, average=True)


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """The maximum over PyTorch's adaptive windows of ``(N, C, L)`` (or ``(C, L)``) input, as
    ``F.adaptive_max_pool1d``; ``return_indices`` also returns each winner's position along
    ``L``.

    Examples:
        >>> import dparray as dp
        >>> x = dp.tensor([[[1.0, 3.0, 2.0, 0.0, 5.0]]])
        >>> out, where = dp.nn.functional.adaptive_max_pool1d(x, 2, return_indices=True)
        >>> out.tolist(), where.tolist()
        ([[[3.0, 5.0]]], [[[1, 4]]])
    """
    sizes = _output_sizes("adaptive_max_pool1d", output_size, 1)
    check_bool(return_indices, "return_indices", "adaptive_max_pool1d")
    return adaptive_pool("adaptive_max_pool1d", input, sizes, average=False,
                return_indices=return_indices)


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """The maximum over PyTorch's adaptive windows of ``(N, C, D, H, W)`` (or
    ``(C, D, H, W)``) input, as ``F.adaptive_max_pool3d``; ``return_indices`` also returns each
    winner's flat position ``(d * H + h) * W + w`` in its input volume.

    Examples:
        >>> import dparray as dp
        >>> x = dp.arange(8.0).reshape(1, 1, 2, 2, 2)
        >>> out, where = dp.nn.functional.adaptive_max_pool3d(x, (1, 2, 1), return_indices=True)
        >>> out.reshape(-1).tolist(), where.reshape(-1).tolist()
        ([5.0, 7.0], [5, 7])
    """
    sizes = _output_sizes("adaptive_max_pool3d", output_size, 3)
    check_bool(return_indices, "return_indices", "adaptive_max_pool3d")
    return adaptive_pool("adaptive_max_pool3d", input, sizes, average=False,
                return_indices=return_indices)


class _AdaptivePoolNd(Module):
    """What the adaptive pools share: ``output_size`` as given (for the repr, as PyTorch keeps
    it) and checked; ``dims`` spatial axes; ``average`` or maximum."""

    dims = 1
    average = True

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self._sizes = _output_sizes(type(self).__name__, output_size, self.dims)
        self.output_size = output_size

    def forward(self, x: Tensor) -> Any:
        return adaptive_pool(type(self).__name__, x, self._sizes, self.average)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class _AdaptiveMaxPoolNd(_AdaptivePoolNd):
    average = False

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = check_bool(return_indices, "return_indices", type(self).__name__)

    def forward(self, x: Tensor) -> Any:
        return adaptive_pool(type(self).__name__, x, self._sizes, False, self.return_indices)


class AdaptiveAvgPool1d(_AdaptivePoolNd):
    """The mean over PyTorch's adaptive windows of ``(N, C, L)`` or ``(C, L)`` input, to
    ``output_size`` entries whatever ``L`` (see ``adaptive_avg_pool1d``).

    Examples:
        >>> import dparray as dp
        >>> dp.nn.AdaptiveAvgPool1d(3)(dp.ones(2, 4, 10)).shape
        (2, 4, 3)
    """

    dims = 1


class AdaptiveAvgPool3d(_AdaptivePoolNd):
    """The mean over PyTorch's adaptive windows of ``(N, C, D, H, W)`` or ``(C, D, H, W)``
    input, to ``output_size`` (an int or three, None keeping the input's size there).

    Examples:
        >>> import dparray as dp
        >>> dp.nn.AdaptiveAvgPool3d((None, 2, 1))(dp.ones(2, 3, 5, 7, 4)).shape
        (2, 3, 5, 2, 1)
    """

    dims = 3


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """The maximum over PyTorch's adaptive windows of ``(N, C, L)`` or ``(C, L)`` input, the
    first maximum in each window taking the gradient; ``return_indices`` also returns each
    winner's position along ``L``.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.AdaptiveMaxPool1d(2)(dp.tensor([[[1.0, 3.0, 2.0, 0.0, 5.0]]])).tolist()
        [[[3.0, 5.0]]]
    """

    dims = 1


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """The maximum over PyTorch's adaptive windows of ``(N, C, D, H, W)`` or ``(C, D, H, W)``
    input, the first maximum in row-major order taking the gradient; ``return_indices`` also
    returns each winner's flat position in its input volume.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.AdaptiveMaxPool3d(1)(dp.arange(8.0).reshape(1, 1, 2, 2, 2)).tolist()
        [[[[[7.0]]]]]
    """

    dims = 3


def _output_sizes(where: str, output_size: Any, dims: int) -> Sizes:
    """An adaptive pool's ``output_size`` for ``dims`` spatial axes: an int or ``dims`` of
    them, each at least 1; for 3-D input an entry may be None (the input's size there), as in
    PyTorch, whose 1-D pools take no None."""
    sequence = isinstance(output_size, (list, tuple))
    sizes = tuple(output_size) if sequence else (output_size,) * dims
    if len(sizes) != dims:
        raise ValueError(f"{where}: output_size must be an int or {dims} ints, got "
                         f"{output_size!r}")
    return tuple(None if n is None and dims > 1 else check_int(n, "output_size", where,
                                                                minimum=1) for n in sizes)


def adaptive_pool(where: str, x: Any, sizes: Sizes, average: bool,
                  return_indices: bool = False) -> Any:
    """``x`` (batched or not) checked and pooled to ``sizes`` (None: the input's size), with
    the winners' flat positions too when ``return_indices``: the adaptive pools of 1, 2 and 3
    spatial axes (``dparray.nn.pooling``'s 2-D modules and functions call it too)."""
    dims = len(sizes)
    check_batched_or_not(where, x, dims)
    if average and not x.dtype.is_floating:
        raise TypeError(f"{where}: input must be a floating-point tensor, got {x.dtype.name}")
    if min(x.shape[x.ndim - dims:]) < 1:
        raise ValueError(f"{where}: expected an input with non-empty spatial axes, got shape "
                         f"{x.shape}")
    if x.ndim == dims + 1:
        result = adaptive_pool(where, x.reshape(1, *x.shape), sizes, average, return_indices)
        if return_indices:
            return tuple(t.reshape(*t.shape[1:]) for t in result)
        return result.reshape(*result.shape[1:])
    spatial = x.shape[2:]
    out = tuple(n if o is None else o for n, o in zip(spatial, sizes, strict=True))
    if dims == 1:
        return _pool_1d(x, out[0], average, return_indices)
    if dims == 2:
        return _pool_2d(x, (out[0], out[1]), average, return_indices)
    return _pool_3d(x, (out[0], out[1], out[2]), average, return_indices)


def _pool_2d(x: Tensor, out: tuple[int, int], average: bool, return_indices: bool) -> Any:
    if average:
        return _adaptive.adaptive_avg_pool2d(x, out)
    return _adaptive.adaptive_max_pool2d(x, out, return_indices)


def _pool_1d(x: Tensor, out: int, average: bool, return_indices: bool) -> Any:
    """A sequence as an image of height one (whose flat positions are those along ``L``)."""
    n, c, length = x.shape
    result = _pool_2d(x.reshape(n, c, 1, length), (1, out), average, return_indices)
    if return_indices:
        return tuple(t.reshape(n, c, out) for t in result)
    return result.reshape(n, c, out)


def _pool_3d(x: Tensor, out: tuple[int, int, int], average: bool,
             return_indices: bool) -> Any:
    """Each ``(H, W)`` plane pooled to ``(OH, OW)``, then each column of depths to ``OD``
    (an image of ``D`` rows and ``OH * OW`` columns, whose column windows are the columns
    themselves). The winners' flat positions: the depth from the second pool, then the plane
    position the first pool found at that depth."""
    n, c, d, h, w = x.shape
    od, oh, ow = out
    planes = _pool_2d(x.reshape(n, c * d, h, w), (oh, ow), average, return_indices)
    if not return_indices:
        columns = _pool_2d(planes.reshape(n, c, d, oh * ow), (od, oh * ow), average, False)
        return columns.reshape(n, c, od, oh, ow)
    pooled, where = planes
    result, flat = _pool_2d(pooled.reshape(n, c, d, oh * ow), (od, oh * ow), False, True)
    depth = flat // (oh * ow)  # the second pool's flat positions are depth * (OH * OW) + column
    in_plane = gather(where.reshape(n, c, d, oh * ow), 2, depth)
    indices = depth * (h * w) + in_plane
    return result.reshape(n, c, od, oh, ow), indices.reshape(n, c, od, oh, ow)
