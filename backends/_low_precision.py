"""The NumPy backend's bfloat16 and float16 kernels: products, and float32 <-> bfloat16 casts.

Products (``"low_precision_matmul"``): where the CPU multiplies the type natively (Intel AMX or
the AVX-512 BF16/FP16 extensions, ``_mkl.accelerated``) and MKL's product of it beat the
float32 one in a race (``native``), MKL's ``cblas_gemm_bf16bf16f32`` or
``cblas_gemm_f16f16f32`` take the operands as they are and accumulate in float32. Elsewhere --
no such instructions, no MKL, a product too small for MKL -- the operands are converted to
float32 once (for bfloat16 in one compiled pass) and multiplied by the float32 ``"matmul"``
kernel (MKL's or OpenBLAS's ``sgemm``): the same float32 accumulation, at float32's speed,
which on such CPUs beat MKL's own low-precision product. Either way the result is float32,
rounded to the operands' dtype unless the caller asked for it wide.

Casts (``"astype"``): float32 -> bfloat16 (round to nearest, ties to even, NaN kept) and back
in one compiled pass each (``_bfloat16_loops``), several times faster than ``ml_dtypes``'
element-by-element casts; other casts are NumPy's.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from dparray.ops.elementwise import AsType
from dparray.ops.linalg import upcast_matmul

from . import _blas_race, _mkl
from ._numba_setup import launch
from ._numba_setup import usable as numba_usable

FLOAT32 = np.dtype(np.float32)


LOW_NAMES = ("bfloat16", "float16")  # by name: ml_dtypes, bfloat16's home, loads only when used


def _dtype_named(name: str) -> Any:
    if name == "bfloat16":
        import ml_dtypes  # a program with bfloat16 arrays has imported it already

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def low_precision_matmul(xp: Any, a: Any, b: Any, wide: bool) -> Any:
    """``upcast_matmul``'s product: MKL's low-precision product where the CPU runs it
    natively, else the float32 product of converted operands."""
    if a.dtype != b.dtype or a.dtype.name not in LOW_NAMES:
        return upcast_matmul(xp, a, b, wide)
    out = None
    if native(a.dtype.name)[0]:
        out = _mkl.low_precision_gemm(a, b)
    if out is None:
        out = _mkl.matmul(convert(a, FLOAT32), convert(b, FLOAT32))
    return out if wide else convert(out, a.dtype)


def native(dtype_name: str) -> tuple[bool, str]:
    """``(yes, why)``: whether ``dtype_name`` (``"bfloat16"``, ``"float16"``) products go to
    MKL's native product: where the CPU has the instructions (``_mkl.accelerated``) and,
    unless ``DPARRAY_BLAS=mkl``, MKL's product beat the float32 product of converted operands
    in a race on this CPU (``_blas_race.race_low_precision``, once per process and type)."""
    fast, why = _mkl.accelerated(dtype_name)
    if not fast:
        return fast, why
    verdict = _races.get((dtype_name, why))  # asked before every product: no lock once known
    if verdict is None:
        with _races_lock:
            verdict = _races.get((dtype_name, why))
            if verdict is None:
                verdict = _races[dtype_name, why] = _raced(dtype_name, why)
    return verdict


_races: dict[tuple[str, str], tuple[bool, str]] = {}
_races_lock = threading.Lock()


def _raced(dtype_name: str, why: str) -> tuple[bool, str]:
    if _mkl.blas_choice() == "mkl":
        return True, why
    dtype = _dtype_named(dtype_name)
    native_seconds, float32_seconds = _blas_race.race_low_precision(
        _mkl.low_precision_gemm, lambda a, b: _mkl.matmul(convert(a, FLOAT32),
                                                          convert(b, FLOAT32)), dtype)
    speed = float32_seconds / native_seconds
    if speed < 1.0:
        return False, (f"{why}, but its {dtype_name} product ran at {speed:.2f}x the float32 "
                       f"product's speed on this CPU, measured")
    return True, f"{why}; {speed:.2f}x the float32 product's speed on this CPU, measured"


def convert(x: Any, dtype: Any) -> Any:
    """``x`` as ``dtype``: float32 <-> bfloat16 in one compiled pass where Numba runs, every
    other cast (and every layout but a contiguous one) by NumPy."""
    if x.dtype == dtype:
        return x
    dtype = np.dtype(dtype)
    pair = (x.dtype.name, dtype.name)
    if pair not in (("float32", "bfloat16"), ("bfloat16", "float32")) \
            or not x.flags.c_contiguous or not numba_usable():
        return x.astype(dtype)
    from . import _bfloat16_loops as loops

    if dtype.name == "bfloat16":
        out = np.empty(x.shape, np.uint16)
        launch(loops.to_bfloat16, x.size, x.reshape(-1).view(np.uint32), out.reshape(-1))
    else:
        out = np.empty(x.shape, np.uint32)
        launch(loops.from_bfloat16, x.size, x.reshape(-1).view(np.uint16), out.reshape(-1))
    return out.view(dtype)


class AsTypeKernel(AsType):
    """A cast with float32 <-> bfloat16 compiled (``convert``), both ways: the gradient is cast
    back the same way."""

    def forward(self, x: Any) -> Any:
        self.input_dtype = x.dtype
        return convert(x, self.native)

    def backward(self, grad: Any) -> Any:
        return convert(grad, self.input_dtype)


def table() -> dict[str, Any]:
    """The low-precision kernels, by op name: the products always (MKL's or converted), the
    compiled cast where Numba runs."""
    entries: dict[str, Any] = {"low_precision_matmul": low_precision_matmul}
    if numba_usable():
        entries["astype"] = AsTypeKernel
    return entries
