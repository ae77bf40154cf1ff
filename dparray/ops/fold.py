"""``fold``: sliding-window columns summed back into images (col2im), one graph node.

It is the adjoint of im2col (``dparray.ops.nn.unfold``): each column's entries are added to
the pixels of the window they stand for, so overlapping windows sum. Its gradient is therefore
im2col of the output's gradient. Both directions are the strided slices of
``dparray.ops._windows``.
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function
from dparray.ops._windows import Sizes, Windows, col2im, im2col
from dparray.tensor import Tensor


class Fold(Function):
    """Columns ``(N, C, kh * kw, OH, OW)`` summed into ``(N, C, *size)`` images; the caller
    checks that ``(OH, OW)`` is the number of windows of ``windows`` that fit ``size``."""

    saved_values = "constants"  # it saves nothing: both directions are linear

    def __init__(self, windows: Windows, size: Sizes) -> None:
        self.windows, self.size = windows, size

    def forward(self, columns: Any) -> Any:
        self.blocks = tuple(columns.shape[3:])
        return col2im(self.xp, columns, self.windows, self.size, self.blocks)

    def backward(self, grad: Any) -> Any:
        return im2col(self.xp, grad, self.windows, self.blocks)


def fold(columns: Tensor, windows: Windows, size: Sizes) -> Tensor:
    """The ``Fold`` node, arguments already checked (``dparray.nn.functional.fold``)."""
    return Fold(windows, size)(columns)
