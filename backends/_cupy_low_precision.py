"""The CuPy backend's bfloat16 and float16 products: cuBLAS with float32 accumulation.

CuPy's matrix product of float16 or bfloat16 operands calls ``cublasGemmEx`` with
``CUBLAS_COMPUTE_32F`` (its default compute type for them; ``cupy._core.set_compute_type``
changes it): the tensor cores multiply the low-precision operands and accumulate in float32,
and the result is rounded to the operands' dtype once. A wide product (attention's scores) is
that result in float32, as PyTorch's attention computes its low-precision scores.
"""

from __future__ import annotations

from typing import Any

from dparray.ops.linalg import upcast_matmul

LOW = ("bfloat16", "float16")


def low_precision_matmul(xp: Any, a: Any, b: Any, wide: bool) -> Any:
    """``upcast_matmul``'s product through cuBLAS's low-precision GEMM."""
    if a.dtype != b.dtype or a.dtype.name not in LOW:
        return upcast_matmul(xp, a, b, wide)
    out = a @ b  # (NumPy's bfloat16 product, from ml_dtypes, returns float32: so may others)
    wanted = xp.float32 if wide else a.dtype
    return out if out.dtype == wanted else out.astype(wanted)
