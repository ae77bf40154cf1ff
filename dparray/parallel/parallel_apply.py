"""DataParallel's second step: the module run on every chunk, chunk ``i`` as worker ``i``.

A call's ``Plan`` says how its chunks run: ``"threads"`` (on the worker pool,
``dparray.parallel.pool``: chunk 0 in the caller, chunk ``i`` on worker thread ``i``) or
``"inline"`` (one after another in the caller's thread), inside the backend's
``parallel_region(k)``, which on NumPy splits the cores among the workers for BLAS. The same
plan runs the chunks' backward (``dparray.parallel.gather``). Each chunk runs in a copy of the
caller's context (grad mode, backend choice), inside ``backend.worker(i, k)``, with a random
stream of its own seeded from the caller's (so dropout masks differ per chunk and repeat
under a seed), and in the group where synchronising layers (SyncBatchNorm) meet. A failing
chunk is raised in the caller as a ``ChunkError`` naming it.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dparray import random as _random
from dparray.backend import Backend, parallel_region
from dparray.nn.chunks import Rendezvous, RendezvousAborted, sync_group
from dparray.nn.module import Module
from dparray.parallel import pool

ChunkArguments = tuple[tuple[Any, ...], dict[str, Any]]
"""One chunk's positional and keyword arguments."""


class ChunkError(RuntimeError):
    """A chunk of a DataParallel call raised an exception; it is the ``__cause__``.

    Only ``Exception`` subclasses are wrapped: ``KeyboardInterrupt``, ``SystemExit`` and other
    ``BaseException``s raised in a chunk reach the caller as themselves.
    """

    def __init__(self, chunk: int, count: int, error: BaseException) -> None:
        super().__init__(f"DataParallel chunk {chunk} of {count} failed: "
                         f"{type(error).__name__}: {error}")
        self.chunk = chunk


@dataclass(frozen=True)
class Plan:
    """How one DataParallel call runs its ``count`` chunks: ``execution`` (``"threads"`` or
    ``"inline"``) on ``backend``'s workers. ``boundary`` is where the graph was split
    (``dparray.parallel.chunk_graph``); ``group`` is where the chunks' synchronising layers
    meet, None when no layer synchronises."""

    execution: str
    count: int
    backend: Backend
    boundary: int
    group: Rendezvous | None

    def run(self, tasks: Sequence[Callable[[], Any]]) -> list[Any]:
        """Task ``i`` as chunk ``i``, forward or backward: their values, in order, or the
        failures raised here (see ``values``)."""
        with parallel_region(self.backend, self.count):
            if self.execution == "threads":
                return values(pool.workers.run(tasks))
            return values(pool.run_inline(tasks))


def parallel_apply(module: Module, chunks: Sequence[ChunkArguments], plan: Plan) -> list[Any]:
    """``module`` called on each chunk's arguments as ``plan`` says: the outputs, in order."""
    seeds = _random.current_streams().spawn(plan.count)
    tasks = [functools.partial(_forward_chunk, module, plan, i, args, kwargs, seeds[i])
             for i, (args, kwargs) in enumerate(chunks)]
    return plan.run(tasks)


def _forward_chunk(module: Module, plan: Plan, index: int, args: tuple[Any, ...],
                   kwargs: dict[str, Any], seed: int) -> Any:
    with plan.backend.worker(index, plan.count), _random.fork_rng(seed), \
            sync_group(plan.group, index):
        return module(*args, **kwargs)


def values(outcomes: list[pool.Outcome]) -> list[Any]:
    """The tasks' values, or the failures raised in the caller.

    A ``BaseException`` that is not an ``Exception`` (KeyboardInterrupt, SystemExit) is
    re-raised as itself, so ``except KeyboardInterrupt`` and exit statuses work as without
    DataParallel. Other failures are raised as ``ChunkError`` naming the chunk (several as an
    ``ExceptionGroup``), leaving out chunks that only stopped because another one failed.
    """
    failed = [(i, o.error) for i, o in enumerate(outcomes) if o.error is not None]
    for i, error in failed:
        if not isinstance(error, Exception):
            add_note = getattr(error, "add_note", None)  # Python 3.11 and later
            if add_note is not None:
                add_note(f"(raised in DataParallel chunk {i} of {len(outcomes)})")
            raise error
    primary = [(i, e) for i, e in failed if not isinstance(e, RendezvousAborted)]
    failures = []
    for i, error in primary or failed:
        failure = ChunkError(i, len(outcomes), error)
        failure.__cause__ = error
        failures.append(failure)
    if len(failures) == 1:
        raise failures[0]
    if failures:
        if sys.version_info >= (3, 11):
            raise ExceptionGroup(  # noqa: F821 - a builtin from 3.11 on
                f"DataParallel: {len(failures)} of {len(outcomes)} chunks failed", failures)
        raise failures[0]
    return [o.value for o in outcomes]
