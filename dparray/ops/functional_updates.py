"""The backend's row scatter-add (``Backend.scatter_add``) as a graph node, so that a
backward that adds rows into zeros (``take``'s, ``gather``'s) stays differentiable when it runs
under ``create_graph``. (The other write backwards make, item assignment, is ``index_put``.)

It is linear in its differentiable inputs, so its backward needs only the index and is
differentiable again, to any order.
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function


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
