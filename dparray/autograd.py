"""Reverse-mode autograd: the ``Function`` node, grad mode, and the backward pass.

The graph is made of ``Function`` instances. Each op call makes one: it runs ``forward`` on the
input arrays and, when any input is tracked and grad mode is on, keeps edges to the inputs'
producers (or to the variable leaves themselves) plus what ``backward`` will need. Tensors keep
only their producer, so activations nobody saved are freed as soon as they go out of scope.

``backward`` walks the graph once, iteratively, in reverse topological order, hands each node
the gradient of its output, undoes broadcasting (summing) and dtype promotion (casting) for every
input in one place, and frees each node's saved arrays and edges as soon as it has run.

A backward may return a ``SliceGradient`` -- zero outside one basic index, as ``x[key]``'s is --
instead of an array. The engine adds the slices that reach one input into a single buffer of
its own, in place, and hands the node an ordinary array: reading ``L`` slices of a tensor (an
RNN's time steps, one projection split into query, key and value) then costs one tensor-sized
array in backward, not ``L`` of them added one by one. A backend's kernel may likewise return
a ``PickGradient`` -- one value per row, as a loss that picks one score per row (NLL) has --
which reaches as it is the nodes whose class sets ``takes_pick_gradients`` (log-softmax's
kernel, reshapes that keep the last axis), and every other node as an array.

``backward(create_graph=True)`` and ``grad(..., create_graph=True)`` run every node's backward
again as a graph of dparray ops, so the gradients are differentiable in turn: the walk itself
is ``dparray.ops.graph_backward`` (it needs the ops, a layer above this one), bound here by
``bind_graph_engine`` when the ops load. A node that saved arrays keeps its input arrays too
(``saved_inputs``) unless its class declares that its saved arrays are constants or its own
output (``Function.saved_values``), so that walk can rebuild what it saved as tensors; the
first-order walk below never looks at them.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
from collections.abc import Callable, Iterator, Sequence
from operator import attrgetter
from typing import Any, TypeAlias

from dparray.backend import quiet_math
from dparray.dtypes import low_precision_natives
from dparray.gradients import Gradients
from dparray.tensor import Tensor, from_op

Edge: TypeAlias = "Function | Tensor | None"
"""Where an input's gradient goes: the node that made it, the variable itself, or nowhere."""
InputMeta: TypeAlias = "tuple[tuple[int, ...], Any] | None"
"""The shape and native dtype an input's gradient is summed and cast back to (None: untracked)."""

_creation_order = itertools.count()  # a node is always numbered after its inputs' producers
_by_creation = attrgetter("sequence")
_grad_enabled: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "dparray_grad_enabled", default=True
)
_retaining: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "dparray_retain_graph", default=False
)
_creating: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "dparray_create_graph", default=False
)

GraphEngine: TypeAlias = (
    "Callable[[list[Function], dict[Any, Any], bool, int, Any], dict[Any, Any]]"
)
"""The create_graph walk: ``(order, pending, retain_graph, stop_below, wanted)`` -> reached."""
_graph_engine: GraphEngine | None = None

SAVED_VALUES = ("inputs", "constants", "output")
"""What a Function's saved arrays can be (``Function.saved_values``)."""


def is_grad_enabled() -> bool:
    """Whether ops record a graph in the current context."""
    return _grad_enabled.get()


@contextlib.contextmanager
def set_grad_enabled(mode: bool) -> Iterator[None]:
    """Within the block, ops record a graph if and only if ``mode``."""
    token = _grad_enabled.set(bool(mode))
    try:
        yield
    finally:
        _grad_enabled.reset(token)


def no_grad() -> contextlib.AbstractContextManager[None]:
    """Within the block, ops record no graph (inference, optimizer updates).

    Examples:
        >>> import dparray
        >>> w = dparray.ones(2, requires_grad=True)
        >>> with dparray.no_grad():
        ...     y = w * 2
        >>> y.requires_grad
        False
    """
    return set_grad_enabled(False)


def enable_grad() -> contextlib.AbstractContextManager[None]:
    """Within the block, ops record a graph again (inside a ``no_grad`` block)."""
    return set_grad_enabled(True)


