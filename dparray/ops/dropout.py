"""Dropout as one graph node: one mask, drawn once, kept for backward."""

from __future__ import annotations

from typing import Any

from dparray import random as _random
from dparray.autograd import Function
from dparray.kernels import reference, resolve
from dparray.tensor import Tensor


@reference("dropout")
class Dropout(Function):
    """``x * mask / (1 - p)``, the mask True with probability ``1 - p``, drawn from the
    current random stream (so a seed makes it repeat, and DataParallel's chunks draw their
    own)."""
    saved_values = "constants"  # the drawn mask


    def __init__(self, p: float) -> None:
        self.p = p

    def forward(self, x: Any) -> Any:
        keep = self.draw_mask(x)
        return self.xp.where(keep, x * (1.0 / (1.0 - self.p)), 0.0)

    def draw_mask(self, x: Any) -> Any:
        """The mask for ``x`` (a boolean array of its shape), drawn and saved for backward."""
        keep = _random.generator(self.backend).bernoulli(tuple(x.shape), 1.0 - self.p)
        self.save(keep)
        return keep

    def backward(self, grad: Any) -> Any:
        (keep,) = self.saved
        return self.xp.where(keep, grad * (1.0 / (1.0 - self.p)), 0.0)


def dropout(x: Tensor, p: float) -> Tensor:
    """The ``Dropout`` node (or the backend's kernel for it); ``0 < p < 1`` checked by the
    caller."""
    return resolve(x.backend, Dropout)(p)(x)
