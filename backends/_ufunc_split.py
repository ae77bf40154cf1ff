"""A costly NumPy ufunc over a large array, one slice per core, each slice's loop NumPy's own.

Some of NumPy's float loops are libm's, one element at a time, where no SIMD version exists
for the CPU: float32 ``log1p`` took 18 ns an element on a 2-core AMD EPYC with AVX2 (against
2 ns for ``log``). NumPy lets go of the GIL inside a ufunc's loop, so slices of one array run
in parallel on threads, and each element gets the very function, hence the very bits, that
one call would give it. A kernel calls ``apply`` (or ``exp``) where the reference calls the
ufunc: the exponentials of softmax, log-softmax, cross-entropy and attention, GELU's tanh,
binary cross-entropy's logarithms. Cross-entropy over 700 x 8500 float32 logits, forward and
backward, took 29-33 ms instead of 41-50 (AVX2 EPYC, alternated runs of a timing script).

The caller's thread takes the first slice; a small pool, made on first use, takes the rest,
each slice in a copy of the caller's context, so NumPy's error state (``np.errstate``, which
``quiet_math`` sets) holds there too.
Inside a DataParallel region each worker has its share of the cores (Numba's thread count
for that thread, ``_numba_setup.worker_threads``), usually one: then the ufunc runs whole.
Below ``SPLIT_FROM`` elements handing out slices costs more than it saves.
"""

from __future__ import annotations

import contextvars
import itertools
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from dparray._system import available_cores

SPLIT_FROM = 1 << 16

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_lock = threading.Lock()


def apply(ufunc: Any, x: Any, out: Any) -> Any:
    """``ufunc(x, out=out)`` for 1-D arrays of one size, sliced over this thread's cores (a
    kernel's helper: Numba is installed wherever kernels run)."""
    import numba

    shares = min(numba.get_num_threads(), available_cores())
    if shares < 2 or x.shape[0] < SPLIT_FROM:
        return ufunc(x, out=out)
    bounds = [x.shape[0] * i // shares for i in range(shares + 1)]
    pool = _workers(shares - 1)
    pending: list[Future[Any]] = [
        pool.submit(contextvars.copy_context().run, ufunc, x[start:stop], out=out[start:stop])
        for start, stop in itertools.pairwise(bounds[1:])]
    ufunc(x[: bounds[1]], out=out[: bounds[1]])
    for job in pending:
        job.result()
    return out


def exp(x: Any, out: Any = None) -> Any:
    """NumPy's ``exp`` of a C-contiguous array (into ``out``, C-contiguous, or a new array),
    sliced over the cores."""
    if out is None:
        out = np.empty(x.shape, x.dtype)
    apply(np.exp, x.reshape(-1), out.reshape(-1))
    return out


def _workers(count: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size < count:  # (grows only if the process gains cores)
            _pool = ThreadPoolExecutor(count, thread_name_prefix="dparray-ufunc")
            _pool_size = count
        return _pool


def _forget_pool() -> None:
    """A forked child has none of the parent's threads: it makes a pool of its own."""
    global _pool, _pool_size
    _pool, _pool_size = None, 0


os.register_at_fork(after_in_child=_forget_pool)