class Function:
    """One differentiable op: ``forward`` and ``backward`` side by side.

    Contract for subclasses:
        * ``__init__`` takes the op's non-tensor parameters (axis, shape, ...), if any.
        * ``forward(*arrays)`` receives backend arrays in place of tensors (Python scalars stay
          as they are), validates them before computing anything, computes with ``self.xp``
          only and returns one array. It keeps what backward needs with ``self.save(...)`` and
          small values (shapes, axes) as attributes.
        * ``backward(grad)`` receives the gradient of the output (an array of its shape) and
          returns one gradient per input -- a tuple, or a bare array for one input -- or
          ``None`` where an input needs none (``self.needs_grad(i)`` says which do). A
          gradient may have the broadcast shape or promoted dtype of the output: the engine
          sums and casts it back to the input's shape and dtype.
        * Call the op as ``MyOp(params)(*inputs)``; it returns a ``Tensor``.

    Derivatives of derivatives (``create_graph=True``) need nothing more: the engine runs
    ``forward`` again on the node's inputs as tensors and ``backward`` on the gradient as a
    tensor, both with ``self.xp`` set to dparray's own namespace (``dparray.ops.graph_arrays``),
    so what backward computes is a graph of dparray ops. ``saved_values`` says what the saved
    arrays are, so that the node keeps no more than that needs: ``"inputs"`` (the default)
    when they are functions of the inputs, which the node then keeps; ``"constants"`` when
    backward only reads them as constants -- positions, masks, a drawn dropout mask, nothing it
    differentiates through -- and ``"output"`` when the one saved array is the op's output
    (``tanh``, ``softmax``), which create_graph reaches through the node itself. Neither of the
    last two keeps input arrays or runs forward again.

    Examples:
        >>> import dparray
        >>> from dparray.autograd import Function
        >>> class Cube(Function):
        ...     def forward(self, x):
        ...         self.save(x)
        ...         return x * x * x
        ...     def backward(self, grad):
        ...         (x,) = self.saved
        ...         return grad * 3.0 * x * x
        >>> x = dparray.tensor([2.0], requires_grad=True)
        >>> Cube()(x).sum().backward()[x].tolist()
        [12.0]
    """

    __slots__ = ("__dict__", "backend", "inputs_meta", "parents", "saved", "saved_inputs",
                 "sequence", "xp")

    backend: Any
    xp: Any
    saved: tuple[Any, ...]
    saved_inputs: Sequence[Any]  # the input arrays, kept beside saved arrays for create_graph
    parents: list[Edge] | None  # None once released: the node can no longer run backward
    inputs_meta: list[InputMeta] | None
    sequence: int
    saved_values = "inputs"  # or "constants", or "output": see the class documentation
    _keeps_inputs = True  # saved_values == "inputs", decided once per class
    takes_pick_gradients = False  # True: backward may receive a PickGradient (module docs)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.saved_values not in SAVED_VALUES:
            raise ValueError(f"{cls.__name__}.saved_values must be one of "
                             f"{', '.join(map(repr, SAVED_VALUES))}, got {cls.saved_values!r}")
        cls._keeps_inputs = cls.saved_values == "inputs"

    def __call__(self, *inputs: Any) -> Tensor:
        backend = None
        tracked = False
        arrays: list[Any] = []
        parents: list[Edge] = []
        metas: list[InputMeta] = []
        for x in inputs:
            if isinstance(x, Tensor):
                if backend is None:
                    backend = x.backend
                elif x.backend is not backend:
                    raise ValueError(
                        f"{type(self).__name__}: cannot combine tensors of backends "
                        f"{backend.name!r} and {x.backend.name!r}; move one with .to(...)"
                    )
                data = x.data
                arrays.append(data)
                if x._node is not None:
                    parents.append(x._node)
                elif x._is_variable:
                    parents.append(x)
                else:
                    parents.append(None)
                    metas.append(None)
                    continue
                metas.append((data.shape, data.dtype))  # what backward casts gradients back to
                tracked = True
            else:
                arrays.append(x)
                parents.append(None)
                metas.append(None)
        if backend is None:
            raise TypeError(
                f"{type(self).__name__} needs at least one Tensor input, got "
                f"{', '.join(type(x).__name__ for x in inputs) or 'none'}"
            )
        self.backend = backend
        self.xp = backend.xp  # the array-API namespace forward and backward compute with
        self.saved = ()
        recorded = tracked and _grad_enabled.get()
        if recorded:
            self.parents = parents  # set before forward: needs_grad() reads it
        quiet = quiet_math(backend)  # IEEE results without NumPy's warnings, as PyTorch
        if quiet is None:
            out = self.forward(*arrays)
        else:
            token = quiet[0]()
            try:
                out = self.forward(*arrays)
            finally:
                quiet[1](token)
        if recorded:
            self.inputs_meta = metas
            self.sequence = next(_creation_order)
            if self.saved and self._keeps_inputs:  # for create_graph to rebuild them
                self.saved_inputs = arrays
            return from_op(out, backend, self)
        self.saved = ()
        return from_op(out, backend, None)

    def forward(self, *arrays: Any) -> Any:
        raise NotImplementedError

    def backward(self, grad: Any) -> Any:
        raise NotImplementedError

    def save(self, *arrays: Any) -> None:
        """Keep arrays for ``backward`` (read back as ``self.saved``; freed after it runs)."""
        self.saved = arrays

    def recording(self) -> bool:
        """Whether this call is recorded for a backward pass, so ``forward`` must save what
        backward needs (False under ``no_grad`` or without tracked inputs)."""
        try:
            return self.parents is not None
        except AttributeError:  # never set: the call is not recorded
            return False

    def needs_grad(self, index: int) -> bool:
        """Whether input ``index`` is tracked, so ``backward`` must return its gradient."""
        return self.parents is not None and self.parents[index] is not None

    def prepare_replay(self, original: Function) -> None:
        """Called on a copy of ``original`` before its ``forward`` runs again under
        ``create_graph``; an op that draws random numbers in ``forward`` takes the draws of
        ``original`` from its saved arrays here, so the replay sees the same ones."""

    def release(self) -> None:
        """Drop saved arrays and edges; the node can no longer run backward."""
        self.saved = ()
        self.saved_inputs = ()
        self.parents = None
        self.inputs_meta = None


