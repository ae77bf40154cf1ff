"""Whether and how the NumPy backend's compiled kernels run: Numba, its threading layer, and
its thread count inside DataParallel regions.

Kernels use Numba's parallel loops. Several DataParallel workers may launch them at the same
time, which only the ``omp`` and ``tbb`` threading layers allow (``workqueue`` does not): unless
the user chose a layer (``NUMBA_THREADING_LAYER``), dparray asks for a thread-safe one, and
uses no kernels where neither is installed. Inside a DataParallel region each worker gets its
share of the cores (``cores // workers`` threads, usually one), as BLAS does, so ``k`` workers
never start ``k x cores`` threads; Numba's thread count is per calling thread.

Two more rules keep the kernels from fighting BLAS for the cores. A loop over fewer than
``SERIAL_BELOW`` elements runs a serial compilation of itself (``serial``): waking the other
threads, or even changing the thread count for one call, costs more than it saves.
And OpenMP's threads sleep as soon as a loop ends instead of spinning for the next one
(``_openmp_setup``): the next op is usually a matrix product, whose BLAS threads need those
cores.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import threading
import types
import zlib
from collections.abc import Callable, Iterator
from typing import Any

from dparray._system import core_share

from ._openmp_setup import sleep_between_loops

SAFE_LAYERS = ("omp", "tbb")
SERIAL_BELOW = 1 << 15


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
    sleep_between_loops()  # read when OpenMP loads, just below
    available = next((layer for layer in SAFE_LAYERS if _layer_loads(layer)), None)
    if available is None:  # (the first that loads is enough: tbb's import costs 0.2-0.4 s)
        return False, "no thread-safe Numba threading layer (omp or tbb): the references run"
    if not chosen:
        numba.config.THREADING_LAYER = "threadsafe"  # type: ignore[attr-defined]  # set at run time
    return True, f"numba {numba.__version__}, threading layer {chosen or available}"


def usable() -> bool:
    return status()[0]


def warm_up_in_background() -> None:
    """Start loading Numba and its CPU target on a thread of its own, once per process: what
    the first compiled loop of a process waits for (1-2 s; each further loop loads from the
    cache in milliseconds), done while the program builds its model and reads its data. The
    loops themselves still load when first called, so a model loads only those it uses. A
    ``fork`` waits for it to finish (a child must not inherit a half-done import)."""
    global _warm_up
    from dparray.kernels import ENABLED_BY_ENVIRONMENT

    if _warm_up is not None or not ENABLED_BY_ENVIRONMENT:
        return
    sleep_between_loops()  # here, not on the thread: setting a variable races C's getenv
    _warm_up = threading.Thread(target=_load_target, name="dparray-numba-warm-up", daemon=True)
    _warm_up.start()
    os.register_at_fork(before=_warm_up.join)


_warm_up: threading.Thread | None = None


def wait_for_warm_up() -> None:
    """Return once the background start-up (``warm_up_in_background``) has finished, at once if
    none was started: for measurements of a process's memory or page faults, which that
    thread's imports would otherwise enter."""
    if _warm_up is not None:
        _warm_up.join()


def _load_target() -> None:
    if not usable():
        return
    import numpy as np

    from . import _numba_loops

    one = np.zeros(1)
    serial(_numba_loops.relu)(one, np.empty(1))  # the CPU target's start-up, from the cache


def _layer_loads(layer: str) -> bool:
    try:
        importlib.import_module(f"numba.np.ufunc.{layer}pool")
    except (ImportError, OSError):  # the module, or the OpenMP/TBB library it links, is missing
        return False
    return True


def launch(loop: Callable[..., Any], size: int, *args: Any) -> Any:
    """``loop(*args)``, or its serial compilation when it covers fewer than ``SERIAL_BELOW``
    elements."""
    if size >= SERIAL_BELOW:
        return loop(*args)
    return serial(loop)(*args)


def sized(loop: Callable[..., Any]) -> Callable[..., Any]:
    """``loop`` launched as its first argument's size is worth (``launch``)."""
    def call(*args: Any) -> Any:
        return launch(loop, args[0].size, *args)

    return call


class SizedLoops:
    """The compiled loops of ``_numba_loops`` as attributes, each ``sized``."""

    def __getattr__(self, name: str) -> Callable[..., Any]:
        from . import _numba_loops

        call = sized(getattr(_numba_loops, name))
        setattr(self, name, call)  # made once per loop
        return call


@functools.cache
def loops() -> SizedLoops:
    """The one ``SizedLoops``; importing ``_numba_loops`` (compiling or loading its cache)
    waits for the first loop asked for."""
    return SizedLoops()


def serial(loop: Any) -> Any:
    """The Numba-compiled ``loop`` compiled again without ``parallel`` (its ``prange`` a plain
    ``range``), with its other options; made once per loop, even when several threads ask at
    once."""
    twin = _twins.get(loop)
    if twin is None:
        with _twins_lock:
            twin = _twins.get(loop)
            if twin is None:
                twin = _twins[loop] = _serial_twin(loop)
    return twin


_twins: dict[Any, Any] = {}
_twins_lock = threading.Lock()


def _serial_twin(loop: Any) -> Any:
    """Numba caches compilations on disk by the function's qualified name and its source file,
    not by its options: the copy gets a name of its own that also names its options, so
    neither the parallel loop's entry nor a twin compiled with other options is ever loaded
    for it."""
    import numba

    source = loop.py_func
    copy = types.FunctionType(source.__code__, source.__globals__, source.__name__,
                              source.__defaults__, source.__closure__)
    options = {name: value for name, value in loop.targetoptions.items() if name != "nopython"}
    options.update(parallel=False)
    described = repr(sorted((name, sorted(value) if isinstance(value, (set, frozenset)) else
                             value) for name, value in options.items()))
    copy.__qualname__ = f"{source.__qualname__}__serial_{zlib.crc32(described.encode()):08x}"
    return numba.njit(**options, cache=True)(copy)


@contextlib.contextmanager
def worker_threads(count: int) -> Iterator[None]:
    """Within the block, this thread's kernels use its share of the cores: ``cores //
    count``. A no-op until the kernels are in use."""
    if not status.cache_info().currsize or not usable():
        yield
        return
    import numba

    previous = numba.get_num_threads()
    numba.set_num_threads(min(previous, core_share(count)))
    try:
        yield
    finally:
        numba.set_num_threads(previous)
