"""Losses against formulas written here, their gradients, their options and errors, and the
weights of the elementwise losses as buffers (against PyTorch in ``test_torch_parity.py``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import to_tensor
from torch_reference import construct, load_cases

import dparray as dp
from dparray import nn
from dparray.nn import functional as F
from dparray.ops.squared_error import SquaredError
from dparray.testing import gradcheck

F64 = "float64"


def _log_softmax(x, axis=1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(reduction, backend, kernels, rng):
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    reduce = {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction]
    np.testing.assert_allclose(F.mse_loss(to_tensor(x), to_tensor(y), reduction).numpy(),
                               reduce((x - y) ** 2), rtol=1e-12)
    np.testing.assert_allclose(F.l1_loss(to_tensor(x), to_tensor(y), reduction).numpy(),
                               reduce(np.abs(x - y)), rtol=1e-12)
    gradcheck(lambda a, b: F.mse_loss(a, b, reduction),
              [to_tensor(x, requires_grad=True), to_tensor(y, requires_grad=True)])
    gradcheck(lambda a: F.l1_loss(a, to_tensor(y), reduction), [to_tensor(x, requires_grad=True)])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("strided", [False, True], ids=["contiguous", "strided"])
def test_mse_loss_is_one_node_equal_to_its_composition(reduction, dtype, strided, backend,
                                                        kernels, rng):
    def draw():
        a = rng.standard_normal((5, 3)).astype(dtype)
        return np.asfortranarray(a) if strided else a

    x, y = (to_tensor(draw(), requires_grad=True) for _ in range(2))
    loss = F.mse_loss(x, y, reduction)
    assert isinstance(loss.grad_fn, SquaredError)
    assert tuple(loss.data.shape) == loss.shape and hasattr(loss.data, "__dlpack__")  # an array
    assert loss.grad_fn.parents == [x, y] and len(loss.grad_fn.saved) == 1  # the difference
    assert loss.dtype == x.dtype
    difference = x - y
    composed = {"mean": lambda d: (d * d).mean(), "sum": lambda d: (d * d).sum(),
                "none": lambda d: d * d}[reduction](difference)
    tolerance = 1e-6 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(loss.numpy(), composed.numpy(), rtol=tolerance)
    weights = to_tensor(rng.standard_normal(loss.shape).astype(dtype))
    fused, reference = ((out * weights).sum().backward() for out in (loss, composed))
    for t in (x, y):
        np.testing.assert_allclose(fused[t].numpy(), reference[t].numpy(), rtol=tolerance)
        assert fused[t].dtype == x.dtype


def test_mse_loss_propagates_nan_and_gives_nan_over_no_elements(backend, kernels):
    x = to_tensor(np.array([1.0, np.nan, 3.0]), requires_grad=True)
    loss = F.mse_loss(x, to_tensor(np.zeros(3)))
    assert np.isnan(loss.item())
    np.testing.assert_array_equal(np.isnan(loss.backward()[x].numpy()), [False, True, False])
    empty = to_tensor(np.zeros((0, 2)), requires_grad=True)
    loss = F.mse_loss(empty, to_tensor(np.zeros((0, 2))))
    assert np.isnan(loss.item()) and loss.backward()[empty].shape == (0, 2)
    assert F.mse_loss(empty, to_tensor(np.zeros((0, 2))), "sum").item() == 0.0


def test_mse_loss_of_integers_promotes_as_the_arithmetic_does(backend):
    loss = F.mse_loss(dp.tensor([1, 2]), dp.tensor([0, 0]))
    assert loss.item() == 2.5 and loss.dtype.is_floating


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


# ------------------------------------------------------------------ the elementwise losses
ELEMENTWISE_LOSSES = ("BCELoss", "BCEWithLogitsLoss", "HuberLoss", "SmoothL1Loss", "KLDivLoss",
                      "CosineEmbeddingLoss", "MarginRankingLoss")
FIXTURES = [case for case in load_cases("losses") if case.layer in ELEMENTWISE_LOSSES]
WEIGHTED = [case for case in FIXTURES if case.named("state")]


@pytest.mark.parametrize("case", WEIGHTED, ids=repr)
def test_loss_weights_are_buffers_with_pytorch_names(case, backend):
    module = construct(case)
    assert module.parameters() == []
    assert sorted(module.state_dict()) == sorted(case.named("state"))


def _bce(x, t):
    return -(t * np.maximum(np.log(x), -100) + (1 - t) * np.maximum(np.log1p(-x), -100))


def test_binary_cross_entropy(backend, rng):
    x = rng.uniform(0.05, 0.95, (4, 3))
    t = rng.uniform(0, 1, (4, 3))
    w = rng.uniform(0.5, 1.5, 3)
    out = F.binary_cross_entropy(to_tensor(x), to_tensor(t), to_tensor(w), reduction="none")
    np.testing.assert_allclose(out.numpy(), w * _bce(x, t), rtol=1e-12)
    assert nn.BCELoss()(to_tensor(x), to_tensor(t)).item() == pytest.approx(_bce(x, t).mean(),
                                                                           rel=1e-12)
    gradcheck(lambda a, b: F.binary_cross_entropy(a, b, to_tensor(w), reduction="sum"),
              [to_tensor(x, requires_grad=True), to_tensor(t, requires_grad=True)])
    edges = to_tensor(np.array([0.0, 1.0, 0.0, 1.0]), requires_grad=True)
    targets = to_tensor(np.array([0.25, 0.25, 0.0, 1.0]))
    loss = F.binary_cross_entropy(edges, targets, reduction="none")  # no warning from log(0)
    np.testing.assert_array_equal(loss.numpy(), [25.0, 75.0, 0.0, 0.0])  # log clamped at -100
    assert np.isfinite(loss.backward(dp.ones(4, dtype=F64))[edges].numpy()).all()


def test_binary_cross_entropy_with_logits_weights(backend, rng):
    x = rng.standard_normal((5, 3)) * 3
    t = rng.uniform(0, 1, (5, 3))
    w, pos = rng.uniform(0.5, 1.5, (5, 1)), rng.uniform(0.5, 3.0, 3)
    log_sigmoid, log_rest = -np.logaddexp(0, -x), -np.logaddexp(0, x)
    expected = -w * (pos * t * log_sigmoid + (1 - t) * log_rest)
    out = F.binary_cross_entropy_with_logits(to_tensor(x), to_tensor(t), to_tensor(w),
                                             reduction="none", pos_weight=to_tensor(pos))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    module = nn.BCEWithLogitsLoss(to_tensor(w), "sum", to_tensor(pos))
    assert module(to_tensor(x), to_tensor(t)).item() == pytest.approx(expected.sum(), rel=1e-12)
    assert sorted(module.state_dict()) == ["pos_weight", "weight"]
    weight = to_tensor(w, requires_grad=True)
    grads = F.binary_cross_entropy_with_logits(to_tensor(x, requires_grad=True), to_tensor(t),
                                               weight).backward()
    assert weight not in grads  # weights are constants, as in PyTorch
    gradcheck(lambda a, b: F.binary_cross_entropy_with_logits(a, b, to_tensor(w),
                                                              pos_weight=to_tensor(pos)),
              [to_tensor(x, requires_grad=True), to_tensor(t, requires_grad=True)])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_huber_and_smooth_l1(reduction, backend, rng):
    x, y = rng.standard_normal((4, 3)) * 2, rng.standard_normal((4, 3))
    d = np.abs(x - y)
    reduce = {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction]
    huber = np.where(d < 0.8, 0.5 * d**2, 0.8 * (d - 0.4))
    np.testing.assert_allclose(
        F.huber_loss(to_tensor(x), to_tensor(y), reduction, delta=0.8).numpy(), reduce(huber),
        rtol=1e-12)
    smooth = np.where(d < 0.8, 0.5 * d**2 / 0.8, d - 0.4)
    np.testing.assert_allclose(
        nn.SmoothL1Loss(reduction, beta=0.8)(to_tensor(x), to_tensor(y)).numpy(),
        reduce(smooth), rtol=1e-12)
    np.testing.assert_allclose(
        F.smooth_l1_loss(to_tensor(x), to_tensor(y), reduction, beta=0.0).numpy(), reduce(d),
        rtol=1e-12)
    for loss in (lambda a, b: F.huber_loss(a, b, reduction, 0.8),
                 lambda a, b: F.smooth_l1_loss(a, b, reduction, 0.8)):
        gradcheck(loss, [to_tensor(x, requires_grad=True), to_tensor(y, requires_grad=True)])


@pytest.mark.parametrize("reduction", ["mean", "batchmean", "sum", "none"])
def test_kl_div(reduction, backend, rng):
    log_q = _log_softmax(rng.standard_normal((3, 4)))
    p = np.exp(_log_softmax(rng.standard_normal((3, 4))))
    p[0, 1] = 0.0  # a zero target counts for nothing
    pointwise = np.where(p > 0, p * (np.log(np.where(p > 0, p, 1.0)) - log_q), 0.0)
    expected = {"mean": pointwise.mean(), "batchmean": pointwise.sum() / 3,
                "sum": pointwise.sum(), "none": pointwise}[reduction]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "mean" warns; tested below
        out = F.kl_div(to_tensor(log_q), to_tensor(p), reduction)
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
        log_p = _log_softmax(rng.standard_normal((3, 4)))
        log_target = nn.KLDivLoss(reduction, log_target=True)(to_tensor(log_q), to_tensor(log_p))
        pointwise = np.exp(log_p) * (log_p - log_q)
        expected = {"mean": pointwise.mean(), "batchmean": pointwise.sum() / 3,
                    "sum": pointwise.sum(), "none": pointwise}[reduction]
        np.testing.assert_allclose(log_target.numpy(), expected, rtol=1e-12)
        gradcheck(lambda a: F.kl_div(a, to_tensor(p), reduction),
                  [to_tensor(log_q, requires_grad=True)])
        gradcheck(lambda a, b: F.kl_div(a, b, reduction, log_target=True),
                  [to_tensor(log_q, requires_grad=True), to_tensor(log_q[::-1] * 0.5,
                                                                   requires_grad=True)])


def test_kl_div_gradients_at_a_zero_target_are_pytorchs(backend):
    log_q = to_tensor(np.log([0.5, 0.25, 0.25]), requires_grad=True)
    p = to_tensor(np.array([0.0, 0.5, 0.5]), requires_grad=True)
    grads = F.kl_div(log_q, p, reduction="sum").backward()
    np.testing.assert_array_equal(grads[log_q].numpy(), [-0.0, -0.5, -0.5])
    target_grad = grads[p].numpy()
    assert np.isnan(target_grad[0])  # d/dt of t log t at t = 0: NaN, as in PyTorch
    np.testing.assert_allclose(target_grad[1:], np.log(0.5) + 1 - np.log([0.25, 0.25]))


def test_kl_div_mean_warns_like_pytorch(backend):
    with pytest.warns(UserWarning, match="not the KL divergence"):
        F.kl_div(dp.zeros(2, 3), dp.ones(2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.kl_div(dp.zeros(2, 3), dp.ones(2, 3), reduction="batchmean")


def test_cosine_embedding_loss(backend, rng):
    a, b = rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    target = np.array([1, -1, 1, -1, 0])  # 0: no loss, as in PyTorch
    cos = (a * b).sum(1) / np.sqrt(((a * a).sum(1) + 1e-12) * ((b * b).sum(1) + 1e-12))
    expected = np.where(target == 1, 1 - cos, np.where(target == -1,
                                                       np.maximum(cos - 0.1, 0.0), 0.0))
    out = F.cosine_embedding_loss(to_tensor(a), to_tensor(b), dp.tensor(target), 0.1, "none")
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    module = nn.CosineEmbeddingLoss(margin=0.1)
    assert module(to_tensor(a), to_tensor(b), dp.tensor(target)).item() == pytest.approx(
        expected.mean(), rel=1e-12)
    kept = np.abs(cos - 0.1) > 0.05  # away from the hinge
    gradcheck(lambda x, y: F.cosine_embedding_loss(x, y, dp.tensor(target[kept]), 0.1),
              [to_tensor(a[kept], requires_grad=True), to_tensor(b[kept], requires_grad=True)])
    zero = F.cosine_embedding_loss(dp.zeros(4, dtype=F64), to_tensor(b[0]), dp.tensor(1))
    assert zero.item() == 1.0  # a zero vector has cosine 0


def test_margin_ranking_loss(backend, rng):
    a, b = rng.standard_normal(6), rng.standard_normal(6)
    target = np.array([1.0, -1.0, 1.0, 1.0, -1.0, -1.0])
    expected = np.maximum(0.0, -target * (a - b) + 0.3)
    out = F.margin_ranking_loss(to_tensor(a), to_tensor(b), to_tensor(target), 0.3, "none")
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    integer_target = nn.MarginRankingLoss(0.3, "sum")(to_tensor(a), to_tensor(b),
                                                      dp.tensor(target.astype(np.int64)))
    assert integer_target.item() == pytest.approx(expected.sum(), rel=1e-12)
    b = np.where(np.abs(-target * (a - b) + 0.3) < 0.05, b + 0.2, b)  # away from the hinge
    gradcheck(lambda x, y, t: F.margin_ranking_loss(x, y, t, 0.3),
              [to_tensor(a, requires_grad=True), to_tensor(b, requires_grad=True),
               to_tensor(target, requires_grad=True)])


def test_elementwise_loss_errors(backend):
    x, y = dp.full((2, 3), 0.5), dp.full((2, 3), 0.5)
    with pytest.raises(ValueError, match="binary_cross_entropy: every input must be a "
                                         "probability in"):
        F.binary_cross_entropy(x * 3.0, y)
    with pytest.raises(ValueError, match="must be a probability"):
        nn.BCELoss()(dp.tensor([float("nan")]), dp.tensor([0.5]))
    with pytest.raises(ValueError, match=r"binary_cross_entropy: input shape \(2, 3\) != "
                                         r"target shape \(3,\)"):
        F.binary_cross_entropy(x, dp.full((3,), 0.5))
    with pytest.raises(TypeError, match="input and target must be floating, got float32 and "
                                        "int64"):
        F.huber_loss(x, dp.zeros(2, 3, dtype="int64"))
    with pytest.raises(ValueError, match=r"binary_cross_entropy_with_logits: pos_weight of "
                                         r"shape \(4,\) does not broadcast"):
        F.binary_cross_entropy_with_logits(x, y, pos_weight=dp.ones(4))
    with pytest.raises(ValueError, match=r"weight of shape \(4, 2, 3\) does not broadcast to "
                                         r"the input's shape \(2, 3\)"):
        F.binary_cross_entropy(x, y, dp.ones(4, 2, 3))
    with pytest.raises(TypeError, match="binary_cross_entropy: weight must be floating"):
        F.binary_cross_entropy(x, y, dp.tensor([1, 2, 3]))
    with pytest.raises(TypeError, match="BCEWithLogitsLoss: weight must be a Tensor, got 'sum'"):
        nn.BCEWithLogitsLoss("sum")  # weight comes first, as in PyTorch
    with pytest.raises(TypeError, match=r"BCELoss: weight must be a Tensor, got \[1\.0\]"):
        nn.BCELoss([1.0])
    with pytest.raises(ValueError, match=r"huber_loss: delta must be greater than 0\.0, got 0"):
        F.huber_loss(x, y, delta=0)
    with pytest.raises(ValueError, match=r"SmoothL1Loss: beta must be at least 0\.0, got -1"):
        nn.SmoothL1Loss(beta=-1)
    with pytest.raises(ValueError, match="kl_div: reduction must be one of 'mean', 'batchmean', "
                                         "'sum', 'none', got 'batch'"):
        F.kl_div(x, y, reduction="batch")
    with pytest.raises(ValueError, match="huber_loss: reduction must be one of 'mean', 'sum', "
                                         "'none', got 'batchmean'"):
        F.huber_loss(x, y, reduction="batchmean")
    with pytest.raises(TypeError, match="KLDivLoss: log_target must be a bool, got 1"):
        nn.KLDivLoss(log_target=1)
    with pytest.raises(ValueError, match=r"cosine_embedding_loss: input1 and input2 must have "
                                         r"one shape, \(N, D\) or \(D,\), got \(2, 3, 1\)"):
        F.cosine_embedding_loss(dp.ones(2, 3, 1), dp.ones(2, 3, 1), dp.ones(2))
    with pytest.raises(ValueError, match=r"inputs of shape \(2, 3\) need a target of shape "
                                         r"\(2,\), got \(3,\)"):
        F.cosine_embedding_loss(x, y, dp.ones(3))
    with pytest.raises(TypeError, match="CosineEmbeddingLoss: margin must be a number"):
        nn.CosineEmbeddingLoss(margin="0.5")
    with pytest.raises(ValueError, match="margin_ranking_loss: input1, input2 and target must "
                                         "have one number of dimensions"):
        F.margin_ranking_loss(dp.ones(3), dp.ones(3, 1), dp.ones(3))
    with pytest.raises(ValueError, match=r"margin_ranking_loss: shapes \(3,\) and \(4,\) and "
                                         r"\(3,\) cannot be broadcast together"):
        F.margin_ranking_loss(dp.ones(3), dp.ones(4), dp.ones(3))
    with pytest.raises(TypeError, match="margin_ranking_loss: target must be a Tensor"):
        F.margin_ranking_loss(dp.ones(3), dp.ones(3), 1.0)
