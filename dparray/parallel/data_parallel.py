"""DataParallel: split the batch, run the chunks' forward and backward on workers, gather.

Three steps, as in PyTorch, each a method of ``DataParallel`` and a module of this package:
*scatter* the arguments into balanced chunks along axis 0 (``dparray.parallel.scatter``:
slices, so gradients flow back), *parallel_apply* the same module to each chunk on its own
worker, a thread or a CUDA stream on CuPy (``dparray.parallel.parallel_apply``), and *gather*
the outputs -- in the structure the module returns -- with one graph node
(``dparray.parallel.gather``) whose backward runs the chunks' sub-graphs in parallel again.
All chunks share the module's parameter tensors; the gather node sums the gradients that
leave the chunks (parameters, and anything made before the split) in chunk order, so results
repeat bitwise for a given ``num_workers``.

Threads pay only when the chunks' work outweighs the cost of running them side by side (the
GIL, splitting matrix products BLAS would already spread over the cores, the per-op Python
overhead times ``k``). ``execution="auto"`` (the default) measures it: for each new input
signature the first calls try threads and inline, in alternating blocks, and the faster is
kept (``dparray.parallel.auto``). Inline is one call on the whole batch -- exactly the
unwrapped module -- unless a layer couples the rows (batch statistics, dropout masks), in
which case the chunks run one after another in the caller's thread, so inline and threads
give the same results. Nested DataParallel runs inline: the outer one already uses the
workers. A module that synchronises its chunks (SyncBatchNorm in training) runs on threads
always. Layers learn which chunk they run in from ``dparray.nn.chunks``.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Sequence
from typing import Any

from dparray._checks import check_choice, check_int
from dparray._system import available_cores
from dparray.autograd import is_grad_enabled
from dparray.nn.chunks import Rendezvous, in_chunk
from dparray.nn.module import Module
from dparray.nn.wrapper import Wrapper
from dparray.parallel import gather as _gather
from dparray.parallel import parallel_apply as _apply
from dparray.parallel.auto import ExecutionChooser
from dparray.parallel.chunk_graph import mark_boundary
from dparray.parallel.module_state import ModuleState, warn_about
from dparray.parallel.parallel_apply import ChunkArguments, Plan
from dparray.parallel.scatter import Arguments, arguments, signature

EXECUTIONS = ("auto", "threads", "inline")


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

    A call that runs in chunks takes three steps, each a method that a subclass may override
    (calling ``super()`` and keeping its result's form):

    - ``scatter(call, count)``: each of ``count`` chunks' ``(args, kwargs)``, slices of the
      batch, from ``call`` (the ``Arguments`` of this call: what is split, and the batch size);
    - ``parallel_apply(chunks, plan)``: the module's output on each chunk, chunk ``i`` run as
      worker ``i`` (the ``Plan`` says how: threads or inline, on which backend);
    - ``gather(outputs, plan)``: the outputs joined along axis 0 in their common structure,
      by one graph node whose backward runs each chunk's backward on its worker again.

    A call that runs whole (``last_execution == "whole"``) takes none of them: it is exactly
    ``module(*args, **kwargs)``.

    Module state: every chunk runs the same module object, so Python state that ``forward``
    writes to ``self`` (``self.last_hidden = h``, a counter, a cache) is shared by the chunks
    of a call -- a chunk may read another chunk's value, and afterwards it holds whichever
    chunk wrote last. A call that runs in chunks warns (``ChunkStateWarning``) when it finds
    such an attribute assigned. Return the value from ``forward`` instead (outputs are
    gathered in their structure), or keep it in a local variable.

    Examples:
        >>> import dparray as dp
        >>> model = dp.DataParallel(dp.nn.Linear(3, 2), num_workers=2, execution="threads")
        >>> y = model(dp.ones(5, 3))
        >>> model.last_execution, y.shape
        ('threads', (5, 2))
        >>> grads = y.sum().backward()
        >>> [name for name, _ in model.named_parameters()]
        ['weight', 'bias']

        A step overridden, here to see the chunks' sizes:

        >>> class Sizes(dp.DataParallel):
        ...     def scatter(self, call, count):
        ...         chunks = super().scatter(call, count)
        ...         self.sizes = [args[0].shape[0] for args, _ in chunks]
        ...         return chunks
        >>> model = Sizes(dp.nn.Linear(3, 2), num_workers=2, execution="threads")
        >>> model(dp.ones(5, 3)).shape, model.sizes
        ((5, 2), [3, 2])
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
        modules = list(self.module.modules())
        plan = self._plan(call, modules)
        if plan is None:
            self.last_execution = "whole"
            return self.module(*args, **kwargs)  # exactly the unwrapped module
        self.last_execution = plan.execution
        chunks = self.scatter(call, plan.count)
        if len(chunks) != plan.count:
            raise ValueError(f"{type(self).__name__}.scatter returned {len(chunks)} chunks for "
                             f"a call planned in {plan.count}")
        before = ModuleState.taken(modules)
        outputs = self.parallel_apply(chunks, plan)
        changed = before.changed_by_chunks()
        if changed:  # the model's own call (Module.__call__, then this) is 2 frames up
            warn_about(changed, plan.count, stacklevel=3)
        return self.gather(outputs, plan)

    def scatter(self, call: Arguments, count: int) -> list[ChunkArguments]:
        """Step 1: the arguments of each of ``count`` balanced chunks (sizes differ by at most
        one): slices of every tensor that is split, so gradients flow back to it, and every
        other argument whole."""
        return call.chunks(count)

    def parallel_apply(self, chunks: Sequence[ChunkArguments], plan: Plan) -> list[Any]:
        """Step 2: the module's output on each chunk, in chunk order, chunk ``i`` run as
        worker ``i`` as ``plan`` says (a failing chunk raises ``ChunkError``)."""
        return _apply.parallel_apply(self.module, chunks, plan)

    def gather(self, outputs: list[Any], plan: Plan) -> Any:
        """Step 3: the chunks' outputs joined along axis 0, in the structure they share, by
        one graph node whose backward runs each chunk's sub-graph backward as ``plan`` says."""
        return _gather.gather(outputs, plan.boundary, plan.run, plan.group)

    def _plan(self, call: Arguments, modules: list[Module]) -> Plan | None:
        """How this call runs its chunks (``modules``: the module and those inside it), or
        None to run it whole."""
        count = min(self.num_workers, call.batch)
        if count <= 1:
            return None
        coupled, synced = _coupling(modules)
        execution = self._execution(call, count, coupled, synced)
        if execution == "inline" and not coupled:
            return None
        group = Rendezvous(count) if synced else None
        return Plan(execution, count, call.first.backend, mark_boundary(), group)

    def _execution(self, call: Arguments, count: int, coupled: bool, synced: bool) -> str:
        """``"threads"`` or ``"inline"`` for this call."""
        if in_chunk():
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

    def __deepcopy__(self, memo: dict[int, Any]) -> DataParallel:
        copied = DataParallel(copy.deepcopy(self.module, memo), self.num_workers,
                              execution=self.execution, replicate=self.replicate)
        memo[id(self)] = copied
        return copied


def _coupling(modules: list[Module]) -> tuple[bool, bool]:
    """Whether any layer couples the rows of a batch, and whether any synchronises the chunks
    (whose chunks must then run at the same time)."""
    coupled = synced = False
    for m in modules:
        synced = synced or m.synchronizes_chunks()
        coupled = coupled or m.couples_rows()
    return coupled, synced