def next_sequence_number() -> int:
    """A creation number: every node made afterwards is numbered higher. The engine orders the
    graph by these numbers; a caller may mark the start of a sub-graph with one."""
    return next(_creation_order)


def retaining_graph() -> bool:
    """Whether the backward pass in progress keeps the graph (``retain_graph=True``): for
    nodes whose own backward runs the backward of a sub-graph, so they keep or free it alike."""
    return _retaining.get()


def creating_graph() -> bool:
    """Whether the backward pass in progress builds a graph of its own (``create_graph=True``):
    for nodes whose own backward runs the backward of a sub-graph (DataParallel's gather)."""
    return _creating.get()


def bind_graph_engine(engine: GraphEngine) -> None:
    """Install the create_graph walk (``dparray.ops.graph_backward`` calls it once loaded)."""
    global _graph_engine
    _graph_engine = engine


def graph_engine() -> GraphEngine:
    """The create_graph walk, with the signature of ``propagate`` plus ``wanted`` (the edges
    whose gradients are needed, or None for all); its gradients are Tensors."""
    if _graph_engine is None:
        raise RuntimeError("create_graph needs dparray.ops loaded: import dparray")
    return _graph_engine


def backward(root: Tensor, grad: Tensor | None = None, *, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Tensor | Sequence[Tensor] | None = None
             ) -> Gradients:
    """Gradients of ``root`` with respect to every variable it depends on, or with
    ``inputs`` (PyTorch's argument) only to those tensors: variables or tensors computed from
    them, each one ``root`` depends on getting its gradient (one it does not is left out, as
    PyTorch leaves its ``.grad`` alone), and only the part of the graph leading to them run.

    With ``create_graph=True`` the gradients are tensors in a graph of their own, which
    ``backward`` differentiates again (the graph is then kept unless ``retain_graph=False``).
    Everything is checked before any gradient is computed: a bad ``grad`` or a graph that an
    earlier ``backward`` freed raise without touching the graph.
    """
    if inputs is not None:
        targets = _tensor_list(inputs, "inputs", "backward")
        found = _gradients_of([root], targets, grad, retain_graph, create_graph, True,
                              "backward")
        return Gradients({t: g for t, g in zip(targets, found, strict=True) if g is not None})
    seed = _seed_gradient(root, grad)
    retain = create_graph if retain_graph is None else bool(retain_graph)
    if root._node is None:
        if root._is_variable:
            return Gradients({root: seed})
        raise RuntimeError(
            "backward() on a tensor that depends on no variable: nothing to differentiate "
            "(make the inputs you train variables with requires_grad=True)"
        )
    order = reverse_topological_order(root._node)
    if create_graph:
        leaves = _run_graph_engine(order, {root._node: seed}, retain, -1, None)
        variables = sorted((t for t in leaves if isinstance(t, Tensor) and t._is_variable),
                           key=_by_order)
        return Gradients({t: leaves[t] for t in variables})
    token = _retaining.set(retain)
    try:
        leaves = propagate(order, {root._node: seed.data}, retain)
    finally:
        _retaining.reset(token)
    # a whole graph ends in variables (or in tensors that were: a dparray.func argument)
    variables = [t for t in leaves if isinstance(t, Tensor) and t._is_variable]
    variables.sort(key=lambda t: t._order)
    return Gradients({t: Tensor(leaves[t], t.backend) for t in variables})


