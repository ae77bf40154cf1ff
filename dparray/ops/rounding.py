"""Rounding and the sign: ``floor``, ``ceil``, ``round``, ``trunc``, ``sign``.

They are piecewise constant, so their gradient is 0 -- also at the jumps, as in PyTorch, which
keeps a model that rounds trainable through its other paths. Integer tensors round to
themselves.
"""

from __future__ import annotations

from typing import Any

from dparray._checks import check_int
from dparray.autograd import Function
from dparray.ops._promote import as_float, is_floating
from dparray.tensor import Tensor

__all__ = [
    "floor",
    "ceil",
    "round",
    "trunc",
    "sign",
]


class _PiecewiseConstant(Function):
    """An op whose gradient is 0 wherever it is defined."""

    def backward(self, grad: Any) -> Any:
        return self.xp.zeros_like(grad)


class Floor(_PiecewiseConstant):
    """``floor(x)``: the largest integer not above ``x``."""

    def forward(self, x: Any) -> Any:
        return self.xp.floor(x)


class Ceil(_PiecewiseConstant):
    """``ceil(x)``: the smallest integer not below ``x``."""

    def forward(self, x: Any) -> Any:
        return self.xp.ceil(x)


class Trunc(_PiecewiseConstant):
    """``trunc(x)``: ``x`` rounded towards zero."""

    def forward(self, x: Any) -> Any:
        return self.xp.trunc(x)


class Sign(_PiecewiseConstant):
    """``sign(x)``: -1, 0 or 1 (NaN for NaN)."""

    def forward(self, x: Any) -> Any:
        return self.xp.sign(x)


class Round(_PiecewiseConstant):
    """``x`` rounded to ``decimals`` decimal places, halves to even."""

    def __init__(self, decimals: int = 0) -> None:
        self.decimals = check_int(decimals, "decimals", "round")

    def forward(self, x: Any) -> Any:
        xp = self.xp
        if self.decimals == 0 or (self.decimals > 0 and not is_floating(self.backend, x)):
            return xp.round(x)
        x = as_float(self.backend, x)
        # PyTorch's scaling, so both libraries round the same float to the same value
        if self.decimals > 0:
            scale = 10.0**self.decimals
            return xp.round(x * scale) / scale
        scale = 10.0 ** -self.decimals
        return xp.round(x / scale) * scale


def floor(x: Tensor) -> Tensor:
    """Elementwise floor; the gradient is 0."""
    return Floor()(x)


def ceil(x: Tensor) -> Tensor:
    """Elementwise ceiling; the gradient is 0."""
    return Ceil()(x)


def trunc(x: Tensor) -> Tensor:
    """Elementwise rounding towards zero; the gradient is 0."""
    return Trunc()(x)


def round(x: Tensor, decimals: int = 0) -> Tensor:
    """Elementwise rounding to ``decimals`` places (negative: tens, hundreds, ...), halves to
    even as in PyTorch and NumPy; the gradient is 0.

    Examples:
        >>> import dparray
        >>> dparray.round(dparray.tensor([0.5, 1.5, 2.5, 1.2345])).tolist()
        [0.0, 2.0, 2.0, 1.0]
        >>> dparray.round(dparray.tensor([1.2345], dtype="float64"), decimals=2).tolist()
        [1.23]
    """
    return Round(decimals)(x)


def sign(x: Tensor) -> Tensor:
    """Elementwise sign: -1, 0 or 1; the gradient is 0."""
    return Sign()(x)
