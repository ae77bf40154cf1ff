"""Sliding windows over images and volumes, in array-API operations only: the shared core of
convolution and pooling, for any number of spatial axes (two for images ``(N, C, H, W)``, three
for volumes ``(N, C, D, H, W)``).

The standard has no sliding-window view and no padding, so windows are strided slices of a
padded copy: for each offset of a ``kh x kw`` (or ``kd x kh x kw``) kernel, the slice of the
padded input that offset sees at every output position. Stacking the slices gives the im2col
array ``(N, C, kh * kw, OH, OW)``; adding gradients back slice by slice is col2im. A backend
with a real strided view (NumPy's ``sliding_window_view``) overrides the ops that use these in
its kernel table.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, overload

Pair = tuple[int, int]
Sizes = tuple[int, ...]


@dataclass(frozen=True)
class Windows:
    """The geometry of a sliding window, one entry per spatial axis: kernel, stride, padding,
    dilation, and ceil mode."""

    kernel: Sizes
    stride: Sizes
    padding: Sizes
    dilation: Sizes = (1, 1)
    ceil_mode: bool = False

    @overload
    def output_size(self, size: Pair) -> Pair: ...

    @overload
    def output_size(self, size: Sizes) -> Sizes: ...

    def output_size(self, size: Sizes) -> Sizes:
        """The output's spatial size, PyTorch's formula: with ``ceil_mode`` a last, partial
        window counts, unless it would start in the right or bottom padding."""
        out = []
        for n, k, s, p, d in zip(size, self.kernel, self.stride, self.padding, self.dilation,
                                 strict=True):
            span = n + 2 * p - d * (k - 1) - 1
            count = (-(-span // s) if self.ceil_mode else span // s) + 1
            if self.ceil_mode and (count - 1) * s >= n + p:
                count -= 1
            out.append(count)
        if min(out) < 1:
            raise ValueError(
                f"a {self.kernel} window (stride {self.stride}, padding {self.padding}, "
                f"dilation {self.dilation}) does not fit an input of spatial size {tuple(size)}"
            )
        return tuple(out)

    def padded_size(self, size: Sizes, out: Sizes) -> Sizes:
        """The padded input's size: the padding on both sides, plus room on the far side for
        the partial windows of ceil mode."""
        return tuple(max(n + 2 * p, (o - 1) * s + d * (k - 1) + 1) for n, o, k, s, p, d in zip(
            size, out, self.kernel, self.stride, self.padding, self.dilation, strict=True))

    def keys(self, out: Sizes) -> list[tuple[Any, ...]]:
        """For each kernel offset, row-major, the strided slice of the padded input it sees."""
        return [
            (slice(None), slice(None), *(slice(i * d, i * d + s * (o - 1) + 1, s)
                                         for i, d, s, o in zip(offset, self.dilation,
                                                               self.stride, out, strict=True)))
            for offset in itertools.product(*(range(k) for k in self.kernel))
        ]

    def interior(self, size: Sizes) -> tuple[Any, ...]:
        """The key of the unpadded input inside the padded one."""
        return (slice(None), slice(None),
                *(slice(p, p + n) for p, n in zip(self.padding, size, strict=True)))

    @property
    def count(self) -> int:
        return math.prod(self.kernel)


def pad(xp: Any, x: Any, windows: Windows, out: Sizes, value: float) -> Any:
    """``x`` (``(N, C, *spatial)``) in a frame of ``value`` sized for ``windows``."""
    size = tuple(x.shape[2:])
    full = windows.padded_size(size, out)
    if full == size:
        return x
    padded = xp.full((*x.shape[:2], *full), value, dtype=x.dtype)
    padded[windows.interior(size)] = x
    return padded


def im2col(xp: Any, x: Any, windows: Windows, out: Sizes, value: float = 0.0) -> Any:
    """Every window of ``x`` as ``(N, C, kernel size, *out)``, padded with ``value``."""
    padded = pad(xp, x, windows, out, value)
    return xp.stack([padded[key] for key in windows.keys(out)], axis=2)


def col2im(xp: Any, columns: Any, windows: Windows, size: Sizes, out: Sizes) -> Any:
    """The adjoint of ``im2col``: each window's values added back where they came from,
    cropped to the unpadded ``size``."""
    total = xp.zeros((*columns.shape[:2], *windows.padded_size(size, out)), dtype=columns.dtype)
    for k, key in enumerate(windows.keys(out)):
        total[key] = total[key] + columns[:, :, k, ...]
    return total[windows.interior(size)]
