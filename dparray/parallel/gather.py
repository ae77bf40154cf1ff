"""DataParallel's last step: the chunks' outputs joined along axis 0, as one graph node.

Each chunk returns the same structure (a tensor, or tuples, lists and dicts of tensors); the
result has that structure with every tensor the concatenation of the chunks' tensors. The
tensors that carry gradient are joined by ONE ``Gather`` node -- when there are several, into
one flat buffer that each output is a view of -- so that its backward runs each chunk's
sub-graph backward exactly once, on that chunk's worker, from all of that chunk's outputs at
once, and sums what leaves the chunks (parameters, tensors made before the split) in chunk
order: bitwise repeatable for a given number of workers. Outputs without a graph are
concatenated as constants.

Under ``create_graph`` the node's backward is run again on tensors (``dparray.ops.graph_backward``)
and each chunk's sub-graph backward is recorded, on its worker: the gradients that leave the
chunks are tensors in a graph. Differentiating those again runs the chunks' own nodes one after
another in the caller's thread, which SyncBatchNorm's chunks, which must meet, cannot do: a
create_graph backward through synchronised chunks is refused.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

from dparray import _tree
from dparray.autograd import Function, creating_graph, is_grad_enabled
from dparray.nn.chunks import sync_group
from dparray.parallel.chunk_graph import attach, backward_to_boundary, boundary_edges
from dparray.tensor import Tensor, from_op

Runner = Callable[[Sequence[Callable[[], Any]]], list[Any]]


def gather(outputs: list[Any], boundary: int, run: Runner, group: Any = None) -> Any:
    """The chunks' outputs joined along axis 0, in their common structure."""
    flat = [_tree.flatten(out, Tensor) for out in outputs]
    structure = flat[0][1]
    for i, (_, other) in enumerate(flat[1:], start=1):
        if not _tree.same_structure(structure, other):
            raise ValueError(f"DataParallel: chunk {i} returned a different structure than "
                             "chunk 0 (every chunk must return the same kinds of values)")
    leaves = [tensors for tensors, _ in flat]  # leaves[chunk][position]
    if not leaves[0]:
        raise TypeError(f"DataParallel: the module returned {type(outputs[0]).__name__} with "
                        "no tensor in it; it must return tensors (or tuples, lists or dicts "
                        "of them)")
    for position in range(len(leaves[0])):
        _check_joinable([chunk[position] for chunk in leaves], position)
    count = len(leaves[0])
    tracked = [position for position in range(count)
               if is_grad_enabled() and any(_tracked(chunk[position]) for chunk in leaves)]
    joined: dict[int, Tensor] = {}
    if tracked:
        joined.update(zip(tracked, _gather_tracked(leaves, tracked, boundary, run, group),
                          strict=True))
    for position in range(count):
        if position not in joined:
            parts = [chunk[position] for chunk in leaves]
            data = parts[0].backend.xp.concat([p.data for p in parts], axis=0)
            joined[position] = from_op(data, parts[0].backend, None)
    return _tree.rebuild(structure, [joined[p] for p in range(count)])


def _tracked(t: Tensor) -> bool:
    return t._node is not None or t.is_variable


def _check_joinable(parts: list[Any], position: int) -> None:
    first = parts[0]
    for i, out in enumerate(parts):
        if not isinstance(out, Tensor):  # pragma: no cover - flatten yields tensors only
            raise TypeError(f"DataParallel: chunk {i} returned {type(out).__name__}")
        if out.ndim == 0:
            raise ValueError(
                "DataParallel: the module returned a 0-d tensor for each chunk (a loss?), which "
                "cannot be concatenated along the batch axis; compute the loss outside "
                "DataParallel"
            )
        if out.shape[1:] != first.shape[1:] or out.backend is not first.backend \
                or out.dtype != first.dtype:
            raise ValueError(
                f"DataParallel: output {position} differs between chunks: {first.shape} "
                f"{first.dtype.name} on {first.backend.name!r} and {out.shape} "
                f"{out.dtype.name} on {out.backend.name!r}")


