"""DataParallel: split the batch, run the chunks' forward and backward on workers, gather.

Four steps, as in PyTorch: *scatter* the input into balanced chunks along axis 0 (slices, so
the input's gradient flows back), *run* the same module on each chunk on its own worker (a
thread, or a CUDA stream on CuPy), *gather* the outputs with one concatenating graph node, and
in backward run the chunks' sub-graphs in parallel again. All chunks share the module's
parameter tensors; the gather node sums the gradients that leave the chunks (parameters, and
anything made before the split) in chunk order, so results repeat bitwise for a given
``num_workers``.

Each chunk runs in a copy of the caller's context (grad mode, backend choice, random stream),
inside ``backend.worker(i, k)``, with random streams of its own seeded from the caller's (so
dropout masks differ per chunk and repeat under a seed); the whole region runs inside
``backend.parallel_region(k)``, which on NumPy splits the cores among the workers for BLAS.

Small work does not pay for threads (the chunks fight over the GIL). With ``execution="auto"``
each input signature (shape, dtype, backend, mode) is timed a few calls each way, inline and on
threads, and then keeps the faster; inline chunks run in order in the caller's thread, with
the same BLAS budget, so both ways give identical results. Nested DataParallel runs inline:
the outer one already uses the workers.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import os
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

from dparray import _pool
from dparray import random as _random
from dparray.autograd import (
    Function,
    attach,
    backward_to_boundary,
    boundary_edges,
    is_grad_enabled,
    reserve_number,
)
from dparray.nn.module import IncompatibleKeys, Module
from dparray.tensor import Tensor, from_op

EXECUTIONS = ("auto", "threads", "inline")
TRIALS = 3  # calls timed each way per input signature before "auto" settles


class ChunkError(RuntimeError):
    """A chunk of a DataParallel call raised; the original exception is the ``__cause__``."""

    def __init__(self, chunk: int, count: int, error: BaseException) -> None:
        super().__init__(f"DataParallel chunk {chunk} of {count} failed: "
                         f"{type(error).__name__}: {error}")
        self.chunk = chunk


class DataParallel(Module):
    """Run ``module`` on ``num_workers`` chunks of each batch in parallel, forward and backward.

    ``num_workers=None`` means one worker per available core. ``execution`` is ``"auto"``
    (time both ways, keep the faster), ``"threads"`` or ``"inline"``. It is a Module whose
    parameters, state dict and modes are the wrapped module's, under the same names.

    Example:
        >>> import dparray as dp
        >>> model = dp.DataParallel(dp.nn.Linear(3, 2), num_workers=2)
        >>> x = dp.ones(5, 3)
        >>> y = model(x)              # chunks of 3 and 2 rows, run on two workers
        >>> grads = y.sum().backward()
        >>> [name for name, _ in model.named_parameters()]
        ['weight', 'bias']
    """

    def __init__(self, module: Module, num_workers: int | None = None, *,
                 execution: str = "auto") -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel wraps a Module, got {type(module).__name__}")
        if num_workers is None:
            num_workers = _cores()
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 1:
            raise ValueError(f"DataParallel: num_workers must be an int >= 1, got {num_workers!r}")
        if execution not in EXECUTIONS:
            raise ValueError(f"DataParallel: execution must be one of {EXECUTIONS}, got "
                             f"{execution!r}")
        object.__setattr__(self, "module", module)  # not a child: the names stay the module's
        self.num_workers = num_workers
        self.execution = execution
        self._timings: dict[Any, dict[str, list[float]]] = {}

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

    def is_training(self) -> bool:
        return self.module.is_training()

    def named_children(self) -> Any:
        return self.module.named_children()

    def _names_owner(self) -> Module:
        return self.module._names_owner()

    def load_state_dict(self, state_dict: Mapping[str, Any],
                        strict: bool = True) -> IncompatibleKeys:
        """The wrapped module's ``load_state_dict``; keys saved from a PyTorch DataParallel
        (prefixed ``module.``) load too."""
        if state_dict and all(key.startswith("module.") for key in state_dict):
            state_dict = {key[len("module."):]: value for key, value in state_dict.items()}
        return self.module.load_state_dict(state_dict, strict)

    def __getattr__(self, name: str) -> Any:
        module = self.__dict__.get("module")
        if module is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(module, name)

    def __repr__(self) -> str:
        inner = repr(self.module).replace("\n", "\n  ")
        return (f"DataParallel(num_workers={self.num_workers}, execution={self.execution!r},\n"
                f"  (module): {inner}\n)")

    # ------------------------------------------------------------------ running
    def forward(self, x: Tensor) -> Tensor:
        _check_input(x)
        count = min(self.num_workers, x.shape[0])
        if count <= 1:
            return self.module(x)
        execution, signature = self._execution(x, count)
        boundary = reserve_number()
        chunks = scatter(x, count)
        seeds = _random.current_streams().spawn(count)
        group = _sync_group(self.module, count, execution)
        run = functools.partial(_run_all, execution, x.backend, count)
        tasks = [functools.partial(_forward_chunk, self.module, x.backend, i, count, chunk,
                                   seeds[i], group) for i, chunk in enumerate(chunks)]
        start = time.perf_counter()
        outputs = _values(run(tasks))
        if signature is not None:
            self._timings[signature][execution].append(time.perf_counter() - start)
        return gather(outputs, boundary, run, group)

    def _execution(self, x: Tensor, count: int) -> tuple[str, Any]:
        """How to run this call, and the signature to time it under (None: not timed)."""
        if _pool.in_chunk():
            if _has_sync_batch_norm(self.module):
                raise RuntimeError("SyncBatchNorm cannot run in a nested DataParallel: its "
                                   "chunks run one after another and could never meet")
            return "inline", None
        if _has_sync_batch_norm(self.module):
            return "threads", None
        if self.execution != "auto":
            return self.execution, None
        signature = (x.shape, x.dtype.name, x.backend.name, self.is_training(),
                     is_grad_enabled(), count)
        timings = self._timings.setdefault(signature, {"inline": [], "threads": []})
        inline, threads = timings["inline"], timings["threads"]
        if len(inline) >= TRIALS and len(threads) >= TRIALS:
            faster = statistics.median(inline) <= statistics.median(threads)
            return ("inline" if faster else "threads"), None
        return ("inline" if len(inline) <= len(threads) else "threads"), signature


def scatter(x: Tensor, count: int) -> list[Tensor]:
    """``x`` in ``count`` balanced chunks along axis 0 (sizes differ by at most one)."""
    size, extra = divmod(x.shape[0], count)
    chunks, start = [], 0
    for i in range(count):
        stop = start + size + (1 if i < extra else 0)
        chunks.append(x[start:stop])
        start = stop
    return chunks


def gather(outputs: list[Tensor], boundary: int, run: Callable[..., Any],
           group: Any = None) -> Tensor:
    """The chunks' outputs concatenated along axis 0, as one graph node (see :class:`Gather`)."""
    first = outputs[0]
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            raise TypeError(f"DataParallel: the module returned {type(out).__name__} for chunk "
                            f"{i}; it must return a Tensor")
        if out.ndim == 0:
            raise ValueError(
                "DataParallel: the module returned a 0-d tensor for each chunk (a loss?), which "
                "cannot be concatenated along the batch axis; compute the loss outside "
                "DataParallel"
            )
        if out.shape[1:] != first.shape[1:] or out.backend is not first.backend:
            raise ValueError(f"DataParallel: chunk outputs differ: {first.shape} on "
                             f"{first.backend.name!r} and {out.shape} on {out.backend.name!r}")
    backend = first.backend
    data = backend.xp.concat([out.data for out in outputs], axis=0)
    roots = [out._node for out in outputs]
    if not is_grad_enabled() or all(r is None and not o.is_variable
                                    for r, o in zip(roots, outputs, strict=True)):
        return from_op(data, backend, None)
    node = Gather(outputs, boundary, run, group)
    parents, metas = boundary_edges([r for r in roots if r is not None], boundary)
    for out in outputs:
        if out._node is None and out.is_variable and out not in parents:
            parents.append(out)
            metas.append((out.data.shape, out.data.dtype))
    return from_op(data, backend, attach(node, backend, parents, metas))


