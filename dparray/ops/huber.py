"""The Huber and smooth L1 losses, elementwise, as one graph node each, for ``huber_loss`` and
``smooth_l1_loss``.

Composed of ``where``, abs and products, their gradient at an infinite difference is NaN: the
quadratic branch that ``where`` does not take still multiplies its zero share by an infinite
slope (``0 * inf``). As one node the gradient is the closed form -- the difference clipped to
``[-delta, delta]`` (divided by ``delta`` for smooth L1) -- finite for every input but NaN, as
in PyTorch.
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function


class Huber(Function):
    """``0.5 * d ** 2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``, for
    ``d = input - target`` (floating, of one shape: checked by the caller); with ``smooth``,
    smooth L1 with ``beta = delta``: ``0.5 * d ** 2 / delta`` inside, ``|d| - 0.5 * delta``
    beyond."""

    def __init__(self, delta: float, smooth: bool) -> None:
        self.delta, self.smooth = delta, smooth

    def forward(self, input: Any, target: Any) -> Any:
        xp = self.xp
        delta = self.delta
        difference = input - target
        size = xp.abs(difference)
        inside = size < delta
        near = xp.where(inside, difference, 0.0)  # no square of a large difference to overflow
        self.save(difference)
        if self.smooth:
            return xp.where(inside, (0.5 / delta) * near * near, size - 0.5 * delta)
        return xp.where(inside, 0.5 * near * near, delta * (size - 0.5 * delta))

    def backward(self, grad: Any) -> tuple[Any, Any]:
        xp = self.xp
        (difference,) = self.saved
        delta = self.delta
        if self.smooth:
            slope = xp.clip(difference / delta, -1.0, 1.0)
        else:
            slope = xp.clip(difference, -delta, delta)
        grad_input = grad * slope
        return grad_input, (-grad_input if self.needs_grad(1) else None)
