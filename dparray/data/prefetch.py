"""Batches made ahead of their use on a background thread, so data preparation overlaps compute.

``Prefetcher(produce, count, depth, context)`` calls ``produce(0)``, ``produce(1)``, ... on one
thread, in a copy of the caller's context (backend choice, grad mode, random streams), and
keeps at most ``depth`` results waiting in a bounded queue; ``next()`` hands them out in order,
so the batches are exactly those ``Inline`` (no thread) makes. The thread stops when the results
run out, when ``produce`` raises (the exception reaches the consumer and ends the run), when
``close()`` is called -- on ``break``, on an exception or KeyboardInterrupt in the consumer --
and when the prefetcher is garbage-collected. ``close()`` returns at once: it never waits for
the result being made, which the thread finishes, drops and then ends (a dataset that stalls
for 30 s does not hold up Ctrl-C for 30 s). The thread never holds a reference to its
prefetcher, so collection is not delayed by the thread itself.

NumPy releases the GIL in its copies and gathers, so preparing the next batch on a thread runs
beside the model's matrix products; Python-heavy ``__getitem__`` code still shares the GIL.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any

THREAD_NAME = "dparray-data-prefetch"

_POLL_S = 0.05  # how often a waiting consumer wakes up, so Ctrl-C reaches it on every platform
_BATCH, _ERROR, _DONE = "batch", "error", "done"


class Inline:
    """``produce(0)``, ``produce(1)``, ... made on demand in the caller's thread (no thread),
    each in ``context``: the behaviour of ``Prefetcher`` without the overlap."""

    def __init__(self, produce: Callable[[int], Any], count: int,
                 context: contextvars.Context) -> None:
        self._produce, self._count, self._context = produce, count, context
        self._next = 0

    def next(self) -> Any:
        """The next result; StopIteration after the last, and after an exception (which ends
        the run, as it ends ``Prefetcher``'s)."""
        if self._next >= self._count:
            raise StopIteration
        number = self._next
        self._next += 1
        try:
            return self._context.run(self._produce, number)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Make no more results."""
        self._next = self._count


class Prefetcher:
    """``produce(0)``, ``produce(1)``, ... made on a background thread, at most ``depth`` ahead.

    Examples:
        >>> import contextvars
        >>> ahead = Prefetcher(lambda i: i * i, 4, depth=2, context=contextvars.copy_context())
        >>> [ahead.next() for _ in range(4)]
        [0, 1, 4, 9]
        >>> ahead.close()  # returns at once; the thread ends by itself
        >>> ahead.thread.join(timeout=10)
        >>> ahead.thread.is_alive()
        False
    """

    def __init__(self, produce: Callable[[int], Any], count: int, depth: int,
                 context: contextvars.Context) -> None:
        self._items: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._finished = False
        self.thread = threading.Thread(
            target=context.run, args=(_produce_all, produce, count, self._items, self._stop),
            name=THREAD_NAME, daemon=True,  # never keeps the interpreter from exiting
        )
        self.thread.start()

    def next(self) -> Any:
        """The next result, waiting for it if need be; StopIteration after the last. An
        exception raised by ``produce`` is raised here, after the thread has stopped."""
        if self._finished:
            raise StopIteration
        try:
            kind, value = self._wait()
        except BaseException:  # KeyboardInterrupt while waiting: stop the thread, then go
            self.close()
            raise
        if kind == _BATCH:
            return value
        self.close()
        if kind == _ERROR:
            raise value
        raise StopIteration

    def close(self) -> None:
        """Stop the thread, at once: the results waiting are dropped, and the one being made
        (if any) is abandoned -- the thread finishes it, drops it and ends, without anyone
        waiting for it (``thread.join()`` does)."""
        self._finished = True
        self._stop.set()
        while True:  # results waiting are dropped now, not when the prefetcher is collected
            try:
                self._items.get_nowait()
            except queue.Empty:
                break

    def __del__(self) -> None:
        if not self._finished:
            self.close()

    def _wait(self) -> tuple[str, Any]:
        while True:
            try:
                return self._items.get(timeout=_POLL_S)
            except queue.Empty:
                if not self.thread.is_alive() and self._items.empty():
                    raise RuntimeError("the prefetch thread ended without a result") from None


def _produce_all(produce: Callable[[int], Any], count: int, items: queue.Queue[tuple[str, Any]],
                 stop: threading.Event) -> None:
    """The thread's work: every result in turn, then the end; or the first exception."""
    try:
        for number in range(count):
            if stop.is_set() or not _put(items, (_BATCH, produce(number)), stop):
                return
    except BaseException as error:  # handed to the consumer, who raises it
        _put(items, (_ERROR, error), stop)
        return
    _put(items, (_DONE, None), stop)


def _put(items: queue.Queue[tuple[str, Any]], item: tuple[str, Any],
         stop: threading.Event) -> bool:
    """Put ``item`` once there is room; give up (False) when the consumer has stopped."""
    while not stop.is_set():
        try:
            items.put(item, timeout=_POLL_S)
        except queue.Full:
            continue
        return True
    return False
