"""Costly NumPy calls over large arrays, one slice per core, each slice NumPy's own call.

Two kinds of NumPy call leave a core idle on their own:

- Some float ufunc loops are libm's, one element at a time, where no SIMD version exists for
  the CPU: float32 ``log1p`` took 18 ns an element on a 2-core AMD EPYC with AVX2 (``log``:
  2 ns), and ``exp`` is one thread's work however large the array.
- A stack of small matrix products (attention's, per head): OpenBLAS multiplies each matrix
  below ``SMALL_PRODUCT`` multiply-adds on one thread, one after the other.

NumPy lets go of the GIL inside both, so slices of the work run in parallel on threads, and
each element or matrix gets the very loop or product call, hence the very bits, that one call
would give it. Kernels call ``apply`` (or ``exp``) where the reference calls the ufunc --
the exponentials of softmax, log-softmax, cross-entropy and attention, GELU's tanh, binary
cross-entropy's logarithms -- and for a row-wise computation (the softmaxes' shift by each
row's maximum), and the product kernel calls ``stacked_matmul``.
Cross-entropy over 700 x 8500 float32 logits, forward and backward, took 29-33 ms instead of
41-50 on that EPYC (alternated runs of a timing script).

The caller's thread takes the first slice; a small pool, made on first use, takes the rest,
each slice in a copy of the caller's context, so NumPy's error state (``np.errstate``, which
``quiet_math`` sets) holds there too. A DataParallel worker has its share of the cores
(``worker_share``), usually one: its calls run whole. Below ``SPLIT_FROM`` elements (or
``STACK_SPLIT_FROM`` multiply-adds) handing out slices costs more than it saves.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import itertools
import math
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

import numpy as np

from dparray._system import available_cores, core_share

SPLIT_FROM = 1 << 16
SMALL_PRODUCT = 1 << 18  # OpenBLAS's one-thread bound: 65536 x GEMM_MULTITHREAD_THRESHOLD (4)
STACK_SPLIT_FROM = 1 << 22  # multiply-adds in all; the product kernel passes no fewer
PRODUCT_TYPES = (np.dtype(np.float32), np.dtype(np.float64))

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_lock = threading.Lock()
_local = threading.local()  # .cores: this thread's share inside a DataParallel worker


def apply(function: Callable[..., Any], *arrays: Any) -> Any:
    """``function(*arrays)``, sliced along the arrays' first axis over this thread's cores,
    for a NumPy call whose result at each index of that axis depends on the arrays at that
    index alone: a ufunc with its ``out`` last (``apply(np.log1p, x, out)``), or a row-wise
    computation of 2-D arrays. Returns the last array, the output."""
    shares = min(_shares(arrays[0].size, SPLIT_FROM), arrays[0].shape[0])
    if shares < 2:
        function(*arrays)
    else:
        _each_slice(function, shares, arrays)
    return arrays[-1]


def exp(x: Any, out: Any = None) -> Any:
    """NumPy's ``exp`` of a C-contiguous array (into ``out``, C-contiguous, or a new array),
    sliced over the cores."""
    if out is None:
        out = np.empty(x.shape, x.dtype)
    apply(np.exp, x.reshape(-1), out.reshape(-1))
    return out


def stacked_matmul(a: Any, b: Any) -> Any:
    """``a @ b`` for stacks of one leading shape and dtype (float32 or float64) whose
    matrices OpenBLAS multiplies on one thread each, sliced along the first axis over the
    cores; None for any other product (the caller multiplies it whole)."""
    if a.ndim < 3 or a.shape[:-2] != b.shape[:-2] or a.dtype != b.dtype \
            or a.dtype not in PRODUCT_TYPES:
        return None
    (m, k), n = a.shape[-2:], b.shape[-1]
    if m * n * k >= SMALL_PRODUCT:
        return None
    shares = min(_shares(math.prod(a.shape[:-2]) * m * n * k, STACK_SPLIT_FROM), a.shape[0])
    if shares < 2:
        return None
    out = np.empty((*a.shape[:-1], n), a.dtype)
    _each_slice(np.matmul, shares, (a, b, out))
    return out


@contextlib.contextmanager
def worker_share(count: int) -> Iterator[None]:
    """Within the block, this thread (one of ``count`` DataParallel workers) splits its calls
    over its share of the cores, ``cores // count``: with one, it does not split them."""
    previous = getattr(_local, "cores", None)
    _local.cores = core_share(count)
    try:
        yield
    finally:
        _local.cores = previous


def _shares(work: int, threshold: int) -> int:
    """How many slices ``work`` is worth on this thread: 1 below ``threshold``."""
    if work < threshold:
        return 1
    cores = getattr(_local, "cores", None)
    return available_cores() if cores is None else cores


def _each_slice(function: Callable[..., Any], shares: int, arrays: tuple[Any, ...]) -> None:
    """``function`` on each of ``shares`` slices of the arrays along their first axis, at once."""
    size = arrays[0].shape[0]
    bounds = [size * i // shares for i in range(shares + 1)]
    _run([functools.partial(function, *(array[start:stop] for array in arrays))
          for start, stop in itertools.pairwise(bounds)])


def _run(calls: list[Callable[[], Any]]) -> None:
    """The first call on this thread, the others on the pool; returns when all are done."""
    pool = _workers(len(calls) - 1)
    pending: list[Future[Any]] = [pool.submit(contextvars.copy_context().run, call)
                                  for call in calls[1:]]
    try:
        calls[0]()
    finally:
        wait(pending)  # all of them, even after an error: none may write on afterwards
    for job in pending:
        job.result()  # raises a slice's error


def _workers(count: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size < count:  # (grows only if the process gains cores)
            _pool = ThreadPoolExecutor(count, thread_name_prefix="dparray-split")
            _pool_size = count
        return _pool


def _forget_pool() -> None:
    """A forked child has none of the parent's threads: it makes a pool of its own."""
    global _pool, _pool_size
    _pool, _pool_size = None, 0


os.register_at_fork(after_in_child=_forget_pool)
