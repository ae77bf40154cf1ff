"""Reverse-mode autograd: the ``Function`` node, grad mode, and the backward pass.

The graph is made of ``Function`` instances. Each op call makes one: it runs ``forward`` on the
input arrays and, when any input is tracked and grad mode is on, keeps edges to the inputs'
producers (or to the variable leaves themselves) plus what ``backward`` will need. Tensors keep
only their producer, so activations nobody saved are freed as soon as they go out of scope.

``backward`` walks the graph once, iteratively, in reverse topological order, hands each node
the gradient of its output, undoes broadcasting (summing) and dtype promotion (casting) for every
input in one place, and frees each node's saved arrays and edges as soon as it has run.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import math
from collections.abc import Iterator
from operator import attrgetter
from typing import Any

from dparray.gradients import Gradients
from dparray.tensor import Tensor, from_op

_creation_order = itertools.count()  # a node is always numbered after its inputs' producers
_by_creation = attrgetter("sequence")
_grad_enabled: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "dparray_grad_enabled", default=True
)
_retaining: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "dparray_retain_graph", default=False
)  # so that a node whose backward runs a sub-graph's backward keeps or frees it alike


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

    __slots__ = ("__dict__", "backend", "inputs_meta", "parents", "saved", "sequence", "xp")

    def __call__(self, *inputs: Any) -> Tensor:
        backend = None
        tracked = False
        arrays, parents, metas = [], [], []
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
        self.saved = None
        if tracked and _grad_enabled.get():
            self.parents = parents  # set before forward: needs_grad() reads it
            out = self.forward(*arrays)
            self.inputs_meta = metas
            self.sequence = next(_creation_order)
            return from_op(out, backend, self)
        out = self.forward(*arrays)
        self.saved = None
        return from_op(out, backend, None)

    def forward(self, *arrays: Any) -> Any:
        raise NotImplementedError

    def backward(self, grad: Any) -> Any:
        raise NotImplementedError

    def save(self, *arrays: Any) -> None:
        """Keep arrays for ``backward`` (read back as ``self.saved``; freed after it runs)."""
        self.saved = arrays

    def needs_grad(self, index: int) -> bool:
        """Whether input ``index`` is tracked, so ``backward`` must return its gradient."""
        return self.parents[index] is not None

    def release(self) -> None:
        """Drop saved arrays and edges; the node can no longer run backward."""
        self.saved = None
        self.parents = None
        self.inputs_meta = None


def reserve_number() -> int:
    """A creation number: every node made afterwards gets a larger one (DataParallel marks the
    boundary of its chunks' sub-graphs with it)."""
    return next(_creation_order)


def attach(node: Function, backend: Any, parents: list[Any], metas: list[Any]) -> Function:
    """Make ``node`` a graph node whose gradient flows to ``parents`` (with their shape and
    dtype), as calling it would; for ops whose edges are not their inputs (DataParallel's
    gather, whose edges are what its chunks' sub-graphs reach)."""
    node.backend, node.xp, node.saved = backend, backend.xp, None
    node.parents, node.inputs_meta = list(parents), list(metas)
    node.sequence = next(_creation_order)
    return node


def backward(root: Tensor, grad: Tensor | None = None, *,
             retain_graph: bool = False) -> Gradients:
    """Gradients of ``root`` with respect to every variable it depends on.

    Everything is checked before any gradient is computed: a bad ``grad`` or a graph that an
    earlier ``backward`` freed raise without touching the graph.
    """
    seed = _seed_gradient(root, grad)
    if root._node is None:
        if root._is_variable:
            return Gradients({root: seed})
        raise RuntimeError(
            "backward() on a tensor that depends on no variable: nothing to differentiate "
            "(make the inputs you train variables with requires_grad=True)"
        )
    order = _reverse_topological_order(root._node)
    token = _retaining.set(retain_graph)
    try:
        leaves = _propagate(order, {root._node: seed.data}, retain_graph)
    finally:
        _retaining.reset(token)
    ordered = sorted(leaves, key=lambda t: t._order)
    return Gradients({t: Tensor(leaves[t], t.backend) for t in ordered})


def backward_to_boundary(root: Function, grad: Any, boundary: int) -> dict[Any, Any]:
    """Run the backward of the part of a graph made at or after creation number ``boundary``,
    from ``root`` (which receives ``grad``), and return the gradients that leave it: one per
    variable and per older node reached. DataParallel runs one of these per chunk, in parallel;
    the chunks' sub-graphs share nothing but what they return gradients for.
    """
    order = _reverse_topological_order(root, boundary)
    return _propagate(order, {root: grad}, _retaining.get(), boundary)


def mean_output_size(root: Tensor, boundary: int) -> float | None:
    """The mean number of elements the ops made at or after creation number ``boundary`` put
    out, found from the graph under ``root`` (None when there is no such graph)."""
    if root._node is None or root._node.sequence < boundary:
        return None
    sizes = {root._node: math.prod(root.shape)}
    stack = [root._node]
    while stack:
        node = stack.pop()
        for parent, meta in zip(node.parents, node.inputs_meta, strict=True):
            if isinstance(parent, Function) and parent.sequence >= boundary \
                    and parent not in sizes:
                sizes[parent] = math.prod(meta[0])
                stack.append(parent)
    return sum(sizes.values()) / len(sizes)


def boundary_edges(roots: list[Function], boundary: int) -> tuple[list[Any], list[Any]]:
    """The edges leaving the sub-graphs under ``roots`` made at or after ``boundary`` --
    variables and older nodes, each once, in a fixed order -- with their (shape, dtype).

    Raises RuntimeError when one node made after ``boundary`` is reached from two roots: the
    sub-graphs must be disjoint to run their backwards in parallel.
    """
    owner: dict[Function, int] = {}
    edges: dict[Any, Any] = {}
    for index, root in enumerate(roots):
        stack = [root]
        owner[root] = index
        while stack:
            node = stack.pop()
            for parent, meta in zip(node.parents, node.inputs_meta, strict=True):
                if parent is None:
                    continue
                if isinstance(parent, Tensor) or parent.sequence < boundary:
                    edges.setdefault(parent, meta)
                elif parent not in owner:
                    owner[parent] = index
                    stack.append(parent)
                elif owner[parent] != index:
                    raise RuntimeError(
                        f"a {type(parent).__name__} result made inside chunk {owner[parent]} "
                        f"is used by chunk {index}; a module under DataParallel must not keep "
                        "tensors it computes in forward for later calls"
                    )
    return list(edges), list(edges.values())


def _propagate(order: list[Function], pending: dict[Function, Any], retain_graph: bool,
               boundary: int = -1) -> dict[Any, Any]:
    """Run each node's backward in ``order``, passing gradients down its edges; return those
    that reach variables, or nodes numbered below ``boundary`` (which are not run)."""
    reached: dict[Any, Any] = {}
    for node in order:
        grad_out = pending.pop(node, None)
        parents, metas = node.parents, node.inputs_meta
        grads_in = None if grad_out is None else node.backward(grad_out)
        if not retain_graph:
            node.release()
        if grads_in is None:  # no gradient reached this node, or none leaves it
            continue
        if type(grads_in) is not tuple:
            grads_in = (grads_in,)
        if len(grads_in) != len(parents):
            raise RuntimeError(
                f"{type(node).__name__}.backward returned {len(grads_in)} gradients for "
                f"{len(parents)} inputs"
            )
        for parent, meta, g in zip(parents, metas, grads_in, strict=False):  # lengths checked
            if parent is None or g is None:
                continue
            shape, dtype = meta
            if g.shape != shape:
                g = _unbroadcast(node.xp, g, shape)
            if g.dtype is not dtype and g.dtype != dtype:
                g = node.xp.astype(g, dtype)
            outside = isinstance(parent, Tensor) or parent.sequence < boundary
            target = reached if outside else pending
            previous = target.get(parent)
            target[parent] = g if previous is None else previous + g
    return reached


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


def _reverse_topological_order(root: Function, boundary: int = -1) -> list[Function]:
    """Every node reachable from ``root`` (and numbered at least ``boundary``), each before
    the nodes that produced its inputs.

    Nodes are numbered as they are made, after their inputs' producers, so the newest-first
    order of the reachable nodes is a reverse topological order: no post-order walk needed.
    """
    nodes = [root]
    seen = {root}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.parents is None:
            raise RuntimeError(
                f"backward through a graph that was already freed ({type(node).__name__}): "
                "a second backward over the same ops needs retain_graph=True in the first"
            )
        for parent in node.parents:
            if (parent is not None and parent not in seen and isinstance(parent, Function)
                    and parent.sequence >= boundary):
                seen.add(parent)
                stack.append(parent)
                nodes.append(parent)
    nodes.sort(key=_by_creation, reverse=True)
    return nodes


def _unbroadcast(xp: Any, grad: Any, shape: tuple[int, ...]) -> Any:
    """Sum ``grad`` over the axes that broadcasting added or stretched, back to ``shape``."""
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1
    )
    if axes:
        grad = xp.sum(grad, axis=axes)
    return xp.reshape(grad, shape)
