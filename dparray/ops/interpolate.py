"""Resampling to a new size, PyTorch's ``F.interpolate`` on ``(N, C, L)``, ``(N, C, H, W)`` and
``(N, C, D, H, W)`` input: ``"nearest"``, ``"nearest-exact"``, ``"linear"``, ``"bilinear"``,
``"bicubic"`` and ``"trilinear"``, one graph node for all.

Every mode is separable. Each output position along an axis reads a few input positions along
it -- one (nearest), a weighted pair (linear) or four (bicubic, clamped at the edges) -- so
forward is, axis by axis from the last, a weighted sum of ``take``s, and backward adds the
gradient back with the adjoint of each take. Which positions and weights is PyTorch's rule,
computed on the host from the input size, the output size and the scale factor the caller gave
(``nearest_sampling``, ``linear_sampling``, ``cubic_sampling``): PyTorch computes nearest
positions in float32 arithmetic, and linear and cubic ones in the input's precision (float32
for float32 input), so both are emulated here. An axis whose size is kept is left as it is
(but for bicubic with a scale factor: ``cubic_sampling``).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dparray.autograd import Function
from dparray.kernels import reference, resolve
from dparray.ops._take_axis import take_adjoint
from dparray.ops._windows import Sizes
from dparray.tensor import Tensor

_CUBIC_A = -0.75  # PyTorch's (and OpenCV's) bicubic convolution constant


@dataclass(frozen=True)
class AxisSampling:
    """Where each output position along one axis of ``size`` entries reads: the sum over taps
    ``j`` of ``weights[j][i] * x[taps[j][i]]``, or ``x[taps[0][i]]`` when ``weights`` is
    empty (nearest)."""

    size: int
    taps: tuple[tuple[int, ...], ...]
    weights: tuple[tuple[float, ...], ...] = ()


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


def nearest_sampling(size: int, out: int, scale_factor: float | None,
                     exact: bool = False) -> AxisSampling | None:
    """PyTorch's ``"nearest"``: output ``i`` reads input ``floor(i * scale)`` (in float32), at
    most ``size - 1``, and a doubled size reads ``i // 2``; ``"nearest-exact"`` reads
    ``floor((i + 0.5) * scale)``, the nearest input centre. None when the size is kept."""
    if out == size:
        return None
    if out == 2 * size and not exact:
        return AxisSampling(size, (tuple(i // 2 for i in range(out)),))
    scale = _float32(source_scale(size, out, scale_factor, False))
    shift = 0.5 if exact else 0.0
    return AxisSampling(size, (tuple(min(math.floor(_float32((i + shift) * scale)), size - 1)
                                     for i in range(out)),))


def linear_sampling(size: int, out: int, scale_factor: float | None, align_corners: bool,
                    single: bool) -> AxisSampling | None:
    """PyTorch's linear rule along one axis: output ``i`` reads inputs ``i0`` and ``i0 + 1``
    (``i0`` alone at the last entry) with weights ``1 - t`` and ``t``, from the source
    position ``scale * i`` (``align_corners``) or ``scale * (i + 0.5) - 0.5`` clipped at 0; in
    float32 arithmetic when ``single``, as PyTorch does for float32 input. None when the size
    is kept."""
    if out == size:
        return None
    rounded = _float32 if single else float
    first, second, near, far = [], [], [], []
    for real in _sources(size, out, scale_factor, align_corners, rounded, clip=True):
        low = min(math.floor(_float32(real)), size - 1)  # PyTorch floors with floorf
        t = min(max(rounded(real - low), 0.0), 1.0)
        first.append(low)
        second.append(low + 1 if low < size - 1 else low)
        near.append(rounded(1.0 - t))
        far.append(t)
    return AxisSampling(size, (tuple(first), tuple(second)), (tuple(near), tuple(far)))


def cubic_sampling(size: int, out: int, scale_factor: float | None, align_corners: bool,
                   single: bool) -> AxisSampling | None:
    """PyTorch's bicubic rule along one axis: output ``i`` reads inputs ``i0 - 1 .. i0 + 2``
    (clamped to the axis) with Keys' cubic convolution weights (``A = -0.75``) of
    ``t = source - i0``, from the source position of ``linear_sampling`` without its clipping
    at 0. None when the size is kept and no scale factor moves the positions (PyTorch's
    bicubic, unlike its other modes, resamples a kept size by a given factor)."""
    if out == size and (scale_factor is None or align_corners):
        return None
    rounded = _float32 if single else float
    taps: list[list[int]] = [[], [], [], []]
    weights: list[list[float]] = [[], [], [], []]
    for real in _sources(size, out, scale_factor, align_corners, rounded, clip=False):
        low = min(math.floor(_float32(real)), size - 1)
        t = min(max(rounded(real - low), 0.0), 1.0)
        for j, w in enumerate(_cubic_weights(t, rounded)):
            taps[j].append(min(max(low - 1 + j, 0), size - 1))
            weights[j].append(w)
    return AxisSampling(size, tuple(tuple(t) for t in taps), tuple(tuple(w) for w in weights))


def _sources(size: int, out: int, scale_factor: float | None, align_corners: bool,
             rounded: Callable[[float], float], clip: bool) -> list[float]:
    """PyTorch's ``area_pixel_compute_source_index`` for every output position."""
    scale = rounded(source_scale(size, out, scale_factor, align_corners))
    if align_corners:
        return [rounded(scale * i) for i in range(out)]
    sources = [rounded(rounded(scale * rounded(i + 0.5)) - 0.5) for i in range(out)]
    return [max(s, 0.0) for s in sources] if clip else sources


