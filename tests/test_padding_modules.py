"""The padding layers (``dparray.nn.padding``): what they keep and print, their gradients
against finite differences in float64, bool tensors, DataParallel, and their errors, on every
backend. Their values and gradients against PyTorch are the ``reshaping_layers`` fixture's cases,
checked by ``test_torch_parity.py``; the first test here makes sure each layer has some."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_model_under_data_parallel, to_tensor
from gradient_checks import check_gradients
from torch_reference import load_cases

import dparray as dp
from dparray import nn
from dparray.nn import padding

MODES = {"Zero": "constant", "Constant": "constant", "Reflection": "reflect",
         "Replication": "replicate", "Circular": "circular"}
LAYERS = [f"{kind}Pad{dims}d" for kind in MODES for dims in (1, 2, 3)]


def _layer(name: str, padding_: object) -> nn.Module:
    layer = getattr(nn, name)
    return layer(padding_, 0.5) if name.startswith("Constant") else layer(padding_)


def test_every_padding_layer_has_pytorch_cases_batched_and_unbatched():
    assert sorted(LAYERS) == sorted(padding.__all__)
    ranks: dict[str, set[int]] = {name: set() for name in LAYERS}
    for case in load_cases("reshaping_layers"):
        if case.layer in ranks:
            ranks[case.layer].add(case.arrays["input.0"].ndim)
    for name, seen in ranks.items():
        dims = int(name[-2])
        assert seen == {dims + 1, dims + 2}, name


def test_padding_is_kept_as_pytorch_keeps_it_and_printed_as_pytorch_prints_it():
    assert nn.ZeroPad2d(1).padding == (1, 1, 1, 1)
    assert nn.ReflectionPad1d([2, 3]).padding == (2, 3)
    assert nn.CircularPad3d(2).padding == (2,) * 6
    assert repr(nn.ZeroPad2d(1)) == "ZeroPad2d((1, 1, 1, 1))"
    assert repr(nn.ConstantPad1d((1, 2), 3)) == "ConstantPad1d(padding=(1, 2), value=3)"
    assert repr(nn.ReplicationPad2d((1, 2, 3, 4))) == "ReplicationPad2d((1, 2, 3, 4))"
    zero = nn.ZeroPad3d((1, 0, 0, 1, 2, 2))
    assert isinstance(zero, nn.ConstantPad3d) and zero.value == 0.0
    assert nn.ConstantPad2d(1, -1.5).value == -1.5


@pytest.mark.parametrize("name", LAYERS)
def test_each_layer_is_f_pad_in_its_mode(name, backend, rng):
    dims = int(name[-2])
    x = to_tensor(rng.standard_normal((2, 3, 4, 5, 6)[-dims - 2:]))
    widths = (2, 1, -1, 3, 0, 2)[:2 * dims]
    layer = _layer(name, widths)
    value = 0.5 if name.startswith("Constant") else None
    expected = dp.pad(x, widths, MODES[name.split("Pad")[0]], value)
    np.testing.assert_array_equal(layer(x).numpy(), expected.numpy())


@pytest.mark.parametrize("name", LAYERS)
def test_gradients_match_finite_differences(name, backend, rng):
    dims = int(name[-2])
    layer = _layer(name, (1, 2, 2, -1, 0, 1)[:2 * dims])
    x = to_tensor(rng.standard_normal((2, 3, 3, 4)[-dims - 1:]), requires_grad=True)
    check_gradients(layer, [x])


def test_bool_tensors_pad_with_false_or_their_edges(backend):
    x = dp.tensor([[[True, False], [False, True]]])
    np.testing.assert_array_equal(nn.ZeroPad2d((1, 0, 0, 0))(x).numpy(),
                                  [[[False, True, False], [False, False, True]]])
    np.testing.assert_array_equal(nn.ReplicationPad1d((0, 1))(x).numpy(),
                                  [[[True, False, False], [False, True, True]]])


def test_an_empty_batch_pads_to_an_empty_batch(backend):
    assert nn.ReflectionPad2d(1)(dp.zeros(0, 2, 3, 3)).shape == (0, 2, 5, 5)


@pytest.mark.parametrize("name", ["ReflectionPad2d", "ConstantPad2d", "CircularPad1d"])
def test_under_data_parallel_same_as_unwrapped(name, backend, rng):
    dims = int(name[-2])
    shape = (5, 2, 4, 5)[:dims + 2]
    assert_model_under_data_parallel(_layer(name, 1), rng.standard_normal(shape), 2)


@pytest.mark.parametrize(("name", "shape", "expected"), [
    ("ReflectionPad1d", (5,), r"expected a 2-D \(C, W\) or 3-D \(N, C, W\) input, got shape "
                              r"\(5,\)"),
    ("ReplicationPad2d", (2, 3), r"expected a 3-D \(C, H, W\) or 4-D \(N, C, H, W\) input"),
    ("CircularPad2d", (1, 1, 2, 3, 4), r"expected a 3-D \(C, H, W\) or 4-D \(N, C, H, W\) "
                                      r"input, got shape \(1, 1, 2, 3, 4\)"),
    ("ReflectionPad3d", (2, 3, 4), r"expected a 4-D \(C, D, H, W\) or 5-D \(N, C, D, H, W\)"),
    ("ZeroPad2d", (4,), r"expected an input of at least 2 dimensions, got shape \(4,\)"),
    ("ConstantPad3d", (2, 3), r"expected an input of at least 3 dimensions"),
])
def test_the_wrong_rank_is_a_value_error_naming_the_layer(name, shape, expected, backend):
    with pytest.raises(ValueError, match=rf"^{name}: {expected}"):
        _layer(name, 1)(dp.zeros(*shape))


def test_bad_arguments_are_errors_when_the_layer_is_made():
    with pytest.raises(ValueError, match=r"^ZeroPad2d: padding must be an int or 4 ints, "
                                         r"got \(1, 2\)"):
        nn.ZeroPad2d((1, 2))
    with pytest.raises(ValueError, match=r"^ReflectionPad3d: padding must be an int or 6 ints"):
        nn.ReflectionPad3d([1, 1, 1, 1])
    with pytest.raises(TypeError, match=r"^CircularPad1d: padding must be an int, got 1.5"):
        nn.CircularPad1d(1.5)
    with pytest.raises(TypeError, match=r"^ConstantPad1d: value must be a number, got 'a'"):
        nn.ConstantPad1d(1, "a")
    with pytest.raises(TypeError, match=r"^ReplicationPad2d: input must be a Tensor"):
        nn.ReplicationPad2d(1)(np.zeros((1, 2, 2)))


def test_widths_a_mode_cannot_fill_are_value_errors(backend):
    with pytest.raises(ValueError, match=r"reflect widths must be less than the axis's length"):
        nn.ReflectionPad1d(3)(dp.zeros(1, 2, 3))
    with pytest.raises(ValueError, match=r"circular widths must be at most the axis's length"):
        nn.CircularPad2d((0, 0, 3, 0))(dp.zeros(1, 2, 3))
