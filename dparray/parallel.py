"""DataParallel: split the batch, run the chunks' forward and backward on workers, gather.

Four steps, as in PyTorch: *scatter* the arguments into balanced chunks along axis 0
(``dparray._scatter``: slices, so gradients flow back), *run* the same module on each chunk on
its own worker (a thread, or a CUDA stream on CuPy), *gather* the outputs -- in the structure
the module returns -- with one graph node (``dparray._gather``), and in backward run the
chunks' sub-graphs in parallel again. All chunks share the module's parameter tensors; the
gather node sums the gradients that leave the chunks (parameters, and anything made before the
split) in chunk order, so results repeat bitwise for a given ``num_workers``.

Each chunk runs in a copy of the caller's context (grad mode, backend choice, random stream),
inside ``backend.worker(i, k)``, with random streams of its own seeded from the caller's (so
dropout masks differ per chunk and repeat under a seed); the whole region runs inside the
backend's ``parallel_region(k)``, which on NumPy splits the cores among the workers for BLAS.

Threads pay only when the chunks' work outweighs the cost of running them side by side (the
GIL, splitting matrix products BLAS would already spread over the cores, the per-op Python
overhead times ``k``). ``execution="auto"`` (the default) measures it: for each new input
signature the first calls try threads and inline, in alternating blocks, and the faster is
kept (``dparray._auto``). Inline is one call on the whole batch -- exactly the unwrapped module --
unless a layer couples the rows (batch statistics, dropout masks), in which case the chunks run
one after another in the caller's thread, so inline and threads give the same results. Nested
DataParallel runs inline: the outer one already uses the workers. A module that synchronises
its chunks (SyncBatchNorm in training) runs on threads always.
"""

from __future__ import annotations

import copy
import functools
import sys
from collections.abc import Callable, Collection, Sequence
from typing import Any

from dparray import _pool
from dparray import random as _random
from dparray._auto import ExecutionChooser
from dparray._checks import check_choice, check_int
from dparray._chunk_graph import mark_boundary
from dparray._gather import gather
from dparray._rendezvous import Rendezvous, RendezvousAborted
from dparray._scatter import Arguments, arguments, signature
from dparray._system import available_cores
from dparray.autograd import is_grad_enabled
from dparray.backend import Backend, parallel_region
from dparray.nn.module import Module
from dparray.nn.sync_batchnorm import sync_group
from dparray.nn.wrapper import Wrapper

EXECUTIONS = ("auto", "threads", "inline")


class ChunkError(RuntimeError):
    """A chunk of a DataParallel call raised an exception; it is the ``__cause__``.

    Only ``Exception`` subclasses are wrapped: ``KeyboardInterrupt``, ``SystemExit`` and other
    ``BaseException``s raised in a chunk reach the caller as themselves.
    """

    def __init__(self, chunk: int, count: int, error: BaseException) -> None:
        super().__init__(f"DataParallel chunk {chunk} of {count} failed: "
                         f"{type(error).__name__}: {error}")
        self.chunk = chunk


