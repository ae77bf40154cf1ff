"""Adaptive max pooling: NumPy's compiled loops against the definition and the reference.

PyTorch's windows: output ``i`` of ``O`` covers inputs ``floor(i * S / O)`` to ``ceil((i + 1) *
S / O)``, so windows may overlap and differ in size by one. Each window's first maximum in
row-major order wins and alone takes the gradient; a NaN wins over every number, the first NaN
over the others (NumPy's ``argmax``, the reference's). Checked in float64 against maxima and
gradients written here by loops over the windows, in float32 against the reference (values and
indices to the bit, gradients to the bit where windows do not overlap), up and down, square and
not; under ``create_graph`` and inside DataParallel.
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
from test_adaptive_avg_pool_kernel import CASES, windows  # the same windows, the same cases

import dparray as dp
from dparray.kernels import reference_only, resolve
from dparray.nn import functional as F
from dparray.testing import gradcheck

TILING = [((2, 3, 8, 10), (1, 1)), ((2, 3, 8, 10), (4, 5)), ((1, 2, 6, 6), (2, 1))]


def by_definition(x, output_size, grad):
    """The maxima, each winner's flat position in its plane, and the input's gradient."""
    n, c, h, w = x.shape
    out = np.empty((n, c, *output_size), x.dtype)
    indices = np.empty((n, c, *output_size), np.int64)
    dx = np.zeros_like(x)
    for b in range(n):
        for k in range(c):
            for i, (r0, r1) in enumerate(windows(h, output_size[0])):
                for j, (c0, c1) in enumerate(windows(w, output_size[1])):
                    best, at = None, None
                    for y in range(r0, r1):
                        for z in range(c0, c1):
                            v = x[b, k, y, z]
                            if best is None or (not np.isnan(best) and
                                                (v > best or np.isnan(v))):
                                best, at = v, (y, z)
                    out[b, k, i, j] = best
                    indices[b, k, i, j] = at[0] * w + at[1]
                    dx[b, k, at[0], at[1]] += grad[b, k, i, j]
    return out, indices, dx


def run(x, output_size, grad):
    t = to_tensor(x, requires_grad=True)
    out, indices = F.adaptive_max_pool2d(t, output_size, return_indices=True)
    return out.numpy(), indices.numpy(), out.backward(to_tensor(grad))[t].numpy()


def data(rng, shape, output_size, dtype):
    x = rng.standard_normal(shape).astype(dtype)
    grad = rng.standard_normal((*shape[:2], *output_size)).astype(dtype)
    return x, grad


@pytest.mark.parametrize("shape, output_size", CASES + TILING)
def test_float64_against_the_definition(shape, output_size, rng):
    x, grad = data(rng, shape, output_size, np.float64)
    got, want = run(x, output_size, grad), by_definition(x, output_size, grad)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_allclose(got[2], want[2], rtol=1e-15, atol=0)


@pytest.mark.parametrize("shape, output_size", CASES)
def test_float32_is_the_reference_to_its_rounding(shape, output_size, rng):
    x, grad = data(rng, shape, output_size, np.float32)
    kernel = run(x, output_size, grad)
    with reference_only():
        reference = run(x, output_size, grad)
    assert kernel[0].dtype == kernel[2].dtype == np.float32
    np.testing.assert_array_equal(kernel[0], reference[0])
    np.testing.assert_array_equal(kernel[1], reference[1])
    np.testing.assert_allclose(kernel[2], reference[2], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shape, output_size", TILING)
def test_windows_that_do_not_overlap_are_the_references_bits(shape, output_size, rng):
    x, grad = data(rng, shape, output_size, np.float32)
    kernel = run(x, output_size, grad)
    with reference_only():
        reference = run(x, output_size, grad)
    for got, want in zip(kernel, reference, strict=True):
        np.testing.assert_array_equal(got, want)


def test_ties_and_nans_pick_the_references_winner(rng):
    x = np.ones((2, 2, 6, 7), np.float32)  # ties everywhere: the first of each window wins
    x[0, 0, 2, 3] = np.nan
    x[0, 1, 1, 1] = x[0, 1, 1, 4] = np.nan  # the first NaN wins over a later one
    x[1, 0, 4, 5] = np.inf
    x[1, 1, 0, 0] = -np.inf
    grad = rng.standard_normal((2, 2, 4, 3)).astype(np.float32)
    kernel = run(x, (4, 3), grad)
    with reference_only():
        reference = run(x, (4, 3), grad)
    want = by_definition(x, (4, 3), grad)
    for got, expected, definition in zip(kernel, reference, want, strict=True):
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(got, definition)


def test_the_numpy_backend_runs_the_kernel():
    from dparray.ops.adaptive_pool import AdaptiveMaxPool2d

    kernel = resolve(dp.get_backend("numpy"), AdaptiveMaxPool2d)
    assert kernel.__name__ == "AdaptiveMaxPoolKernel"


def test_integer_input_is_left_to_the_reference():
    x = dp.arange(2 * 3 * 5 * 4, dtype=dp.int64).reshape(2, 3, 5, 4)
    with reference_only():
        want = F.adaptive_max_pool2d(x, (2, 3)).numpy()
    got = F.adaptive_max_pool2d(x, (2, 3)).numpy()
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)


def test_a_float64_gradient_into_a_float32_node(rng):
    from dparray.ops.adaptive_pool import AdaptiveMaxPool2d

    assert_float64_gradient_into_float32_node(
        AdaptiveMaxPool2d, ((3, 4),), rng.standard_normal((2, 3, 10, 9)).astype(np.float32),
        rng.standard_normal((2, 3, 3, 4)))


def test_gradcheck_in_float64(backend, kernels, rng):
    # distinct values a finite step apart, so no step changes a window's winner
    values = rng.permutation(2 * 2 * 5 * 7).astype(np.float64).reshape(2, 2, 5, 7) * 0.1
    x = to_tensor(values, requires_grad=True, backend=backend)
    gradcheck(lambda t: F.adaptive_max_pool2d(t, (3, 4)), [x])


def test_second_derivatives_are_the_references(rng):
    assert_second_derivatives_are_the_references(lambda x: F.adaptive_max_pool2d(x, (3, 4)),
                                                  rng.standard_normal((2, 3, 10, 9)), 1e-13)


@pytest.mark.parametrize("workers", [2, 3])
def test_under_data_parallel_the_same_as_unwrapped(workers, rng):
    model = dp.nn.Sequential(dp.nn.Conv2d(3, 4, 3, dtype=dp.float64),
                             dp.nn.AdaptiveMaxPool2d((3, 2)))
    assert_model_under_data_parallel(model, rng.standard_normal((6, 3, 9, 8)), workers)
