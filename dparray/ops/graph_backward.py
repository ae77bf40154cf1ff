"""The create_graph walk: every node's backward run again as dparray ops, so the gradients it
computes are tensors in a graph of their own, differentiable in turn.

For each node the walk makes a *replica*: a copy of the node (of its reference class when it is
a backend's kernel: the kernel table stands aside) whose ``xp`` is the tensor namespace and
whose ``backend`` is a ``GraphBackend`` (``dparray.ops.graph_arrays``). The replica's saved
values must be tensors connected to the graph, so they are rebuilt from the node's inputs:

* a node that saved nothing, or only constants (``saved_values = "constants"``), keeps its
  saved arrays as constants; one whose saved array is its output (``"output"``: ``tanh``,
  ``softmax``) gets its output as a tensor made by the node itself, so derivatives through it
  run the node's own backward, as PyTorch's saved results do;
* a node whose saved arrays are its own inputs (``Mul`` saves ``a`` and ``b``, ``MatMul``,
  ``Linear``, ``sin``...) takes those inputs as tensors, found by identity;
* any other node runs its forward again on its inputs as tensors (``Tanh`` saved its output,
  ``LayerNorm`` its statistics): the replay saves tensors, and its ``backward`` then runs on
  the gradient.

The inputs as tensors are the variables themselves and, for results of other nodes, new
tensors on the kept input arrays whose producer is that node, so everything the backward
computes is connected to the original graph: differentiating a gradient reaches the
variables (and runs the original nodes' own backward, which is why create_graph keeps the
graph). Nodes only run what is needed: an edge outside ``wanted`` (nothing leads from it to
the inputs asked for) is hidden from the replica, so its gradient is never computed.
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import (
    Function,
    SliceGradient,
    _freed,
    _unbroadcast,
    bind_graph_engine,
    wrong_count,
)
from dparray.backend import Backend, kernels
from dparray.ops._promote import is_floating
from dparray.ops.elementwise import astype
from dparray.ops.graph_arrays import GraphArray, graph_backend
from dparray.tensor import Tensor, from_op

_SCALARS = (int, float, bool)  # exactly these: a NumPy scalar (a float subclass) is an array


def propagate_graph(order: list[Function], pending: dict[Any, Any], retain_graph: bool,
                    stop_below: int = -1, wanted: Any = None) -> dict[Any, Any]:
    """``autograd.propagate`` on tensors: run each node's backward in ``order`` as dparray
    ops, passing tensor gradients down its edges (only those in ``wanted``, when given);
    return the gradients that reach variables, or nodes numbered below ``stop_below``."""
    reached: dict[Any, Any] = {}
    for node in order:
        grad_out = pending.pop(node, None)
        parents, metas = node.parents, node.inputs_meta
        if parents is None or metas is None:
            raise _freed(node)
        edges = parents if wanted is None else [p if p is not None and p in wanted else None
                                                for p in parents]
        grads_in = None
        if grad_out is not None and any(p is not None for p in edges):
            grads_in = differentiate(node, grad_out, edges)
        if not retain_graph:
            node.release()
        if grads_in is None:
            continue
        if len(grads_in) != len(edges):
            raise wrong_count(node, len(grads_in), len(edges))
        for parent, meta, g in zip(edges, metas, grads_in, strict=False):  # lengths checked
            if parent is None or g is None or meta is None:
                continue
            g = _fitted(node.backend, g, meta)
            if isinstance(parent, Tensor) or parent.sequence < stop_below:
                previous = reached.get(parent)
                reached[parent] = g if previous is None else previous + g
            else:
                previous = pending.get(parent)
                pending[parent] = g if previous is None else previous + g
    return reached


def differentiate(node: Function, grad: Tensor, edges: list[Any]) -> tuple[Any, ...] | None:
    """The node's backward of ``grad`` as tensors (one per input, or None), recorded as a
    graph: through the node's ``graph_backward`` when it has one, else its replica."""
    hook = getattr(node, "graph_backward", None)
    if hook is not None:
        result = hook(grad)
    else:
        replica = make_replica(node, edges)
        result = replica.backward(GraphArray(grad))
    if result is None:
        return None
    items = result if type(result) is tuple else (result,)
    return tuple(_as_tensor(g, node.backend) for g in items)


