"""The graph holds memory only until backward: nothing grows over many steps."""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import numpy as np
import pytest
from dparray.backends._numba_setup import wait_for_warm_up

import dparray as dp


def _model(seed: int = 0):
    w1 = dp.randn(8, 16, seed=seed, requires_grad=True)
    w2 = dp.randn(16, 1, seed=seed + 1, requires_grad=True)
    return w1, w2


def _step(x, y, w1, w2, lr=1e-3):
    loss = (((x @ w1).tanh() @ w2 - y) ** 2).mean()
    grads = loss.backward()
    with dp.no_grad():
        return w1 - lr * grads[w1], w2 - lr * grads[w2]


@pytest.mark.slow
def test_a_thousand_steps_do_not_grow_memory(backend):
    x, y = dp.randn(32, 8, seed=3), dp.randn(32, 1, seed=4)
    w1, w2 = _model()

    def run(steps, w1, w2):
        for _ in range(steps):
            w1, w2 = _step(x, y, *(t.detach().requires_grad_() for t in (w1, w2)))
        return w1, w2

    w1, w2 = run(20, w1, w2)  # warm caches (dtype tables, namespaces)
    wait_for_warm_up()  # Numba's imports on their own thread are traced too
    gc.collect()
    tracemalloc.start()
    try:
        w1, w2 = run(100, w1, w2)
        gc.collect()
        after_100 = tracemalloc.get_traced_memory()[0]
        w1, w2 = run(1000, w1, w2)
        gc.collect()
        after_1100 = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert after_1100 - after_100 < 64 * 1024, (after_100, after_1100)


def _nodes(root):
    nodes, stack = [], [root.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and node not in nodes:
            nodes.append(node)
            stack.extend(p for p in node.parents if isinstance(p, dp.Function))
    return nodes


def test_backward_releases_every_saved_array(backend):
    w = dp.randn(4, 4, requires_grad=True)
    loss = ((dp.randn(3, 4) @ w).sigmoid() * 2.0).exp().sum()
    nodes = _nodes(loss)
    assert len(nodes) == 5 and any(node.saved for node in nodes)
    loss.backward()
    assert all(node.saved == () and node.parents is None for node in nodes)


def test_saved_activations_are_freed_once_backward_has_run():
    with dp.use_backend("numpy"):  # NumPy arrays are weak-referenceable; the check needs that
        w = dp.randn(64, 64, requires_grad=True)
        hidden = dp.randn(8, 64) @ w
        activation = hidden.tanh()  # Tanh saves its output array
        saved = weakref.ref(activation.data)
        loss = activation.sum()
        del hidden, activation
        gc.collect()
        assert saved() is not None  # still needed by the graph
        loss.backward()
        gc.collect()
        assert saved() is None


def test_values_survive_freeing(backend):
    x = dp.tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = x.exp()
    y.sum().backward()
    np.testing.assert_allclose(y.numpy(), np.exp([1.0, 2.0]))