def _by_order(t: Tensor) -> int:
    return t._order


def _run_graph_engine(order: list[Function], pending: dict[Any, Any], retain: bool,
                      stop_below: int, wanted: Any) -> dict[Any, Any]:
    """The create_graph walk, in grad mode, marked for nodes that ask ``creating_graph()``."""
    engine = graph_engine()
    tokens = (_retaining.set(retain), _creating.set(True), _grad_enabled.set(True))
    try:
        return engine(order, pending, retain, stop_below, wanted)
    finally:
        _grad_enabled.reset(tokens[2])
        _creating.reset(tokens[1])
        _retaining.reset(tokens[0])


def grad(outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor],
         grad_outputs: Tensor | Sequence[Tensor | None] | None = None, *,
         retain_graph: bool | None = None, create_graph: bool = False,
         allow_unused: bool = False) -> tuple[Tensor | None, ...]:
    """The gradients of ``outputs`` with respect to ``inputs``, as PyTorch's
    ``torch.autograd.grad``: a tuple with one tensor per input (or None for an input the
    outputs do not depend on, with ``allow_unused=True``).

    ``inputs`` may be variables or any tensors computed from them (an activation, the input of
    a physics-informed network). ``grad_outputs`` holds one gradient per output (None for a
    single-element output: ones). With ``create_graph=True`` the gradients are in a graph of
    their own, so they can be differentiated again; the graph is kept unless
    ``retain_graph=False``. Only the part of the graph that leads to ``inputs`` is run.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([1.0, 2.0], requires_grad=True)
        >>> (dx,) = dparray.autograd.grad((x ** 3).sum(), x, create_graph=True)
        >>> dx.tolist()
        [3.0, 12.0]
        >>> dparray.autograd.grad(dx.sum(), x)[0].tolist()
        [6.0, 12.0]
    """
    return _gradients_of(_tensor_list(outputs, "outputs", "grad"),
                         _tensor_list(inputs, "inputs", "grad"), grad_outputs, retain_graph,
                         create_graph, allow_unused, "grad")


def _gradients_of(output_list: list[Tensor], input_list: list[Tensor], grad_outputs: Any,
                  retain_graph: bool | None, create_graph: bool, allow_unused: bool,
                  where: str) -> tuple[Tensor | None, ...]:
    """``grad``'s work, for ``grad`` and ``backward(inputs=...)`` (``where`` names it)."""
    seeds = _grad_outputs(output_list, grad_outputs, where)
    for i, t in enumerate(input_list):
        if t._node is None and not t._is_variable:
            raise RuntimeError(
                f"{where}: input {i} (shape {t.shape}) is a constant, not a variable or a "
                "tensor computed from one: nothing flows to it (make it with requires_grad=True)"
            )
    retain = create_graph if retain_graph is None else bool(retain_graph)
    pending: dict[Any, Any] = {}
    for out, seed in zip(output_list, seeds, strict=True):
        key = out._node if out._node is not None else out
        value = seed if create_graph else seed.data
        pending[key] = value if key not in pending else pending[key] + value
    found = _staged(pending, input_list, retain, create_graph)
    results: list[Tensor | None] = []
    for i, t in enumerate(input_list):
        value = found.get(t if t._node is None else t._node)
        if value is None:
            if not allow_unused:
                raise RuntimeError(
                    f"{where}: input {i} (shape {t.shape}) is not used by the outputs; pass "
                    "allow_unused=True to get None for it"
                )
            results.append(None)
        elif create_graph:
            results.append(value)
        else:
            results.append(Tensor(_dense(value), t.backend))
    return tuple(results)


