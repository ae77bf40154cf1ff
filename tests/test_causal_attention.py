"""Causal attention with the mask applied inside the softmax (the NumPy kernel's
``causal_softmax``): bit for bit the kernel's softmax of the reference's masked scores, and the
reference's values and gradients to rounding, in float64 and float32, with as many queries as
keys, fewer, more, one; infinite and NaN scores; on every backend; MultiheadAttention
(is_causal=True) inside DataParallel with 2 and 3 workers, with and without the kernel table."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray import kernels as _kernels
from dparray import nn
from dparray.nn import functional as F
from dparray.ops import attention

SHAPES = {"square": (2, 3, 5, 5), "fewer_queries": (1, 2, 3, 6), "more_queries": (2, 1, 6, 3),
          "one": (1, 1, 1, 1)}


def _run(q, k, v, weight):
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    grads = (out * weight).sum().backward()
    return out.numpy(), [grads[t].numpy() for t in (q, k, v)]


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_mask_inside_the_softmax_is_the_masked_scores_softmax(shape, dtype, rng):
    kernel = _kernels.resolve(dp.get_backend("numpy"), attention.ScaledDotProductAttention)
    op = kernel(0.5, 0.0, True)
    op.xp = dp.get_backend("numpy").xp
    scores = rng.standard_normal(shape).astype(dtype)
    scores[..., 0, -1] = np.inf  # a score the mask hides: it must not show
    inside = op.causal_softmax(scores)
    outside = op.softmax(attention._causal(op.xp, scores))
    assert inside.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(inside, outside)


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize(("dtype", "tolerance"), [("float64", 1e-12), ("float32", 2e-5)])
def test_values_and_gradients_are_the_references(shape, dtype, tolerance, backend, rng):
    batch, heads, queries, keys = shape
    q, k, v = (to_tensor(rng.standard_normal((batch, heads, n, 4)).astype(dtype),
                         requires_grad=True) for n in (queries, keys, keys))
    weight = to_tensor(rng.standard_normal((batch, heads, queries, 4)).astype(dtype))
    got, got_grads = _run(q, k, v, weight)
    with _kernels.reference_only():
        want, want_grads = _run(q, k, v, weight)
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)
    for g, w in zip(got_grads, want_grads, strict=True):
        np.testing.assert_allclose(g, w, rtol=tolerance, atol=tolerance * 10)


@pytest.mark.parametrize("special", [np.inf, -np.inf, np.nan])
def test_special_scores_propagate_as_in_the_reference(special, backend):
    q = dp.tensor([[1.0], [1.0], [1.0]])
    k = dp.tensor([[1.0], [special], [2.0]])
    v = dp.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with np.errstate(invalid="ignore"):  # inf - inf in the softmax: NaN, as it should be
        got = F.scaled_dot_product_attention(q, k, v, is_causal=True).numpy()
        with _kernels.reference_only():
            want = F.scaled_dot_product_attention(q, k, v, is_causal=True).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)  # NaN where NaN
    np.testing.assert_array_equal(got[0], [1.0, 2.0])  # the first query sees the first key


class Causal(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = nn.MultiheadAttention(8, 2, batch_first=True, dtype="float64")

    def forward(self, x):
        return self.attention(x, x, x, need_weights=False, is_causal=True)[0]


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("execution", ["threads", "inline"])
def test_under_data_parallel_same_as_unwrapped(workers, execution, kernels, rng):
    dp.manual_seed(0)
    module = Causal()
    model = dp.DataParallel(module, workers, execution=execution)
    x = to_tensor(rng.standard_normal((5, 6, 8)), requires_grad=True)
    weight = to_tensor(rng.standard_normal((5, 6, 8)))
    want = module(x)
    want_grads = (want * weight).sum().backward()
    got = model(x)
    got_grads = (got * weight).sum().backward()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)
    for variable in want_grads:
        np.testing.assert_allclose(got_grads[variable].numpy(), want_grads[variable].numpy(),
                                   rtol=1e-12, atol=1e-13)
