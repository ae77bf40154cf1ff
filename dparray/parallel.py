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

Small work does not pay for threads: the chunks fight over the GIL, matrix products are
already spread over the cores by BLAS, and splitting a batch multiplies the per-op Python
overhead. Threads pay through the elementwise work the chunks do at the same time -- on these
machines, from about 2**18 elements per op on (``bench/calibrate_inline.py``). With
``execution="auto"`` (the default) the first call for each input signature (shape, dtype,
backend, modes) is a probe, run inline, that measures the mean output size of its ops from the
graph it builds; chunks whose ops average at least ``ELEMENTS_PER_OP`` elements run on threads
from then on. Smaller work runs inline: as one call on the whole batch -- exactly the unwrapped
module -- unless a layer couples the rows (batch statistics, dropout masks), in which case the
chunks run one after another in the caller's thread. The rule depends on shapes only, so a
program decides the same way every run. Nested DataParallel runs inline: the outer one already
uses the workers.
"""

from __future__ import annotations

import copy
import functools
import math
import sys
from collections.abc import Callable
from typing import Any

from dparray import _pool
from dparray import random as _random
from dparray._chunk_graph import (
    attach,
    backward_to_boundary,
    boundary_edges,
    mark_boundary,
    mean_output_size,
)
from dparray._rendezvous import Rendezvous
from dparray._system import available_cores
from dparray.autograd import Function, enable_grad, is_grad_enabled
from dparray.backend import parallel_region
from dparray.nn.module import Module
from dparray.nn.sync_batchnorm import SyncBatchNorm, sync_group
from dparray.nn.wrapper import Wrapper
from dparray.tensor import Tensor, from_op

EXECUTIONS = ("auto", "threads", "inline")
ELEMENTS_PER_OP = 200_000
"""Mean elements per op per chunk from which chunks run on threads (``execution="auto"``).

