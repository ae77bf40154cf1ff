"""Out-of-place forms of the two writes that backwards make into arrays, as graph nodes, so a
backward run under ``create_graph`` stays differentiable: item assignment
(``out[key] = values``) and the backend's row scatter-add (``Backend.scatter_add``).

Both are linear in their differentiable inputs, so their own backwards need nothing saved and
are differentiable again, to any order.
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function


class SetItem(Function):
    """``x`` with ``values`` written at ``key`` (``values`` broadcast to the slice): the
    gradient of ``x`` is zero there, that of ``values`` is the gradient's slice."""

    def __init__(self, key: Any) -> None:
        self.key = key

    def forward(self, x: Any, values: Any) -> Any:
        out = self.xp.asarray(x, copy=True)
        out[self.key] = values
        return out

    def backward(self, grad: Any) -> tuple[Any, Any]:
        grad_x = grad_values = None
        if self.needs_grad(0):
            grad_x = self.xp.asarray(grad, copy=True)
            grad_x[self.key] = 0
        if self.needs_grad(1):
            grad_values = grad[self.key]
        return grad_x, grad_values


class ScatterRows(Function):
    """``target`` with each row ``values[i]`` added at row ``index[i]`` (``index`` a 1-D int64
    array; repeated rows accumulate): the backend's ``scatter_add``, differentiable in
    ``target`` and ``values``. It keeps the index, a constant."""

    saved_values = "constants"

    def forward(self, target: Any, index: Any, values: Any) -> Any:
        self.save(index)
        if not index.shape[0]:
            return self.xp.asarray(target, copy=True)
        return self.backend.scatter_add(target, index, values)

    def backward(self, grad: Any) -> tuple[Any, None, Any]:
        (index,) = self.saved
        grad_values = self.xp.take(grad, index, axis=0) if self.needs_grad(2) else None
        return grad, None, grad_values
