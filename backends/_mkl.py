"""Intel MKL's matrix products for the NumPy backend, when the ``mkl`` package is installed.

NumPy's wheels multiply matrices with OpenBLAS. On the float32 products of a training step
(``2048 x 1024 x 1024`` and the like) MKL ran 15-25% faster on the same cores, which is most of
what separated an MLP's step from PyTorch's (PyTorch ships MKL inside its wheel). The ``mkl``
wheel (a dependency of dparray on x86-64 Linux, the only platform it exists for) puts
``libmkl_rt`` next to the Python environment; this module finds it through the package's file
list, loads it with ``ctypes`` (which releases the GIL during the call, so DataParallel
workers multiply in parallel) and calls ``cblas_?gemm`` / ``cblas_?gemm_batch_strided`` on
NumPy's own buffers.

Set once, before MKL's first product:

- the interface layer: 32-bit integers (LP64), the ``ctypes.c_int`` arguments below. If the
  user asked for 64-bit ones (``MKL_INTERFACE_LAYER=ILP64``), or another library in the process
  already chose them, MKL is not used.
- the threading layer: GNU OpenMP, the ``libgomp`` that Numba's ``omp`` layer runs on, so the
  process has one OpenMP runtime and its threads sleep between loops like Numba's
  (``_openmp_setup``), unless the user set ``MKL_THREADING_LAYER``; without ``libgomp``,
  MKL's default. For ``TBB``, the wheel's ``libtbb`` is loaded first (MKL does not find it).

MKL's thread count holds per calling thread: a DataParallel worker sets its own share
(``worker_threads``), since the limit threadpoolctl sets in the region's thread does not reach
the workers. A process forked after MKL's threads started multiplies on one thread: GNU
OpenMP's thread pool does not survive ``fork``, and a product on it would hang.

Which library makes the float32 and float64 products is raced once per process on this CPU
(``_blas_race``, ``makes_products``): on some CPUs OpenBLAS is the faster. ``DPARRAY_BLAS=mkl``
takes MKL's without a race; ``DPARRAY_BLAS=openblas`` keeps NumPy's OpenBLAS even with MKL
installed, and so does ``DPARRAY_KERNELS=reference`` (the ``"matmul"`` kernel is off with the
rest of the table).

bfloat16 and float16 products (``low_precision_gemm``) go through ``cblas_gemm_bf16bf16f32``
and ``cblas_gemm_f16f16f32``: low-precision operands, float32 accumulation and output. They
pay only where the CPU multiplies those types natively -- Intel AMX (``amx_bf16``,
``amx_fp16``) or the AVX-512 extensions (``avx512_bf16``, ``avx512_fp16``), as
``/proc/cpuinfo`` lists them; there MKL's bfloat16 product of 2048^3 ran 4.4-4.7x its float32
one on an Intel CPU with AMX, but 0.76x OpenBLAS's float32 one on an AMD CPU with AVX512-BF16,
so ``accelerated`` says only whether the CPU has them and ``_low_precision.native`` races the
two where it does. Elsewhere MKL converts the operands itself, no faster than ``sgemm``
(0.67-1.02x on an AVX2 CPU), so ``accelerated`` says no and the NumPy kernel converts them
once and calls the float32 product (``_low_precision``). ``MKL_ENABLE_INSTRUCTIONS`` set to a
level below the one that brings those instructions turns them off for MKL, and so here too.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import operator
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from dparray._system import core_share

from . import _blas_race
from ._core_split import stacked_matmul
from ._numba_setup import wait_for_warm_up
from ._openmp_setup import sleep_between_loops

CHOICE_VARIABLE = "DPARRAY_BLAS"
CHOICES = ("mkl", "openblas")  # or unset (or empty): raced
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
LP64 = 0
LAYERS = {"INTEL": 0, "SEQUENTIAL": 1, "GNU": 3, "TBB": 4}  # MKL_THREADING_LAYER's names
SMALLEST = 1 << 22  # multiply-adds: below, MKL through ctypes was no faster than OpenBLAS
LARGEST = 1 << 31  # elements of one matrix (LP64: MKL's sizes and strides are 32-bit)
BATCH_SMALLEST = 1 << 16  # multiply-adds per matrix of a stack taken one call at a time
_TYPES = {np.dtype(np.float32): ("s", ctypes.c_float), np.dtype(np.float64): ("d", ctypes.c_double)}
_LOW_TYPES = {"bfloat16": "bf16bf16f32", "float16": "f16f16f32"}  # by NumPy's dtype name
# the CPU flags (as /proc/cpuinfo names them) that multiply each type natively, best first,
# and the lowest MKL_ENABLE_INSTRUCTIONS level that lets MKL use them
_NATIVE = {"bfloat16": (("amx_bf16", "AMX", "AVX512_E4"), ("avx512_bf16", "AVX512-BF16",
                                                             "AVX512_E3")),
           "float16": (("amx_fp16", "AMX-FP16", "AVX512_E5"), ("avx512_fp16", "AVX512-FP16",
                                                               "AVX512_E4"))}
_LEVELS = ("SSE4_2", "AVX", "AVX2", "AVX512", "AVX512_E1", "AVX512_E2", "AVX512_E3",
           "AVX512_E4", "AVX512_E5")
_lock = threading.Lock()


def status() -> tuple[Any, str]:
    """``(library, why)``: the loaded ``libmkl_rt`` or None, and a line saying which BLAS the
    products use and why. Loads and sets up MKL on the first call, once."""
    global _status
    if _status is None:
        with _lock:
            if _status is None:
                _status = _load()
    return _status


_status: tuple[Any, str] | None = None


def makes_products() -> tuple[bool, str]:
    """``(yes, why)``: whether MKL makes the float32 and float64 products of ``matmul`` (and
    with them the kernel table's ``"matmul"``), and a line saying which library does and why.
    MKL does where it is loaded (``status``) and either ``DPARRAY_BLAS=mkl`` says so or it won
    the race against OpenBLAS (``_blas_race``), run on the first call, once per process."""
    global _choice
    if _choice is None:
        with _choice_lock:
            if _choice is None:
                _choice = _choose()
    return _choice


_choice: tuple[bool, str] | None = None
_choice_lock = threading.Lock()


def _choose() -> tuple[bool, str]:
    library, why = status()
    if library is None:
        return False, why
    if blas_choice() == "mkl":
        return True, f"{why}; {CHOICE_VARIABLE}=mkl"
    wait_for_warm_up()  # Numba's start-up on a thread of its own would take a core from either
    mkl_seconds, openblas_seconds = _blas_race.race(lambda a, b: _gemm(library, a, b),
                                                    operator.matmul)
    return _blas_race.verdict(mkl_seconds, openblas_seconds, why)


def blas_choice() -> str:
    """``DPARRAY_BLAS``, lower-cased: ``"mkl"``, ``"openblas"`` or ``""`` (race)."""
    value = os.environ.get(CHOICE_VARIABLE, "").strip().lower()
    if value and value not in CHOICES:
        raise ValueError(f"{CHOICE_VARIABLE} must be one of {', '.join(CHOICES)} or unset (the "
                         f"faster on this CPU, measured), got {value!r}")
    return value


def _load() -> tuple[Any, str]:
    if blas_choice() == "openblas":
        return None, f"OpenBLAS (NumPy's; {CHOICE_VARIABLE}=openblas)"
    if os.environ.get("MKL_INTERFACE_LAYER", "").strip().upper().startswith("ILP64"):
        return None, "OpenBLAS (NumPy's; MKL_INTERFACE_LAYER asks for 64-bit integers)"
    path = _library_path()
    if path is None:
        return None, "OpenBLAS (NumPy's; pip install \"dparray[mkl]\" for MKL's products)"
    chosen = os.environ.get("MKL_THREADING_LAYER", "").strip().upper()
    try:
        if chosen == "TBB":
            for tbb in sorted(Path(path).parent.glob("libtbb.so*")):
                ctypes.CDLL(str(tbb), mode=ctypes.RTLD_GLOBAL)
        library = ctypes.CDLL(path)
        set_interface = library.MKL_Set_Interface_Layer
        set_threading = library.MKL_Set_Threading_Layer
    except (OSError, AttributeError) as error:
        return None, f"OpenBLAS (NumPy's; MKL at {path} did not load: {error})"
    if set_interface(LP64) != LP64:
        return None, "OpenBLAS (NumPy's; MKL was set to 64-bit integers in this process)"
    if not chosen:
        sleep_between_loops()  # before libgomp loads, just below
        gnu = _gnu_openmp_loads() and set_threading(LAYERS["GNU"]) == LAYERS["GNU"]
        layer = "GNU OpenMP" if gnu else "MKL's default"
    else:
        layer = chosen if chosen in LAYERS else f"MKL_THREADING_LAYER={chosen}"
    _declare(library)
    os.register_at_fork(after_in_child=lambda: library.MKL_Set_Num_Threads(1))
    from importlib import metadata

    return library, f"MKL {metadata.version('mkl')} ({layer} threads)"


@contextlib.contextmanager
def worker_threads(count: int) -> Iterator[None]:
    """Within the block, this thread's MKL products use its share of the cores: ``cores //
    count``."""
    library = status()[0]
    if library is None:
        yield
        return
    previous = library.MKL_Set_Num_Threads_Local(core_share(count))
    try:
        yield
    finally:
        library.MKL_Set_Num_Threads_Local(previous)


def matmul(a: Any, b: Any) -> np.ndarray:
    """``a @ b``, through MKL where it is available, makes this process's products
    (``makes_products``) and the product is one it does better: float32/float64 operands of
    one dtype, 2-D or stacks of the same leading shape, none empty, and at least ``SMALLEST``
    multiply-adds (below, calling MKL through ``ctypes`` costs more than it saves). A stack
    of products OpenBLAS makes one thread each is sliced over the cores
    (``_core_split.stacked_matmul``)."""
    if b.ndim < 2 or a.size * b.shape[-1] < SMALLEST:  # first, as most products are small
        return a @ b  # the operator: a microsecond faster than np.matmul's call
    library = status()[0]
    if library is None or not _suits(a, b) or not (_choice or makes_products())[0]:
        split = stacked_matmul(a, b)  # OpenBLAS's: a stack of small ones over the cores
        return a @ b if split is None else split
    if a.ndim == 2:
        return _gemm(library, a, b)
    batch = a.shape[:-2]
    stack = _gemm_batch(library, a.reshape(-1, *a.shape[-2:]), b.reshape(-1, *b.shape[-2:]))
    return stack.reshape(*batch, *stack.shape[-2:])


def low_precision_gemm(a: Any, b: Any) -> np.ndarray | None:
    """``a @ b`` for bfloat16 or float16 operands of one dtype, accumulated in float32 and
    returned in float32 by MKL; None where MKL cannot take it (not loaded, too small, a
    layout or size it does not cover), for the caller to multiply otherwise."""
    if b.ndim < 2 or a.size * b.shape[-1] < SMALLEST:
        return None
    library = status()[0]
    name = _LOW_TYPES.get(a.dtype.name)
    if library is None or name is None or not _suits(a, b, low=True):
        return None
    gemm = getattr(library, f"cblas_gemm_{name}", None)
    if gemm is None:  # an MKL release without it
        return None
    if a.ndim == 2:
        return _low_gemm(gemm, a, b)
    (m, k), n = a.shape[-2:], b.shape[-1]
    if m * k * n < BATCH_SMALLEST:  # one call per matrix would cost more than it saves
        return None
    stack_a, stack_b = a.reshape(-1, m, k), b.reshape(-1, k, n)
    out = np.empty((stack_a.shape[0], m, n), np.float32)
    for i in range(stack_a.shape[0]):  # MKL has no batched bfloat16 product
        out[i] = _low_gemm(gemm, stack_a[i], stack_b[i])
    return out.reshape(*a.shape[:-2], m, n)


def _low_gemm(gemm: Any, a: Any, b: Any) -> np.ndarray:
    (m, k), n = a.shape, b.shape[1]
    out = np.empty((m, n), np.float32)
    a, trans_a, lda = _operand(a)
    b, trans_b, ldb = _operand(b)
    gemm(ROW_MAJOR, trans_a, trans_b, m, n, k, 1.0, a.ctypes.data, lda, b.ctypes.data, ldb, 0.0,
         out.ctypes.data, max(1, n))
    return out


def accelerated(dtype_name: str) -> tuple[bool, str]:
    """``(yes, why)``: whether MKL multiplies ``"bfloat16"`` (or ``"float16"``) operands
    natively on this CPU, faster than their float32 copies, and a line saying how or why not."""
    library = status()[0]
    if library is None:
        return False, "MKL is not in use"
    if getattr(library, f"cblas_gemm_{_LOW_TYPES[dtype_name]}", None) is None:
        return False, f"this MKL has no cblas_gemm_{_LOW_TYPES[dtype_name]}"
    limit = os.environ.get("MKL_ENABLE_INSTRUCTIONS", "").strip().upper()
    return _verdict(dtype_name, limit, cpu_flags())


@functools.cache
def _verdict(dtype_name: str, limit: str, flags: frozenset[str]) -> tuple[bool, str]:
    """``accelerated``'s answer for these CPU flags and MKL instruction limit (asked before
    every product: worked out once)."""
    for flag, name, level in _NATIVE[dtype_name]:
        if flag not in flags:
            continue
        if limit in _LEVELS and _LEVELS.index(limit) < _LEVELS.index(level):
            return False, f"the CPU has {name}, but MKL_ENABLE_INSTRUCTIONS={limit} turns it off"
        return True, f"MKL on {name}"
    wanted = " or ".join(name for _, name, _ in _NATIVE[dtype_name])
    return False, f"the CPU has no {wanted}"


@functools.cache
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags as Linux lists them (``/proc/cpuinfo``); empty elsewhere."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


def _suits(a: Any, b: Any, low: bool = False) -> bool:
    if a.ndim < 2 or a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2] \
            or a.shape[-1] != b.shape[-2] or a.dtype != b.dtype \
            or (a.dtype.name not in _LOW_TYPES if low else a.dtype not in _TYPES):
        return False
    (m, k), n = a.shape[-2:], b.shape[-1]
    count = a.size // max(1, m * k)
    fits = max(m * k, k * n, m * n, count) < LARGEST  # every size and stride a 32-bit int
    return a.size > 0 and b.size > 0 and fits


def _gemm(library: Any, a: Any, b: Any) -> np.ndarray:
    (m, k), n = a.shape, b.shape[1]
    out = np.empty((m, n), a.dtype)
    a, trans_a, lda = _operand(a)
    b, trans_b, ldb = _operand(b)
    prefix, scalar = _TYPES[a.dtype]
    getattr(library, f"cblas_{prefix}gemm")(
        ROW_MAJOR, trans_a, trans_b, m, n, k, scalar(1.0), a.ctypes.data, lda,
        b.ctypes.data, ldb, scalar(0.0), out.ctypes.data, max(1, n))
    return out


def _gemm_batch(library: Any, a: Any, b: Any) -> np.ndarray:
    count, m, k = a.shape
    n = b.shape[2]
    out = np.empty((count, m, n), a.dtype)
    a, trans_a, lda = _stacked_operand(a)
    b, trans_b, ldb = _stacked_operand(b)
    prefix, scalar = _TYPES[a.dtype]
    getattr(library, f"cblas_{prefix}gemm_batch_strided")(
        ROW_MAJOR, trans_a, trans_b, m, n, k, scalar(1.0), a.ctypes.data, lda, m * k,
        b.ctypes.data, ldb, k * n, scalar(0.0), out.ctypes.data, max(1, n), m * n, count)
    return out


def _operand(a: Any) -> tuple[Any, int, int]:
    """``a`` as MKL reads it: itself or its transpose stored row by row, with the leading
    dimension; a copy only when it is neither (a strided view)."""
    rows, columns = a.shape
    if a.flags.c_contiguous:
        return a, NO_TRANS, max(1, columns)
    if a.flags.f_contiguous:
        return a, TRANS, max(1, rows)
    return np.ascontiguousarray(a), NO_TRANS, max(1, columns)


def _stacked_operand(a: Any) -> tuple[Any, int, int]:
    """``_operand`` for a ``(count, rows, columns)`` stack, each matrix ``rows * columns``
    elements after the previous one."""
    _, rows, columns = a.shape
    if a.flags.c_contiguous:
        return a, NO_TRANS, max(1, columns)
    if a.transpose(0, 2, 1).flags.c_contiguous:
        return a, TRANS, max(1, rows)
    return np.ascontiguousarray(a), NO_TRANS, max(1, columns)


def _library_path() -> str | None:
    """``libmkl_rt`` of the installed ``mkl`` distribution, or None."""
    from importlib import metadata

    try:
        files = metadata.distribution("mkl").files or []
    except metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name.startswith("libmkl_rt.so"):
            return str(file.locate())
    return None


def _gnu_openmp_loads() -> bool:
    try:
        ctypes.CDLL("libgomp.so.1")
    except OSError:
        return False
    return True


def _declare(library: Any) -> None:
    """Argument types of the products, so ``ctypes`` converts and checks every call."""
    integer, pointer = ctypes.c_int, ctypes.c_void_p
    for prefix, scalar in _TYPES.values():
        gemm = getattr(library, f"cblas_{prefix}gemm")
        gemm.restype = None
        gemm.argtypes = [integer] * 6 + [scalar, pointer, integer, pointer, integer, scalar,
                                          pointer, integer]
        batch = getattr(library, f"cblas_{prefix}gemm_batch_strided")
        batch.restype = None
        batch.argtypes = [integer] * 6 + [scalar, pointer, integer, integer, pointer, integer,
                                          integer, scalar, pointer, integer, integer, integer]
    for name in _LOW_TYPES.values():
        low = getattr(library, f"cblas_gemm_{name}", None)
        if low is not None:
            low.restype = None
            low.argtypes = [integer] * 6 + [ctypes.c_float, pointer, integer, pointer, integer,
                                            ctypes.c_float, pointer, integer]
