"""Tanh: its NumPy kernel gives the reference's values and gradients to the bit.

The reference (``dparray.ops.elementwise.Tanh``) is NumPy's ``tanh`` and backward ``grad * (1 -
t * t)`` from its output. The kernel slices the same ``tanh`` over the cores and computes the
backward in one compiled pass, in the arrays' own type, so the two agree exactly: at NaN,
+-inf, +-0 and subnormals, below the kernel's size threshold (where the reference runs) and
above it, in one slice and several, for strided inputs, through ``nn.Tanh``, under
``create_graph`` and inside DataParallel.
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
from dparray.kernels import reference_only, resolve
from dparray.testing import gradcheck

SIZES = [19, 40_000, 300_001]  # the reference; one tanh slice; several slices


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", SIZES)
def test_the_kernel_gives_the_references_values_and_gradients_to_the_bit(dtype, size, rng):
    x = special_floats(dtype, size, rng) / 6  # most values where tanh is not yet +-1
    grad = rng.standard_normal(size).astype(dtype)
    grad[-3:] = [np.inf, np.nan, 0.0]
    kernel = value_and_gradient(dp.tanh, x, grad)
    with reference_only():
        reference = value_and_gradient(dp.tanh, x, grad)
    out = np.tanh(x)
    np.testing.assert_array_equal(kernel[0], out)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(kernel[1], grad * (dtype(1) - out * out))
    for got, want in zip(kernel, reference, strict=True):
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)


def test_the_numpy_backend_runs_the_kernel():
    from dparray.ops.elementwise import Tanh

    assert resolve(dp.get_backend("numpy"), Tanh).__name__ == "TanhKernel"
    with reference_only():
        assert resolve(dp.get_backend("numpy"), Tanh) is Tanh


def test_the_module_and_method_run_the_kernel(rng):
    x = rng.standard_normal((200, 200)).astype(np.float32)
    grad = rng.standard_normal(x.shape).astype(np.float32)
    function = value_and_gradient(dp.tanh, x, grad)
    for through in (dp.nn.Tanh(), lambda t: t.tanh()):
        for got, want in zip(value_and_gradient(through, x, grad), function, strict=True):
            np.testing.assert_array_equal(got, want)


def test_strided_inputs_and_gradients(backend, kernels, rng):
    x = rng.standard_normal((600, 800))[:, ::2].T  # neither C- nor F-ordered after the slice
    grad = rng.standard_normal((800, 600))[::2].copy(order="F")
    t = to_tensor(x, requires_grad=True, backend=backend)
    out = dp.tanh(t)
    got = out.backward(to_tensor(grad, backend=backend))[t]
    want = np.tanh(x)
    assert out.shape == x.shape and got.shape == x.shape
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-15, atol=1e-300)
    np.testing.assert_allclose(got.numpy(), grad * (1.0 - want * want), rtol=1e-13, atol=1e-300)


def test_gradcheck_in_float64(backend, kernels, rng):
    x = to_tensor(rng.standard_normal((5, 7)) * 2, requires_grad=True, backend=backend)
    gradcheck(dp.tanh, [x])


def test_second_derivatives_are_the_references(rng):
    x0 = rng.standard_normal((40, 1000))

    kernel = derivatives_as_the_reference_gives_them(dp.tanh, x0)
    t = np.tanh(x0)  # d2/dx2 tanh = -2 t (1 - t^2)
    np.testing.assert_allclose(kernel[1], -2 * t * (1 - t * t), rtol=1e-12, atol=1e-15)


def test_integer_input_gives_the_references_float(backend, kernels):
    assert_integer_input_gives_the_references_float(dp.tanh, backend)


@pytest.mark.parametrize("workers", [2, 3])
def test_under_data_parallel_the_same_as_unwrapped(workers, rng):
    assert_activation_under_data_parallel(dp.nn.Tanh(), workers, rng)
