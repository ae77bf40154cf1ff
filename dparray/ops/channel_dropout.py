"""Dropout's variants as one graph node each: whole channels zeroed (``Dropout1d/2d/3d``), and
alpha dropout for self-normalising (SELU) networks, element by element or by channel. Each
draws its mask once, from the current random stream, and keeps it for backward, as
``dparray.ops.dropout`` does.

A channel mask has the input's first two axes (sample, channel) and ones after, so one draw
decides a whole feature map. Alpha dropout sets the dropped elements to SELU's negative
saturation ``alpha' = -scale * alpha = -1.7580993408473766`` rather than 0, then maps
everything through ``a * y + b`` with ``a = ((1 - p) * (1 + p * alpha'^2)) ** -0.5`` and
``b = -a * alpha' * p``: an input of mean 0 and variance 1 keeps them (PyTorch's formula).
"""

from __future__ import annotations

import math
from typing import Any

from dparray import random as _random
from dparray.autograd import Function
from dparray.ops.dropout import Dropout
from dparray.tensor import Tensor

SELU_SATURATION = -1.7580993408473766
"""``alpha'``: SELU's limit at minus infinity, ``-scale * alpha``; alpha dropout's dropped value
before the affine map."""


def channel_shape(shape: tuple[int, ...], leading: int = 2) -> tuple[int, ...]:
    """The shape of a mask with one draw per entry of the ``leading`` first axes (sample and
    channel, or the channel alone of unbatched input) and ones after: ``(N, C, 1, ..., 1)``."""
    return (*shape[:leading], *(1,) * (len(shape) - leading))


def alpha_coefficients(p: float) -> tuple[float, float]:
    """Alpha dropout's ``(a, b)`` for the dropout probability ``p`` (``0 <= p < 1``)."""
    a = 1.0 / math.sqrt((1.0 - p) * (1.0 + p * SELU_SATURATION * SELU_SATURATION))
    return a, -a * SELU_SATURATION * p


class ChannelDropout(Dropout):
    """``Dropout`` with one draw per channel: a channel is kept whole, scaled by
    ``1 / (1 - p)``, or zeroed whole. The channels are the entries of the ``leading`` first
    axes: (sample, channel), or the channel alone (``leading=1``) of unbatched input."""

    def __init__(self, p: float, leading: int = 2) -> None:
        super().__init__(p)
        self.leading = leading

    def draw_mask(self, x: Any) -> Any:
        shape = channel_shape(tuple(x.shape), self.leading)
        keep = _random.generator(self.backend).bernoulli(shape, 1.0 - self.p)
        self.save(keep)
        return keep


class AlphaDropout(Function):
    """``a * x + b`` where kept, ``a * alpha' + b`` where dropped (see the module), the mask
    drawn element by element, or per (sample, channel) with ``channels=True``."""

    saved_values = "constants"  # the drawn mask

    def __init__(self, p: float, channels: bool = False) -> None:
        self.p = p
        self.channels = channels
        self.a, self.b = alpha_coefficients(p)

    def forward(self, x: Any) -> Any:
        shape = channel_shape(tuple(x.shape)) if self.channels else tuple(x.shape)
        keep = _random.generator(self.backend).bernoulli(shape, 1.0 - self.p)
        self.save(keep)
        return self.xp.where(keep, x * self.a + self.b, self.a * SELU_SATURATION + self.b)

    def backward(self, grad: Any) -> Any:
        (keep,) = self.saved
        return self.xp.where(keep, grad * self.a, 0.0)


def channel_dropout(x: Tensor, p: float, leading: int = 2) -> Tensor:
    """The ``ChannelDropout`` node; ``x.ndim >= leading`` and ``0 < p < 1`` checked by the
    caller."""
    return ChannelDropout(p, leading)(x)


def alpha_dropout(x: Tensor, p: float, channels: bool = False) -> Tensor:
    """The ``AlphaDropout`` node; ``0 < p < 1`` (and ``x.ndim >= 2`` with ``channels``)
    checked by the caller."""
    return AlphaDropout(p, channels)(x)
