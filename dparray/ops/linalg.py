"""Matrix products.

Products of bfloat16 or float16 operands accumulate in float32, as PyTorch's and the BLAS
libraries' low-precision products do: each term is exact in float32, the sum is float32's, and
only the result is rounded to the operands' dtype (``array_matmul``), or kept in float32
(``wide_matmul``, for attention's scores, whose softmax runs in float32). The reference
multiplies the operands' float32 copies; the NumPy backend's kernel calls MKL's bfloat16 and
float16 products where the CPU runs them natively, and converts in one compiled pass elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dparray.autograd import Function
from dparray.backend import Backend
from dparray.dtypes import low_precision_natives
from dparray.kernels import reference, resolve
from dparray.ops._autocast import autocast_op
from dparray.ops._util import broadcast_shapes, check_same_kind
from dparray.tensor import Tensor

__all__ = [
    "matmul",
]


def array_matmul(backend: Backend) -> Callable[[Any, Any], Any]:
    """The array product ``(a, b) -> a @ b`` for ``backend``'s arrays: its ``"matmul"`` kernel
    (NumPy: MKL's products when MKL is installed) or the operator; for bfloat16 or float16
    operands of one dtype, the float32-accumulated product rounded to their dtype. Every op
    built on matrix products calls it."""
    product = _products.get(backend)
    if product is None:
        product = _products.setdefault(backend, _Product(backend, wide=False))
    return product


def wide_matmul(backend: Backend) -> Callable[[Any, Any], Any]:
    """``array_matmul``, but bfloat16 or float16 operands give their float32-accumulated
    product in float32, unrounded."""
    product = _wide_products.get(backend)
    if product is None:
        product = _wide_products.setdefault(backend, _Product(backend, wide=True))
    return product


class _Product:
    """``a @ b`` on one backend: the ``"matmul"`` kernel, or, for low-precision operands of
    one dtype, the ``"low_precision_matmul"`` one (each resolved per call, so
    ``kernels.reference_only()`` holds)."""

    __slots__ = ("backend", "wide")

    def __init__(self, backend: Backend, wide: bool) -> None:
        self.backend, self.wide = backend, wide

    def __call__(self, a: Any, b: Any) -> Any:
        # asked each call: bfloat16 joins the natives when first used (dparray.dtypes._Table)
        if a.dtype in low_precision_natives(self.backend) and a.dtype == b.dtype:
            low = resolve(self.backend, upcast_matmul)
            return low(self.backend.xp, a, b, self.wide)
        return resolve(self.backend, operator_matmul)(a, b)


_products: dict[Backend, _Product] = {}
_wide_products: dict[Backend, _Product] = {}


@reference("matmul")
def operator_matmul(a: Any, b: Any) -> Any:
    """The reference array product: the ``@`` operator of the backend's arrays."""
    return a @ b


@reference("low_precision_matmul")
def upcast_matmul(xp: Any, a: Any, b: Any, wide: bool) -> Any:
    """The reference product of bfloat16 or float16 operands of one dtype: their float32
    copies multiplied (exact copies, so the product is the float32-accumulated one), the
    result in float32 if ``wide``, else rounded to the operands' dtype."""
    product = xp.astype(a, xp.float32) @ xp.astype(b, xp.float32)
    return product if wide else xp.astype(product, a.dtype)


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


@autocast_op("matmul")
def matmul(a: Tensor, b: Tensor) -> Tensor:
    """Matrix product with the array API's rules for 1-D and batched operands.

    Examples:
        >>> import dparray
        >>> (dparray.ones((2, 3)) @ dparray.ones(3)).tolist()
        [3.0, 3.0]
    """
    return MatMul()(a, b)