def _staged(pending: dict[Any, Any], inputs: list[Tensor], retain: bool,
            create_graph: bool) -> dict[Any, Any]:
    """The gradients reaching each input's key (the variable, or the node that made it).

    The walk runs in stages, one per input made by a node, newest first: a stage runs the
    nodes numbered above that node and stops, so the gradient of the node's output is
    complete when read; the next stage goes on from what reached below."""
    targets = {t._node for t in inputs if t._node is not None}
    variables = {t for t in inputs if t._node is None}
    wanted = _leading_to(pending, targets, variables)
    stops = [node.sequence for node in sorted(targets, key=_by_creation, reverse=True)]
    if variables:
        stops.append(-1)
    found: dict[Any, Any] = {}
    current = pending
    for stop in stops:
        above = {n: g for n, g in current.items()
                 if isinstance(n, Function) and n.sequence > stop}
        below = {n: g for n, g in current.items() if n not in above}
        if above:
            order = reverse_topological_order(list(above), stop_below=stop + 1)
            if create_graph:
                reached = _run_graph_engine(order, above, retain, stop + 1, wanted)
            else:
                token = _retaining.set(retain)
                try:
                    reached = propagate(order, above, retain, stop_below=stop + 1,
                                        wanted=wanted)
                finally:
                    _retaining.reset(token)
            for key, g in reached.items():
                below[key] = g if key not in below else _dense(below[key]) + g
        current = below
        found.update((key, g) for key, g in current.items()
                     if key in targets or key in variables)
    return found


def _leading_to(pending: dict[Any, Any], targets: set[Function],
                variables: set[Tensor]) -> set[Any]:
    """The edges (nodes and variables) from which some target is reached, the targets
    included: the walks compute gradients along these only."""
    roots = [n for n in pending if isinstance(n, Function)]
    nodes = reverse_topological_order(roots) if roots else []
    wanted: set[Any] = set(targets) | set(variables)
    for node in reversed(nodes):  # oldest first: every parent decided before its consumers
        if node in wanted:
            continue
        if any(p is not None and p in wanted for p in node.parents or ()):
            wanted.add(node)
    return wanted


def _tensor_list(value: Any, name: str, where: str) -> list[Tensor]:
    items = [value] if isinstance(value, Tensor) else value
    if not isinstance(items, (list, tuple)) or not items:
        raise TypeError(f"{where}: {name} must be a Tensor or a non-empty sequence of Tensors, "
                        f"got {type(value).__name__}")
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise TypeError(f"{where}: {name}[{i}] must be a Tensor, got {type(t).__name__}")
    return list(items)


def _grad_outputs(outputs: list[Tensor], given: Any, where: str) -> list[Tensor]:
    if given is None:
        given = [None] * len(outputs)
    elif isinstance(given, Tensor):
        given = [given]
    if not isinstance(given, (list, tuple)) or len(given) != len(outputs):
        count = len(given) if isinstance(given, (list, tuple)) else type(given).__name__
        raise ValueError(f"{where}: grad_outputs needs one entry per output ({len(outputs)}), "
                         f"got {count}")
    seeds = []
    for i, (out, g) in enumerate(zip(outputs, given, strict=True)):
        if out._node is None and not out._is_variable:
            raise RuntimeError(
                f"{where}: output {i} (shape {out.shape}) depends on no variable: nothing to "
                "differentiate"
            )
        seeds.append(_seed_gradient(out, g))
    return seeds


def propagate(order: list[Function], pending: dict[Function, Any], retain_graph: bool,
              stop_below: int = -1, wanted: set[Any] | None = None
              ) -> dict[Function | Tensor, Any]:
    """Run each node's backward in ``order``, passing gradients down its edges (only those in
    ``wanted``, when given); return the gradients that reach variables, or nodes numbered
    below ``stop_below`` (not run). The backend's warnings about IEEE special values are off
    throughout (``quiet_math``)."""
    quiet = quiet_math(order[0].backend) if order else None
    if quiet is None:
        return _propagate(order, pending, retain_graph, stop_below, wanted)
    token = quiet[0]()
    try:
        return _propagate(order, pending, retain_graph, stop_below, wanted)
    finally:
        quiet[1](token)


