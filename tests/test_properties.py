"""Property tests over random shapes: elementwise ops with broadcasting, reductions on random
axes. Values against NumPy on the host, gradients against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dparray as dp
from dparray.testing import gradcheck

BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "div": (lambda a, b: a / (b * b + 1.0), lambda a, b: a / (b * b + 1.0)),
    "maximum": (dp.maximum, np.maximum),
}
UNARY = {
    "exp": (dp.exp, np.exp),
    "tanh": (dp.tanh, np.tanh),
    "sigmoid": (dp.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "softplus": (dp.softplus, lambda x: np.log1p(np.exp(x))),
    "square": (lambda x: x**2, np.square),
}
REDUCTIONS = {
    "sum": (dp.sum, np.sum),
    "mean": (dp.mean, np.mean),
    "max": (dp.max, np.max),
    "var": (lambda x, **kw: dp.var(x, correction=0, **kw), np.var),  # no NaN for one element
    "logsumexp": (dp.logsumexp,
                  lambda x, axis, keepdims: np.log(np.exp(x).sum(axis=axis, keepdims=keepdims))),
}

shapes = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3)
seeds = st.integers(0, 2**16)


def _distinct(rng, shape):
    """Values with no ties anywhere, so max and maximum have no kinks nearby."""
    n = int(np.prod(shape))
    return (rng.permutation(n).astype(np.float64) * 0.37 - 0.1 * n + rng.uniform(0, 0.01)).reshape(
        shape)


@pytest.mark.parametrize("name", sorted(BINARY))
@given(shapes=shapes, seed=seeds)
def test_binary_ops_broadcast(name, shapes, seed):
    function, reference = BINARY[name]
    rng = np.random.default_rng(seed)
    a = _distinct(rng, shapes.input_shapes[0])
    b = _distinct(rng, shapes.input_shapes[1]) + 0.05
    for backend in ("numpy", "array_api_strict"):
        with dp.use_backend(backend):
            ta, tb = to_tensor(a, requires_grad=True), to_tensor(b, requires_grad=True)
            out = function(ta, tb)
            assert out.shape == shapes.result_shape
            np.testing.assert_allclose(out.numpy(), reference(a, b), rtol=1e-12)
            gradcheck(function, [ta, tb])


@pytest.mark.parametrize("name", sorted(UNARY))
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=3), seed=seeds)
def test_unary_ops(name, shape, seed):
    function, reference = UNARY[name]
    x = np.random.default_rng(seed).standard_normal(shape)
    for backend in ("numpy", "array_api_strict"):
        with dp.use_backend(backend):
            t = to_tensor(x, requires_grad=True)
            np.testing.assert_allclose(function(t).numpy(), reference(x), rtol=1e-12)
            gradcheck(function, [t])


@st.composite
def reduction_inputs(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    axes = draw(st.one_of(
        st.none(),
        st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1, max_size=len(shape),
                 unique_by=lambda a: a % len(shape)).map(tuple),
    ))
    return shape, axes, draw(st.booleans()), draw(seeds)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@given(case=reduction_inputs())
def test_reductions_over_random_axes(name, case):
    shape, axes, keepdims, seed = case
    function, reference = REDUCTIONS[name]
    x = _distinct(np.random.default_rng(seed), shape)
    expected = np.asarray(reference(x, axis=axes, keepdims=keepdims))
    for backend in ("numpy", "array_api_strict"):
        with dp.use_backend(backend):
            t = to_tensor(x, requires_grad=True)
            out = function(t, axis=axes, keepdims=keepdims)
            assert out.shape == expected.shape
            np.testing.assert_allclose(out.numpy(), expected, rtol=1e-11)
            gradcheck(lambda v: function(v, axis=axes, keepdims=keepdims), [t])
