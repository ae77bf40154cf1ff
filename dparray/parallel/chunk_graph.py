"""The graph machinery of DataParallel: the sub-graphs its chunks build, and their backward.

A DataParallel call takes a creation number (its *boundary*) before the chunks run, so every
node a chunk makes is numbered at or above it. Each chunk's output then roots a sub-graph of
nodes made after the boundary; the sub-graphs are disjoint, and what they reach below the
boundary (parameters, nodes made before the split) are their *edges*. One gather node whose
edges are those runs each chunk's sub-graph backward on that chunk's worker and sums the
gradients that leave them. The engine (``dparray.autograd``) provides the walk itself; under
``create_graph`` it is the walk that builds a graph (``dparray.ops.graph_backward``), run on
each chunk's worker as the plain one is, so gradient penalties and other derivatives of
derivatives work through DataParallel too.
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import (
    Edge,
    Function,
    InputMeta,
    creating_graph,
    graph_engine,
    next_sequence_number,
    propagate,
    retaining_graph,
    reverse_topological_order,
)
from dparray.ops.graph_arrays import GraphArray
from dparray.tensor import Tensor


def mark_boundary() -> int:
    """A boundary: every node made from now on is numbered at or above it."""
    return next_sequence_number()


def attach(node: Function, backend: Any, parents: list[Edge], metas: list[InputMeta]) -> Function:
    """Make ``node`` a graph node whose gradient flows to ``parents`` (with their shape and
    dtype), as calling it would; for ops whose edges are not their inputs (the gather)."""
    node.backend, node.xp, node.saved = backend, backend.xp, ()
    node.parents, node.inputs_meta = list(parents), list(metas)
    node.sequence = next_sequence_number()
    return node


def backward_to_boundary(seeds: dict[Function, Any],
                         boundary: int) -> dict[Function | Tensor, Any]:
    """Run the backward of the part of a graph made at or after ``boundary``, from the nodes
    in ``seeds`` (each receiving its gradient), and return the gradients that leave it: one
    per variable and per older node reached. The graph is kept or freed as the backward in
    progress says; under ``create_graph`` the seeds and the gradients are tensors, and the
    sub-graph's backward is recorded."""
    order = reverse_topological_order(list(seeds), stop_below=boundary)
    if creating_graph():
        tensors = {node: g.tensor if isinstance(g, GraphArray) else g for node, g in seeds.items()}
        return graph_engine()(order, tensors, retaining_graph(), boundary, None)
    return propagate(order, dict(seeds), retaining_graph(), stop_below=boundary)


def boundary_edges(roots: list[list[Function]],
                   boundary: int) -> tuple[list[Edge], list[InputMeta]]:
    """The edges leaving the sub-graphs under each chunk's ``roots`` made at or after
    ``boundary`` -- variables and older nodes, each once, in a fixed order -- with their
    (shape, dtype).

    Raises RuntimeError when one node made after ``boundary`` is reached from two chunks: the
    sub-graphs must be disjoint to run their backwards in parallel.
    """
    owner: dict[Function, int] = {}
    edges: dict[Function | Tensor, InputMeta] = {}
    for index, chunk_roots in enumerate(roots):
        stack = []
        for root in chunk_roots:
            if root in owner and owner[root] != index:
                raise _shared(root, owner[root], index)
            if root not in owner:
                owner[root] = index
                stack.append(root)
        while stack:
            node = stack.pop()
            for parent, meta in zip(node.parents or (), node.inputs_meta or (), strict=True):
                if parent is None:
                    continue
                if isinstance(parent, Tensor) or parent.sequence < boundary:
                    edges.setdefault(parent, meta)
                elif parent not in owner:
                    owner[parent] = index
                    stack.append(parent)
                elif owner[parent] != index:
                    raise _shared(parent, owner[parent], index)
    return list(edges), list(edges.values())


def _shared(node: Function, first: int, second: int) -> RuntimeError:
    return RuntimeError(
        f"a {type(node).__name__} result made inside chunk {first} is used by chunk {second}; "
        "a module under DataParallel must not keep tensors it computes in forward for later "
        "calls"
    )
