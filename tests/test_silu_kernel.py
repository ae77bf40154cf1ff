"""SiLU: its NumPy kernel gives the reference's values and gradients to the bit.

The reference (``dparray.ops.activations.Silu``) computes ``x * s`` with the stable sigmoid
``s`` (``1 / (1 + e)`` for ``x >= 0``, ``e / (1 + e)`` below, ``e = exp(-|x|)``) and backward
``grad * s * (1 + x * (1 - s))``. The kernel keeps that arithmetic in the arrays' own type,
so the two agree exactly: at NaN, +-inf, +-0, subnormals and where ``exp`` under- or
overflows, below and above the serial-loop and slicing thresholds, for strided inputs, through
``nn.SiLU``, under ``create_graph`` and inside DataParallel.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import (
    assert_activation_under_data_parallel,
    assert_integer_input_gives_the_references_float,
    derivatives_as_the_reference_gives_them,
    special_floats,
    to_tensor,
    value_and_gradient,
)

import dparray as dp
from dparray.kernels import reference_only
from dparray.nn import functional as F
from dparray.testing import gradcheck

SIZES = [19, 40_000, 300_001]  # serial loops; parallel loops, one exp slice; several slices


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", SIZES)
def test_the_kernel_gives_the_references_values_and_gradients_to_the_bit(dtype, size, rng):
    x = special_floats(dtype, size, rng)
    grad = rng.standard_normal(size).astype(dtype)
    grad[-3:] = [np.inf, np.nan, 0.0]
    kernel = value_and_gradient(F.silu, x, grad)
    with reference_only():
        reference = value_and_gradient(F.silu, x, grad)
    for got, want in zip(kernel, reference, strict=True):
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)
    finite = np.abs(x) < 80
    with np.errstate(all="ignore"):
        independent = x / (1.0 + np.exp(-x.astype(np.float64)))
    np.testing.assert_allclose(kernel[0][finite], independent[finite],
                               rtol=1e-6 if dtype == np.float32 else 1e-14, atol=1e-30)


def test_the_numpy_backend_runs_the_kernel():
    from dparray.kernels import resolve
    from dparray.ops.activations import Silu

    assert resolve(dp.get_backend("numpy"), Silu).__name__ == "SiluKernel"
    with reference_only():
        assert resolve(dp.get_backend("numpy"), Silu) is Silu


def test_the_module_runs_the_kernel_as_the_function_does(rng):
    x = special_floats(np.float32, 40_000, rng).reshape(200, 200)
    grad = rng.standard_normal(x.shape).astype(np.float32)
    module = value_and_gradient(dp.nn.SiLU(), x, grad)
    with reference_only():
        reference = value_and_gradient(dp.nn.SiLU(), x, grad)
    for got, want in zip(module, reference, strict=True):
        np.testing.assert_array_equal(got, want)


def test_strided_inputs_and_gradients(backend, kernels, rng):
    x = rng.standard_normal((6, 8))[:, ::2].T  # neither C- nor F-ordered after the slice
    grad = rng.standard_normal((8, 6))[::2].copy(order="F")
    t = to_tensor(x, requires_grad=True, backend=backend)
    out = F.silu(t)
    got = out.backward(to_tensor(grad, backend=backend))[t]
    s = 1.0 / (1.0 + np.exp(-x))
    assert out.shape == x.shape and got.shape == x.shape
    np.testing.assert_allclose(out.numpy(), x * s, rtol=1e-15)
    np.testing.assert_allclose(got.numpy(), grad * s * (1.0 + x * (1.0 - s)), rtol=1e-14)


def test_gradcheck_in_float64(backend, kernels, rng):
    x = to_tensor(rng.standard_normal((5, 7)) * 4, requires_grad=True, backend=backend)
    gradcheck(F.silu, [x])


def test_second_derivatives_are_the_references(rng):
    x0 = rng.standard_normal((40, 1000))

    kernel = derivatives_as_the_reference_gives_them(F.silu, x0)
    s = 1.0 / (1.0 + np.exp(-x0))  # d2/dx2 of x s(x): s(1 - s)(2 + x(1 - 2s))
    np.testing.assert_allclose(kernel[1], s * (1 - s) * (2 + x0 * (1 - 2 * s)), rtol=1e-12,
                               atol=1e-15)


def test_integer_input_gives_the_references_float(backend, kernels):
    assert_integer_input_gives_the_references_float(F.silu, backend)


@pytest.mark.parametrize("workers", [2, 3])
def test_under_data_parallel_the_same_as_unwrapped(workers, rng):
    assert_activation_under_data_parallel(dp.nn.SiLU(), workers, rng)
