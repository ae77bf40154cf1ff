"""Losses against formulas written here, their gradients, their options and errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray import nn
from dparray.nn import functional as F
from dparray.testing import gradcheck


def _log_softmax(x, axis=1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(reduction, backend, rng):
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    reduce = {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction]
    np.testing.assert_allclose(F.mse_loss(to_tensor(x), to_tensor(y), reduction).numpy(),
                               reduce((x - y) ** 2), rtol=1e-12)
    np.testing.assert_allclose(F.l1_loss(to_tensor(x), to_tensor(y), reduction).numpy(),
                               reduce(np.abs(x - y)), rtol=1e-12)
    gradcheck(lambda a, b: F.mse_loss(a, b, reduction),
              [to_tensor(x, requires_grad=True), to_tensor(y, requires_grad=True)])
    gradcheck(lambda a: F.l1_loss(a, to_tensor(y), reduction), [to_tensor(x, requires_grad=True)])


def test_cross_entropy_with_class_indices(backend, rng):
    logits = rng.standard_normal((5, 4)) * 3
    target = np.array([0, 3, 1, 1, 2])
    expected = -_log_softmax(logits)[np.arange(5), target]
    out = F.cross_entropy(to_tensor(logits), dp.tensor(target), reduction="none")
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    assert F.cross_entropy(to_tensor(logits), dp.tensor(target)).item() == pytest.approx(
        expected.mean(), rel=1e-12)
    gradcheck(lambda x: F.cross_entropy(x, dp.tensor(target)),
              [to_tensor(logits, requires_grad=True)])


def test_cross_entropy_options(backend, rng):
    logits = rng.standard_normal((6, 3))
    target = np.array([2, -100, 0, 1, -100, 2])
    logp = _log_softmax(logits)
    kept = target != -100
    nll = -logp[np.arange(6)[kept], target[kept]]
    smooth = 0.1
    per_row = (1 - smooth) * nll - smooth * logp[kept].mean(axis=1)
    out = F.cross_entropy(to_tensor(logits), dp.tensor(target), label_smoothing=smooth)
    assert out.item() == pytest.approx(per_row.mean(), rel=1e-12)  # mean over kept rows only
    gradcheck(lambda x: F.cross_entropy(x, dp.tensor(target), label_smoothing=smooth),
              [to_tensor(logits, requires_grad=True)])
    probabilities = np.exp(_log_softmax(rng.standard_normal((6, 3))))
    soft = F.cross_entropy(to_tensor(logits), to_tensor(probabilities), reduction="sum")
    assert soft.item() == pytest.approx(-(probabilities * logp).sum(), rel=1e-12)
    images = rng.standard_normal((2, 3, 4, 5))  # (N, C, d1, d2)
    labels = rng.integers(0, 3, (2, 4, 5))
    expected = -np.take_along_axis(_log_softmax(images), labels[:, None], axis=1).mean()
    assert F.cross_entropy(to_tensor(images), dp.tensor(labels)).item() == pytest.approx(
        expected, rel=1e-12)
    module = nn.CrossEntropyLoss(reduction="sum")
    assert module(to_tensor(logits[kept]), dp.tensor(target[kept])).item() == pytest.approx(
        nll.sum(), rel=1e-12)


def test_nll_loss(backend, rng):
    logp = _log_softmax(rng.standard_normal((4, 5)))
    target = np.array([4, 0, 2, 2])
    assert F.nll_loss(to_tensor(logp), dp.tensor(target)).item() == pytest.approx(
        -logp[np.arange(4), target].mean(), rel=1e-12)
    assert nn.NLLLoss(ignore_index=2)(to_tensor(logp), dp.tensor(target)).item() == \
        pytest.approx(-(logp[0, 4] + logp[1, 0]) / 2, rel=1e-12)
    gradcheck(lambda x: F.nll_loss(x, dp.tensor(target)), [to_tensor(logp, requires_grad=True)])


def test_binary_cross_entropy_with_logits(backend, rng):
    x = np.concatenate([rng.standard_normal(6) * 3, [60.0, -60.0]])
    t = rng.uniform(0, 1, 8)
    sigmoid = 1 / (1 + np.exp(-x))
    with np.errstate(divide="ignore"):
        expected = -(t * np.log(sigmoid) + (1 - t) * np.log1p(-sigmoid))
    expected[-2:] = [60.0 * (1 - t[-2]), 60.0 * t[-1]]  # exact values where log(0) overflows
    out = F.binary_cross_entropy_with_logits(to_tensor(x), to_tensor(t), reduction="none")
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
    pos = 3.0
    weighted = F.binary_cross_entropy_with_logits(to_tensor(x[:6]), to_tensor(t[:6]),
                                                  pos_weight=to_tensor(np.array(pos)))
    manual = -(pos * t[:6] * np.log(sigmoid[:6]) + (1 - t[:6]) * np.log1p(-sigmoid[:6]))
    assert weighted.item() == pytest.approx(manual.mean(), rel=1e-10)
    gradcheck(lambda a: nn.BCEWithLogitsLoss()(a, to_tensor(t[:6])),
              [to_tensor(x[:6], requires_grad=True)])


def test_loss_errors(backend):
    logits = dp.zeros(3, 4)
    with pytest.raises(ValueError, match="class index 4 is out of range for 4 classes"):
        F.cross_entropy(logits, dp.tensor([0, 4, 1]))
    with pytest.raises(ValueError, match="class index -1 is out of range"):
        F.cross_entropy(logits, dp.tensor([0, -1, 1]))
    with pytest.raises(ValueError, match=r"needs targets of shape \(3,\), got \(2,\)"):
        F.cross_entropy(logits, dp.tensor([0, 1]))
    with pytest.raises(TypeError, match="class-index targets must be integers"):
        F.nll_loss(logits, dp.tensor([True, False, True]))
    with pytest.raises(ValueError, match=r"input shape \(3, 4\) != target shape \(4, 3\)"):
        F.mse_loss(logits, dp.zeros(4, 3))
    with pytest.raises(ValueError, match="reduction must be one of"):
        F.l1_loss(logits, logits, reduction="avg")
    with pytest.raises(ValueError, match="reduction must be one of"):
        nn.MSELoss(reduction="total")
