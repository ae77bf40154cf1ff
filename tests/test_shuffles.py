"""Pixel shuffle, pixel unshuffle and channel shuffle (``dparray.nn.shuffle``): the functional
forms against PyTorch through the ``reshaping_layers`` fixture (the layers themselves are checked by
``test_torch_parity.py``), inverses, gradients against finite differences in float64,
DataParallel, and errors, on every backend."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_model_under_data_parallel, to_tensor
from gradient_checks import check_gradients
from torch_reference import check, load_cases

import dparray as dp
from dparray import nn
from dparray.nn import functional as F

FUNCTIONAL = {
    "PixelShuffle": lambda layer, x: F.pixel_shuffle(x, layer.upscale_factor),
    "PixelUnshuffle": lambda layer, x: F.pixel_unshuffle(x, layer.downscale_factor),
    "ChannelShuffle": lambda layer, x: F.channel_shuffle(x, layer.groups),
}
CASES = [case for case in load_cases("reshaping_layers") if case.layer in FUNCTIONAL]


def test_every_layer_has_pytorch_cases():
    assert {case.layer for case in CASES} == set(FUNCTIONAL)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_functional_forms_give_pytorchs_values_and_gradients(case, backend):
    check(case, call=FUNCTIONAL[case.layer])


def test_repr_and_attributes_are_pytorchs():
    assert repr(nn.PixelShuffle(3)) == "PixelShuffle(upscale_factor=3)"
    assert repr(nn.PixelUnshuffle(2)) == "PixelUnshuffle(downscale_factor=2)"
    assert repr(nn.ChannelShuffle(4)) == "ChannelShuffle(groups=4)"
    assert nn.PixelShuffle(3).upscale_factor == 3 and nn.ChannelShuffle(4).groups == 4


def test_unshuffle_undoes_shuffle_and_channel_shuffle_undoes_itself(backend, rng):
    x = rng.standard_normal((2, 3, 18, 2, 3))
    shuffled = F.pixel_shuffle(to_tensor(x), 3)
    assert shuffled.shape == (2, 3, 2, 6, 9)
    np.testing.assert_array_equal(F.pixel_unshuffle(shuffled, 3).numpy(), x)
    y = rng.standard_normal((2, 12, 3))
    once = F.channel_shuffle(to_tensor(y), 3)
    assert not np.array_equal(once.numpy(), y)
    np.testing.assert_array_equal(F.channel_shuffle(once, 4).numpy(), y)  # (3, 4) then (4, 3)


def test_a_factor_of_one_and_one_group_change_nothing(backend, rng):
    x = rng.standard_normal((2, 4, 3, 5))
    for out in (F.pixel_shuffle(to_tensor(x), 1), F.pixel_unshuffle(to_tensor(x), 1),
                F.channel_shuffle(to_tensor(x), 1), F.channel_shuffle(to_tensor(x), 4)):
        np.testing.assert_array_equal(out.numpy(), x)


def test_empty_batches_and_integer_tensors(backend):
    assert F.pixel_shuffle(dp.zeros(0, 8, 3, 2), 2).shape == (0, 2, 6, 4)
    assert F.channel_shuffle(dp.zeros(0, 4, 2), 2).shape == (0, 4, 2)
    x = dp.arange(8).reshape(1, 8, 1, 1)
    np.testing.assert_array_equal(F.pixel_shuffle(x, 2).numpy(),
                                  np.arange(8).reshape(1, 2, 2, 2))


@pytest.mark.parametrize(("function", "shape"), [
    (lambda x: F.pixel_shuffle(x, 2), (2, 8, 2, 3)),
    (lambda x: F.pixel_unshuffle(x, 2), (3, 2, 4)),
    (lambda x: F.channel_shuffle(x, 3), (2, 6, 2)),
], ids=["pixel_shuffle", "pixel_unshuffle", "channel_shuffle"])
def test_gradients_match_finite_differences(function, shape, backend, rng):
    check_gradients(function, [to_tensor(rng.standard_normal(shape), requires_grad=True)])


@pytest.mark.parametrize("layer", [nn.PixelShuffle(2), nn.PixelUnshuffle(2),
                                   nn.ChannelShuffle(2)], ids=repr)
def test_under_data_parallel_same_as_unwrapped(layer, backend, rng):
    assert_model_under_data_parallel(layer, rng.standard_normal((5, 4, 4, 2)), 2)


def test_bad_input_is_a_value_error_naming_the_function(backend):
    with pytest.raises(ValueError, match=r"^pixel_shuffle: expected an input of at least 3 "
                                         r"dimensions \(\*, C \* 2\*\*2, H, W\), got shape "
                                         r"\(4, 3\)"):
        F.pixel_shuffle(dp.zeros(4, 3), 2)
    with pytest.raises(ValueError, match=r"^PixelShuffle: the channels \(6, axis -3\) must be "
                                         r"divisible by upscale_factor squared \(4\)"):
        nn.PixelShuffle(2)(dp.zeros(1, 6, 3, 2))
    with pytest.raises(ValueError, match=r"^pixel_unshuffle: the height and width \(3, 4\) "
                                         r"must be divisible by downscale_factor \(2\)"):
        F.pixel_unshuffle(dp.zeros(1, 1, 3, 4), 2)
    with pytest.raises(ValueError, match=r"^PixelUnshuffle: expected an input of at least 3"):
        nn.PixelUnshuffle(2)(dp.zeros(4, 4))
    with pytest.raises(ValueError, match=r"^channel_shuffle: expected an input of at least 3 "
                                         r"dimensions \(N, C, \*\), got shape \(3, 4\)"):
        F.channel_shuffle(dp.zeros(3, 4), 2)
    with pytest.raises(ValueError, match=r"^ChannelShuffle: the channels \(5, axis 1\) must be "
                                         r"divisible by groups \(2\), got shape \(3, 5, 2\)"):
        nn.ChannelShuffle(2)(dp.zeros(3, 5, 2))
    with pytest.raises(TypeError, match=r"^pixel_shuffle: input must be a Tensor"):
        F.pixel_shuffle(np.zeros((1, 4, 1, 1)), 2)


def test_bad_factors_are_errors_before_any_work():
    x = dp.zeros(1, 4, 2, 2)
    with pytest.raises(ValueError, match=r"^pixel_shuffle: upscale_factor must be at least 1, "
                                         r"got 0"):
        F.pixel_shuffle(x, 0)
    with pytest.raises(TypeError, match=r"^pixel_unshuffle: downscale_factor must be an int, "
                                        r"got 2.0"):
        F.pixel_unshuffle(x, 2.0)
    with pytest.raises(ValueError, match=r"^channel_shuffle: groups must be at least 1, got -1"):
        F.channel_shuffle(x, -1)
    with pytest.raises(ValueError, match=r"^PixelShuffle: upscale_factor must be at least 1"):
        nn.PixelShuffle(0)
    with pytest.raises(TypeError, match=r"^PixelUnshuffle: downscale_factor must be an int"):
        nn.PixelUnshuffle(1.5)
    with pytest.raises(ValueError, match=r"^ChannelShuffle: groups must be at least 1, got 0"):
        nn.ChannelShuffle(0)
