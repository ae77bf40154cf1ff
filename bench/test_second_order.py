"""A Hessian-vector product of the W1 MLP's loss (784-1024-1024-10, batch 2048, float32, with
respect to all its parameters) against one first-order gradient of the same loss (forward and
backward), alternated in one run. Goal: the product costs at most 3x the gradient.

    make bench      # bench/report.py prints the ratio (goal: <= 3.0)

``dparray.func.hvp`` is reverse over reverse: the forward, a backward that records its own
graph (``create_graph``), and a backward through that graph. In matrix products alone that is
about 2.7x a gradient for this network (the second pass differentiates the first pass's
products and reaches the forward's again); the rest is what recording costs.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import pytest

import dparray as dp
from dparray import func
from dparray.cli.workloads import WORKLOADS
from dparray.nn import functional as F


def _problem(workload: str = "W1"):
    dp.manual_seed(0)
    spec = WORKLOADS[workload]
    model = spec.build()
    x, y = spec.batch()
    params = dict(model.named_parameters())
    tangents = {name: dp.randn(*p.shape) for name, p in params.items()}

    def loss(p):
        return F.cross_entropy(func.functional_call(model, p, x), y)

    def gradient():
        return F.cross_entropy(model(x), y).backward()

    def product():
        return func.hvp(loss, (params,), (tangents,))

    return gradient, product, loss, params, tangents


@pytest.fixture(scope="module")
def w1():
    gradient, product, *_ = _problem()
    for _ in range(2):  # warm both: the first large allocations and BLAS start-up
        gradient()
        product()
    return gradient, product


def test_hvp_agrees_with_differences_of_the_gradient():
    """The product on a float64 copy of a small MLP, against central differences of its
    gradient along the tangent (the benchmark times the same code on W1)."""
    dp.manual_seed(1)
    model = dp.nn.Sequential(dp.nn.Linear(6, 5), dp.nn.ReLU(), dp.nn.Linear(5, 3)).to(dp.float64)
    x, y = dp.randn(8, 6, dtype="float64"), dp.tensor([0, 2, 1, 1, 0, 2, 2, 1])
    params = {name: p.detach() for name, p in model.named_parameters()}
    tangents = {name: dp.randn(*p.shape, dtype="float64") for name, p in params.items()}

    def loss(p):
        return F.cross_entropy(func.functional_call(model, p, x), y)

    _, (product,) = func.hvp(loss, (params,), (tangents,))
    eps = 1e-6
    plus = func.grad(loss)({k: p + eps * tangents[k] for k, p in params.items()})
    minus = func.grad(loss)({k: p - eps * tangents[k] for k, p in params.items()})
    for name in params:
        numeric = (plus[name].numpy() - minus[name].numpy()) / (2 * eps)
        np.testing.assert_allclose(product[name].numpy(), numeric, rtol=1e-5, atol=1e-8)


@pytest.mark.benchmark(group="w1-second-order")
def test_first_order_gradient(benchmark, w1):
    benchmark.pedantic(w1[0], rounds=7, iterations=1, warmup_rounds=1)


@pytest.mark.benchmark(group="w1-second-order")
def test_hessian_vector_product(benchmark, w1):
    benchmark.pedantic(w1[1], rounds=7, iterations=1, warmup_rounds=1)


@pytest.mark.benchmark(group="w1-second-order-interleaved")
def test_hvp_ratio(benchmark, w1):
    """The two alternated in one loop, so drift on a shared machine hits both alike; the ratio
    of their medians is stored for bench/report.py."""
    gradient, product = w1
    first, second = [], []

    def both():
        start = time.perf_counter()
        gradient()
        middle = time.perf_counter()
        product()
        first.append(middle - start)
        second.append(time.perf_counter() - middle)

    benchmark.pedantic(both, rounds=9, iterations=1, warmup_rounds=1)
    benchmark.extra_info["hvp_ratio"] = statistics.median(second) / statistics.median(first)
    benchmark.extra_info["gradient_s"] = statistics.median(first)
    benchmark.extra_info["hvp_s"] = statistics.median(second)
