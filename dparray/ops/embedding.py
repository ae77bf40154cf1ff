"""An embedding lookup as one graph node: rows of a table at integer positions.

Forward takes the rows (``take`` along axis 0). Backward adds each looked-up row's gradient
into a table of zeros with the backend's ``scatter_add``, in the positions' order (so the sum
is the same on every run); the padding row, if any, gets none. That is ``take``'s gradient,
less the where that kept the padding row out of it and, on NumPy, less the copy of the zeros
(the kernel adds into them directly).
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function
from dparray.kernels import reference, resolve
from dparray.ops.indexing import checked_positions
from dparray.tensor import Tensor


@reference("embedding")
class Embedding(Function):
    """``embedding(weight, indices)`` for a ``(rows, dim)`` table and integer ``indices`` of
    any shape; ``padding_idx`` (a row in ``[0, rows)``, or None) passes no gradient."""

    def __init__(self, padding_idx: int | None) -> None:
        self.padding_idx = padding_idx

    def forward(self, weight: Any, indices: Any) -> Any:
        xp = self.xp
        rows, dim = weight.shape
        flat = xp.reshape(checked_positions(self.backend, indices, rows, "embedding", 0), (-1,))
        self.table_shape, self.dtype = (rows, dim), weight.dtype
        self.save(flat)
        return xp.reshape(xp.take(weight, flat, axis=0), (*indices.shape, dim))

    def backward(self, grad: Any) -> tuple[Any, None]:
        xp = self.xp
        (flat,) = self.saved
        rows = xp.reshape(grad, (flat.shape[0], self.table_shape[1]))
        if self.padding_idx is not None:
            rows = xp.where(xp.reshape(flat == self.padding_idx, (-1, 1)), 0.0, rows)
        table = xp.zeros(self.table_shape, dtype=self.dtype)
        if not flat.shape[0]:
            return table, None
        return self.backend.scatter_add(table, flat, xp.astype(rows, self.dtype)), None


def embedding(weight: Tensor, indices: Tensor, padding_idx: int | None) -> Tensor:
    """The ``Embedding`` node (or the backend's kernel for it); ``nn.functional.embedding``
    checks the arguments and makes ``padding_idx`` a row number."""
    return resolve(weight.backend, Embedding)(padding_idx)(weight, indices)
