"""Adaptive average pooling on NumPy: each window's mean, and its gradient shared out, in one
compiled pass each way (one image plane per task), instead of the reference's take of every
window, mask and two means (``dparray.ops.adaptive_pool.AdaptiveAvgPool2d``).

The windows are PyTorch's (``adaptive_bounds``); where they tile both axes (global pooling,
halving) the reference needs no take and runs instead. Sums are in float64 and each mean divides
once by its window's size (the reference divides by the columns' count, then the rows'), so
results agree with the reference's to float32's precision, not to the bit. To 7 x 7 from 32 x
64 x 32 x 32 float32, forward and backward, the reference took 45 ms, PyTorch 7.6.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from dparray.ops.adaptive_pool import AdaptiveAvgPool2d, AxisWindows, adaptive_bounds

from ._fallback import Fallback, floating
from ._numba_setup import loops as _loops


@functools.lru_cache(maxsize=256)
def _bounds(size: int, out: int) -> tuple[Any, Any]:
    """The windows' starts and ends along one axis, as int64 arrays."""
    starts, ends = (np.array(b, np.int64) for b in zip(*adaptive_bounds(size, out),
                                                        strict=True))
    starts.setflags(write=False)
    ends.setflags(write=False)
    return starts, ends


class AdaptiveAvgPoolKernel(Fallback, AdaptiveAvgPool2d):
    """See the module docstring."""

    def forward(self, x: Any) -> Any:
        n, c, h, w = x.shape
        oh, ow = self.output_size
        # windows that tile both axes (global pooling among them) are plain reshaped sums in
        # the reference, faster than these loops
        if not floating(x) or x.size == 0 or 0 in (oh, ow) or (h % oh == 0 and w % ow == 0):
            return self.reference_forward(x)
        self.input_shape = (n, c, h, w)
        # the reference's windows: a create_graph replay runs its backward on them
        self.rows, self.cols = AxisWindows(h, oh), AxisWindows(w, ow)
        out = np.empty((n, c, oh, ow), x.dtype)
        _loops().adaptive_avg_pool(np.ascontiguousarray(x).reshape(n * c, h, w),
                                   *_bounds(h, oh), *_bounds(w, ow), out.reshape(n * c, oh, ow))
        return out

    def backward(self, grad: Any) -> Any:
        if self.fallback:
            return self.reference_backward(grad)
        n, c, h, w = self.input_shape
        oh, ow = self.output_size
        dx = np.empty((n, c, h, w), grad.dtype)
        _loops().adaptive_avg_pool_backward(np.ascontiguousarray(grad).reshape(n * c, oh, ow),
                                            *_bounds(h, oh), *_bounds(w, ow),
                                            dx.reshape(n * c, h, w))
        return dx
