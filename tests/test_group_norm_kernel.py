"""Group norm and instance norm: NumPy's compiled loops (one (sample, group) per task)
against an independent computation and the reference.

Forward and backward are one pass each (``backends/_numba_loops.py``, ``groups_forward`` and
``groups_backward``), statistics and sums in float64. Checked against the definitions written
here in float64 (to 1e-12), against the reference in float32, with and without the affine
parameters, one group, one group per channel, 1-d to 3-d inputs, instance norm's running
statistics, under ``create_graph`` and inside DataParallel.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import (
    assert_mixed_second_derivatives_are_the_references,
    assert_model_under_data_parallel,
    to_tensor,
)

import dparray as dp
from dparray.kernels import reference_only, resolve
from dparray.nn import functional as F
from dparray.testing import gradcheck

SHAPES = [((2, 6, 5, 3), 3), ((4, 8, 7), 2), ((3, 4, 2, 2, 2), 4), ((2, 6, 5, 3), 1),
          ((1, 4, 9), 4), ((5, 32, 40), 8)]
EPS = 1e-5


def by_definition(x, groups, weight, bias, grad):
    """Group norm and its gradients from the definition, in float64: ``xhat = (x - mean) /
    sqrt(var + eps)`` per (sample, group), ``dx = rstd (g - mean(g) - xhat mean(g xhat))``
    with ``g = dy * weight``."""
    n, c = x.shape[:2]
    view = x.reshape(n, groups, -1)
    mean = view.mean(axis=2, keepdims=True)
    rstd = 1 / np.sqrt(view.var(axis=2, keepdims=True) + EPS)
    xhat = ((view - mean) * rstd).reshape(x.shape)
    channel = (1, c) + (1,) * (x.ndim - 2)
    out = xhat * weight.reshape(channel) + bias.reshape(channel)
    g = (grad * weight.reshape(channel)).reshape(n, groups, -1)
    xh = xhat.reshape(n, groups, -1)
    dx = rstd * (g - g.mean(axis=2, keepdims=True) - xh * (g * xh).mean(axis=2, keepdims=True))
    outside = (0, *range(2, x.ndim))
    return out, dx.reshape(x.shape), (grad * xhat).sum(axis=outside), grad.sum(axis=outside)


def run(x, groups, weight, bias, grad, eps=EPS):
    tensors = [to_tensor(x, requires_grad=True)]
    params = [None if p is None else to_tensor(p, requires_grad=True) for p in (weight, bias)]
    out = F.group_norm(tensors[0], groups, *params, eps=eps)
    grads = out.backward(to_tensor(grad))
    given = tensors + [p for p in params if p is not None]
    return [out.numpy()] + [grads[t].numpy() for t in given]


@pytest.mark.parametrize("affine", ["weight and bias", "weight", "neither"])
@pytest.mark.parametrize("shape, groups", SHAPES)
def test_float64_against_the_definition(shape, groups, affine, rng):
    x = rng.standard_normal(shape) * 3 + 1
    weight, bias = rng.standard_normal(shape[1]), rng.standard_normal(shape[1])
    grad = rng.standard_normal(shape)
    given_weight = None if affine == "neither" else weight
    given_bias = bias if affine == "weight and bias" else None
    got = run(x, groups, given_weight, given_bias, grad)
    expected = by_definition(x, groups, np.ones_like(weight) if given_weight is None else weight,
                             np.zeros_like(bias) if given_bias is None else bias, grad)
    for value, want in zip(got, expected, strict=False):
        assert value.dtype == np.float64
        np.testing.assert_allclose(value, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape, groups", SHAPES)
def test_float32_agrees_with_the_reference(shape, groups, rng):
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    weight = rng.standard_normal(shape[1]).astype(np.float32)
    bias = rng.standard_normal(shape[1]).astype(np.float32)
    grad = rng.standard_normal(shape).astype(np.float32)
    kernel = run(x, groups, weight, bias, grad)
    with reference_only():
        reference = run(x, groups, weight, bias, grad)
    for got, want in zip(kernel, reference, strict=True):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_the_numpy_backend_runs_the_kernels():
    from dparray.ops import normalization

    numpy = dp.get_backend("numpy")
    for reference in (normalization.GroupNorm, normalization.InstanceNorm):
        assert resolve(numpy, reference).__name__ == reference.__name__ + "Kernel"


def test_instance_norm_and_its_running_statistics_are_the_references(rng):
    x = rng.standard_normal((4, 6, 5, 7)) * 2 + 3

    def run_module():
        norm = dp.nn.InstanceNorm2d(6, affine=True, track_running_stats=True,
                                    dtype=dp.float64)
        t = to_tensor(x, requires_grad=True)
        out = norm(t)
        grads = (out * out * out).sum().backward()
        norm.eval()
        evaluated = norm(to_tensor(x))  # by the running statistics: the reference
        return [out.numpy(), grads[t].numpy(), grads[norm.weight].numpy(),
                norm.running_mean.numpy(), norm.running_var.numpy(), evaluated.numpy()]

    kernel = run_module()
    with reference_only():
        reference = run_module()
    for got, want in zip(kernel, reference, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_gradcheck_in_float64(backend, kernels, rng):
    x = to_tensor(rng.standard_normal((2, 6, 3, 2)), requires_grad=True, backend=backend)
    weight = to_tensor(rng.standard_normal(6), requires_grad=True, backend=backend)
    bias = to_tensor(rng.standard_normal(6), requires_grad=True, backend=backend)
    gradcheck(lambda a, w, b: F.group_norm(a, 3, w, b), [x, weight, bias])


def test_second_derivatives_are_the_references(rng):
    assert_mixed_second_derivatives_are_the_references(
        lambda x, w: F.group_norm(x, 2, w, None),
        rng.standard_normal((3, 4, 10)), rng.standard_normal(4), 1e-11)


@pytest.mark.parametrize("workers", [2, 3])
def test_under_data_parallel_the_same_as_unwrapped(workers, rng):
    model = dp.nn.Sequential(dp.nn.Conv2d(3, 8, 3, dtype=dp.float64), dp.nn.GroupNorm(4, 8,
                             dtype=dp.float64))
    assert_model_under_data_parallel(model, rng.standard_normal((6, 3, 7, 7)), workers, 1e-11)
