"""The losses of ``dparray.nn.loss_more`` -- triplet margin, hinge embedding, soft margin,
multi-label soft margin, multi-class margin, Gaussian and Poisson negative log-likelihood --
against PyTorch through the ``more_layers`` fixture (every reduction, weights, broadcasting,
hinges at exactly 0, clamped variances), their weights as buffers under PyTorch's names,
derivatives against finite differences, and their errors, on every backend."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import to_tensor
from gradient_checks import check_gradients
from grouped_fixtures import MORE_LAYERS
from test_second_order import check_second_order
from torch_reference import check, check_state_dict_round_trip, construct

import dparray as dp
from dparray import nn
from dparray.nn import functional as F

FUNCTIONAL = {
    "TripletMarginLoss": F.triplet_margin_loss, "HingeEmbeddingLoss": F.hinge_embedding_loss,
    "SoftMarginLoss": F.soft_margin_loss,
    "MultiLabelSoftMarginLoss": F.multilabel_soft_margin_loss,
    "MultiMarginLoss": F.multi_margin_loss, "GaussianNLLLoss": F.gaussian_nll_loss,
    "PoissonNLLLoss": F.poisson_nll_loss,
}
CASES = MORE_LAYERS.layer_cases(*FUNCTIONAL)


def test_the_fixture_covers_every_loss_and_reduction():
    for layer in FUNCTIONAL:
        reductions = {case.kwargs.get("reduction", "mean") for case in CASES
                      if case.layer == layer}
        assert reductions == {"mean", "sum", "none"}, layer


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_modules_give_pytorchs_values_and_gradients(case, backend):
    check(case)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_functional_forms_give_pytorchs_values_and_gradients(case, backend):
    function = FUNCTIONAL[case.layer]

    def call(module, *inputs, **keywords):
        kwargs = {k: dp.tensor(case.arrays[v["tensor"]]) if isinstance(v, dict) else v
                  for k, v in case.kwargs.items()}
        return function(*inputs, **keywords, **kwargs)

    check(case, call=call)


@pytest.mark.parametrize("case", [c for c in CASES if "weight" in c.kwargs], ids=repr)
def test_weights_are_buffers_with_pytorchs_names(case, backend, tmp_path):
    assert sorted(case.named("state")) == ["weight"]
    assert construct(case).parameters() == []
    check_state_dict_round_trip(case, tmp_path)


def test_weights_are_constants(backend, rng):
    weight = to_tensor(rng.uniform(0.5, 1.5, 3), requires_grad=True)
    x = to_tensor(rng.standard_normal((4, 3)), requires_grad=True)
    labels = to_tensor(rng.uniform(0.0, 1.0, (4, 3)))
    grads = F.multilabel_soft_margin_loss(x, labels, weight).backward()
    assert x in grads and weight not in grads
    grads = F.multi_margin_loss(x, dp.tensor([0, 2, 1, 1]), weight=weight).backward()
    assert x in grads and weight not in grads


def _variables(*arrays):
    return [to_tensor(array, requires_grad=True) for array in arrays]


def test_gradients_match_finite_differences(backend, rng):
    a, p, n = rng.standard_normal((3, 5, 4))
    check_gradients(lambda x, y, z: F.triplet_margin_loss(x, y, z, margin=5.0, p=1.5),
                    _variables(a, p, n))
    check_gradients(lambda x, y, z: F.triplet_margin_loss(x, y, z, margin=5.0, swap=True),
                    _variables(a, p, n))
    scores = rng.uniform(0.1, 0.6, 6)  # inside the margin of 0.8, away from its kink
    check_gradients(lambda x: F.hinge_embedding_loss(x, dp.tensor([1, -1, -1, 1, 0, -1]),
                                                     0.8), _variables(scores))
    logits, targets = rng.standard_normal((4, 3)), rng.uniform(0.0, 1.0, (4, 3))
    signs = dp.tensor(np.where(targets > 0.5, 1.0, -1.0))
    check_gradients(lambda x: F.soft_margin_loss(x, signs), _variables(logits))
    check_gradients(lambda x, t: F.multilabel_soft_margin_loss(
        x, t, to_tensor(np.array([0.5, 1.0, 2.0])), reduction="sum"),
        _variables(logits, targets))
    classes = rng.standard_normal((5, 4)) * 0.2  # every hinge active: no kink nearby
    for power in (1, 2):
        check_gradients(lambda x, p=power: F.multi_margin_loss(
            x, dp.tensor([1, 3, 0, 0, 2]), p, weight=to_tensor(np.arange(1.0, 5.0))),
            _variables(classes))
    variances = rng.uniform(0.2, 2.0, (4, 3))
    check_gradients(lambda x, t, v: F.gaussian_nll_loss(x, t, v, full=True),
                    _variables(logits, targets, variances))
    # Stirling's term jumps at a count of 1 (it starts there): no count near 1
    counts = np.array([[0.0, 1.5, 2.0], [3.0, 0.5, 5.0], [0.8, 4.0, 0.0], [7.0, 2.0, 4.0]])
    check_gradients(lambda x, t: F.poisson_nll_loss(x, t, full=True), _variables(logits, counts))
    check_gradients(lambda x: F.poisson_nll_loss(x, to_tensor(counts), log_input=False),
                    _variables(variances))


def test_second_derivatives_match_finite_differences(backend, rng):
    logits, targets = rng.standard_normal((4, 3)), rng.uniform(0.0, 1.0, (4, 3))
    check_second_order(lambda x: F.multilabel_soft_margin_loss(x, to_tensor(targets)),
                       [logits], rng)
    check_second_order(lambda x, v: F.gaussian_nll_loss(x, to_tensor(targets), v),
                       [logits, rng.uniform(0.5, 2.0, (4, 3))], rng)
    check_second_order(lambda x: F.poisson_nll_loss(x, to_tensor(targets * 3)), [logits], rng)
    a, p, n = rng.standard_normal((3, 5, 4))
    check_second_order(lambda x, y: F.triplet_margin_loss(x, y, to_tensor(n), margin=5.0),
                       [a, p], rng)


def test_poisson_stirling_term_with_zero_counts_has_a_finite_target_gradient(backend, rng):
    log_rates = rng.standard_normal(5)
    counts = np.array([0.0, 0.5, 1.0, 2.0, 6.0])
    t = to_tensor(counts, requires_grad=True)
    loss = F.poisson_nll_loss(to_tensor(log_rates), t, full=True, reduction="none")
    big = counts > 1
    safe = np.where(big, counts, 1.0)
    stirling = np.where(big, safe * np.log(safe) - safe + 0.5 * np.log(2 * np.pi * safe), 0.0)
    np.testing.assert_allclose(loss.numpy(), np.exp(log_rates) - counts * log_rates + stirling,
                               rtol=1e-12)
    grad = loss.backward(dp.ones(5, dtype="float64"))[t].numpy()
    np.testing.assert_allclose(grad, -log_rates + np.where(big, np.log(safe) + 0.5 / safe, 0.0),
                               rtol=1e-12)


def test_gaussian_variance_below_eps_is_clamped_but_keeps_its_gradient(backend):
    mean = to_tensor(np.array([0.0, 0.0]))
    sample = to_tensor(np.array([1.0, 1.0]))
    var = to_tensor(np.array([0.0, 0.5]), requires_grad=True)
    loss = F.gaussian_nll_loss(mean, sample, var, eps=0.25, reduction="none")
    np.testing.assert_allclose(loss.numpy(), 0.5 * (np.log([0.25, 0.5]) + 1 / np.array(
        [0.25, 0.5])), rtol=1e-12)
    grad = loss.backward(dp.ones(2, dtype="float64"))[var].numpy()
    v = np.array([0.25, 0.5])
    np.testing.assert_allclose(grad, 0.5 * (1 / v - 1 / v**2), rtol=1e-12)


def test_multi_margin_loss_without_samples(backend):
    empty = dp.zeros(0, 3, dtype="float64")
    no_targets = dp.zeros(0, dtype="int64")
    assert math.isnan(F.multi_margin_loss(empty, no_targets).item())
    assert F.multi_margin_loss(empty, no_targets, reduction="sum").item() == 0.0
    assert F.multi_margin_loss(empty, no_targets, reduction="none").shape == (0,)


def test_soft_margin_loss_does_not_overflow(backend):
    x = dp.tensor([-200.0, 200.0])
    loss = F.soft_margin_loss(x, dp.tensor([1.0, 1.0]), reduction="none")
    np.testing.assert_allclose(loss.numpy(), [200.0, 0.0], atol=1e-30)


def test_options_after_pytorchs_size_average_are_keyword_only(backend):
    x, t = dp.zeros(2, 3), dp.ones(2, 3)
    with pytest.raises(TypeError, match="positional"):
        F.soft_margin_loss(x, t, "sum")
    with pytest.raises(TypeError, match="positional"):
        nn.HingeEmbeddingLoss(1.0, "sum")
    assert F.soft_margin_loss(x, t, reduction="sum").item() == pytest.approx(6 * math.log(2))


def test_reprs():
    assert repr(nn.TripletMarginLoss()) == \
        "TripletMarginLoss(margin=1.0, p=2.0, eps=1e-06, swap=False, reduction='mean')"
    assert repr(nn.MultiMarginLoss(p=2, reduction="sum")) == \
        "MultiMarginLoss(p=2, margin=1.0, reduction='sum')"
    assert repr(nn.SoftMarginLoss()) == "SoftMarginLoss(reduction='mean')"
    assert repr(nn.GaussianNLLLoss(full=True)) == \
        "GaussianNLLLoss(full=True, eps=1e-06, reduction='mean')"


X, T = dp.zeros(2, 3), dp.ones(2, 3)


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: F.triplet_margin_loss(X, X, X, margin=0.0), ValueError,
     r"triplet_margin_loss: margin must be greater than 0\.0, got 0\.0"),
    (lambda: nn.TripletMarginLoss(margin=-1), ValueError,
     "TripletMarginLoss: margin must be greater than 0"),
    (lambda: F.triplet_margin_loss(X, X, dp.zeros(3)), ValueError,
     r"triplet_margin_loss: anchor, positive and negative must have one number of dimensions, "
     r"got shapes \(2, 3\), \(2, 3\) and \(3,\)"),
    (lambda: F.triplet_margin_loss(X, X, X, p=-1), ValueError,
     "triplet_margin_loss: p must be at least 0"),
    (lambda: F.triplet_margin_loss(X, X, X, reduction="avg"), ValueError,
     "triplet_margin_loss: reduction must be one of 'mean', 'sum', 'none', got 'avg'"),
    (lambda: F.hinge_embedding_loss(X, dp.ones(3)), ValueError,
     r"hinge_embedding_loss: input shape \(2, 3\) != target shape \(3,\)"),
    (lambda: F.hinge_embedding_loss(dp.zeros(3, dtype="int64"), dp.ones(3)), TypeError,
     "hinge_embedding_loss: input must be floating, got int64"),
    (lambda: F.soft_margin_loss(X, [1.0]), TypeError,
     "soft_margin_loss: target must be a Tensor"),
    (lambda: F.multilabel_soft_margin_loss(dp.tensor(1.0), dp.tensor(1.0)), ValueError,
     "multilabel_soft_margin_loss: input needs a class axis"),
    (lambda: F.multilabel_soft_margin_loss(X, T, dp.ones(4)), ValueError,
     r"multilabel_soft_margin_loss: weight of shape \(4,\) does not broadcast to the input's "
     r"shape \(2, 3\)"),
    (lambda: F.multi_margin_loss(X, dp.tensor([0, 3])), ValueError,
     "multi_margin_loss: class index 3 is out of range for 3 classes"),
    (lambda: F.multi_margin_loss(X, dp.tensor([0, -1])), ValueError,
     "multi_margin_loss: class index -1 is out of range for 3 classes"),
    (lambda: F.multi_margin_loss(X, dp.tensor([0])), ValueError,
     r"multi_margin_loss: input of shape \(2, 3\) needs a target of shape \(2,\), got \(1,\)"),
    (lambda: F.multi_margin_loss(X, dp.tensor([[0], [1]])), ValueError,
     r"needs a target of shape \(2,\), got \(2, 1\)"),
    (lambda: F.multi_margin_loss(X, dp.tensor([0.0, 1.0])), TypeError,
     "multi_margin_loss: target must hold integer class indices, got float32"),
    (lambda: F.multi_margin_loss(dp.zeros(2, 3, 4), dp.tensor([0, 1])), ValueError,
     r"multi_margin_loss: input must be \(N, C\) or \(C,\) with C at least 1, got shape "
     r"\(2, 3, 4\)"),
    (lambda: F.multi_margin_loss(X, dp.tensor([0, 1]), p=3), ValueError,
     "multi_margin_loss: p must be 1 or 2, got 3"),
    (lambda: F.multi_margin_loss(X, dp.tensor([0, 1]), weight=dp.ones(2)), ValueError,
     r"multi_margin_loss: weight must be a floating tensor of shape \(3,\), got float32 of "
     r"shape \(2,\)"),
    (lambda: nn.MultiMarginLoss(weight=dp.ones(1, 3)), ValueError,
     r"MultiMarginLoss: weight must be 1-D \(one per class\), got shape \(1, 3\)"),
    (lambda: nn.MultiMarginLoss(p=0), ValueError, "MultiMarginLoss: p must be 1 or 2, got 0"),
    (lambda: F.gaussian_nll_loss(X, T, dp.ones(3)), ValueError,
     r"gaussian_nll_loss: var of shape \(3,\) does not fit input of shape \(2, 3\)"),
    (lambda: F.gaussian_nll_loss(X, T, dp.ones(1, 1)), ValueError,
     r"var of shape \(1, 1\) does not fit input of shape \(2, 3\)"),
    (lambda: F.gaussian_nll_loss(X, T, -dp.ones(2, 3)), ValueError,
     "gaussian_nll_loss: var has negative entries"),
    (lambda: F.gaussian_nll_loss(X, T, -1.0), ValueError,
     r"gaussian_nll_loss: var must be at least 0\.0, got -1\.0"),
    (lambda: F.gaussian_nll_loss(X, dp.ones(3, 3), dp.ones(2, 3)), ValueError,
     r"gaussian_nll_loss: target of shape \(3, 3\) does not broadcast to the input's shape"),
    (lambda: F.gaussian_nll_loss(X, T, dp.ones(2, 3), reduction="x"), ValueError,
     "gaussian_nll_loss: reduction must be one of"),
    (lambda: nn.GaussianNLLLoss(full=1), TypeError, "GaussianNLLLoss: full must be a bool"),
    (lambda: F.poisson_nll_loss(X, dp.ones(3)), ValueError,
     r"poisson_nll_loss: input shape \(2, 3\) != target shape \(3,\)"),
    (lambda: nn.PoissonNLLLoss(log_input="yes"), TypeError,
     "PoissonNLLLoss: log_input must be a bool"),
    (lambda: nn.SoftMarginLoss(reduction="batchmean"), ValueError,
     "reduction must be one of"),
])
def test_bad_arguments_are_errors_naming_the_function(call, error, message, backend):
    with pytest.raises(error, match=message):
        call()