class DataParallel(Wrapper):
    """Run ``module`` on ``num_workers`` chunks of each batch in parallel, forward and backward.

    ``num_workers=None`` means one worker per available core. ``execution`` is ``"auto"``
    (threads or inline, whichever measures faster for each input signature: see the module's
    documentation), ``"threads"``, or ``"inline"``. Every tensor argument whose axis 0 is the
    batch (that of the first tensor argument) is split; other arguments, and keyword arguments
    named in ``replicate``, go whole to every chunk. The module may return a tensor or tuples,
    lists and dicts of tensors; they are joined in the same structure.

    After each call ``last_execution`` says how it ran: ``"threads"``, ``"inline"`` (the
    chunks one after another) or ``"whole"`` (one call on the whole batch). It is a Module
    whose parameters, state dict and modes are the wrapped module's, under the same names.

    Examples:
        >>> import dparray as dp
        >>> model = dp.DataParallel(dp.nn.Linear(3, 2), num_workers=2, execution="threads")
        >>> y = model(dp.ones(5, 3))
        >>> model.last_execution, y.shape
        ('threads', (5, 2))
        >>> grads = y.sum().backward()
        >>> [name for name, _ in model.named_parameters()]
        ['weight', 'bias']
    """

    def __init__(self, module: Module, num_workers: int | None = None, *,
                 execution: str = "auto", replicate: Collection[str] = ()) -> None:
        super().__init__(module)
        where = "DataParallel"
        if num_workers is None:
            num_workers = available_cores()
        self.num_workers = check_int(num_workers, "num_workers", where, minimum=1)
        self.execution = check_choice(execution, "execution", where, EXECUTIONS)
        if isinstance(replicate, str) or not all(isinstance(n, str) for n in replicate):
            raise TypeError(f"{where}: replicate must be a collection of keyword names, got "
                            f"{replicate!r}")
        self.replicate = frozenset(replicate)
        self._chooser = ExecutionChooser()
        self.last_execution = "none"

    # ------------------------------------------------------------------ the specification
    def inner(self) -> Module:
        """The wrapped module."""
        return self.module

    def inner_mut(self) -> Module:
        """The wrapped module, to change (Python has one kind of reference: same as inner)."""
        return self.module

    def into_inner(self) -> Module:
        """The wrapped module, for use without DataParallel."""
        return self.module

    def clone(self) -> DataParallel:
        """An independent copy: same settings, its own copy of the module's parameters."""
        return copy.deepcopy(self)

    def extra_repr(self) -> str:
        return f"num_workers={self.num_workers}, execution={self.execution!r}"

    # ------------------------------------------------------------------ running
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        call = arguments(args, kwargs, self.replicate)
        count = min(self.num_workers, call.batch)
        if count <= 1:
            self.last_execution = "whole"
            return self.module(*args, **kwargs)
        coupled, synced = _coupling(self.module)
        execution = self._plan(call, count, coupled, synced)
        if execution == "inline" and not coupled:
            self.last_execution = "whole"
            return self.module(*args, **kwargs)  # exactly the unwrapped module
        self.last_execution = execution
        return self._run_chunks(call, count, execution, synced)

    def _plan(self, call: Arguments, count: int, coupled: bool, synced: bool) -> str:
        """``"threads"`` or ``"inline"`` for this call."""
        if _pool.in_chunk():
            if synced:
                raise RuntimeError("SyncBatchNorm cannot run in a nested DataParallel: its "
                                   "chunks run one after another and could never meet")
            return "inline"
        if synced:
            return "threads"
        if self.execution != "auto":
            return self.execution
        backend = call.first.backend
        key = (signature(call), backend.name, self.is_training(), is_grad_enabled(), count)
        return self._chooser.choose(key, backend.synchronize)

    def _run_chunks(self, call: Arguments, count: int, execution: str, synced: bool) -> Any:
        backend = call.first.backend
        boundary = mark_boundary()
        chunks = call.chunks(count)
        seeds = _random.current_streams().spawn(count)
        group = Rendezvous(count) if synced else None
        run = functools.partial(_run_all, execution, backend, count)
        tasks = [functools.partial(_forward_chunk, self.module, backend, i, count, args, kwargs,
                                   seeds[i], group)
                 for i, (args, kwargs) in enumerate(chunks)]
        return gather(run(tasks), boundary, run, group)

    def __deepcopy__(self, memo: dict[int, Any]) -> DataParallel:
        copied = DataParallel(copy.deepcopy(self.module, memo), self.num_workers,
                              execution=self.execution, replicate=self.replicate)
        memo[id(self)] = copied
        return copied


def _forward_chunk(module: Module, backend: Backend, index: int, count: int,
                   args: tuple[Any, ...], kwargs: dict[str, Any], seed: int,
                   group: Rendezvous | None) -> Any:
    with backend.worker(index, count), _random.fork_rng(seed), sync_group(group, index):
        return module(*args, **kwargs)


def _run_all(execution: str, backend: Backend, count: int,
             tasks: Sequence[Callable[[], Any]]) -> list[Any]:
    with parallel_region(backend, count):
        if execution == "threads":
            return _values(_pool.workers.run(tasks))
        return _values(_pool.run_inline(tasks))


def _values(outcomes: list[_pool.Outcome]) -> list[Any]:
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


def _coupling(module: Module) -> tuple[bool, bool]:
    """Whether any layer couples the rows of a batch, and whether any synchronises the chunks
    (whose chunks must then run at the same time)."""
    coupled = synced = False
    for m in module.modules():
        synced = synced or m.synchronizes_chunks()
        coupled = coupled or m.couples_rows()
    return coupled, synced
