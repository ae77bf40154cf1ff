"""``binary_cross_entropy_with_logits``: one graph node (``softplus(x) - x * t``, backward
``sigmoid(x) - t``) and its NumPy kernel against the reference and the definition.

The kernel keeps the reference's arithmetic in the arrays' type; its ``log1p`` is libm's in
float64 (values and gradients the reference's bits, or within NumPy's own accuracy where NumPy
runs its AVX-512 ``log1p``: ``numpy_math_ulps``) and float64's rounded once in float32, so a
float32 loss is within two ulps (of ``softplus(x)`` or of the loss, the larger; plus NumPy's
own error, on AVX-512) of the reference's and exactly what that arithmetic gives (computed
here with NumPy); gradients are the reference's bits in both. At
NaN, +-inf, +-0, subnormals and where ``exp`` under- or overflows, below and above the
serial-loop and slicing thresholds, with every reduction, with a gradient for the target,
with ``pos_weight`` (composed, as before), under ``create_graph`` and inside DataParallel.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import (
    assert_the_references_float64,
    derivatives_as_the_reference_gives_them,
    numpy_math_ulps,
    special_floats,
    to_tensor,
)

import dparray as dp
from dparray.kernels import reference_only, resolve
from dparray.nn import functional as F
from dparray.testing import gradcheck

SIZES = [19, 40_000, 300_001]


def loss_and_gradients(x, t, target_grad=False, reduction="none"):
    inputs = to_tensor(x, requires_grad=True), to_tensor(t, requires_grad=target_grad)
    with np.errstate(all="ignore"):
        loss = F.binary_cross_entropy_with_logits(*inputs, reduction=reduction)
        cotangent = np.cos(np.arange(loss.numpy().size)).reshape(loss.shape).astype(x.dtype)
        grads = loss.backward(to_tensor(cotangent))
    return [loss.numpy(), grads[inputs[0]].numpy()] + (
        [grads[inputs[1]].numpy()] if target_grad else [])


def targets(size, dtype, rng):
    t = rng.random(size).astype(dtype)
    t[: size // 3] = np.round(t[: size // 3])  # labels 0 and 1, and soft targets
    return t


@pytest.mark.parametrize("target_grad", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", SIZES)
def test_against_the_reference(size, dtype, target_grad, rng):
    x, t = special_floats(dtype, size, rng), targets(size, dtype, rng)
    kernel = loss_and_gradients(x, t, target_grad)
    with reference_only():
        reference = loss_and_gradients(x, t, target_grad)
    for got in kernel:
        assert got.dtype == dtype
    for got, want in zip(kernel[1:], reference[1:], strict=True):
        np.testing.assert_array_equal(got, want)
    if dtype == np.float64:  # the loss's terms, softplus(x) and x * t, are at most |x| + 1
        assert_the_references_float64(kernel[0], reference[0], np.abs(x) + 1)
        return
    with np.errstate(all="ignore"):
        softplus = np.maximum(x, np.float32(0)) + np.log1p(
            np.exp(-np.abs(x)).astype(np.float64)).astype(np.float32)
        np.testing.assert_array_equal(kernel[0], softplus - x * t)
        finite = np.isfinite(reference[0])
        larger = np.maximum(np.abs(softplus[finite]), np.abs(reference[0][finite]))
        bound = (2 + numpy_math_ulps()) * np.spacing(larger)  # (inf at float32's largest)
    assert np.all(np.abs(kernel[0][finite] - reference[0][finite]) <= bound)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_against_the_definition(reduction, rng):
    x, t = rng.standard_normal(1000) * 6, targets(1000, np.float64, rng)
    got = loss_and_gradients(x, t, True, reduction)
    loss = np.maximum(x, 0) - x * t + np.log1p(np.exp(-np.abs(x)))
    cotangent = np.cos(np.arange(loss.size)) if reduction == "none" else 1.0
    scale = 1 / 1000 if reduction == "mean" else 1.0
    want = {"none": loss, "sum": loss.sum(), "mean": loss.mean()}[reduction]
    np.testing.assert_allclose(got[0], want, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(got[1], cotangent * scale * (1 / (1 + np.exp(-x)) - t),
                               rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(got[2], cotangent * scale * -x, rtol=1e-13)


def test_pos_weight_and_weight_are_unchanged(rng):
    x, t = rng.standard_normal((50, 4)) * 3, targets(200, np.float64, rng).reshape(50, 4)
    pos_weight, weight = np.array([1.0, 2.0, 0.5, 3.0]), rng.random((50, 4))
    loss = F.binary_cross_entropy_with_logits(to_tensor(x), to_tensor(t), to_tensor(weight),
                                              pos_weight=to_tensor(pos_weight),
                                              reduction="sum")
    log_sigmoid = -np.log1p(np.exp(-x))
    want = -weight * (pos_weight * t * log_sigmoid + (1 - t) * (log_sigmoid - x))
    np.testing.assert_allclose(loss.item(), want.sum(), rtol=1e-13)


def test_the_numpy_backend_runs_the_kernel():
    from dparray.ops.binary_cross_entropy import BinaryCrossEntropyWithLogits

    kernel = resolve(dp.get_backend("numpy"), BinaryCrossEntropyWithLogits)
    assert kernel.__name__ == "BinaryCrossEntropyWithLogitsKernel"


def test_gradcheck_in_float64(backend, kernels, rng):
    x = to_tensor(rng.standard_normal((5, 7)) * 3, requires_grad=True, backend=backend)
    t = to_tensor(rng.random((5, 7)), requires_grad=True, backend=backend)
    gradcheck(lambda a, b: F.binary_cross_entropy_with_logits(a, b), [x, t])


def test_second_derivatives_are_the_references(rng):
    x0, t0 = rng.standard_normal((40, 1000)) * 3, rng.random((40, 1000))

    def loss(x):
        return F.binary_cross_entropy_with_logits(x, to_tensor(t0), reduction="sum")

    kernel = derivatives_as_the_reference_gives_them(loss, x0)
    s = 1 / (1 + np.exp(-x0))
    np.testing.assert_allclose(kernel[1], s * (1 - s), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("workers", [2, 3])
def test_under_data_parallel_the_same_as_unwrapped(workers, rng):
    model = dp.nn.Linear(5, 40_000 // 7 + 1, dtype=dp.float64)
    x = to_tensor(rng.standard_normal((14, 5)), requires_grad=True)
    t = to_tensor(targets(14 * model.out_features, np.float64, rng).reshape(14, -1))

    def run(m):
        loss = F.binary_cross_entropy_with_logits(m(x), t, reduction="sum")
        grads = loss.backward()
        return loss.numpy(), grads[x].numpy(), grads[model.weight].numpy()

    expected = run(model)
    for got, want in zip(run(dp.DataParallel(model, workers)), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
