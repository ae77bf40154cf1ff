"""Batch norm of ``(N, C)`` input (``BatchNorm1d`` in MLPs, a DCGAN generator's first layer):
NumPy's column loops (``columns_forward``/``columns_backward``: blocks of adjacent columns, the
rows walked in order) against the definition and the reference.

Checked in float64 against the definition (to 1e-12), in float32 against the reference, for
widths below, at and above a block of columns and for few rows, with the module's running
statistics and its evaluation by them.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray.kernels import reference_only
from dparray.nn import functional as F

SHAPES = [(7, 5), (130, 300), (3, 64), (1000, 129), (2, 1)]
EPS = 1e-5


def run(x, weight, bias, grad):
    tensors = [to_tensor(a, requires_grad=True) for a in (x, weight, bias)]
    out = F.batch_norm(tensors[0], None, None, tensors[1], tensors[2], training=True, eps=EPS)
    grads = out.backward(to_tensor(grad))
    return [out.numpy()] + [grads[t].numpy() for t in tensors]


def by_definition(x, weight, bias, grad):
    mean, var = x.mean(axis=0), x.var(axis=0)
    rstd = 1 / np.sqrt(var + EPS)
    xhat = (x - mean) * rstd
    g = grad * weight
    dx = rstd * (g - g.mean(axis=0) - xhat * (g * xhat).mean(axis=0))
    return xhat * weight + bias, dx, (grad * xhat).sum(axis=0), grad.sum(axis=0)


@pytest.mark.parametrize("shape", SHAPES)
def test_float64_against_the_definition(shape, rng):
    x = rng.standard_normal(shape) * 2 + 3
    weight, bias = rng.standard_normal(shape[1]), rng.standard_normal(shape[1])
    grad = rng.standard_normal(shape)
    for got, want in zip(run(x, weight, bias, grad), by_definition(x, weight, bias, grad),
                         strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", SHAPES[:-1])  # (2 rows: the input's gradient is 0 but
def test_float32_agrees_with_the_reference(shape, rng):  # for rounding, float64's test has it)
    arrays = [(rng.standard_normal(shape) * 2 + 3).astype(np.float32),
              rng.standard_normal(shape[1]).astype(np.float32),
              rng.standard_normal(shape[1]).astype(np.float32),
              rng.standard_normal(shape).astype(np.float32)]
    kernel = run(*arrays)
    with reference_only():
        reference = run(*arrays)
    for got, want in zip(kernel, reference, strict=True):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max())


def test_the_modules_running_statistics_are_the_references(rng):
    x = rng.standard_normal((64, 100)) * 3 + 1

    def train_then_evaluate():
        norm = dp.nn.BatchNorm1d(100, dtype=dp.float64)
        t = to_tensor(x, requires_grad=True)
        out = norm(t)
        grads = (out * out * out).sum().backward()
        norm.eval()
        evaluated = norm(to_tensor(x))
        return [out.numpy(), grads[t].numpy(), grads[norm.weight].numpy(),
                norm.running_mean.numpy(), norm.running_var.numpy(), evaluated.numpy()]

    kernel = train_then_evaluate()
    with reference_only():
        reference = train_then_evaluate()
    for got, want in zip(kernel, reference, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
