"""Adaptive average pooling: NumPy's compiled loops (windows that do not tile an axis) against
the definition and the reference.

PyTorch's windows: output ``i`` of ``O`` covers inputs ``floor(i * S / O)`` to ``ceil((i + 1) *
S / O)``, so windows may overlap and differ in size by one. Checked in float64 against means
over those windows written here (to 1e-13), in float32 against the reference, up and down,
square and not; tiling windows (global pooling) take the reference's gradient bits; under
``create_graph`` and inside DataParallel.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import (
    assert_float64_gradient_into_float32_node,
    assert_model_under_data_parallel,
    assert_second_derivatives_are_the_references,
    to_tensor,
)

import dparray as dp
from dparray.kernels import reference_only, resolve
from dparray.nn import functional as F
from dparray.testing import gradcheck

CASES = [((2, 3, 10, 9), (3, 4)), ((1, 2, 5, 13), (5, 6)), ((2, 2, 4, 4), (7, 9)),
         ((3, 4, 32, 32), (7, 7)), ((2, 3, 8, 9), (4, 3)), ((1, 1, 1, 5), (1, 2))]


def windows(size, out):
    return [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


def by_definition(x, output_size, grad):
    n, c, h, w = x.shape
    out = np.empty((n, c, *output_size))
    dx = np.zeros_like(x)
    for i, (r0, r1) in enumerate(windows(h, output_size[0])):
        for j, (c0, c1) in enumerate(windows(w, output_size[1])):
            out[:, :, i, j] = x[:, :, r0:r1, c0:c1].mean(axis=(2, 3))
            dx[:, :, r0:r1, c0:c1] += grad[:, :, i, j, None, None] / ((r1 - r0) * (c1 - c0))
    return out, dx


def run(x, output_size, grad):
    t = to_tensor(x, requires_grad=True)
    out = F.adaptive_avg_pool2d(t, output_size)
    return out.numpy(), out.backward(to_tensor(grad))[t].numpy()


@pytest.mark.parametrize("shape, output_size", CASES)
def test_float64_against_the_definition(shape, output_size, rng):
    x = rng.standard_normal(shape)
    grad = rng.standard_normal((*shape[:2], *output_size))
    for got, want in zip(run(x, output_size, grad), by_definition(x, output_size, grad),
                         strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("shape, output_size", CASES)
def test_float32_agrees_with_the_reference(shape, output_size, rng):
    x = rng.standard_normal(shape).astype(np.float32)
    grad = rng.standard_normal((*shape[:2], *output_size)).astype(np.float32)
    kernel = run(x, output_size, grad)
    with reference_only():
        reference = run(x, output_size, grad)
    for got, want in zip(kernel, reference, strict=True):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("output_size", [(1, 1), (4, 5), (2, 1)])
def test_tiling_windows_take_the_references_gradient(output_size, rng):
    x = rng.standard_normal((2, 3, 8, 10)).astype(np.float32)
    grad = rng.standard_normal((2, 3, *output_size)).astype(np.float32)
    (out, dx), want = run(x, output_size, grad), by_definition(x.astype(np.float64),
                                                                output_size, grad)
    with reference_only():
        reference = run(x, output_size, grad)
    np.testing.assert_allclose(out, want[0], rtol=1e-6, atol=1e-7)  # the mean rounded once
    np.testing.assert_allclose(out, reference[0], rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(dx, reference[1])


def test_the_numpy_backend_runs_the_kernel():
    from dparray.ops.adaptive_pool import AdaptiveAvgPool2d

    kernel = resolve(dp.get_backend("numpy"), AdaptiveAvgPool2d)
    assert kernel.__name__ == "AdaptiveAvgPoolKernel"


def test_a_float64_gradient_into_a_float32_node(rng):
    from dparray.ops.adaptive_pool import AdaptiveAvgPool2d

    assert_float64_gradient_into_float32_node(
        AdaptiveAvgPool2d, ((3, 4),), rng.standard_normal((2, 3, 10, 9)).astype(np.float32),
        rng.standard_normal((2, 3, 3, 4)))


def test_gradcheck_in_float64(backend, kernels, rng):
    x = to_tensor(rng.standard_normal((2, 2, 5, 7)), requires_grad=True, backend=backend)
    gradcheck(lambda t: F.adaptive_avg_pool2d(t, (3, 4)), [x])


def test_second_derivatives_are_the_references(rng):
    assert_second_derivatives_are_the_references(lambda x: F.adaptive_avg_pool2d(x, (3, 4)),
                                                  rng.standard_normal((2, 3, 10, 9)), 1e-13)


@pytest.mark.parametrize("workers", [2, 3])
def test_under_data_parallel_the_same_as_unwrapped(workers, rng):
    model = dp.nn.Sequential(dp.nn.Conv2d(3, 4, 3, dtype=dp.float64),
                             dp.nn.AdaptiveAvgPool2d((3, 2)))
    assert_model_under_data_parallel(model, rng.standard_normal((6, 3, 9, 8)), workers)
