"""Sliding windows over images, in array-API operations only: the shared core of convolution
and pooling.

The standard has no sliding-window view and no padding, so windows are strided slices of a
padded copy: for each offset ``(i, j)`` of a ``kh x kw`` kernel, the slice of the padded input
that offset sees at every output position. Stacking the ``kh * kw`` slices gives the im2col
array ``(N, C, kh * kw, OH, OW)``; adding gradients back slice by slice is col2im. A backend
with a real strided view (NumPy's ``sliding_window_view``) overrides the ops that use these in
its kernel table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

Pair = tuple[int, int]


@dataclass(frozen=True)
class Windows:
    """The geometry of a 2-D sliding window: kernel, stride, padding, dilation, ceil mode."""

    kernel: Pair
    stride: Pair
    padding: Pair
    dilation: Pair = (1, 1)
    ceil_mode: bool = False

    def output_size(self, size: Pair) -> Pair:
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
        return out[0], out[1]

    def padded_size(self, size: Pair, out: Pair) -> Pair:
        """The padded input's size: the padding on both sides, plus room on the far side for
        the partial windows of ceil mode."""
        padded = []
        for n, o, k, s, p, d in zip(size, out, self.kernel, self.stride, self.padding,
                                    self.dilation, strict=True):
            padded.append(max(n + 2 * p, (o - 1) * s + d * (k - 1) + 1))
        return padded[0], padded[1]

    def keys(self, out: Pair) -> list[tuple[Any, ...]]:
        """For each kernel offset, row-major, the strided slice of the padded input it sees."""
        (kh, kw), (sh, sw), (dh, dw) = self.kernel, self.stride, self.dilation
        oh, ow = out
        return [
            (slice(None), slice(None),
             slice(i * dh, i * dh + sh * (oh - 1) + 1, sh),
             slice(j * dw, j * dw + sw * (ow - 1) + 1, sw))
            for i in range(kh) for j in range(kw)
        ]

    @property
    def count(self) -> int:
        return math.prod(self.kernel)


def pad(xp: Any, x: Any, windows: Windows, out: Pair, value: float) -> Any:
    """``x`` (``(N, C, H, W)``) in a frame of ``value`` sized for ``windows``."""
    n, c, h, w = x.shape
    ph, pw = windows.padding
    full_h, full_w = windows.padded_size((h, w), out)
    if (full_h, full_w) == (h, w):
        return x
    padded = xp.full((n, c, full_h, full_w), value, dtype=x.dtype)
    padded[:, :, ph:ph + h, pw:pw + w] = x
    return padded


def im2col(xp: Any, x: Any, windows: Windows, out: Pair, value: float = 0.0) -> Any:
    """Every window of ``x`` as ``(N, C, kh * kw, OH, OW)``, padded with ``value``."""
    padded = pad(xp, x, windows, out, value)
    return xp.stack([padded[key] for key in windows.keys(out)], axis=2)


def col2im(xp: Any, columns: Any, windows: Windows, size: Pair, out: Pair) -> Any:
    """The adjoint of ``im2col``: each window's values added back where they came from,
    cropped to the unpadded ``size``."""
    n, c = columns.shape[:2]
    h, w = size
    ph, pw = windows.padding
    full_h, full_w = windows.padded_size(size, out)
    total = xp.zeros((n, c, full_h, full_w), dtype=columns.dtype)
    for k, key in enumerate(windows.keys(out)):
        total[key] = total[key] + columns[:, :, k, ...]
    return total[:, :, ph:ph + h, pw:pw + w]
