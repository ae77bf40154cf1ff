"""``max_unpool2d``: the inverse of a 2-D max pool, one graph node. Each value of ``(N, C, H, W)``
input goes to the flat position in its output plane that ``indices`` gives (what
``max_pool2d(return_indices=True)`` returns); every other output entry is 0.

Where several inputs name one position (overlapping pool windows share a winner) one of them
is written -- they are equal when the indices come from a max pool -- and, as in PyTorch,
every one of them receives the output's gradient there: the gradient is a gather.
"""

from __future__ import annotations

import math
from typing import Any

from dparray.autograd import Function
from dparray.ops.indexing import last_writes
from dparray.tensor import Tensor


class MaxUnpool2d(Function):
    """``(N, C, H, W)`` values placed at their ``indices`` in ``(N, C, *size)`` zeros."""

    def __init__(self, size: tuple[int, int]) -> None:
        self.size = size

    def forward(self, x: Any, indices: Any) -> Any:
        xp = self.xp
        n, c = x.shape[:2]
        plane = math.prod(self.size)
        if math.prod(indices.shape):
            low, high = int(xp.min(indices)), int(xp.max(indices))
            if low < 0 or high >= plane:
                bad = high if high >= plane else low
                raise IndexError(f"max_unpool2d: index {bad} is out of range for an output "
                                 f"plane of {self.size[0]}x{self.size[1]}")
        starts = xp.reshape(xp.arange(n * c, dtype=xp.int64) * plane, (n, c, 1, 1))
        linear = xp.reshape(xp.astype(indices, xp.int64) + starts, (-1,))
        total = n * c * plane
        if linear.shape[0]:
            hit, source = last_writes(xp, linear, total)
            values = xp.take(xp.reshape(x, (-1,)), source, axis=0)
            out = xp.where(hit, values, xp.zeros((), dtype=x.dtype))
        else:
            out = xp.zeros((total,), dtype=x.dtype)
        self.input_shape = tuple(x.shape)
        self.save(linear)
        return xp.reshape(out, (n, c, *self.size))

    def backward(self, grad: Any) -> tuple[Any, None]:
        xp = self.xp
        (linear,) = self.saved
        picked = xp.take(xp.reshape(grad, (-1,)), linear, axis=0)
        return xp.reshape(picked, self.input_shape), None


def max_unpool2d(x: Tensor, indices: Tensor, size: tuple[int, int]) -> Tensor:
    """The ``MaxUnpool2d`` node placing ``x`` into planes of ``size``, arguments already
    checked (``dparray.nn.functional.max_unpool2d``)."""
    return MaxUnpool2d(size)(x, indices)
