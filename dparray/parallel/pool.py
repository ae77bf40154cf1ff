"""Persistent worker threads for DataParallel: one single-thread executor per worker index.

Chunk ``i`` always runs on worker ``i`` (chunk 0 in the calling thread), so per-worker state --
a CUDA stream, say -- stays with its chunk in forward and backward. The workers are shared by
every DataParallel in the process: a call with ``k`` chunks uses workers ``1 .. k-1``, so the
number of threads is bounded by the largest chunk count in use, not by how many sizes were
ever seen. Workers beyond the chunk count of recent calls that stay idle for
``IDLE_SECONDS`` are released. A call's tasks are queued on all its workers under one lock, so
every worker sees concurrent calls in the same order: chunks that wait for each other
(SyncBatchNorm) can never deadlock across calls. Each task runs in its own copy of the caller's
context, marked as its chunk for the layers (``dparray.nn.chunks``).
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

from dparray.nn.chunks import enter_chunk

IDLE_SECONDS = 60.0


class Outcome(NamedTuple):
    """What one task returned, or the exception it raised."""

    value: Any
    error: BaseException | None


class Workers:
    """The process's worker threads: ``executors[i - 1]`` is worker ``i``."""

    def __init__(self) -> None:
        self._executors: list[ThreadPoolExecutor] = []
        self._last_used: list[float] = []
        self._submit = threading.Lock()

    def run(self, tasks: Sequence[Callable[[], Any]]) -> list[Outcome]:
        """Run task ``i`` on worker ``i`` (task 0 in the calling thread), each in its own copy
        of the caller's context, and return every outcome in order once all have finished (a
        failure never abandons the others)."""
        contexts = [contextvars.copy_context() for _ in tasks]
        with self._submit:
            executors = self._reserve(len(tasks) - 1)
            futures = [
                executor.submit(_run, context, task, index)
                for index, (executor, context, task) in enumerate(
                    zip(executors, contexts[1:], tasks[1:], strict=True), start=1)
            ]
        outcomes = [_run(contexts[0], tasks[0], 0)]
        outcomes.extend(future.result() for future in futures)
        return outcomes

    def thread_count(self) -> int:
        """How many worker threads exist now (the calling thread not counted)."""
        with self._submit:
            return len(self._executors)

    def _reserve(self, count: int) -> list[ThreadPoolExecutor]:
        """Workers ``1 .. count``, made on first use; idle ones beyond ``count`` released."""
        now = time.monotonic()
        while len(self._executors) < count:
            index = len(self._executors) + 1
            self._executors.append(
                ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"dparray-worker-{index}"))
            self._last_used.append(now)
        for i in range(count):
            self._last_used[i] = now
        while len(self._executors) > count and now - self._last_used[-1] > IDLE_SECONDS:
            self._executors.pop().shutdown(wait=False)  # idle: nothing queued on it
            self._last_used.pop()
        return self._executors[:count]


def run_inline(tasks: Sequence[Callable[[], Any]]) -> list[Outcome]:
    """Run the tasks one after another in the calling thread, as ``Workers.run`` would (each in
    its own copy of the caller's context)."""
    return [_run(contextvars.copy_context(), task, i) for i, task in enumerate(tasks)]


def _run(context: contextvars.Context, task: Callable[[], Any], index: int) -> Outcome:
    try:
        return Outcome(context.run(_as_chunk, task, index), None)
    except BaseException as error:  # handed to the caller, which re-raises it
        return Outcome(None, error)


def _as_chunk(task: Callable[[], Any], index: int) -> Any:
    enter_chunk(index)  # what layers read as dparray.nn.chunks.chunk_index()
    return task()


workers = Workers()