def _propagate(order: list[Function], pending: dict[Function, Any], retain_graph: bool,
               stop_below: int, wanted: set[Any] | None) -> dict[Function | Tensor, Any]:
    reached: dict[Function | Tensor, Any] = {}
    for node in order:
        grad_out = pending.pop(node, None)
        parents, metas = node.parents, node.inputs_meta
        if parents is None or metas is None:
            raise _freed(node)
        if grad_out is None:
            grads_in = None
        else:
            if type(grad_out) in _DEFERRED and not (type(grad_out) is PickGradient
                                                    and node.takes_pick_gradients):
                grad_out = _dense(grad_out)
            if wanted is None:
                grads_in = node.backward(grad_out)
            else:
                parents = [p if p is not None and p in wanted else None for p in parents]
                grads_in = _backward_along(node, grad_out, parents)
        if not retain_graph:
            node.release()
        if grads_in is None:  # no gradient reached this node, or none leaves it
            continue
        if type(grads_in) is not tuple:
            grads_in = (grads_in,)
        if len(grads_in) != len(parents):
            raise wrong_count(node, len(grads_in), len(parents))
        for parent, meta, g in zip(parents, metas, grads_in, strict=False):  # lengths checked
            if parent is None or g is None or meta is None:
                continue
            shape, dtype = meta
            if g.shape != shape:  # (a SliceGradient or PickGradient has its input's shape
                g = _unbroadcast(node.backend, _dense(g), shape)  # and dtype)
            if g.dtype is not dtype and g.dtype != dtype:
                g = node.xp.astype(_dense(g), dtype)
            if isinstance(parent, Tensor) or parent.sequence < stop_below:
                previous = reached.get(parent)
                reached[parent] = g if previous is None else _accumulate(previous, g)
            else:
                previous = pending.get(parent)
                pending[parent] = g if previous is None else _accumulate(previous, g)
    return {target: _dense(g) for target, g in reached.items()}


def _backward_along(node: Function, grad: Any, edges: list[Edge]) -> Any:
    """``node.backward(grad)`` with only ``edges`` showing (the others None), so that it
    skips the gradients no target needs (``needs_grad``); its edges are restored after."""
    kept = node.parents
    node.parents = edges
    try:
        return node.backward(grad)
    finally:
        node.parents = kept


class SliceGradient:
    """A gradient that is ``values`` at the basic index ``key`` of an array of ``shape`` and
    ``dtype``, and zero elsewhere (``values`` has the shape of that slice)."""

    __slots__ = ("dtype", "key", "shape", "values", "xp")

    def __init__(self, xp: Any, shape: tuple[int, ...], dtype: Any, key: tuple[Any, ...],
                 values: Any) -> None:
        self.xp, self.shape, self.dtype, self.key, self.values = xp, shape, dtype, key, values

    def dense(self) -> Any:
        out = self.xp.zeros(self.shape, dtype=self.dtype)
        out[self.key] = self.values
        return out


class PickGradient:
    """A gradient of ``shape`` and ``dtype`` that is zero but for one value in each row along
    the last axis: ``values[i]`` at column ``columns[i]`` of row ``i``, the rows in C order
    (``columns`` and ``values`` are 1-d). Made by backends' kernels for arrays that take
    integer-array assignment (NumPy's, CuPy's)."""

    __slots__ = ("columns", "dtype", "shape", "values", "xp")

    def __init__(self, xp: Any, shape: tuple[int, ...], dtype: Any, columns: Any,
                 values: Any) -> None:
        self.xp, self.shape, self.dtype = xp, shape, dtype
        self.columns, self.values = columns, values

    def dense(self) -> Any:
        out = self.xp.zeros(self.shape, dtype=self.dtype)
        rows = self.xp.reshape(out, (-1, self.shape[-1]))
        rows[self.xp.arange(rows.shape[0]), self.columns] = self.values
        return out

    def reshaped(self, shape: tuple[int, ...]) -> Any:
        """The gradient in ``shape`` (the same elements): still picks when the last axis is
        the same, an array otherwise."""
        if shape and shape[-1] == self.shape[-1]:
            return PickGradient(self.xp, tuple(shape), self.dtype, self.columns, self.values)
        return self.xp.reshape(self.dense(), shape)


