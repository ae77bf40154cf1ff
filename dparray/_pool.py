"""Persistent worker threads for DataParallel: one single-thread executor per worker index.

Chunk ``i`` always runs on worker ``i`` (chunk 0 in the calling thread), so per-worker state --
a CUDA stream, say -- stays with its chunk in forward and backward. Pools live for the process
and are shared by every DataParallel of the same size; no thread is started per call. A call's
tasks are queued on all workers under one lock, so every worker sees concurrent calls in the
same order: chunks that wait for each other (SyncBatchNorm) can never deadlock across calls.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

_in_worker: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "dparray_in_data_parallel_chunk", default=False
)


class Outcome(NamedTuple):
    """What one task returned, or the exception it raised."""

    value: Any
    error: BaseException | None


def in_chunk() -> bool:
    """Whether the caller is running a DataParallel chunk (so nested ones run inline)."""
    return _in_worker.get()


class WorkerPool:
    """Threads for workers ``1 .. size - 1``; worker 0 is whichever thread calls ``run``."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._executors = [
            ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"dparray-worker-{i}")
            for i in range(1, size)
        ]
        self._submit = threading.Lock()

    def run(self, tasks: Sequence[Callable[[], Any]]) -> list[Outcome]:
        """Run task ``i`` on worker ``i``, each in its own copy of the caller's context, and
        return every outcome in order once all have finished (a failure never abandons the
        others)."""
        if not 1 <= len(tasks) <= self.size:
            raise ValueError(f"a pool of {self.size} workers got {len(tasks)} tasks")
        contexts = [contextvars.copy_context() for _ in tasks]
        with self._submit:
            futures = [
                executor.submit(_run, context, task)
                for executor, context, task in zip(self._executors, contexts[1:], tasks[1:],
                                                   strict=False)
            ]
        outcomes = [_run(contexts[0], tasks[0])]
        outcomes.extend(future.result() for future in futures)
        return outcomes


def run_inline(tasks: Sequence[Callable[[], Any]]) -> list[Outcome]:
    """Run the tasks one after another in the calling thread, as ``WorkerPool.run`` would
    (each in its own copy of the caller's context)."""
    return [_run(contextvars.copy_context(), task) for task in tasks]


def _run(context: contextvars.Context, task: Callable[[], Any]) -> Outcome:
    try:
        return Outcome(context.run(_as_chunk, task), None)
    except BaseException as error:  # handed to the caller, which re-raises it
        return Outcome(None, error)


def _as_chunk(task: Callable[[], Any]) -> Any:
    _in_worker.set(True)
    return task()


_pools: dict[int, WorkerPool] = {}
_pools_lock = threading.Lock()


def pool(size: int) -> WorkerPool:
    """The process's pool for ``size`` workers, made on first use."""
    with _pools_lock:
        found = _pools.get(size)
        if found is None:
            found = _pools[size] = WorkerPool(size)
        return found
