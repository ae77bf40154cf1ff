"""Adaptive average and max pooling of images to a requested output size, one graph node each.

PyTorch's windows: output row ``i`` of ``OH`` covers input rows ``floor(i * H / OH)`` up to
``ceil((i + 1) * H / OH)`` (exclusive), and columns likewise, so windows may differ in size by
one and overlap where ``OH`` does not divide ``H``. Each axis's windows are read with one
``take`` at a table of positions, ``(O, k)`` for the longest window ``k``, shorter windows
repeating their last position (no take at all where the windows tile the axis, as in global
pooling). The average masks the repeats. The maximum need not: a repeat always comes after the
position it repeats, so the first maximum in row-major window order -- PyTorch's winner, which
alone takes the gradient -- is a real position.
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function
from dparray.kernels import reference, resolve
from dparray.ops._take_axis import take_adjoint
from dparray.ops._windows import Pair
from dparray.tensor import Tensor, from_op


def adaptive_bounds(size: int, out: int) -> list[tuple[int, int]]:
    """``(start, end)`` of each of the ``out`` windows over an axis of ``size`` entries."""
    return [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


class AxisWindows:
    """One axis's adaptive windows as positions to take: ``out`` rows of ``width``. Where the
    windows tile the axis (``out`` divides ``size``) the positions are the axis itself, and
    ``take`` and its adjoint do nothing."""

    def __init__(self, size: int, out: int) -> None:
        bounds = adaptive_bounds(size, out)
        self.size, self.out = size, out
        self.starts = [start for start, _ in bounds]
        self.lengths = [end - start for start, end in bounds]
        self.width = max(self.lengths)
        self.positions = [min(start + r, end - 1) for start, end in bounds
                          for r in range(self.width)]
        # the repeats carry no gradient (masked in the average, never the maximum's winner)
        self.real = tuple(start + r if start + r < end else None for start, end in bounds
                          for r in range(self.width))
        self.tiles = size % out == 0

    def take(self, xp: Any, x: Any, axis: int) -> Any:
        """``x`` read at the positions along ``axis`` (``out * width`` entries)."""
        return x if self.tiles else xp.take(x, self._index(xp), axis=axis)

    def take_adjoint(self, xp: Any, grad: Any, axis: int) -> Any:
        """The gradient of ``take``'s input from its output's, which is zero at the repeats."""
        return grad if self.tiles else take_adjoint(xp, grad, self.real, self.size, axis)

    def valid(self, xp: Any) -> Any:
        """Which entries of the ``(out, width)`` table are not repeats."""
        return xp.asarray([[r < n for r in range(self.width)] for n in self.lengths])

    def _index(self, xp: Any) -> Any:
        return xp.asarray(self.positions, dtype=xp.int64)


@reference("adaptive_avg_pool2d")
class AdaptiveAvgPool2d(Function):
    """The mean of each adaptive window of ``(N, C, H, W)`` input, to ``(N, C, OH, OW)``: the
    mean over the columns of each window, then over its rows."""

    def __init__(self, output_size: Pair) -> None:
        self.output_size = output_size

    def forward(self, x: Any) -> Any:
        h, w = x.shape[2], x.shape[3]
        self.rows = AxisWindows(h, self.output_size[0])
        self.cols = AxisWindows(w, self.output_size[1])
        return self._mean(self._mean(x, self.cols, axis=3), self.rows, axis=2)

    def backward(self, grad: Any) -> Any:
        return self._mean_adjoint(self._mean_adjoint(grad, self.rows, axis=2), self.cols,
                                  axis=3)

    def _mean(self, x: Any, windows: AxisWindows, axis: int) -> Any:
        xp = self.xp
        picked = xp.reshape(windows.take(xp, x, axis), (*x.shape[:axis], windows.out,
                                                        windows.width, *x.shape[axis + 1:]))
        if not windows.tiles:
            picked = xp.where(self._before_trailing(windows.valid(xp), axis), picked, 0.0)
        return xp.sum(picked, axis=axis + 1) / self._lengths(windows, x.dtype, axis)

    def _mean_adjoint(self, grad: Any, windows: AxisWindows, axis: int) -> Any:
        xp = self.xp
        share = xp.expand_dims(grad / self._lengths(windows, grad.dtype, axis), axis=axis + 1)
        shape = (*grad.shape[:axis], windows.out, windows.width, *grad.shape[axis + 1:])
        if windows.tiles:
            spread = xp.broadcast_to(share, shape)
        else:
            spread = xp.where(self._before_trailing(windows.valid(xp), axis), share, 0.0)
        spread = xp.reshape(spread, (*grad.shape[:axis], windows.out * windows.width,
                                     *grad.shape[axis + 1:]))
        return windows.take_adjoint(xp, spread, axis)

    def _lengths(self, windows: AxisWindows, dtype: Any, axis: int) -> Any:
        lengths = self.xp.asarray([float(n) for n in windows.lengths], dtype=dtype)
        return self._before_trailing(lengths, axis)

    def _before_trailing(self, table: Any, axis: int) -> Any:
        """``table``, whose first axis stands for image axis ``axis``, shaped to broadcast
        against the image axes after it."""
        return self.xp.reshape(table, (*table.shape, *(1,) * (3 - axis)))


@reference("adaptive_max_pool2d")
class AdaptiveMaxPool2d(Function):
    """The maximum of each adaptive window of ``(N, C, H, W)`` input, the first maximum in
    row-major order winning. With ``return_indices`` the node also sets ``indices``: each
    winner's flat position ``h * W + w`` in its input plane (int64)."""
    saved_values = "constants"  # the winners' positions

    def __init__(self, output_size: Pair, return_indices: bool = False) -> None:
        self.output_size, self.return_indices = output_size, return_indices
        self.indices: Any = None

    def forward(self, x: Any) -> Any:
        xp = self.xp
        n, c, h, w = x.shape
        oh, ow = self.output_size
        self.rows, self.cols = AxisWindows(h, oh), AxisWindows(w, ow)
        kh, kw = self.rows.width, self.cols.width
        picked = self.cols.take(xp, self.rows.take(xp, x, axis=2), axis=3)
        windows = xp.permute_dims(xp.reshape(picked, (n, c, oh, kh, ow, kw)), (0, 1, 2, 4, 3, 5))
        windows = xp.reshape(windows, (n, c, oh, ow, kh * kw))
        winner = xp.argmax(windows, axis=4)
        if self.return_indices:
            self.indices = self._flat_positions(winner, w)
        self.save(winner)
        return xp.max(windows, axis=4)

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (winner,) = self.saved
        n, c, oh, ow = grad.shape
        kh, kw = self.rows.width, self.cols.width
        positions = xp.reshape(xp.arange(kh * kw, dtype=winner.dtype), (1, 1, 1, 1, -1))
        spread = xp.where(xp.expand_dims(winner, axis=4) == positions,
                          xp.expand_dims(grad, axis=4), 0.0)
        spread = xp.permute_dims(xp.reshape(spread, (n, c, oh, ow, kh, kw)), (0, 1, 2, 4, 3, 5))
        spread = xp.reshape(spread, (n, c, oh * kh, ow * kw))
        by_rows = self.cols.take_adjoint(xp, spread, axis=3)
        return self.rows.take_adjoint(xp, by_rows, axis=2)

    def _flat_positions(self, winner: Any, width: int) -> Any:
        """Window positions of the winners (never repeats) as flat positions in the plane."""
        xp = self.xp
        winner = xp.astype(winner, xp.int64)
        kw = self.cols.width
        row_starts = xp.reshape(xp.asarray(self.rows.starts, dtype=xp.int64), (-1, 1))
        col_starts = xp.reshape(xp.asarray(self.cols.starts, dtype=xp.int64), (1, -1))
        return (row_starts + winner // kw) * width + col_starts + winner % kw


def adaptive_avg_pool2d(x: Tensor, output_size: Pair) -> Tensor:
    """The ``AdaptiveAvgPool2d`` node, ``output_size`` already resolved and checked."""
    return resolve(x.backend, AdaptiveAvgPool2d)(output_size)(x)


def adaptive_max_pool2d(x: Tensor, output_size: Pair, return_indices: bool = False) -> Any:
    """The ``AdaptiveMaxPool2d`` node; with ``return_indices`` also the winners' positions."""
    op = resolve(x.backend, AdaptiveMaxPool2d)(output_size, return_indices)
    out = op(x)
    if not return_indices:
        return out
    return out, from_op(op.indices, x.backend, None)