class Gather(Function):
    """The concatenated outputs of DataParallel's chunks. Its edges are what the chunks'
    sub-graphs reach (parameters, older nodes); its backward runs each chunk's sub-graph
    backward on that chunk's worker and sums what leaves the chunks in chunk order."""

    def __init__(self, outputs: list[Tensor], boundary: int, run: Callable[..., Any],
                 group: Any) -> None:
        self.roots = [out._node for out in outputs]
        self.leaves = [None if out._node is not None or not out.is_variable else out
                       for out in outputs]
        self.sizes = [out.shape[0] for out in outputs]
        self.boundary, self.run, self.group = boundary, run, group

    def backward(self, grad: Any) -> tuple[Any, ...]:
        tasks, start = [], 0
        for i, size in enumerate(self.sizes):
            piece = grad[start:start + size, ...]
            start += size
            tasks.append(functools.partial(_backward_chunk, self, i, piece))
        reached = _values(self.run(tasks))
        sums = []
        for edge in self.parents:
            total = None
            for gradients in reached:  # in chunk order: bitwise repeatable
                g = gradients.get(edge)
                if g is not None:
                    total = g if total is None else total + g
            sums.append(total)
        return tuple(sums)


def _backward_chunk(node: Gather, index: int, piece: Any) -> dict[Any, Any]:
    from dparray.nn.sync_batchnorm import sync_group

    with node.backend.worker(index, len(node.sizes)), sync_group(node.group, index):
        if node.roots[index] is not None:
            return backward_to_boundary(node.roots[index], piece, node.boundary)
        leaf = node.leaves[index]
        return {} if leaf is None else {leaf: piece}


