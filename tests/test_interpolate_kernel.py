"""Linear, bilinear, bicubic and trilinear resampling: NumPy's compiled passes give the
reference's values and gradients to the bit (the sign of zero too; NaN where it has NaN).

The kernel keeps the reference's arithmetic (``dparray.ops.interpolate.Interpolate``) and the
order of each of its sums, forward and adjoint, so the two agree exactly: up and down, by
sizes and by factors, with and without ``align_corners``, on 1-d to 3-d input, with NaN, inf
and -0.0 in the input and the gradient, for an input large enough that each core takes
several planes, under ``create_graph`` and inside DataParallel. Nearest resampling is the
reference's own.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import (
    assert_model_under_data_parallel,
    derivatives_as_the_reference_gives_them,
    to_tensor,
)

import dparray as dp
from dparray.kernels import reference_only, resolve
from dparray.nn import functional as F
from dparray.testing import gradcheck

CASES = {
    "bilinear x2": ((2, 3, 5, 7), dict(scale_factor=2, mode="bilinear")),
    "bilinear to a size, align_corners": ((2, 3, 5, 7),
                                          dict(size=(3, 4), mode="bilinear", align_corners=True)),
    "bilinear down": ((2, 3, 11, 13), dict(size=(4, 5), mode="bilinear")),
    "bilinear, one axis kept": ((2, 2, 6, 6), dict(size=(6, 12), mode="bilinear")),
    "linear": ((2, 3, 9), dict(size=4, mode="linear")),
    "linear x3, align_corners": ((2, 3, 4), dict(scale_factor=3, mode="linear",
                                                 align_corners=True)),
    "bicubic": ((1, 2, 4, 5), dict(size=(9, 3), mode="bicubic")),
    "bicubic by a factor": ((1, 2, 6, 5), dict(scale_factor=1.5, mode="bicubic")),
    "trilinear": ((1, 2, 3, 4, 5), dict(scale_factor=1.7, mode="trilinear")),
    "large": ((8, 16, 24, 20), dict(scale_factor=2, mode="bilinear")),
}


def value_and_gradient(x, grad_of, options):
    t = to_tensor(x, requires_grad=True)
    with np.errstate(all="ignore"):
        out = F.interpolate(t, **options)
        return out.numpy(), out.backward(to_tensor(grad_of(out.shape)))[t].numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_values_and_gradients_are_the_references_to_the_bit(case, dtype, rng):
    shape, options = CASES[case]
    x = rng.standard_normal(shape).astype(dtype)
    x.flat[:4] = [-0.0, np.nan, np.inf, 0.0]
    cotangent = rng.standard_normal(10 ** 6).astype(dtype)
    cotangent[:5] = [-0.0, 0.0, np.nan, -np.inf, -0.0]

    def grad_of(out_shape):
        return cotangent[:np.prod(out_shape)].reshape(out_shape)

    kernel = value_and_gradient(x, grad_of, options)
    with reference_only():
        reference = value_and_gradient(x, grad_of, options)
    for got, want in zip(kernel, reference, strict=True):
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        number = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got[number]), np.signbit(want[number]))


def test_bilinear_against_its_definition(rng):
    """x2 without align_corners: output 2i + 1/2 reads inputs i and i + 1 with weights 3/4 and
    1/4 (clamped at the edges), along each axis."""
    x = rng.standard_normal((2, 3, 4, 5))

    def along(a, axis):
        n = a.shape[axis]
        source = np.clip((np.arange(2 * n) + 0.5) / 2 - 0.5, 0, None)
        low = np.minimum(np.floor(source).astype(int), n - 1)
        high = np.minimum(low + 1, n - 1)
        t = source - low
        shape = [1] * a.ndim
        shape[axis] = -1
        return (np.take(a, low, axis) * (1 - t).reshape(shape)
                + np.take(a, high, axis) * t.reshape(shape))

    out = F.interpolate(to_tensor(x), scale_factor=2, mode="bilinear")
    np.testing.assert_allclose(out.numpy(), along(along(x, 3), 2), rtol=1e-14)


def test_the_numpy_backend_runs_the_kernel():
    from dparray.ops.interpolate import Interpolate

    assert resolve(dp.get_backend("numpy"), Interpolate).__name__ == "InterpolateKernel"


def test_gradcheck_in_float64(backend, kernels, rng):
    x = to_tensor(rng.standard_normal((2, 2, 3, 4)), requires_grad=True, backend=backend)
    gradcheck(lambda t: F.interpolate(t, size=(5, 3), mode="bicubic"), [x])
    gradcheck(lambda t: F.interpolate(t, scale_factor=2, mode="bilinear", align_corners=True),
              [x])


def test_second_derivatives_are_the_references(rng):
    def cubed(x):
        out = F.interpolate(x, scale_factor=2, mode="bilinear")
        return out * out * out

    derivatives_as_the_reference_gives_them(cubed, rng.standard_normal((2, 3, 6, 5)))


@pytest.mark.parametrize("workers", [2, 3])
def test_under_data_parallel_the_same_as_unwrapped(workers, rng):
    model = dp.nn.Sequential(dp.nn.Conv2d(3, 4, 3, dtype=dp.float64),
                             dp.nn.Upsample(scale_factor=2, mode="bilinear"))
    assert_model_under_data_parallel(model, rng.standard_normal((6, 3, 7, 7)), workers)
