"""Framework overhead per op: a chain of 16 small ops (32x64 float32), forward and backward,
against the same arithmetic written in raw NumPy, in one run.

    make bench      # bench/report.py prints the per-op overhead

Overhead per op = (median dparray time - median NumPy time) / 16.
"""

from __future__ import annotations

import numpy as np
import pytest

import dparray as dp

SHAPE = (32, 64)
LAYERS = 7  # 7 x (mul, tanh) + add + sum = 16 ops
OPS = 2 * LAYERS + 2


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    return (rng.standard_normal(SHAPE).astype(np.float32),
            (rng.standard_normal(SHAPE) * 0.5).astype(np.float32))


def dparray_step(x, w):
    y = x
    for _ in range(LAYERS):
        y = (y * w).tanh()
    return (y + x).sum().backward()[w]


def numpy_step(x, w):
    ys, outs = [x], []
    y = x
    for _ in range(LAYERS):
        y = np.tanh(y * w)
        outs.append(y)
        ys.append(y)
    np.asarray((y + x).sum())
    grad = np.ones_like(y)
    grad_w = np.zeros_like(w)
    for i in reversed(range(LAYERS)):
        pre = grad * (1.0 - outs[i] * outs[i])
        grad_w = grad_w + pre * ys[i]
        grad = pre * w
    return grad_w


def test_chain_results_agree(data):
    x, w = data
    ours = dparray_step(dp.tensor(x), dp.tensor(w, requires_grad=True)).numpy()
    np.testing.assert_allclose(ours, numpy_step(x, w), rtol=1e-5, atol=1e-6)


@pytest.mark.benchmark(group="overhead-16-ops")
def test_dparray_chain(benchmark, data):
    x, w = data
    tx, tw = dp.tensor(x), dp.tensor(w, requires_grad=True)
    benchmark(dparray_step, tx, tw)


@pytest.mark.benchmark(group="overhead-16-ops")
def test_numpy_chain(benchmark, data):
    x, w = data
    benchmark(numpy_step, x, w)
