"""Dropout on NumPy: the reference's mask, applied in one compiled pass each way.

The reference (``dparray.ops.dropout``) scales the whole input, then selects with ``where``:
two passes and an array of the input's size in between, forward and again backward. Here
``where(keep, x * scale, 0)`` is one pass, with the scale in the array's type as NumPy's
arithmetic rounds it, so the values and the gradient are the reference's to the bit. The
mask is the reference's own draw, so a seed gives the same mask with and without kernels.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dparray.ops.dropout import Dropout

from ._fallback import Fallback, floating
from ._numba_setup import loops as _loops


class DropoutKernel(Fallback, Dropout):
    """See the module docstring."""

    def forward(self, x: Any) -> Any:
        if not floating(x):
            return self.reference_forward(x)
        return self._scale_kept(x, self.draw_mask(x))

    def backward(self, grad: Any) -> Any:
        (keep,) = self.saved
        if self.fallback or not floating(grad) or grad.shape != keep.shape:
            return self.reference_backward(grad)
        return self._scale_kept(grad, keep)

    def _scale_kept(self, x: Any, keep: Any) -> Any:
        out = np.empty(x.shape, x.dtype)
        scale = x.dtype.type(1.0 / (1.0 - self.p))  # as NumPy rounds a Python float operand
        _loops().scale_kept(x.ravel(), keep.ravel(), scale, out.reshape(-1))
        return out
