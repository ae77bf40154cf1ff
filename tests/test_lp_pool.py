"""Power-average pooling, ``LPPool1d/2d/3d`` and ``F.lp_pool1d/2d/3d``: against PyTorch's fixtures
(``tests/data/pooling_layers.safetensors``, made by ``tests/data/make_pooling_fixtures.py``: values
and input gradients for ``p`` = 1, 1.5, 2, 2.5, 3 and +-inf, ``ceil_mode``'s partial windows,
unbatched input, and a window of zeros, whose gradient PyTorch sets to 0), against finite
differences and the definition, PyTorch's reprs, and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gradient_checks import check_gradients
from grouped_fixtures import POOLING, check_function
from torch_reference import check

import dparray as dp
from dparray import nn
from dparray.nn import functional as F

LAYERS = ["LPPool1d", "LPPool2d", "LPPool3d"]
FUNCTIONS = ["lp_pool1d", "lp_pool2d", "lp_pool3d"]
LAYER_CASES = POOLING.layer_cases(*LAYERS)
FUNCTION_CASES = POOLING.function_cases(*FUNCTIONS)


def test_the_fixtures_cover_every_layer_and_function():
    assert {case.layer for case in LAYER_CASES} == set(LAYERS)
    assert {case.function for case in FUNCTION_CASES} == set(FUNCTIONS)
    zeros = next(case for case in FUNCTION_CASES if case.name == "f_lp1d_zero_window")
    assert not zeros.arrays["input.0"][:, :, 2:4].any()  # a window of zeros ...
    assert not zeros.arrays["grad.input.0"][:, :, 2:4].any()  # ... where PyTorch's gradient is 0


@pytest.mark.parametrize("case", LAYER_CASES, ids=repr)
def test_layers_match_pytorch(case, backend, kernels):
    check(case)


@pytest.mark.parametrize("case", FUNCTION_CASES, ids=repr)
def test_functions_match_pytorch(case, backend, kernels):
    check_function(case)


@pytest.mark.parametrize(("layer", "kwargs", "expected"), POOLING.layer_reprs(*LAYERS))
def test_reprs_are_pytorchs(layer, kwargs, expected):
    assert repr(getattr(nn, layer)(**kwargs)) == expected


def test_each_window_gives_its_p_norm(backend, rng):
    x = rng.random((2, 3, 6, 4)) + 0.1
    got = F.lp_pool2d(dp.tensor(x), 3, (3, 2)).numpy()
    windows = x.reshape(2, 3, 2, 3, 2, 2)
    np.testing.assert_allclose(got, (windows ** 3).sum(axis=(3, 5)) ** (1 / 3), rtol=1e-12)


@pytest.mark.parametrize(("dims", "shape", "p", "kwargs"), [
    (1, (2, 3, 7), 2.0, {"kernel_size": 3, "stride": 2, "ceil_mode": True}),
    (2, (1, 2, 5, 4), 1.5, {"kernel_size": 2}),
    (3, (1, 2, 3, 4, 4), 3.0, {"kernel_size": (1, 2, 2), "stride": 1}),
    (3, (2, 3, 4, 4), 2.0, {"kernel_size": 2}),
])
def test_gradients_match_finite_differences(dims, shape, p, kwargs, backend, rng):
    x = dp.tensor(rng.random(shape) + 0.2, requires_grad=True)
    function = getattr(F, f"lp_pool{dims}d")
    check_gradients(lambda t: function(t, p, **kwargs), [x])


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: F.lp_pool1d(dp.ones(1, 1, 4), 0, 2), ValueError,
     r"^lp_pool1d: norm_type must be nonzero, got 0"),
    (lambda: F.lp_pool2d(dp.ones(1, 1, 4, 4), "2", 2), TypeError,
     r"^lp_pool2d: norm_type must be a number, got '2'"),
    (lambda: F.lp_pool2d(dp.ones(1, 1, 4, 4), math.nan, 2), ValueError,
     r"norm_type must be a finite number"),
    (lambda: F.lp_pool1d(dp.ones(1, 1, 2), 2, 3), ValueError,
     r"^lp_pool1d: a kernel of size \(3,\) .* does not fit an input of spatial size \(2,\)"),
    (lambda: F.lp_pool3d(dp.ones(1, 2, 2), 2, 2), ValueError,
     r"^lp_pool3d: expected an \(N, C, D, H, W\) or unbatched \(C, D, H, W\) input, got "
     r"shape \(1, 2, 2\)"),
    (lambda: F.lp_pool3d(dp.ones(1, 1, 1, 2, 2), 2, 2), ValueError,
     r"^lp_pool3d: a kernel of size \(2, 2, 2\) .* does not fit an input of spatial size "),
    (lambda: F.lp_pool2d(dp.ones(1, 1, 4, 4, dtype=dp.int64), 2, 2), TypeError,
     r"^lp_pool2d: input must be a floating-point tensor, got int64"),
    (lambda: F.lp_pool2d(dp.ones(1, 1, 4, 4), 2, (2, 2, 2)), ValueError,
     r"^lp_pool2d: kernel_size must be an int or 2 ints"),
    (lambda: nn.LPPool1d(2, 0), ValueError, r"^LPPool1d: kernel_size must be at least 1"),
    (lambda: nn.LPPool2d(2, 2)(dp.ones(4, 4)), ValueError, r"^LPPool2d: expected"),
    (lambda: F.lp_pool1d([1.0, 2.0], 2, 2), TypeError, r"^lp_pool1d: input must be a Tensor"),
])
def test_bad_arguments_are_refused(call, error, message):
    with pytest.raises(error, match=message):
        call()
