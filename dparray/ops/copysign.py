"""``copysign``: the magnitude of one operand with the sign of the other, as PyTorch's.

Integers are computed in the default float (PyTorch's result is floating whatever the
inputs). The gradient with respect to the magnitude is ``result / a`` -- 1 or -1 -- and 0 where
``a`` is 0, as PyTorch gives; the sign operand gets no gradient (0).
"""

from __future__ import annotations

from typing import Any

from dparray._checks import check_tensor
from dparray.autograd import Function
from dparray.ops._promote import as_float, promote
from dparray.ops._util import PYTHON_SCALARS, as_operands
from dparray.tensor import Tensor

__all__ = [
    "copysign",
]


class CopySign(Function):
    """``|a|`` with the sign of ``b`` (the sign bit: ``-0.0`` counts as negative)."""

    def forward(self, a: Any, b: Any) -> Any:
        xp = self.xp
        a, b = promote(self.backend, a, b)
        a, b = as_float(self.backend, a), as_float(self.backend, b)
        if isinstance(b, PYTHON_SCALARS):
            b = xp.full_like(a, float(b))
        out = xp.copysign(a, b)
        self.save(a, out)
        return out

    def backward(self, grad: Any) -> tuple[Any, Any]:
        xp = self.xp
        a, out = self.saved
        zero = a == 0
        ratio = xp.where(zero, 0.0, out / xp.where(zero, 1.0, a))
        return (grad * ratio if self.needs_grad(0) else None,
                xp.zeros_like(grad) if self.needs_grad(1) else None)


def copysign(a: Tensor, b: Any) -> Tensor:
    """Elementwise ``|a|`` with the sign of ``b`` (a tensor or a number), as a float.

    Examples:
        >>> import dparray
        >>> dparray.copysign(dparray.tensor([1.0, -2.0, 3.0]), -1.0).tolist()
        [-1.0, -2.0, -3.0]
    """
    check_tensor(a, "a", "copysign")
    return CopySign()(*as_operands(a, b))
