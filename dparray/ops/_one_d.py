"""One-dimensional convolution and pooling as their 2-D nodes on a height of one.

``OnHeightOne`` is mixed in before a 2-D node (``class Conv1d(OnHeightOne, Conv2d)``): forward
gives every 3-D array -- the ``(N, C, L)`` input, a ``(OC, C, k)`` weight -- a height axis of
length one, runs the 2-D forward and drops the height of the result; backward does the same
around the 2-D backward. The mixin only calls ``super()``, so it works on top of a backend's
kernel for the 2-D node as well (``class Conv1dKernel(Conv1d, ConvKernel)``).
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function


class OnHeightOne(Function):
    """Runs the next class's 2-D ``forward`` and ``backward`` on 1-D data."""

    def forward(self, *arrays: Any) -> Any:
        lifted = [self.xp.expand_dims(a, axis=2) if _is_line(a, 3) else a for a in arrays]
        return self.xp.squeeze(super().forward(*lifted), axis=2)

    def backward(self, grad: Any) -> Any:
        grads = super().backward(self.xp.expand_dims(grad, axis=2))
        if not isinstance(grads, tuple):
            return self._lower(grads)
        return tuple(self._lower(g) for g in grads)

    def _lower(self, grad: Any) -> Any:
        return self.xp.squeeze(grad, axis=2) if _is_line(grad, 4) else grad


def _is_line(array: Any, ndim: int) -> bool:
    return array is not None and getattr(array, "ndim", 0) == ndim
