"""Squared error as one graph node, for ``mse_loss``.

Composed, ``mse_loss`` is a difference, a product and a mean: three nodes and about five passes
over the data each way. This node keeps only the difference for backward, where the gradient
is ``2 * difference * grad`` (divided by the element count for the mean), and its negation for
the target.
"""

from __future__ import annotations

import math
from typing import Any

from dparray.autograd import Function
from dparray.kernels import reference
from dparray.ops._util import as_array


@reference("mse_loss")
class SquaredError(Function):
    """``(input - target) ** 2``, reduced by ``"mean"``, ``"sum"`` or ``"none"``, for floating
    ``input`` and ``target`` of one shape (checked by the caller). The mean over no elements is
    NaN, as ``Tensor.mean``'s."""

    def __init__(self, reduction: str) -> None:
        self.reduction = reduction

    def forward(self, input: Any, target: Any) -> Any:
        xp = self.xp
        difference = input - target
        self.save(difference)
        squares = difference * difference
        if self.reduction == "none":
            return squares
        count = math.prod(difference.shape)
        if self.reduction == "mean" and count == 0:
            return xp.full((), math.nan, dtype=difference.dtype)
        total = as_array(xp.sum(squares))
        return as_array(total / count) if self.reduction == "mean" else total

    def backward(self, grad: Any) -> tuple[Any, Any]:
        (difference,) = self.saved
        if self.reduction == "none":
            grad_input = 2.0 * difference * grad
        else:
            count = math.prod(difference.shape)
            scale = 2.0 / count if self.reduction == "mean" and count else 2.0
            grad_input = difference * (grad * scale)
        return grad_input, (-grad_input if self.needs_grad(1) else None)
