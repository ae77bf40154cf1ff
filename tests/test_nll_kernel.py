"""The negative log-likelihood's NumPy kernel (its gradient as zeros and one value per row)
against the reference, bit for bit: reductions, class weights, ignored rows, every row ignored,
float32 and float64, one class, one row; and the loss's gradient by finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray import kernels
from dparray.nn import functional as F
from dparray.testing import gradcheck

CASES = {"plain": {}, "weighted": {"weight": True}, "ignored": {"ignore_index": 2},
         "weighted_ignored": {"weight": True, "ignore_index": 0}}


def _loss_and_gradient(log_probs, target, options, reduction):
    x = to_tensor(log_probs, requires_grad=True)
    weight = options.get("weight")
    loss = F.nll_loss(x, dp.tensor(target), weight=weight, reduction=reduction,
                      ignore_index=options.get("ignore_index", -100))
    cotangent = dp.ones(loss.shape, dtype=loss.dtype)
    return loss.numpy(), (loss * cotangent).sum().backward()[x].numpy()


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(6, 4), (1, 3), (5, 1)], ids=["rows", "one_row", "one_class"])
def test_the_kernel_is_the_reference(case, reduction, dtype, shape, rng):
    rows, classes = shape
    log_probs = rng.standard_normal(shape).astype(dtype)
    target = rng.integers(0, classes, rows)
    options = dict(case)
    if options.get("weight"):
        options["weight"] = to_tensor(rng.uniform(0.5, 2.0, classes).astype(dtype))
    got = _loss_and_gradient(log_probs, target, options, reduction)
    with kernels.reference_only():
        want = _loss_and_gradient(log_probs, target, options, reduction)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_every_row_ignored_gives_nan_and_no_gradient_as_the_reference():
    log_probs = np.zeros((3, 2))
    got = _loss_and_gradient(log_probs, np.array([1, 1, 1]), {"ignore_index": 1}, "mean")
    with kernels.reference_only():
        want = _loss_and_gradient(log_probs, np.array([1, 1, 1]), {"ignore_index": 1}, "mean")
    assert np.isnan(got[0]) and np.isnan(want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_gradcheck(kernels, rng):
    log_probs = to_tensor(rng.standard_normal((4, 5)), requires_grad=True)
    target = dp.tensor([4, 0, 2, 2])
    gradcheck(lambda x: F.nll_loss(x, target, weight=dp.tensor([1.0, 2.0, 0.5, 1.0, 3.0],
                                                                dtype="float64")), [log_probs])
