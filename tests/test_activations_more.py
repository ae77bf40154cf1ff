"""The activations of ``dparray.nn.activation_more`` -- GLU, Hardshrink, Softshrink, Tanhshrink,
Threshold, RReLU, Softmax2d, LocalResponseNorm and ``gumbel_softmax`` -- against PyTorch through
the ``more_layers`` fixture (values and input gradients in float64, at the kinks and at NaN), the
random ones against their draws and their distributions, derivatives against finite
differences, DataParallel, reprs and errors, on every backend."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import to_tensor
from gradient_checks import check_gradients
from grouped_fixtures import MORE_LAYERS
from test_second_order import check_second_order
from torch_reference import check

import dparray as dp
from dparray import nn
from dparray.nn import functional as F

FUNCTIONAL = {
    "GLU": F.glu, "Hardshrink": F.hardshrink, "Softshrink": F.softshrink,
    "Tanhshrink": F.tanhshrink, "Threshold": F.threshold,
    "RReLU": lambda x, **kwargs: F.rrelu(x, **kwargs, training=False),
    "LocalResponseNorm": F.local_response_norm,
}
LAYERS = MORE_LAYERS.layer_cases(*FUNCTIONAL, "Softmax2d")


def test_the_fixture_covers_every_layer():
    assert {case.layer for case in LAYERS} == {*FUNCTIONAL, "Softmax2d"}


@pytest.mark.parametrize("case", LAYERS, ids=repr)
def test_modules_give_pytorchs_values_and_gradients(case, backend):
    check(case)


@pytest.mark.parametrize("case", [c for c in LAYERS if c.layer in FUNCTIONAL], ids=repr)
def test_functional_forms_give_pytorchs_values_and_gradients(case, backend):
    function = FUNCTIONAL[case.layer]
    check(case, call=lambda module, x: function(x, **case.kwargs))


def _away_from_kinks(rng, shape, kinks=(-0.5, 0.5), gap=0.05):
    x = rng.standard_normal(shape) * 2
    for kink in kinks:
        x = np.where(np.abs(x - kink) < gap, kink + 2 * gap, x)
    return x


def test_gradients_match_finite_differences(backend, rng):
    x = to_tensor(_away_from_kinks(rng, (3, 4)), requires_grad=True)
    for function in (F.glu, F.hardshrink, F.softshrink, F.tanhshrink,
                     lambda t: F.threshold(t, 0.5, -2.0), F.rrelu,
                     lambda t: nn.Softmax2d()(t.reshape(3, 2, 2)),
                     lambda t: F.local_response_norm(t.reshape(1, 3, 4), 3, 0.5, 0.75, 1.5)):
        check_gradients(function, [x])


def test_second_derivatives_match_finite_differences(backend, rng):
    x = _away_from_kinks(rng, (2, 4, 3))
    check_second_order(lambda t: F.glu(t, 1), [x], rng)
    check_second_order(F.tanhshrink, [x], rng)
    check_second_order(lambda t: F.local_response_norm(t, 2, 0.5, 0.75, 1.5), [x], rng)
    check_second_order(lambda t: F.softshrink(t) * t, [x], rng)


# ------------------------------------------------------------------ RReLU in training
def test_rrelu_in_training_draws_one_slope_per_entry_from_the_stream(backend, rng):
    x = to_tensor(np.concatenate([-rng.uniform(0.5, 2.0, 200), rng.uniform(0.5, 2.0, 50),
                                  [0.0, np.nan]]), requires_grad=True)
    with dp.fork_rng(7):
        out = F.rrelu(x, 0.1, 0.4, training=True)
    with dp.fork_rng(7):
        slopes = 0.1 + 0.3 * dp.rand_like(x).numpy()
    values = x.numpy()
    expected = np.where(values > 0, values, values * slopes)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-15, atol=0.0)
    negative = slopes[:200]
    assert negative.min() >= 0.1 and negative.max() < 0.4 and np.unique(negative).size == 200
    grads = out.backward(dp.ones(x.shape, dtype="float64"))[x].numpy()
    np.testing.assert_allclose(grads, np.where(values > 0, 1.0, slopes), rtol=1e-15)
    with dp.fork_rng(7):
        again = nn.RReLU(0.1, 0.4)(x)  # a module is in training until eval()
    np.testing.assert_array_equal(again.numpy(), out.numpy())


def test_rrelu_module_evaluates_with_the_mean_slope_and_couples_rows_only_in_training(backend):
    layer = nn.RReLU(0.2, 0.6)
    assert layer.couples_rows()
    layer.eval()
    assert not layer.couples_rows()
    x = dp.tensor([-2.0, 3.0], dtype="float64")
    np.testing.assert_allclose(layer(x).numpy(), [-0.8, 3.0], rtol=1e-15)
    np.testing.assert_array_equal(layer(x).numpy(), F.leaky_relu(x, 0.4).numpy())


def test_rrelu_under_data_parallel_is_the_unwrapped_layer_in_evaluation(backend, rng):
    model = nn.Sequential(nn.Linear(3, 4, dtype="float64"), nn.RReLU()).eval()
    x = to_tensor(rng.standard_normal((7, 3)))
    np.testing.assert_allclose(dp.DataParallel(model, 3)(x).numpy(), model(x).numpy(),
                               rtol=1e-12)


# ------------------------------------------------------------------ gumbel_softmax
def _gumbel_reference(logits, uniform, tau, axis):
    scores = (logits - np.log(-np.log(uniform))) / tau
    shifted = np.exp(scores - scores.max(axis=axis, keepdims=True))
    return shifted / shifted.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [-1, 0])
def test_gumbel_softmax_is_the_softmax_of_logits_and_gumbel_noise(axis, backend, rng):
    logits = to_tensor(rng.standard_normal((4, 5)))
    with dp.fork_rng(3):
        soft = F.gumbel_softmax(logits, tau=0.7, dim=axis)
    with dp.fork_rng(3):
        uniform = dp.rand_like(logits).numpy()
    expected = _gumbel_reference(logits.numpy(), uniform, 0.7, axis)
    np.testing.assert_allclose(soft.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(soft.numpy().sum(axis=axis), 1.0, rtol=1e-12)


def test_hard_gumbel_softmax_is_one_hot_with_the_soft_gradient(backend, rng):
    logits = to_tensor(rng.standard_normal((6, 4)), requires_grad=True)
    cotangent = to_tensor(rng.standard_normal((6, 4)))
    with dp.fork_rng(5):
        hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    with dp.fork_rng(5):
        soft = F.gumbel_softmax(logits, tau=0.5)
    one_hot = np.eye(4)[soft.numpy().argmax(axis=1)]
    np.testing.assert_allclose(hard.numpy(), one_hot, atol=1e-15)
    hard_grad = (hard * cotangent).sum().backward()[logits]
    soft_grad = (soft * cotangent).sum().backward()[logits]
    np.testing.assert_allclose(hard_grad.numpy(), soft_grad.numpy(), rtol=1e-12, atol=1e-15)


def test_gumbel_max_samples_follow_the_softmax_of_the_logits(backend):
    logits = np.log(np.array([0.5, 0.3, 0.2]))
    with dp.fork_rng(11):
        samples = F.gumbel_softmax(to_tensor(np.tile(logits, (20_000, 1))), hard=True)
    frequencies = samples.numpy().mean(axis=0)
    np.testing.assert_allclose(frequencies, [0.5, 0.3, 0.2], atol=0.015)


def test_gumbel_softmax_eps_is_deprecated_as_in_pytorch(backend):
    with pytest.warns(UserWarning, match="eps is deprecated and has no effect"):
        F.gumbel_softmax(dp.zeros(2, 3), eps=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.gumbel_softmax(dp.zeros(2, 3))


# ------------------------------------------------------------------ the rest
def test_local_response_norm_is_pytorchs_formula(backend, rng):
    x = rng.standard_normal((2, 5, 3, 2))
    size, alpha, beta, k = 4, 0.3, 0.6, 1.5
    squares = np.pad(x * x, [(0, 0), (size // 2, (size - 1) // 2), (0, 0), (0, 0)])
    window = sum(squares[:, i:i + 5] for i in range(size)) / size
    expected = x / (k + alpha * window) ** beta
    out = nn.LocalResponseNorm(size, alpha, beta, k)(to_tensor(x))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    empty = dp.zeros(0, 3, 4)
    assert F.local_response_norm(empty, 2).shape == (0, 3, 4)


def test_shrinks_and_threshold_at_nan_and_at_their_kinks(backend):
    x = to_tensor(np.array([np.nan, -0.5, 0.5, -0.7, 0.7]), requires_grad=True)
    for function, value, slope in [
        (F.hardshrink, [np.nan, 0.0, 0.0, -0.7, 0.7], [0.0, 0.0, 0.0, 1.0, 1.0]),
        (F.softshrink, [np.nan, 0.0, 0.0, -0.2, 0.2], [0.0, 0.0, 0.0, 1.0, 1.0]),
        (lambda t: F.threshold(t, 0.5, 9.0), [np.nan, 9.0, 9.0, 9.0, 0.7],
         [1.0, 0.0, 0.0, 0.0, 1.0]),
    ]:
        out = function(x)
        np.testing.assert_allclose(out.numpy(), value, rtol=1e-15)
        np.testing.assert_array_equal(out.backward(dp.ones(5, dtype="float64"))[x].numpy(),
                                      slope)


def test_integer_input_is_computed_in_the_default_float(backend):
    x = dp.tensor([[-2, 1, 3, 0]])
    for out in (F.glu(x), F.hardshrink(x), F.softshrink(x), F.tanhshrink(x), F.rrelu(x)):
        assert out.dtype == dp.get_default_dtype()


def test_reprs_are_pytorchs():
    assert repr(nn.GLU()) == "GLU(dim=-1)"
    assert repr(nn.Hardshrink()) == "Hardshrink(0.5)"
    assert repr(nn.Softshrink(1.5)) == "Softshrink(1.5)"
    assert repr(nn.Tanhshrink()) == "Tanhshrink()"
    assert repr(nn.Threshold(0.1, 20.0)) == "Threshold(threshold=0.1, value=20.0)"
    assert repr(nn.Threshold(0.1, 2.0, True)) == "Threshold(threshold=0.1, value=2.0, inplace=True)"
    assert repr(nn.RReLU()) == "RReLU(lower=0.125, upper=0.3333333333333333)"
    assert repr(nn.Softmax2d()) == "Softmax2d()"
    assert repr(nn.LocalResponseNorm(2)) == "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)"


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: F.glu(dp.ones(3, 5)), ValueError,
     r"glu: dimension 1 must have an even size to halve, got 5 \(input of shape \(3, 5\)\)"),
    (lambda: F.glu(dp.tensor(1.0)), ValueError, "glu: input must have at least one dimension"),
    (lambda: F.glu(dp.ones(2, 4), dim=2), ValueError, "glu: axis 2 is out of range"),
    (lambda: nn.GLU(dim="last"), TypeError, "GLU: dim must be an int"),
    (lambda: F.softshrink(dp.ones(3), -0.5), ValueError,
     r"softshrink: lambd must be at least 0\.0, got -0\.5"),
    (lambda: nn.Softshrink(-0.5), ValueError, r"Softshrink: lambd must be at least 0\.0"),
    (lambda: F.hardshrink(dp.ones(3), float("nan")), ValueError,
     "hardshrink: lambd must be a finite number"),
    (lambda: F.hardshrink([1.0], 0.5), TypeError, "hardshrink: input must be a Tensor"),
    (lambda: F.threshold(dp.ones(3), "0.5", 1.0), TypeError,
     "threshold: threshold must be a number"),
    (lambda: F.rrelu(dp.ones(3), 0.5, 0.1), ValueError,
     r"rrelu: lower must not be greater than upper, got 0\.5 > 0\.1"),
    (lambda: nn.RReLU(0.5, 0.1), ValueError, "RReLU: lower must not be greater than upper"),
    (lambda: F.rrelu(dp.ones(3), training=1), TypeError, "rrelu: training must be a bool"),
    (lambda: nn.Softmax2d()(dp.ones(3, 4)), ValueError,
     r"Softmax2d: expected \(C, H, W\) or \(N, C, H, W\) input, got shape \(3, 4\)"),
    (lambda: F.local_response_norm(dp.ones(3, 4), 2), ValueError,
     r"local_response_norm: expected \(N, C, \.\.\.\) input of at least 3 dimensions, got "
     r"shape \(3, 4\)"),
    (lambda: nn.LocalResponseNorm(0), ValueError,
     "LocalResponseNorm: size must be at least 1, got 0"),
    (lambda: nn.LocalResponseNorm(2.5), TypeError, "LocalResponseNorm: size must be an int"),
    (lambda: F.local_response_norm(dp.ones(2, 3, 4, dtype="int64"), 2), TypeError,
     "local_response_norm: input must be floating, got int64"),
    (lambda: F.gumbel_softmax(dp.ones(2, 3), tau=0.0), ValueError,
     r"gumbel_softmax: tau must be greater than 0\.0, got 0\.0"),
    (lambda: F.gumbel_softmax(dp.ones(2, 3, dtype="int64")), TypeError,
     "gumbel_softmax: logits must be floating, got int64"),
    (lambda: F.gumbel_softmax(dp.ones(2, 3), hard=None), TypeError,
     "gumbel_softmax: hard must be a bool"),
])
def test_bad_arguments_are_errors_naming_the_function(call, error, message, backend):
    with pytest.raises(error, match=message):
        call()