def _cubic_weights(t: float, rounded: Callable[[float], float]) -> tuple[float, ...]:
    """The four weights of taps ``-1, 0, 1, 2`` at distance ``t`` past tap 0, as PyTorch's
    ``get_cubic_upsample_coefficients`` computes them."""
    a = _CUBIC_A

    def near(x: float) -> float:  # |x| <= 1
        return rounded(rounded(rounded(rounded(rounded((a + 2) * x) - (a + 3)) * x) * x) + 1)

    def far(x: float) -> float:  # 1 < |x| < 2
        inner = rounded(rounded(rounded(a * x) - 5 * a) * x)
        return rounded(rounded(rounded(inner + 8 * a) * x) - 4 * a)

    other = rounded(1.0 - t)
    return far(rounded(t + 1.0)), near(t), near(other), far(rounded(other + 1.0))


@reference("interpolate")
class Interpolate(Function):
    """``(N, C, *spatial)`` input resampled along each spatial axis, the last first; an axis
    whose sampling is None keeps its size and values."""

    def __init__(self, samplings: tuple[AxisSampling | None, ...]) -> None:
        self.samplings = samplings

    def forward(self, x: Any) -> Any:
        for axis in reversed(range(len(self.samplings))):
            sampling = self.samplings[axis]
            if sampling is not None:
                x = self._resample(x, sampling, axis + 2)
        return x

    def backward(self, grad: Any) -> Any:
        for axis, sampling in enumerate(self.samplings):
            if sampling is not None:
                grad = self._adjoint(grad, sampling, axis + 2)
        return grad

    def _resample(self, x: Any, sampling: AxisSampling, axis: int) -> Any:
        xp = self.xp
        if not sampling.weights:
            return xp.take(x, self._index(sampling.taps[0]), axis=axis)
        total = None
        for taps, weights in zip(sampling.taps, sampling.weights, strict=True):
            term = xp.take(x, self._index(taps), axis=axis) * self._weights(weights, x, axis)
            total = term if total is None else total + term
        return total

    def _adjoint(self, grad: Any, sampling: AxisSampling, axis: int) -> Any:
        xp = self.xp
        if not sampling.weights:
            return take_adjoint(xp, grad, sampling.taps[0], sampling.size, axis)
        parts = [grad * self._weights(weights, grad, axis) for weights in sampling.weights]
        positions = tuple(p for taps in sampling.taps for p in taps)
        return take_adjoint(xp, xp.concat(parts, axis=axis), positions, sampling.size, axis)

    def _index(self, positions: tuple[int, ...]) -> Any:
        return self.xp.asarray(positions, dtype=self.xp.int64)

    def _weights(self, weights: tuple[float, ...], like: Any, axis: int) -> Any:
        """One weight per output position along axis ``axis``, broadcastable against
        ``like``."""
        values = self.xp.asarray(weights, dtype=like.dtype)
        return self.xp.reshape(values, (len(weights), *(1,) * (like.ndim - 1 - axis)))


def interpolate(x: Tensor, size: Sizes, scale_factor: tuple[float | None, ...], mode: str,
                align_corners: bool) -> Tensor:
    """The ``Interpolate`` node resampling ``x`` to spatial ``size``; ``scale_factor`` per
    axis is the factor the caller gave (None: the sizes' ratio), arguments already checked."""
    single = x.dtype.name != "float64"
    samplings = []
    for n, o, f in zip(x.shape[2:], size, scale_factor, strict=True):
        if mode in ("nearest", "nearest-exact"):
            samplings.append(nearest_sampling(n, o, f, exact=mode == "nearest-exact"))
        elif mode == "bicubic":
            samplings.append(cubic_sampling(n, o, f, align_corners, single))
        else:
            samplings.append(linear_sampling(n, o, f, align_corners, single))
    return resolve(x.backend, Interpolate)(tuple(samplings))(x)