def make_replica(node: Function, edges: list[Any]) -> Function:
    """A copy of ``node`` to run under the tensor namespace, its saved values rebuilt as
    tensors in the graph (see the module's documentation)."""
    cls = _replayed_class(node)
    replica = object.__new__(cls)
    replica.__dict__.update(node.__dict__)
    replica.backend = graph_backend(node.backend)
    replica.xp = replica.backend.xp
    replica.parents, replica.inputs_meta = list(edges), node.inputs_meta
    replica.sequence, replica.saved = node.sequence, ()
    saved = node.saved
    if not saved or cls.saved_values == "constants":
        replica.saved = tuple(_constant(s, node.backend) for s in saved)
        return replica
    if cls.saved_values == "output":
        replica.saved = (_own_output(node, saved[0]),)
        return replica
    inputs = getattr(node, "saved_inputs", None)
    if not inputs:
        raise RuntimeError(
            f"create_graph: {type(node).__name__} saved arrays but kept no inputs to rebuild "
            "them from; a Function that saves only constants, or only its output, says so "
            "with saved_values"
        )
    tensors = [_input_tensor(node, i, array) for i, array in enumerate(inputs)]
    by_identity = _saved_inputs(node, inputs, tensors) if cls is type(node) else None
    if by_identity is not None:
        replica.saved = by_identity
        return replica
    replica.prepare_replay(node)
    replica.forward(*(GraphArray(t) if isinstance(t, Tensor) else t for t in tensors))
    return replica


def _own_output(node: Function, array: Any) -> GraphArray:
    """The output a node saved, as a tensor whose producer is the node itself; in the shape of
    its input (every such op keeps its input's shape; a kernel may save its output as rows)."""
    meta = node.inputs_meta[0] if node.inputs_meta else None
    if meta is not None and tuple(array.shape) != meta[0]:
        array = node.backend.xp.reshape(array, meta[0])
    return GraphArray(from_op(array, node.backend, node))


def _replayed_class(node: Function) -> type[Function]:
    """The node's class, or the reference a backend's kernel stands in for."""
    cls = type(node)
    for klass in cls.__mro__[1:]:
        name = vars(klass).get("kernel_name")
        if name is not None:
            return klass if kernels(node.backend).get(name) is cls else cls
    return cls


def _input_tensor(node: Function, index: int, array: Any) -> Any:
    """Input ``index`` of ``node`` as a tensor in the graph: the variable, a tensor made by the
    producer node, or a constant (a Python number stays one)."""
    if array is None or type(array) in _SCALARS:
        return array
    parent = node.parents[index] if node.parents is not None else None
    if isinstance(parent, Tensor):
        if parent.data is not array:
            raise RuntimeError(
                f"create_graph: a variable of shape {parent.shape} was given new values after "
                f"{type(node).__name__} used it; differentiate before changing it"
            )
        return parent
    return from_op(array, node.backend, parent if isinstance(parent, Function) else None)


def _saved_inputs(node: Function, inputs: list[Any],
                  tensors: list[Any]) -> tuple[Any, ...] | None:
    """The saved values as GraphArrays when each is an input (by identity) or a constant;
    None when one is neither (the forward must run again)."""
    rebuilt = []
    for value in node.saved:
        position = next((i for i, a in enumerate(inputs) if a is value), None)
        if position is not None:
            t = tensors[position]
            rebuilt.append(GraphArray(t) if isinstance(t, Tensor) else t)
        elif value is None or type(value) in _SCALARS \
                or not is_floating(node.backend, value):
            rebuilt.append(_constant(value, node.backend))
        else:
            return None
    return tuple(rebuilt)


def _constant(value: Any, backend: Backend) -> Any:
    if value is None or type(value) in _SCALARS:
        return value
    return GraphArray(Tensor(value, backend))


def _as_tensor(g: Any, backend: Backend) -> Any:
    """What a replica's backward returned for one input, as a tensor (or None)."""
    if g is None or isinstance(g, Tensor):
        return g
    if isinstance(g, SliceGradient):
        g = g.dense()
    if isinstance(g, GraphArray):
        return g.tensor
    return Tensor(backend.xp.asarray(g), backend)


def _fitted(backend: Backend, g: Tensor, meta: tuple[tuple[int, ...], Any]) -> Tensor:
    """``g`` summed back to the input's shape and cast to its dtype, as dparray ops."""
    shape, dtype = meta
    if g.shape != shape:
        g = _unbroadcast(graph_backend(backend), GraphArray(g), shape).tensor
    if g.data.dtype != dtype:
        g = astype(g, dtype)
    return g


bind_graph_engine(propagate_graph)
