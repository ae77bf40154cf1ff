"""One training step of a 784-1024-1024-10 MLP at batch 2048, float32: forward, cross-entropy,
backward, Adam step -- dparray against the same arithmetic hand-written in NumPy, in one run.

    make bench      # bench/report.py prints the ratio (goal: within 1.10x)
"""

from __future__ import annotations

import math
import statistics
import time

import numpy as np
import pytest
from dparray.backends._mkl import matmul as mm

import dparray as dp
from dparray import optim
from dparray.cli.workloads import WORKLOADS
from dparray.nn import functional as F

SIZES = (784, 1024, 1024, 10)
BATCH = 2048
LR, BETA1, BETA2, EPS = 1e-3, 0.9, 0.999, 1e-8


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], BATCH)
    return x, y


@pytest.fixture(scope="module", autouse=True)
def warm_process(data):
    """Run both steps a few times before anything is timed: whichever ran first in a cold
    process used to pay for the first large allocations and BLAS start-up (about 8%)."""
    step, model = make_dparray_step(*data)
    reference = NumPyMLP([p.numpy() for p in model.parameters()])
    for _ in range(3):
        step()
        reference.step(*data)


def make_dparray_step(x, y):
    dp.manual_seed(0)
    model = WORKLOADS["W1"].build()
    opt = optim.Adam(model.parameters(), lr=LR, betas=(BETA1, BETA2), eps=EPS)
    inputs, labels = dp.tensor(x), dp.tensor(y)

    def step():
        loss = F.cross_entropy(model(inputs), labels)
        opt.step(loss.backward())
        return loss

    return step, model


class NumPyMLP:
    """The same network, loss, gradients and Adam update, written out in NumPy, with the
    matrix products dparray makes (``_mkl.matmul``: MKL's or OpenBLAS's, whichever won the
    race), so that the ratio measures dparray's own overhead."""

    def __init__(self, params):
        self.params = [p.copy() for p in params]  # W1, b1, W2, b2, W3, b3
        self.m = [np.zeros_like(p) for p in self.params]
        self.v = [np.zeros_like(p) for p in self.params]
        self.t = 0

    def step(self, x, y):
        loss, grads = self.gradients(x, y)
        self.t += 1
        for i, grad in enumerate(grads):
            self.m[i] = BETA1 * self.m[i] + (1 - BETA1) * grad
            self.v[i] = BETA2 * self.v[i] + (1 - BETA2) * grad * grad
            denominator = np.sqrt(self.v[i]) * (1 / math.sqrt(1 - BETA2**self.t)) + EPS
            self.params[i] = self.params[i] - LR / (1 - BETA1**self.t) * (self.m[i] / denominator)
        return loss

    def gradients(self, x, y):
        """The loss and the gradients of the parameters, in their order."""
        w1, b1, w2, b2, w3, b3 = self.params
        h1 = mm(x, w1.T) + b1
        a1 = np.maximum(h1, 0.0)
        h2 = mm(a1, w2.T) + b2
        a2 = np.maximum(h2, 0.0)
        logits = mm(a2, w3.T) + b3
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        loss = -log_probs[np.arange(len(y)), y].mean()
        g = np.exp(log_probs)
        g[np.arange(len(y)), y] -= 1.0
        g /= len(y)
        grads = [None] * 6
        grads[4], grads[5] = mm(g.T, a2), g.sum(axis=0)
        g = mm(g, w3) * (h2 > 0)
        grads[2], grads[3] = mm(g.T, a1), g.sum(axis=0)
        g = mm(g, w2) * (h1 > 0)
        grads[0], grads[1] = mm(g.T, x), g.sum(axis=0)
        return loss, grads


def test_gradients_agree(data):
    """Every parameter's gradient, to float32 rounding of the largest one."""
    x, y = data
    _, model = make_dparray_step(x, y)
    reference = NumPyMLP([p.numpy() for p in model.parameters()])
    loss = F.cross_entropy(model(dp.tensor(x)), dp.tensor(y))
    grads = loss.backward()
    expected_loss, expected = reference.gradients(x, y)
    assert loss.item() == pytest.approx(float(expected_loss), rel=1e-5)
    for p, g in zip(model.parameters(), expected, strict=True):
        np.testing.assert_allclose(grads[p].numpy(), g, rtol=1e-4,
                                   atol=1e-5 * float(np.abs(g).max()))


def test_steps_agree(data):
    """Two steps: the first update, and the loss after it. Adam moves a parameter by about
    ``lr * sign(grad)`` whatever the gradient's size, so where a gradient is near 0 float32
    rounding in either program shows in the update (more so in later steps, whose moments
    mix gradients of both signs); the gradients themselves are checked above."""
    x, y = data
    step, model = make_dparray_step(x, y)
    reference = NumPyMLP([p.numpy() for p in model.parameters()])
    assert step().item() == pytest.approx(float(reference.step(x, y)), rel=1e-5)
    for p, q in zip(model.parameters(), reference.params, strict=True):
        np.testing.assert_allclose(p.numpy(), q, rtol=1e-4, atol=LR * 1e-2)
    assert step().item() == pytest.approx(float(reference.step(x, y)), rel=1e-5)


@pytest.mark.benchmark(group="mlp-training-step")
def test_dparray_training_step(benchmark, data):
    step, _ = make_dparray_step(*data)
    benchmark.pedantic(step, rounds=15, iterations=1, warmup_rounds=2)


@pytest.mark.benchmark(group="mlp-training-step")
def test_numpy_training_step(benchmark, data):
    _, model = make_dparray_step(*data)
    reference = NumPyMLP([p.numpy() for p in model.parameters()])
    benchmark.pedantic(reference.step, args=data, rounds=15, iterations=1, warmup_rounds=2)


@pytest.mark.benchmark(group="mlp-training-step-interleaved")
def test_interleaved_ratio(benchmark, data):
    """The two steps alternated in one loop, so drift on a shared machine hits both alike;
    the ratio of their medians is stored for bench/report.py."""
    step, model = make_dparray_step(*data)
    reference = NumPyMLP([p.numpy() for p in model.parameters()])
    ours, theirs = [], []

    def both():
        start = time.perf_counter()
        step()
        middle = time.perf_counter()
        reference.step(*data)
        ours.append(middle - start)
        theirs.append(time.perf_counter() - middle)

    benchmark.pedantic(both, rounds=15, iterations=1, warmup_rounds=2)
    benchmark.extra_info["ratio"] = statistics.median(ours) / statistics.median(theirs)