def _gather_tracked(leaves: list[list[Tensor]], tracked: list[int], boundary: int,
                    run: Runner, group: Any) -> list[Tensor]:
    """The tracked outputs, joined by one Gather node (and views of its flat output)."""
    outputs = [[chunk[p] for p in tracked] for chunk in leaves]  # outputs[chunk][k]
    first = outputs[0][0]
    dtypes = {out.dtype.name for out in outputs[0]}
    if len(dtypes) > 1:
        raise TypeError(f"DataParallel: the module's outputs that carry gradients have "
                        f"several dtypes ({', '.join(sorted(dtypes))}); give them one dtype")
    backend, xp = first.backend, first.backend.xp
    sizes = [chunk[0].shape[0] for chunk in outputs]
    shapes = [(sum(sizes), *out.shape[1:]) for out in outputs[0]]
    joined = [xp.concat([chunk[k].data for chunk in outputs], axis=0)
              for k in range(len(tracked))]
    node = Gather(outputs, sizes, shapes, boundary, run, group)
    roots = [[out._node for out in chunk if out._node is not None] for chunk in outputs]
    parents, metas = boundary_edges(roots, boundary)
    for chunk in outputs:
        for out in chunk:
            if out._node is None and out.is_variable and out not in parents:
                parents.append(out)
                metas.append((out.data.shape, out.data.dtype))
    if len(joined) == 1:
        return [from_op(joined[0], backend, attach(node, backend, parents, metas))]
    flat = xp.concat([xp.reshape(j, (-1,)) for j in joined], axis=0)
    buffer = from_op(flat, backend, attach(node, backend, parents, metas))
    views, start = [], 0
    for shape in shapes:
        count = math.prod(shape)
        views.append(buffer[start:start + count].reshape(shape))
        start += count
    return views


class Gather(Function):
    """The joined tracked outputs of DataParallel's chunks (one array, or their flat
    concatenation). Its edges are what the chunks' sub-graphs reach; its backward runs each
    chunk's sub-graph backward on that chunk's worker and sums what leaves the chunks in
    chunk order."""

    def __init__(self, outputs: list[list[Tensor]], sizes: list[int],
                 shapes: list[tuple[int, ...]], boundary: int, run: Runner, group: Any) -> None:
        self.roots = [[out._node for out in chunk] for chunk in outputs]
        self.variables: list[list[Tensor | None]] = [
            [out if out._node is None and out.is_variable else None for out in chunk]
            for chunk in outputs]
        self.sizes, self.shapes = sizes, shapes
        self.boundary, self.run, self.group = boundary, run, group

    def backward(self, grad: Any) -> tuple[Any, ...]:
        xp = self.xp
        if self.group is not None and creating_graph():
            raise RuntimeError(
                "create_graph through DataParallel with SyncBatchNorm in training is not "
                "supported: the chunks' statistics are exchanged between workers, which a "
                "derivative of the gradient cannot repeat; use BatchNorm (or eval mode) there"
            )
        if len(self.shapes) == 1:
            per_output = [grad]
        else:
            per_output, start = [], 0
            for shape in self.shapes:
                count = math.prod(shape)
                per_output.append(xp.reshape(grad[start:start + count], shape))
                start += count
        tasks, start = [], 0
        for i, size in enumerate(self.sizes):
            pieces = [g[start:start + size, ...] for g in per_output]
            start += size
            tasks.append(functools.partial(_backward_chunk, self, i, pieces))
        reached = self.run(tasks)
        sums = []
        for edge in self.parents or ():
            total = None
            for gradients in reached:  # in chunk order: bitwise repeatable
                g = gradients.get(edge)
                if g is not None:
                    total = g if total is None else total + g
            sums.append(total)
        return tuple(sums)


def _backward_chunk(node: Gather, index: int, pieces: list[Any]) -> dict[Any, Any]:
    with node.backend.worker(index, len(node.sizes)), sync_group(node.group, index):
        seeds: dict[Function, Any] = {}
        direct: dict[Tensor, Any] = {}
        for root, variable, piece in zip(node.roots[index], node.variables[index], pieces,
                                         strict=True):
            if root is not None:
                seeds[root] = piece if root not in seeds else seeds[root] + piece
            elif variable is not None:
                direct[variable] = piece if variable not in direct else direct[variable] + piece
        reached: dict[Any, Any] = backward_to_boundary(seeds, node.boundary) if seeds else {}
        for variable, piece in direct.items():
            reached[variable] = piece if variable not in reached else reached[variable] + piece
        return reached

