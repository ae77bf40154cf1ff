"""``BatchNorm3d``, ``InstanceNorm3d`` and ``Bilinear`` / ``F.bilinear``: against PyTorch's fixtures
(``tests/data/pooling_layers.safetensors``, made by ``tests/data/make_pooling_fixtures.py``:
outputs, running statistics after the call, and the gradients of the input and of every parameter,
in training and evaluation), state dicts with PyTorch's keys, finite differences, PyTorch's
initialisation and repr, and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gradient_checks import check_gradients
from grouped_fixtures import POOLING, check_function
from nn_helpers import module_gradcheck
from torch_reference import check, check_state_dict_round_trip

import dparray as dp
from dparray import nn
from dparray.nn import functional as F

LAYERS = ["BatchNorm3d", "InstanceNorm3d", "Bilinear"]
LAYER_CASES = POOLING.layer_cases(*LAYERS)
FUNCTION_CASES = POOLING.function_cases("bilinear")


def test_the_fixtures_cover_every_layer():
    assert {case.layer for case in LAYER_CASES} == set(LAYERS)
    trained = [case for case in LAYER_CASES if case.training]
    assert {case.layer for case in trained} == {"BatchNorm3d", "InstanceNorm3d"}
    assert all("after.running_mean" in case.arrays for case in trained
               if "state.running_mean" in case.arrays)
    assert {"grad.state.weight", "grad.state.bias", "grad.input.1"} <= set(
        next(case for case in LAYER_CASES if case.name == "bilinear").arrays)


@pytest.mark.parametrize("case", LAYER_CASES, ids=repr)
def test_layers_match_pytorch(case, backend, kernels):
    check(case)


@pytest.mark.parametrize("case", LAYER_CASES, ids=repr)
def test_state_dict_round_trip(case, backend, tmp_path):
    check_state_dict_round_trip(case, tmp_path)


@pytest.mark.parametrize("case", FUNCTION_CASES, ids=repr)
def test_bilinear_matches_pytorch(case, backend):
    check_function(case)


@pytest.mark.parametrize(("layer", "kwargs", "expected"), POOLING.layer_reprs("Bilinear"))
def test_bilinear_repr_is_pytorchs(layer, kwargs, expected):
    assert repr(getattr(nn, layer)(**kwargs)) == expected


# ---------------------------------------------------------------------- 3-D normalisation
@pytest.mark.parametrize(("layer", "kwargs", "expected"),
                         POOLING.layer_reprs("BatchNorm3d", "InstanceNorm3d"))
def test_norm_3d_repr_is_pytorchs(layer, kwargs, expected):
    assert repr(getattr(nn, layer)(**kwargs)) == expected


def test_batch_norm_3d_normalises_each_channel_over_batch_and_volume(backend, rng):
    norm = nn.BatchNorm3d(2, dtype="float64")
    y = norm(dp.tensor(rng.standard_normal((3, 2, 4, 3, 5)) * 3.0 + 1.0)).numpy()
    np.testing.assert_allclose(y.mean(axis=(0, 2, 3, 4)), 0.0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=(0, 2, 3, 4)), 1.0, rtol=1e-4)


def test_instance_norm_3d_gradients_match_finite_differences(backend, rng):
    layer = nn.InstanceNorm3d(2, affine=True, dtype="float64")
    layer.weight = nn.Parameter(dp.tensor(rng.standard_normal(2)))
    module_gradcheck(layer, dp.tensor(rng.standard_normal((2, 2, 2, 3, 2)), requires_grad=True))


@pytest.mark.parametrize(("layer", "x", "message"), [
    (nn.BatchNorm3d(3), dp.ones(2, 3, 4, 4), r"^BatchNorm3d\(3\): expected \(N, 3, D, H, W\) "
                                             r"input, got shape \(2, 3, 4, 4\)"),
    (nn.BatchNorm3d(3), dp.ones(2, 4, 2, 2, 2), r"expected \(N, 3, D, H, W\)"),
    (nn.InstanceNorm3d(3), dp.ones(2, 3, 4), r"^InstanceNorm3d\(3\): expected \(N, 3, D, H, W\) "
                                             r"or \(3, D, H, W\) input, got shape \(2, 3, 4\)"),
])
def test_3d_norms_refuse_other_shapes(layer, x, message):
    with pytest.raises(ValueError, match=message):
        layer(x)


# ---------------------------------------------------------------------- bilinear
def test_bilinear_is_a_quadratic_form_per_output(backend, rng):
    x1, x2 = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    weight, bias = rng.standard_normal((5, 3, 2)), rng.standard_normal(5)
    got = F.bilinear(dp.tensor(x1), dp.tensor(x2), dp.tensor(weight), dp.tensor(bias)).numpy()
    want = [[x1[n] @ weight[o] @ x2[n] + bias[o] for o in range(5)] for n in range(4)]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_bilinear_gradients_match_finite_differences(backend, rng):
    layer = nn.Bilinear(3, 2, 4, dtype="float64")
    x1 = dp.tensor(rng.standard_normal((2, 3, 3)), requires_grad=True)
    x2 = dp.tensor(rng.standard_normal((2, 3, 2)), requires_grad=True)
    module_gradcheck(layer, x1, x2)
    check_gradients(lambda a, b, w: F.bilinear(a, b, w), [x1, x2, layer.weight])


def test_bilinear_starts_from_pytorchs_uniform():
    layer = nn.Bilinear(16, 3, 40, dtype="float64")
    bound = 1.0 / math.sqrt(16)
    for p in (layer.weight, layer.bias):
        values = p.numpy()
        assert np.abs(values).max() <= bound
        assert np.abs(values).max() > 0.5 * bound  # spread over the range, not all small
    assert layer.weight.shape == (40, 16, 3) and layer.bias.shape == (40,)
    assert nn.Bilinear(2, 2, 2, bias=False).bias is None


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: F.bilinear(dp.ones(2, 3), dp.ones(2, 4), dp.ones(5, 3)), ValueError,
     r"^bilinear: weight must be \(out_features, in1_features, in2_features\), got shape"),
    (lambda: F.bilinear(dp.ones(2, 3), dp.ones(2, 5), dp.ones(5, 3, 4)), ValueError,
     r"^bilinear: expected inputs \(\*, 3\) and \(\*, 4\) for weight of shape \(5, 3, 4\), "
     r"got shapes \(2, 3\) and \(2, 5\)"),
    (lambda: F.bilinear(dp.ones(2, 3), dp.ones(1, 4), dp.ones(5, 3, 4)), ValueError,
     r"^bilinear: input1 and input2 must have the same shape but for the last axis"),
    (lambda: F.bilinear(dp.ones(2, 3), dp.ones(2, 4), dp.ones(5, 3, 4), dp.ones(4)), ValueError,
     r"^bilinear: bias of shape \(4,\) does not fit weight of shape \(5, 3, 4\)"),
    (lambda: F.bilinear([1.0], dp.ones(2, 4), dp.ones(5, 3, 4)), TypeError,
     r"^bilinear: input1 must be a Tensor"),
    (lambda: nn.Bilinear(0, 2, 3), ValueError, r"^Bilinear: in1_features must be at least 1"),
    (lambda: nn.Bilinear(2, 2, 3, bias=1), TypeError, r"^Bilinear: bias must be a bool"),
])
def test_bilinear_refuses_bad_arguments(call, error, message):
    with pytest.raises(error, match=message):
        call()
