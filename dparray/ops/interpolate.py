"""Resampling images to a new size, PyTorch's ``F.interpolate`` on ``(N, C, H, W)`` input:
``"nearest"`` and ``"bilinear"``, one graph node for both.

Both modes are separable. Each output column reads one input column (nearest) or a weighted
pair of neighbouring columns (bilinear), and each output row likewise; so forward is a ``take``
(and, for bilinear, a weighted sum) along the width and then along the height, and backward adds
the gradient back with the adjoint of each take. Which positions and weights is PyTorch's rule,
computed on the host from the input size, the output size and the scale factor the caller gave
(``nearest_sampling``, ``linear_sampling``): PyTorch computes nearest positions in float32
arithmetic, and bilinear ones in the input's precision, so both are emulated here.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Any

from dparray.autograd import Function
from dparray.ops._take_axis import take_adjoint
from dparray.ops._windows import Pair
from dparray.tensor import Tensor


@dataclass(frozen=True)
class AxisSampling:
    """Where each output position along one axis of ``size`` entries reads: ``first[i]``, or
    ``near[i] * x[first[i]] + far[i] * x[second[i]]`` when ``second`` is given."""

    size: int
    first: tuple[int, ...]
    second: tuple[int, ...] | None = None
    near: tuple[float, ...] = ()
    far: tuple[float, ...] = ()


def _float32(value: float) -> float:
    """``value`` rounded to the nearest float32."""
    rounded: float = struct.unpack("f", struct.pack("f", value))[0]
    return rounded


def source_scale(size: int, out: int, scale_factor: float | None, align_corners: bool) -> float:
    """How far one output step moves in the input: PyTorch's ``area_pixel_compute_scale``
    (``1 / scale_factor`` when the caller gave one, else the ratio of the sizes)."""
    if align_corners:
        return (size - 1) / (out - 1) if out > 1 else 0.0
    if scale_factor is not None and scale_factor > 0:
        return 1.0 / scale_factor
    return size / out


def nearest_sampling(size: int, out: int, scale_factor: float | None) -> AxisSampling | None:
    """PyTorch's ``"nearest"``: output ``i`` reads input ``floor(i * scale)`` (in float32), at
    most ``size - 1``; a doubled size reads ``i // 2``. None when the size is kept."""
    if out == size:
        return None
    if out == 2 * size:
        return AxisSampling(size, tuple(i // 2 for i in range(out)))
    scale = _float32(source_scale(size, out, scale_factor, False))
    return AxisSampling(size, tuple(min(math.floor(_float32(i * scale)), size - 1)
                                    for i in range(out)))


def linear_sampling(size: int, out: int, scale_factor: float | None, align_corners: bool,
                    single: bool) -> AxisSampling | None:
    """PyTorch's bilinear rule along one axis: output ``i`` reads inputs ``i0`` and
    ``i0 + 1`` (``i0`` alone at the last entry) with weights ``1 - t`` and ``t``, from the
    source position ``scale * i`` (``align_corners``) or ``scale * (i + 0.5) - 0.5`` clipped at
    0; in float32 arithmetic when ``single``, as PyTorch does for float32 input. None when the
    size is kept."""
    if out == size:
        return None
    rounded = _float32 if single else float
    scale = rounded(source_scale(size, out, scale_factor, align_corners))
    first, second, near, far = [], [], [], []
    for i in range(out):
        if align_corners:
            real = rounded(scale * i)
        else:
            real = max(rounded(rounded(scale * rounded(i + 0.5)) - 0.5), 0.0)
        low = min(math.floor(_float32(real)), size - 1)  # PyTorch floors with floorf
        t = min(max(rounded(real - low), 0.0), 1.0)
        first.append(low)
        second.append(low + 1 if low < size - 1 else low)
        near.append(rounded(1.0 - t))
        far.append(t)
    return AxisSampling(size, tuple(first), tuple(second), tuple(near), tuple(far))


class Interpolate2d(Function):
    """``(N, C, H, W)`` input resampled along its width (``cols``), then its height
    (``rows``); an axis whose sampling is None keeps its size and values."""

    def __init__(self, rows: AxisSampling | None, cols: AxisSampling | None) -> None:
        self.rows, self.cols = rows, cols

    def forward(self, x: Any) -> Any:
        for axis, sampling in ((3, self.cols), (2, self.rows)):
            if sampling is not None:
                x = self._resample(x, sampling, axis)
        return x

    def backward(self, grad: Any) -> Any:
        for axis, sampling in ((2, self.rows), (3, self.cols)):
            if sampling is not None:
                grad = self._adjoint(grad, sampling, axis)
        return grad

    def _resample(self, x: Any, sampling: AxisSampling, axis: int) -> Any:
        xp = self.xp
        picked = xp.take(x, self._index(sampling.first), axis=axis)
        if sampling.second is None:
            return picked
        other = xp.take(x, self._index(sampling.second), axis=axis)
        return (picked * self._weights(sampling.near, x.dtype, axis)
                + other * self._weights(sampling.far, x.dtype, axis))

    def _adjoint(self, grad: Any, sampling: AxisSampling, axis: int) -> Any:
        xp = self.xp
        if sampling.second is None:
            return take_adjoint(xp, grad, sampling.first, sampling.size, axis)
        both = xp.concat([grad * self._weights(sampling.near, grad.dtype, axis),
                          grad * self._weights(sampling.far, grad.dtype, axis)], axis=axis)
        return take_adjoint(xp, both, sampling.first + sampling.second, sampling.size, axis)

    def _index(self, positions: tuple[int, ...]) -> Any:
        return self.xp.asarray(positions, dtype=self.xp.int64)

    def _weights(self, weights: tuple[float, ...], dtype: Any, axis: int) -> Any:
        """One weight per output position along image axis ``axis`` (2 or 3), broadcastable."""
        values = self.xp.asarray(weights, dtype=dtype)
        return self.xp.reshape(values, (len(weights), *(1,) * (3 - axis)))


def interpolate(x: Tensor, size: Pair, scale_factor: tuple[float | None, float | None],
                mode: str, align_corners: bool) -> Tensor:
    """The ``Interpolate2d`` node resampling ``x`` to spatial ``size``; ``scale_factor`` per
    axis is the factor the caller gave (None: the sizes' ratio), arguments already checked."""
    h, w = x.shape[2], x.shape[3]
    if mode == "nearest":
        rows = nearest_sampling(h, size[0], scale_factor[0])
        cols = nearest_sampling(w, size[1], scale_factor[1])
    else:
        single = x.dtype.name != "float64"
        rows = linear_sampling(h, size[0], scale_factor[0], align_corners, single)
        cols = linear_sampling(w, size[1], scale_factor[1], align_corners, single)
    return Interpolate2d(rows, cols)(x)
