"""The NumPy backend, the embedded default: ``array_api_compat.numpy`` plus NumPy's fast paths.

Making the backend raises glibc's limits on the freed memory it keeps for reuse
(``_malloc_setup``), so that a training step's arrays land on pages already mapped.
``erf`` uses SciPy's when SciPy is installed (about 7x faster than the generic one, which NumPy
alone must use since it has no ``erf``); both are accurate to float64 precision. ``kernels`` is
the table of Numba-compiled fused ops (``_numpy_kernels.py``), built on first use, and, with
the ``mkl`` package installed, ``"matmul"``: matrix products through MKL rather than NumPy's
OpenBLAS (``_mkl``). Without Numba every other op runs its array-API reference.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import array_api_compat.numpy as xp
import numpy as np

from dparray._system import core_share
from dparray.backend import RandomGenerator
from dparray.kernels import ENABLED_BY_ENVIRONMENT
from dparray.kernels import ENV_VAR as KERNELS_VARIABLE

from ._core_split import worker_share
from ._host_random import HostRandom
from ._low_precision import native as _native_low_precision
from ._malloc_setup import keep_freed_memory
from ._mkl import makes_products as _mkl_makes_products
from ._mkl import status as _mkl_status
from ._mkl import worker_threads as mkl_worker_threads
from ._ml_dtypes import LazyBfloat16
from ._numba_setup import status as _numba_status
from ._numba_setup import warm_up_in_background, worker_threads
from .array_api import ArrayAPIBackend


class NumPyBackend(ArrayAPIBackend):
    """NumPy on the CPU; ``scatter_add`` through ``np.add.at`` instead of a one-hot matmul,
    ``erf`` through SciPy when it is installed."""

    def __init__(self) -> None:
        super().__init__(xp, "numpy")
        keep_freed_memory()  # the next step's arrays reuse this one's pages (_malloc_setup)
        warm_up_in_background()  # Numba's start-up while the model and data are made

    def asarray(self, data: Any, dtype: Any = None) -> np.ndarray:
        return np.asarray(data, dtype=dtype)

    def random(self, seed: int) -> RandomGenerator:
        return HostRandom(seed, np.asarray)

    def scatter_add(self, target: Any, index: Any, values: Any) -> np.ndarray:
        out = np.array(target, copy=True)
        if self.kernels and values.ndim >= 1 and values.size and out.ndim >= 1 \
                and values.dtype == out.dtype and values.dtype in (np.float32, np.float64):
            from ._numpy_kernels import scatter_add_rows  # compiled: ten times np.add.at

            rows = np.ascontiguousarray(values).reshape(values.shape[0], -1)
            scatter_add_rows(out.reshape(out.shape[0], -1), np.asarray(index, np.int64), rows)
            return out
        np.add.at(out, index, values)
        return out

    def erf(self, x: Any) -> Any:
        fast = _scipy_erf()
        if fast is not None and x.dtype in (np.float32, np.float64):
            return fast(x)
        if x.dtype.name in ("bfloat16", "float16"):  # in float32, rounded once
            return self.erf(x.astype(np.float32)).astype(x.dtype)
        return super().erf(x)

    @contextlib.contextmanager
    def parallel_region(self, count: int) -> Iterator[None]:
        """Split the cores among ``count`` workers for BLAS (see ``BlasBudget``)."""
        with _budget.share(count):
            yield

    @contextlib.contextmanager
    def worker(self, index: int, count: int) -> Iterator[None]:
        """Worker ``index``'s compiled kernels, its MKL products and its sliced NumPy calls
        (``_core_split``) use its share of the cores (all count threads per calling thread)."""
        with worker_threads(count), mkl_worker_threads(count), worker_share(count):
            yield

    @functools.cached_property
    def kernels(self) -> dict[str, Any]:
        """Numba-compiled fused ops, by op name (empty without a usable Numba)."""
        from ._numpy_kernels import table

        return table()

    @functools.cached_property
    def extra_dtypes(self) -> Mapping[str, Any]:
        """``bfloat16`` from ``ml_dtypes`` (NumPy has none of its own), when it is installed;
        imported when first asked for (``_ml_dtypes``)."""
        return LazyBfloat16(np.dtype)

    def describe(self) -> dict[str, str]:
        facts = super().describe()
        facts["kernels"] = _kernel_status()
        facts["matrix products"] = _products_status()
        for name in ("bfloat16", "float16"):
            facts[f"{name} products"] = _low_precision_status(name)
        return facts


class BlasBudget:
    """The BLAS thread count while data-parallel regions run: the cores divided among the
    workers, so ``k`` workers never start ``k x cores`` BLAS threads.

    OpenBLAS's count is process-wide, not per thread, so it is set once when the first region
    starts and restored when the last one ends (regions of several callers may overlap; the
    first one's share holds until all are done). Through threadpoolctl, which limits the BLAS
    libraries loaded when it first looks: MKL is loaded before that. MKL's count holds per
    thread, so this limits it in the region's own thread only; each worker sets its own share
    (``NumPyBackend.worker``).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active = 0
        self._limiter: Any = None
        self._controller: Any = None

    @contextlib.contextmanager
    def share(self, workers: int) -> Iterator[None]:
        with self._lock:
            if self._active == 0:
                if self._controller is None:
                    from threadpoolctl import ThreadpoolController

                    _mkl_status()  # loads MKL, if it is to make the products
                    self._controller = ThreadpoolController()
                threads = core_share(workers)
                self._limiter = self._controller.limit(limits=threads, user_api="blas")
            self._active += 1
        try:
            yield
        finally:
            with self._lock:
                self._active -= 1
                if self._active == 0:
                    self._limiter.restore_original_limits()
                    self._limiter = None



_budget = BlasBudget()


@functools.cache
def _scipy_erf() -> Any:
    try:
        from scipy.special import erf
    except ImportError:
        return None
    return erf


def _products_status() -> str:
    if _mkl_status()[0] is not None and not ENABLED_BY_ENVIRONMENT:
        return f"OpenBLAS (NumPy's; {KERNELS_VARIABLE}=reference)"
    return _mkl_makes_products()[1]


def _low_precision_status(name: str) -> str:
    """Whether ``name`` products run natively here (MKL on AMX or AVX-512's extensions), or
    on float32 copies of the operands."""
    fast, why = _native_low_precision(name) if ENABLED_BY_ENVIRONMENT else (
        False, f"{KERNELS_VARIABLE}=reference")
    if fast:
        return f"accelerated ({why})"
    return f"not accelerated ({why}): float32 products of converted operands"


def _kernel_status() -> str:
    usable, why = _numba_status()
    return f"compiled ({why})" if usable else why


def create() -> NumPyBackend:
    return NumPyBackend()
