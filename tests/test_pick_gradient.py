"""NLL's gradient as one value per row (``PickGradient``): taken as it is by log-softmax's NumPy
kernel and by reshapes that keep the last axis, an ordinary array everywhere else -- the
gradients within two ulps of those from the array (each rounds twice), and the reference's
within rounding. (Under DataParallel: ``test_softmax_kernels.py``, whose model ends so.)"""

from __future__ import annotations

import numpy as np
import pytest

import dparray as dp
from dparray.autograd import PickGradient
from dparray.kernels import kernels_enabled, reference_only
from dparray.nn import functional as F

pytest.importorskip("numba")


def grad_of(loss_of, x: np.ndarray, context=kernels_enabled) -> np.ndarray:
    with context():
        t = dp.tensor(x, requires_grad=True)
        return loss_of(t).backward()[t].numpy()


def as_array(t):
    """``t`` through an op that does not take picks (``* 1.0``, exact): its backward hands
    log-softmax the gradient as an array."""
    return t * 1.0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_log_softmax_takes_the_picks_within_two_ulps_of_the_array(dtype, reduction):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((37, 530)) * 3).astype(dtype)
    y = dp.tensor(rng.integers(0, 530, 37))
    y_ignored = dp.tensor(np.where(np.arange(37) % 5 == 0, -100, y.numpy()))
    weight = dp.tensor(rng.uniform(0.5, 2.0, 530).astype(dtype))
    for target, w in [(y, None), (y_ignored, None), (y_ignored, weight)]:
        def picks(t, target=target, w=w):
            return F.nll_loss(F.log_softmax(t, dim=1), target, weight=w, reduction=reduction)

        def dense(t, target=target, w=w):
            return F.nll_loss(as_array(F.log_softmax(t, dim=1)), target, weight=w,
                              reduction=reduction)

        got = grad_of(picks, x)
        np.testing.assert_array_max_ulp(got, grad_of(dense, x), maxulp=2)
        tolerance = 1e-6 if dtype == "float32" else 1e-14
        np.testing.assert_allclose(got, grad_of(picks, x, reference_only), rtol=tolerance,
                                   atol=tolerance)


def test_through_a_reshape_that_keeps_the_last_axis():
    """The language models' ``log_softmax(logits).reshape(-1, vocabulary)`` before NLL."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 9, 300)).astype(np.float32)
    y = dp.tensor(rng.integers(0, 300, 36))

    def picks(t):
        return F.nll_loss(F.log_softmax(t, dim=-1).reshape(-1, 300), y)

    def dense(t):
        return F.nll_loss(as_array(F.log_softmax(t, dim=-1)).reshape(-1, 300), y)

    np.testing.assert_array_max_ulp(grad_of(picks, x), grad_of(dense, x), maxulp=2)


def test_a_reshape_that_changes_the_last_axis_gets_an_array():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 6))
    y = dp.tensor(rng.integers(0, 3, 8))

    def loss(t):  # (4, 6) log-probabilities read as (8, 3) scores: not rows of picks any more
        return F.nll_loss(F.log_softmax(t, dim=1).reshape(8, 3), y)

    np.testing.assert_allclose(grad_of(loss, x), grad_of(loss, x, reference_only),
                               rtol=1e-14, atol=1e-14)


def test_a_leaf_and_a_sum_of_two_losses_get_arrays():
    rng = np.random.default_rng(3)
    log_probs = np.log(rng.dirichlet(np.ones(7), size=5))
    y1, y2 = rng.integers(0, 7, 5), rng.integers(0, 7, 5)

    def loss(t):
        return F.nll_loss(t, dp.tensor(y1)) + 2.0 * F.nll_loss(t, dp.tensor(y2))

    got = grad_of(loss, log_probs)
    assert type(got) is np.ndarray
    want = np.zeros((5, 7))
    np.add.at(want, (np.arange(5), y1), -1.0 / 5)
    np.add.at(want, (np.arange(5), y2), -2.0 / 5)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-15)

    def both_through_log_softmax(t):
        lp = F.log_softmax(t, dim=1)
        return F.nll_loss(lp, dp.tensor(y1)) + 2.0 * F.nll_loss(lp, dp.tensor(y2))

    np.testing.assert_allclose(grad_of(both_through_log_softmax, log_probs),
                               grad_of(both_through_log_softmax, log_probs, reference_only),
                               rtol=1e-14, atol=1e-14)


def test_softmax_and_other_consumers_get_arrays():
    rng = np.random.default_rng(4)
    x = rng.uniform(0.1, 1.0, (6, 5))
    y = dp.tensor(rng.integers(0, 5, 6))
    for loss in (lambda t: F.nll_loss(dp.log(F.softmax(t, dim=1)), y),
                 lambda t: F.nll_loss(F.log_softmax(t, dim=0), y),  # the reference's axis
                 lambda t: F.nll_loss(t * t, y)):
        np.testing.assert_allclose(grad_of(loss, x), grad_of(loss, x, reference_only),
                                   rtol=1e-14, atol=1e-14)


def test_special_values_as_the_array():
    x = np.array([[0.0, 1.0, np.nan], [-np.inf, 0.0, 1.0], [np.inf, 0.0, 2.0],
                  [1e30, -1e30, 0.0]])
    y = dp.tensor(np.array([0, 0, 1, 2]))

    def picks(t):
        return F.nll_loss(F.log_softmax(t, dim=1), y, reduction="sum")

    def dense(t):
        return F.nll_loss(as_array(F.log_softmax(t, dim=1)), y, reduction="sum")

    got, want = grad_of(picks, x), grad_of(dense, x)
    np.testing.assert_array_max_ulp(got, want, maxulp=2)  # NaN where the array has NaN
    assert np.array_equal(np.signbit(got), np.signbit(want))


def test_the_gradient_object():
    picks = PickGradient(np, (2, 3, 4), np.float32, np.array([3, 0, 1, 2, 0, 3]),
                         np.arange(1.0, 7.0, dtype=np.float32))
    want = np.zeros((6, 4), np.float32)
    want[np.arange(6), [3, 0, 1, 2, 0, 3]] = np.arange(1.0, 7.0)
    np.testing.assert_array_equal(picks.dense(), want.reshape(2, 3, 4))
    rows = picks.reshaped((6, 4))
    assert type(rows) is PickGradient and rows.shape == (6, 4)
    np.testing.assert_array_equal(rows.dense(), want)
    other = picks.reshaped((4, 6))
    assert type(other) is np.ndarray
    np.testing.assert_array_equal(other, want.reshape(4, 6))

