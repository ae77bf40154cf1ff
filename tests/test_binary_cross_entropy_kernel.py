"""Binary cross-entropy's NumPy kernel against its reference.

The kernel keeps the reference's arithmetic, in the arrays' type, and NumPy's own logarithms
(sliced over the cores, ``backends/_core_split.py``), so values and the input's gradient are
the reference's to the bit: at 0 and 1 (logarithms clamped to -100), subnormals, values a
float32 ulp from 1, below and above the serial-loop and slicing thresholds. What it does not
cover (the target's gradient, mixed dtypes) is the reference's, and bad input raises the
reference's error before any work.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray.kernels import reference_only
from dparray.nn import functional as F
from dparray.testing import gradcheck

SIZES = [19, 40_000, 100_352]  # serial loops; parallel loops, one slice; several slices


def probabilities(dtype: type, size: int, rng: np.random.Generator) -> np.ndarray:
    x = rng.random(size).astype(dtype)
    edges = np.array([0.0, 1.0, np.finfo(dtype).smallest_subnormal, np.finfo(dtype).tiny,
                      np.nextafter(dtype(1), dtype(0)), 0.5, 1e-30], dtype)
    x[: edges.size] = edges[:size]
    return x


def loss_and_gradients(x: np.ndarray, t: np.ndarray, target_grad: bool = False):
    xt, tt = to_tensor(x, requires_grad=True), to_tensor(t, requires_grad=target_grad)
    loss = F.binary_cross_entropy(xt, tt, reduction="none")
    cotangent = np.linspace(-2.0, 3.0, x.size).astype(loss.numpy().dtype).reshape(x.shape)
    grads = loss.backward(to_tensor(cotangent))
    return [loss.numpy(), grads[xt].numpy()] + ([grads[tt].numpy()] if target_grad else [])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", SIZES)
def test_the_kernel_gives_the_references_loss_and_gradient_to_the_bit(dtype, size, rng):
    x, t = probabilities(dtype, size, rng), rng.random(size).astype(dtype)
    t[:3] = [0.0, 1.0, 0.5][:size]
    kernel = loss_and_gradients(x, t)
    with reference_only():
        reference = loss_and_gradients(x, t)
    for got, want in zip(kernel, reference, strict=True):
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)
    with np.errstate(divide="ignore"):  # an independent formula for the loss
        independent = -(t * np.maximum(np.log(x), -100) + (1 - t) * np.maximum(np.log1p(-x),
                                                                                 -100))
    np.testing.assert_allclose(kernel[0], independent, rtol=1e-6 if dtype == np.float32
                               else 1e-15)
    assert np.isfinite(kernel[0]).all() and np.isfinite(kernel[1]).all()


def test_the_targets_gradient_and_mixed_dtypes_are_the_references(rng):
    x, t = probabilities(np.float32, 50, rng), rng.random(50).astype(np.float32)
    kernel = loss_and_gradients(x, t, target_grad=True)
    mixed = loss_and_gradients(x, t.astype(np.float64))
    with reference_only():
        reference = loss_and_gradients(x, t, target_grad=True)
        reference_mixed = loss_and_gradients(x, t.astype(np.float64))
    for got, want in zip(kernel + mixed, reference + reference_mixed, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("bad", [1.5, -1e-7, np.nan])
@pytest.mark.parametrize("size", [19, 40_000])
def test_an_input_outside_zero_to_one_raises_as_the_reference(bad, size, kernels):
    x = np.full(size, 0.5)
    x[size // 2] = bad
    xt = to_tensor(x, requires_grad=True)
    with pytest.raises(ValueError, match=r"binary_cross_entropy: every input must be a "
                                         r"probability in \[0, 1\] \(found a value outside "
                                         r"it, or NaN\)"):
        F.binary_cross_entropy(xt, to_tensor(np.full(size, 0.5)))


def test_gradcheck_in_float64(backend, kernels, rng):
    x = to_tensor(rng.uniform(0.05, 0.95, (4, 6)), requires_grad=True, backend=backend)
    t = to_tensor(rng.random((4, 6)), requires_grad=True, backend=backend)
    gradcheck(lambda a, b: F.binary_cross_entropy(a, b, reduction="sum"), [x, t])


@pytest.mark.parametrize("workers", [2, 3])
def test_under_data_parallel_the_same_as_unwrapped(workers, rng):
    """Each worker's share is above the serial-loop threshold; inside the region the
    logarithms run whole on the worker's thread."""
    model = dp.nn.Sequential(dp.nn.Linear(4, 2 * 40_000 // 6 + 1, dtype=dp.float64),
                             dp.nn.Sigmoid())
    x = to_tensor(rng.standard_normal((12, 4)), requires_grad=True)
    target = to_tensor(rng.random((12, model[0].weight.shape[0])))

    def run(m):
        loss = F.binary_cross_entropy(m(x), target, reduction="sum")
        grads = loss.backward()
        return loss.numpy(), grads[x].numpy(), grads[model[0].weight].numpy()

    expected = run(model)
    for got, want in zip(run(dp.DataParallel(model, workers)), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
