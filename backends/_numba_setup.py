"""Whether and how the NumPy backend's compiled kernels run: Numba, its threading layer, and
its thread count inside DataParallel regions.

Kernels use Numba's parallel loops. Several DataParallel workers may launch them at the same
time, which only the ``omp`` and ``tbb`` threading layers allow (``workqueue`` does not): unless
the user chose a layer (``NUMBA_THREADING_LAYER``), dparray asks for a thread-safe one, and
uses no kernels where neither is installed. Inside a DataParallel region each worker gets its
share of the cores (``cores // workers`` threads, usually one), as BLAS does, so ``k`` workers
never start ``k x cores`` threads; Numba's thread count is per calling thread.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
from collections.abc import Iterator

from dparray._system import available_cores

SAFE_LAYERS = ("omp", "tbb")


@functools.cache
def status() -> tuple[bool, str]:
    """``(usable, why)``: whether the kernels can run here, and a line saying why (not)."""
    try:
        import numba
    except ImportError:
        return False, "numba is not installed (pip install numba): the references run"
    chosen = os.environ.get("NUMBA_THREADING_LAYER", "").strip().lower()
    if chosen and chosen not in ("threadsafe", "safe", *SAFE_LAYERS):
        return False, (f"NUMBA_THREADING_LAYER={chosen} is not safe for concurrent kernel "
                       "launches: the references run")
    available = [layer for layer in SAFE_LAYERS if _layer_loads(layer)]
    if not available:
        return False, "no thread-safe Numba threading layer (omp or tbb): the references run"
    if not chosen:
        numba.config.THREADING_LAYER = "threadsafe"  # type: ignore[attr-defined]  # set at run time
    return True, f"numba {numba.__version__}, threading layer {chosen or available[0]}"


def usable() -> bool:
    return status()[0]


def _layer_loads(layer: str) -> bool:
    try:
        importlib.import_module(f"numba.np.ufunc.{layer}pool")
    except (ImportError, OSError):  # the module, or the OpenMP/TBB library it links, is missing
        return False
    return True


@contextlib.contextmanager
def worker_threads(count: int) -> Iterator[None]:
    """Within the block, this thread's kernels use its share of the cores: ``cores //
    count``. A no-op until the kernels are in use."""
    if not status.cache_info().currsize or not usable():
        yield
        return
    import numba

    previous = numba.get_num_threads()
    numba.set_num_threads(max(1, min(previous, available_cores() // max(1, count))))
    try:
        yield
    finally:
        numba.set_num_threads(previous)