def _forward_chunk(module: Module, backend: Any, index: int, count: int, chunk: Tensor,
                   seed: int, group: Any) -> Tensor:
    from dparray.nn.sync_batchnorm import sync_group

    with backend.worker(index, count), _random.fork_rng(seed), sync_group(group, index):
        return module(chunk)


def _run_all(execution: str, backend: Any, count: int, tasks: list[Any]) -> list[Any]:
    region = getattr(backend, "parallel_region", None)
    with region(count) if region is not None else contextlib.nullcontext():
        if execution == "threads":
            return _pool.pool(count).run(tasks)
        return _pool.run_inline(tasks)


def _values(outcomes: list[_pool.Outcome]) -> list[Any]:
    """The tasks' values, or every failure raised in the caller, naming its chunk (chunks that
    only stopped because another one failed are left out when there is such another)."""
    from dparray._rendezvous import RendezvousAborted

    failed = [(i, o.error) for i, o in enumerate(outcomes) if o.error is not None]
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


def _check_input(x: Any) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"DataParallel takes a Tensor batch, got {type(x).__name__}")
    if x.ndim == 0:
        raise ValueError("DataParallel needs a batch axis (axis 0), got a 0-d tensor")
    if x.shape[0] == 0:
        raise ValueError(f"DataParallel got an empty batch (shape {x.shape})")


def _has_sync_batch_norm(module: Module) -> bool:
    from dparray.nn.sync_batchnorm import SyncBatchNorm

    return any(isinstance(m, SyncBatchNorm) for m in module.modules())


def _sync_group(module: Module, count: int, execution: str) -> Any:
    if execution != "threads" or not _has_sync_batch_norm(module):
        return None
    from dparray._rendezvous import Rendezvous

    return Rendezvous(count)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1

