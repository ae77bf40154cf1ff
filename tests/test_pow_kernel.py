"""``x ** 3``: NumPy's kernel computes ``x * x * x``, as PyTorch does, instead of libm's
``pow``; every other power, and integer bases, are the reference's.

The value is exactly ``x * x * x`` in the array's type (so within an ulp and a half of the
exact cube, whatever NumPy's ``pow`` gives on this CPU, and the sign of zero, NaN and inf as
IEEE's ``pow`` gives them), the gradient ``3 * x ** 2`` the reference's to the bit; for a
Python ``3`` and ``3.0``, float32 and float64, below and above the serial-loop threshold,
under ``create_graph`` and inside DataParallel.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import (
    assert_model_under_data_parallel,
    derivatives_as_the_reference_gives_them,
    special_floats,
    value_and_gradient,
)

import dparray as dp
from dparray.kernels import reference_only, resolve

POWERS = {"x ** 3": lambda t: t ** 3, "dp.pow(x, 3.0)": lambda t: dp.pow(t, 3.0),
          "x.pow(3)": lambda t: t.pow(3)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [19, 300_001])
@pytest.mark.parametrize("power", POWERS)
def test_the_cube_is_x_times_x_times_x(power, size, dtype, rng):
    x = special_floats(dtype, size, rng) / 1e3
    x[:4] = [-0.0, 0.0, -np.inf, np.nan]
    grad = rng.standard_normal(size).astype(dtype)
    kernel = value_and_gradient(POWERS[power], x, grad)
    with reference_only():
        reference = value_and_gradient(POWERS[power], x, grad)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(kernel[0], x * x * x)
    assert np.signbit(kernel[0][0]) and not np.signbit(kernel[0][1])
    np.testing.assert_array_equal(kernel[1], reference[1])
    with np.errstate(all="ignore"):  # the cube in extended precision, rounded once
        exact = (x.astype(np.longdouble) ** 3).astype(dtype)
    normal = np.isfinite(exact) & (np.abs(exact) > np.finfo(dtype).tiny)
    ulps = np.abs(kernel[0][normal] - exact[normal]) / np.spacing(np.abs(exact[normal]))
    assert ulps.max() <= 1.5


@pytest.mark.parametrize("power", [2, 2.5, -3, 0.5, 4])
def test_other_powers_are_the_references(power, rng):
    x = np.abs(rng.standard_normal(40_000)) + 0.1
    grad = rng.standard_normal(x.size)
    kernel = value_and_gradient(lambda t: t ** power, x, grad)
    with reference_only():
        reference = value_and_gradient(lambda t: t ** power, x, grad)
    for got, want in zip(kernel, reference, strict=True):
        np.testing.assert_array_equal(got, want)


def test_integers_and_tensor_exponents_are_the_references():
    base = dp.tensor([-2, 0, 3])
    assert (base ** 3).tolist() == [-8, 0, 27]
    x = dp.tensor([1.5, -2.0])
    np.testing.assert_array_equal((x ** dp.tensor([3.0, 3.0])).numpy(), x.numpy() ** 3)


def test_the_numpy_backend_runs_the_kernel():
    from dparray.ops.arithmetic import Pow

    assert resolve(dp.get_backend("numpy"), Pow).__name__ == "PowKernel"


def test_second_derivatives_are_the_references(rng):
    x0 = rng.standard_normal((40, 1000))
    first, again = derivatives_as_the_reference_gives_them(lambda t: t ** 3, x0)
    np.testing.assert_allclose(first, 3 * x0 * x0, rtol=1e-15)
    np.testing.assert_allclose(again, 6 * x0, rtol=1e-15)


class Cubed(dp.nn.Module):
    def forward(self, x):
        return x ** 3


@pytest.mark.parametrize("workers", [2, 3])
def test_under_data_parallel_the_same_as_unwrapped(workers, rng):
    model = dp.nn.Sequential(dp.nn.Linear(5, 6000, dtype=dp.float64), Cubed())
    assert_model_under_data_parallel(model, rng.standard_normal((14, 5)), workers)