Calibrated with ``python -m bench.calibrate_inline`` on this 2-core machine class: for stacks of
Linear+Tanh, two threads against one call on the whole batch (BLAS on both cores) lost 1.4x at
65k elements per op, broke even at 131k and won at 262k; two threads running ``tanh`` alone
gained 0.88x at 65k and 1.63x at 262k elements.
"""


class ChunkError(RuntimeError):
    """A chunk of a DataParallel call raised; the original exception is the ``__cause__``."""

    def __init__(self, chunk: int, count: int, error: BaseException) -> None:
        super().__init__(f"DataParallel chunk {chunk} of {count} failed: "
                         f"{type(error).__name__}: {error}")
        self.chunk = chunk


class DataParallel(Wrapper):
    """Run ``module`` on ``num_workers`` chunks of each batch in parallel, forward and backward.

    ``num_workers=None`` means one worker per available core. ``execution`` is ``"auto"``
    (threads when the chunks' ops are big enough to pay for them, else inline: see the
    module's documentation), ``"threads"``, or ``"inline"`` (the chunks one after another in
    the caller's thread). After each call ``last_execution`` says how it ran: ``"threads"``,
    ``"inline"`` or ``"whole"`` (one call on the whole batch). It is a Module whose
    parameters, state dict and modes are the wrapped module's, under the same names.

    Examples:
        >>> import dparray as dp
        >>> model = dp.DataParallel(dp.nn.Linear(3, 2), num_workers=2)
        >>> x = dp.ones(5, 3)
        >>> y = model(x)              # so little work runs inline, as one call
        >>> grads = y.sum().backward()
        >>> [name for name, _ in model.named_parameters()]
        ['weight', 'bias']
    """

    def __init__(self, module: Module, num_workers: int | None = None, *,
                 execution: str = "auto") -> None:
        super().__init__(module)
        if num_workers is None:
            num_workers = available_cores()
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 1:
            raise ValueError(f"DataParallel: num_workers must be an int >= 1, got {num_workers!r}")
        if execution not in EXECUTIONS:
            raise ValueError(f"DataParallel: execution must be one of {EXECUTIONS}, got "
                             f"{execution!r}")
        self.num_workers = num_workers
        self.execution = execution
        self._decisions: dict[tuple[Any, ...], str] = {}  # auto's choice per input signature
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
    def forward(self, x: Tensor) -> Tensor:
        _check_input(x)
        count = min(self.num_workers, x.shape[0])
        if count <= 1:
            self.last_execution = "whole"
            return self.module(x)
        coupled, synced = _coupling(self.module)
        plan = self._plan(x, count, coupled, synced)
        if plan in ("probe", "inline"):
            self.last_execution = "inline" if coupled else "whole"
            if plan == "probe":
                return self._probe(x, count, coupled)
            if not coupled:
                return self.module(x)  # the whole batch at once: exactly the unwrapped module
        else:
            self.last_execution = plan
        return self._run_chunks(x, count, plan, synced)

    def _plan(self, x: Tensor, count: int, coupled: bool, synced: bool) -> str:
        """``"threads"``, ``"inline"`` or ``"probe"`` (auto's first call for this input)."""
        if _pool.in_chunk():
            if synced:
                raise RuntimeError("SyncBatchNorm cannot run in a nested DataParallel: its "
                                   "chunks run one after another and could never meet")
            return "inline"
        if synced:
            return "threads"
        if self.execution != "auto":
            return self.execution
        return self._decisions.get(self._signature(x, count), "probe")

    def _signature(self, x: Tensor, count: int) -> tuple[Any, ...]:
        return (x.shape, x.dtype.name, x.backend.name, self.is_training(), is_grad_enabled(),
                count)

    def _probe(self, x: Tensor, count: int, coupled: bool) -> Tensor:
        """Run inline, and decide from the graph it builds how to run this input from now on."""
        grad_enabled = is_grad_enabled()
        with enable_grad():  # the graph is what measures the ops
            first = mark_boundary()
            out = self._run_chunks(x, count, "inline", False) if coupled else self.module(x)
        size = mean_output_size(out, first)
        on_whole_batch = not coupled
        if size is None:  # no graph (nothing trainable): judge by the input alone
            size, on_whole_batch = math.prod(x.shape), True
        per_chunk = size / count if on_whole_batch else size
        self._decisions[self._signature(x, count)] = (
            "threads" if per_chunk >= ELEMENTS_PER_OP else "inline")
        return out if grad_enabled else out.detach()

    def _run_chunks(self, x: Tensor, count: int, execution: str, synced: bool) -> Tensor:
        boundary = mark_boundary()
        chunks = scatter(x, count)
        seeds = _random.current_streams().spawn(count)
        group = Rendezvous(count) if synced else None
        run = functools.partial(_run_all, execution, x.backend, count)
        tasks = [functools.partial(_forward_chunk, self.module, x.backend, i, count, chunk,
                                   seeds[i], group) for i, chunk in enumerate(chunks)]
        return gather(_values(run(tasks)), boundary, run, group)


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
    """The chunks' outputs concatenated along axis 0, as one graph node (see ``Gather``)."""
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
        for edge in self.parents or ():
            total = None
            for gradients in reached:  # in chunk order: bitwise repeatable
                g = gradients.get(edge)
                if g is not None:
                    total = g if total is None else total + g
            sums.append(total)
        return tuple(sums)


def _backward_chunk(node: Gather, index: int, piece: Any) -> dict[Any, Any]:
    with node.backend.worker(index, len(node.sizes)), sync_group(node.group, index):
        root = node.roots[index]
        if root is not None:
            return backward_to_boundary(root, piece, node.boundary)
        leaf = node.leaves[index]
        return {} if leaf is None else {leaf: piece}


def _forward_chunk(module: Module, backend: Any, index: int, count: int, chunk: Tensor,
                   seed: int, group: Any) -> Tensor:
    with backend.worker(index, count), _random.fork_rng(seed), sync_group(group, index):
        return module(chunk)


def _run_all(execution: str, backend: Any, count: int, tasks: list[Any]) -> list[Any]:
    with parallel_region(backend, count):
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


def _coupling(module: Module) -> tuple[bool, bool]:
    """Whether any layer couples the rows of a batch, and whether any is a SyncBatchNorm."""
    coupled = synced = False
    for m in module.modules():
        if isinstance(m, SyncBatchNorm):
            synced = True
        if m.couples_rows():
            coupled = True
    return coupled, synced