class _Sum:
    """A gradient sum in an array that only the engine holds, so later terms add in place."""

    __slots__ = ("array",)

    def __init__(self, array: Any) -> None:
        self.array = array


_DEFERRED = (SliceGradient, _Sum, PickGradient)  # pending gradients that are not arrays yet


def _accumulate(previous: Any, g: Any) -> Any:
    """``previous + g``, where either may be a ``SliceGradient`` (or a ``PickGradient``,
    which becomes an array here)."""
    if type(g) is PickGradient:
        g = g.dense()
    if type(previous) is PickGradient:
        previous = _Sum(previous.dense())  # an array of the engine's own
    kind = type(previous)
    if kind is _Sum:
        total = previous
    elif type(g) is not SliceGradient:
        if kind is not SliceGradient:
            return previous + g
        return _Sum((g + previous.dense())[...])  # ([...]: NumPy makes 0-d sums scalars)
    elif kind is SliceGradient:
        total = _Sum(previous.dense())
    else:  # an array that other edges may share: the sum goes into a copy
        total = _Sum(g.xp.asarray(previous, copy=True))
    if type(g) is SliceGradient:
        total.array[g.key] += g.values
    else:
        total.array = (total.array + g)[...]
    return total


def _dense(g: Any) -> Any:
    """The array a pending gradient stands for."""
    kind = type(g)
    if kind is SliceGradient or kind is PickGradient:
        return g.dense()
    if kind is _Sum:
        return g.array
    return g


def _seed_gradient(root: Tensor, grad: Tensor | None) -> Tensor:
    if not isinstance(root, Tensor):
        raise TypeError(f"backward() needs a Tensor, got {type(root).__name__}")
    if grad is None:
        if root.elem_count() != 1:
            raise ValueError(
                f"backward() without a gradient needs a single-element tensor, got shape "
                f"{root.shape}; pass grad= of the same shape"
            )
        return Tensor(root.backend.xp.ones_like(root.data), root.backend)
    if not isinstance(grad, Tensor):
        raise TypeError(f"backward(grad) needs a Tensor gradient, got {type(grad).__name__}")
    if grad.backend is not root.backend:
        raise ValueError(
            f"backward(grad): the gradient is on backend {grad.backend.name!r}, the tensor on "
            f"{root.backend.name!r}"
        )
    if grad.shape != root.shape:
        raise ValueError(
            f"backward(grad): gradient shape {grad.shape} does not match tensor shape {root.shape}"
        )
    return grad


def reverse_topological_order(roots: Function | list[Function],
                              stop_below: int = -1) -> list[Function]:
    """Every node reachable from ``roots`` (and numbered at least ``stop_below``), each before
    the nodes that produced its inputs.

    Nodes are numbered as they are made, after their inputs' producers, so the newest-first
    order of the reachable nodes is a reverse topological order: no post-order walk needed.
    """
    nodes = [roots] if isinstance(roots, Function) else list(dict.fromkeys(roots))
    seen = set(nodes)
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if node.parents is None:
            raise _freed(node)
        for parent in node.parents:
            if (isinstance(parent, Function) and parent not in seen
                    and parent.sequence >= stop_below):
                seen.add(parent)
                stack.append(parent)
                nodes.append(parent)
    nodes.sort(key=_by_creation, reverse=True)
    return nodes


def wrong_count(node: Function, count: int, inputs: int) -> RuntimeError:
    """The error for a backward that returned ``count`` gradients for ``inputs`` inputs."""
    return RuntimeError(
        f"{type(node).__name__}.backward returned {count} gradients for {inputs} inputs"
    )


def _freed(node: Function) -> RuntimeError:
    return RuntimeError(
        f"backward through a graph that was already freed ({type(node).__name__}): "
        "a second backward over the same ops needs retain_graph=True in the first"
    )


def _unbroadcast(backend: Any, grad: Any, shape: tuple[int, ...]) -> Any:
    """Sum ``grad`` over the axes that broadcasting added or stretched, back to ``shape``
    (bfloat16 and float16 accumulated in float32, as the reductions sum them)."""
    xp = backend.xp
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1
    )
    if axes:
        if grad.dtype in low_precision_natives(backend):
            grad = xp.astype(xp.sum(grad, axis=axes, dtype=xp.float32), grad.dtype)
        else:
            grad = xp.sum(grad, axis=axes)
    return xp.reshape(grad, shape)
