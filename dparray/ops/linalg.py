"""Matrix products."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dparray.autograd import Function
from dparray.backend import Backend
from dparray.kernels import reference, resolve
from dparray.ops._util import broadcast_shapes, check_same_kind
from dparray.tensor import Tensor

__all__ = [
    "matmul",
]


def array_matmul(backend: Backend) -> Callable[[Any, Any], Any]:
    """The array product ``(a, b) -> a @ b`` for ``backend``'s arrays: its ``"matmul"`` kernel
    (NumPy: MKL's products when MKL is installed) or the operator. Every op built on matrix
    products calls it."""
    return resolve(backend, operator_matmul)


@reference("matmul")
def operator_matmul(a: Any, b: Any) -> Any:
    """The reference array product: the ``@`` operator of the backend's arrays."""
    return a @ b


class MatMul(Function):
    """``a @ b`` for 1-D, 2-D and batched (broadcast) operands, as in the array API."""

    def forward(self, a: Any, b: Any) -> Any:
        shape_a, shape_b = tuple(a.shape), tuple(b.shape)
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError(f"matmul: shapes {shape_a} and {shape_b}: 0-d operands (use *)")
        inner_a = shape_a[-1]
        inner_b = shape_b[0] if b.ndim == 1 else shape_b[-2]
        if inner_a != inner_b:
            raise ValueError(
                f"matmul: shapes {shape_a} and {shape_b} do not align: {inner_a} (last axis of "
                f"the first) != {inner_b} ({'only' if b.ndim == 1 else 'second-to-last'} axis "
                "of the second)"
            )
        if a.ndim > 2 or b.ndim > 2:
            try:
                broadcast_shapes("matmul", shape_a[:-2], shape_b[:-2])
            except ValueError:
                raise ValueError(
                    f"matmul: shapes {shape_a} and {shape_b} cannot be broadcast together in "
                    f"their batch axes {shape_a[:-2]} and {shape_b[:-2]}"
                ) from None
        check_same_kind("matmul", self.backend, a, b)
        self.save(a, b)
        return array_matmul(self.backend)(a, b)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        xp = self.xp
        a, b = self.saved
        rows = a.shape[-2] if a.ndim > 1 else 1
        cols = b.shape[-1] if b.ndim > 1 else 1
        batch = grad.shape[:grad.ndim - (a.ndim > 1) - (b.ndim > 1)]
        grad = xp.reshape(grad, (*batch, rows, cols))
        grad_a = grad_b = None
        product = array_matmul(self.backend)
        if self.needs_grad(0):
            b2 = xp.reshape(b, (-1, 1)) if b.ndim == 1 else b
            grad_a = product(grad, xp.matrix_transpose(b2))
            if a.ndim == 1:
                grad_a = xp.squeeze(grad_a, axis=-2)
        if self.needs_grad(1):
            a2 = xp.reshape(a, (1, -1)) if a.ndim == 1 else a
            grad_b = product(xp.matrix_transpose(a2), grad)
            if b.ndim == 1:
                grad_b = xp.squeeze(grad_b, axis=-1)
        return grad_a, grad_b


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """Matrix product with the array API's rules for 1-D and batched operands.

    Examples:
        >>> import dparray
        >>> (dparray.ones((2, 3)) @ dparray.ones(3)).tolist()
        [3.0, 3.0]
    """
    return MatMul()(a, b)
