"""3-D max and average pooling over volumes ``(N, C, D, H, W)``, each one graph node, with the
2-D nodes' rules (``dparray.ops.pooling``): a max pool's window gives its gradient to one
winner, the first maximum in row-major window order (a NaN wins), and an average divides by
PyTorch's divisor (the window clipped to the padded input with ``count_include_pad``, to the
input without it, or ``divisor_override``). The windows are ``dparray.ops._windows``'.

``max_pool`` and ``avg_pool`` here take 1-D, 2-D and 3-D geometry: three run these nodes, the
others the 1-D and 2-D nodes (and the backends' kernels for them).
"""

from __future__ import annotations

import math
from typing import Any

from dparray.kernels import reference, resolve
from dparray.ops import pooling as _pooling
from dparray.ops._windows import Windows, im2col
from dparray.tensor import Tensor, from_op


@reference("max_pool3d")
class MaxPool3d(_pooling.MaxPool2d):
    """The maximum of each window of ``(N, C, D, H, W)`` input: the 2-D node with its forward
    for three axes (its backward holds for any number). With ``return_indices`` the node also
    sets ``indices``: each winner's flat position ``(d * H + h) * W + w`` in its input volume
    (int64, the output's shape), as PyTorch returns them."""

    def forward(self, x: Any) -> Any:
        xp = self.xp
        self.input_shape, self.output_hw = x.shape, self.geometry.output_size(x.shape[2:])
        columns = im2col(xp, x, self.geometry, self.output_hw, value=-xp.inf)
        winner = xp.argmax(columns, axis=2)
        y = xp.squeeze(xp.take_along_axis(columns, xp.expand_dims(winner, axis=2), axis=2), axis=2)
        if self.return_indices:
            self.indices = self.flat_positions(winner)
        self.save(winner)
        return y

    def flat_positions(self, winner: Any) -> Any:
        """Window positions of the winners as flat positions in the unpadded input volume."""
        xp = self.xp
        winner = xp.astype(winner, xp.int64)
        flat, rest = None, winner
        dims = len(self.output_hw)
        for axis in reversed(range(dims)):
            k, s, p = (self.geometry.kernel[axis], self.geometry.stride[axis],
                       self.geometry.padding[axis])
            offset = (rest % k) * self.geometry.dilation[axis]
            rest = rest // k
            starts = xp.arange(self.output_hw[axis], dtype=xp.int64) * s - p
            along = tuple(-1 if a == axis else 1 for a in range(dims))
            coordinate = offset + xp.reshape(starts, along)
            stride = math.prod(self.input_shape[3 + axis:])
            flat = coordinate * stride if flat is None else flat + coordinate * stride
        return flat


@reference("avg_pool3d")
class AvgPool3d(_pooling.AvgPool2d):
    """The mean of each window of ``(N, C, D, H, W)`` input, with PyTorch's divisor rules: the
    2-D node with its forward for three axes (its backward holds for any number)."""

    def forward(self, x: Any) -> Any:
        xp = self.xp
        self.input_shape, self.output_hw = x.shape, self.geometry.output_size(x.shape[2:])
        columns = im2col(xp, x, self.geometry, self.output_hw)
        self.divisor = self.volume_divisors(x.dtype)
        return xp.sum(columns, axis=2) / self.divisor

    def volume_divisors(self, dtype: Any) -> Any:
        """Each output position's divisor, the product of its window's extent along every
        axis (PyTorch's rule), as an array broadcasting against the output."""
        xp = self.xp
        out = self.output_hw
        if self.divisor_override is not None:
            return xp.asarray(float(self.divisor_override), dtype=dtype)
        total = xp.ones(out, dtype=dtype)
        for axis, (n, o, k, s, p) in enumerate(zip(
                self.input_shape[2:], out, self.geometry.kernel, self.geometry.stride,
                self.geometry.padding, strict=True)):
            spans = [float(_span(i * s - p, n, k, p, self.count_include_pad)) for i in range(o)]
            along = tuple(-1 if a == axis else 1 for a in range(len(out)))
            total = total * xp.reshape(xp.asarray(spans, dtype=dtype), along)
        return total


def _span(start: int, n: int, k: int, p: int, include_pad: bool) -> int:
    """The extent along one axis of a window starting at ``start`` (in unpadded
    coordinates): clipped to the padded input, or to the input without ``include_pad``."""
    end = min(start + k, n + p)
    return end - start if include_pad else min(end, n) - max(start, 0)


def max_pool(x: Tensor, windows: Windows, return_indices: bool = False, dims: int = 2) -> Any:
    """The max pooling node for ``dims`` spatial axes (1-D and 2-D: ``dparray.ops.pooling``),
    or the backend's kernel for it; with ``return_indices`` also the winners' positions."""
    if dims < 3:
        return _pooling.max_pool(x, windows, return_indices, dims)
    op = resolve(x.backend, MaxPool3d)(windows, return_indices)
    out = op(x)
    return (out, from_op(op.indices, x.backend, None)) if return_indices else out


def avg_pool(x: Tensor, windows: Windows, count_include_pad: bool = True,
             divisor_override: int | None = None, dims: int = 2) -> Tensor:
    """The average pooling node for ``dims`` spatial axes (1-D and 2-D:
    ``dparray.ops.pooling``), or the backend's kernel for it."""
    if dims < 3:
        return _pooling.avg_pool(x, windows, count_include_pad, divisor_override, dims)
    return resolve(x.backend, AvgPool3d)(windows, count_include_pad, divisor_override)(x)

