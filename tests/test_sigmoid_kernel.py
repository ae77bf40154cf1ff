"""The sigmoid: its kernel gives the reference's values and gradients to the bit.

The reference (``dparray.ops.elementwise.Sigmoid``) computes ``1 / (1 + e)`` for ``x >= 0``
and ``e / (1 + e)`` below, with ``e = exp(-|x|)``, and backward ``grad * out * (1 - out)``.
NumPy's kernel keeps that arithmetic in the arrays' own type, so the two agree exactly: at
NaN, +-inf, +-0, subnormals and where ``exp`` under- or overflows, on one core and on several
(sizes either side of the serial-loop threshold), for strided inputs and inside DataParallel.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import (
    assert_activation_under_data_parallel,
    assert_integer_input_gives_the_references_float,
    special_floats,
    to_tensor,
    value_and_gradient,
)

import dparray as dp
from dparray.kernels import reference_only
from dparray.testing import gradcheck


def expected(x: np.ndarray) -> np.ndarray:
    """The reference's formula, in NumPy (in ``x``'s dtype, as NumPy 2 keeps it)."""
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [19, 40_000])  # below and above the serial-loop threshold
def test_the_kernel_gives_the_references_values_and_gradients_to_the_bit(dtype, size, rng):
    x = special_floats(dtype, size, rng)
    grad = rng.standard_normal(size).astype(dtype)
    grad[-3:] = [np.inf, np.nan, 0.0]
    kernel = value_and_gradient(dp.sigmoid, x, grad)
    with reference_only():
        reference = value_and_gradient(dp.sigmoid, x, grad)
    out = expected(x)
    np.testing.assert_array_equal(kernel[0], out)
    np.testing.assert_array_equal(reference[0], out)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(kernel[1], grad * out * (1.0 - out))
    np.testing.assert_array_equal(kernel[1], reference[1])
    assert kernel[0].dtype == kernel[1].dtype == dtype


def test_strided_inputs_and_gradients(backend, kernels, rng):
    x = rng.standard_normal((6, 8))[:, ::2].T  # neither C- nor F-ordered after the slice
    grad = rng.standard_normal((8, 6))[::2].copy(order="F")
    t = to_tensor(x, requires_grad=True, backend=backend)
    out = dp.sigmoid(t)
    got = out.backward(to_tensor(grad, backend=backend))[t]
    want = 1.0 / (1.0 + np.exp(-x))
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-15)
    np.testing.assert_allclose(got.numpy(), grad * want * (1.0 - want), rtol=1e-14)


def test_gradcheck_in_float64(backend, kernels, rng):
    x = to_tensor(rng.standard_normal((5, 7)) * 4, requires_grad=True, backend=backend)
    gradcheck(dp.sigmoid, [x])


def test_integer_input_gives_the_references_float(backend, kernels):
    out = assert_integer_input_gives_the_references_float(dp.sigmoid, backend)
    np.testing.assert_allclose(out, 1.0 / (1.0 + np.exp(-np.array([-2.0, 0.0, 3.0]))),
                               rtol=1e-6)


@pytest.mark.parametrize("workers", [2, 3])
def test_under_data_parallel_the_same_as_unwrapped(workers, rng):
    assert_activation_under_data_parallel(dp.nn.Sigmoid(), workers, rng)
