"""im2col as PyTorch names it, ``F.unfold``/``nn.Unfold`` and its adjoint ``F.fold``/``nn.Fold``
(``dparray.nn.fold``): the functional forms against PyTorch through the ``reshaping_layers`` fixture
(the layers themselves are checked by ``test_torch_parity.py``), fold as unfold's adjoint,
unfold and a product as ``conv2d``, first and second derivatives against finite differences in
float64, DataParallel, and errors, on every backend."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_model_under_data_parallel, to_tensor
from gradient_checks import check_gradients
from test_second_order import check_second_order
from torch_reference import check, load_cases

import dparray as dp
from dparray import nn
from dparray.nn import functional as F


def _geometry(layer):
    return {"kernel_size": layer.kernel_size, "dilation": layer.dilation,
            "padding": layer.padding, "stride": layer.stride}


FUNCTIONAL = {
    "Unfold": lambda layer, x: F.unfold(x, **_geometry(layer)),
    "Fold": lambda layer, x: F.fold(x, layer.output_size, **_geometry(layer)),
}
CASES = [case for case in load_cases("reshaping_layers") if case.layer in FUNCTIONAL]
GEOMETRIES = [
    {"kernel_size": 2},
    {"kernel_size": (2, 3), "dilation": (2, 1), "padding": (1, 2), "stride": (2, 1)},
    {"kernel_size": 3, "padding": 1, "stride": 2},
    {"kernel_size": (1, 2), "dilation": 3, "stride": (3, 2)},  # windows skip some pixels
]


def test_both_layers_have_pytorch_cases_batched_and_unbatched():
    ranks = {(case.layer, case.arrays["input.0"].ndim) for case in CASES}
    assert ranks == {("Unfold", 4), ("Unfold", 3), ("Fold", 3), ("Fold", 2)}


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_functional_forms_give_pytorchs_values_and_gradients(case, backend):
    check(case, call=FUNCTIONAL[case.layer])


def test_repr_and_attributes_are_pytorchs():
    unfold = nn.Unfold((2, 3), dilation=2, padding=1, stride=(1, 2))
    assert repr(unfold) == "Unfold(kernel_size=(2, 3), dilation=2, padding=1, stride=(1, 2))"
    assert (unfold.kernel_size, unfold.dilation, unfold.padding, unfold.stride) == \
        ((2, 3), 2, 1, (1, 2))
    fold = nn.Fold(5, 2)
    assert repr(fold) == "Fold(output_size=5, kernel_size=2, dilation=1, padding=0, stride=1)"
    assert (fold.output_size, fold.kernel_size) == (5, 2)


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=str)
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
def test_fold_is_the_adjoint_of_unfold(geometry, batched, backend, rng):
    shape = (2, 3, 7, 6) if batched else (3, 7, 6)
    x = to_tensor(rng.standard_normal(shape))
    columns = F.unfold(x, **geometry)
    y = to_tensor(rng.standard_normal(columns.shape))
    folded = F.fold(y, (7, 6), **geometry)
    assert folded.shape == shape
    left = float((columns * y).sum().item())
    right = float((x * folded).sum().item())
    assert abs(left - right) <= 1e-12 * max(1.0, abs(left)), (left, right)


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=str)
def test_unfold_then_a_product_is_conv2d(geometry, backend, rng):
    kernel = geometry["kernel_size"]
    kh, kw = kernel if isinstance(kernel, tuple) else (kernel, kernel)
    x = to_tensor(rng.standard_normal((2, 3, 7, 6)))
    weight = to_tensor(rng.standard_normal((4, 3, kh, kw)))
    expected = F.conv2d(x, weight, **{k: v for k, v in geometry.items() if k != "kernel_size"})
    columns = F.unfold(x, **geometry)
    got = (weight.reshape(4, 3 * kh * kw) @ columns).reshape(expected.shape)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


def test_fold_of_unfold_counts_the_windows_over_each_pixel(backend):
    ones = dp.ones(1, 1, 3, 4, dtype=dp.float64)
    counts = F.fold(F.unfold(ones, 2), (3, 4), 2)
    np.testing.assert_array_equal(counts.numpy()[0, 0],
                                  np.outer([1, 2, 1], [1, 2, 2, 1]))


@pytest.mark.parametrize("geometry", GEOMETRIES[1:3], ids=str)
def test_gradients_match_finite_differences(geometry, backend, rng):
    x = to_tensor(rng.standard_normal((2, 2, 5, 4)), requires_grad=True)
    check_gradients(lambda t: F.unfold(t, **geometry), [x])
    count = F.unfold(dp.zeros(1, 1, 5, 4), **geometry).shape[-1]
    k = F.unfold(dp.zeros(1, 1, 5, 4), **geometry).shape[1]
    y = to_tensor(rng.standard_normal((2 * k, count)), requires_grad=True)  # unbatched
    check_gradients(lambda t: F.fold(t, (5, 4), **geometry), [y])


def test_second_derivatives_match_finite_differences(backend, rng):
    geometry = GEOMETRIES[1]

    def function(x):
        columns = F.unfold(x, **geometry)
        return F.fold(columns * columns * columns, (5, 4), **geometry)

    check_second_order(function, [rng.standard_normal((1, 2, 5, 4))], rng)


def test_integer_and_bool_input(backend):
    x = dp.arange(12).reshape(1, 1, 3, 4)
    columns = F.unfold(x, 2, padding=1)
    assert columns.dtype == x.dtype
    np.testing.assert_array_equal(columns.numpy(), F.unfold(x.to(dp.float64), 2, padding=1)
                                  .numpy())
    np.testing.assert_array_equal(F.fold(columns, (3, 4), 2, padding=1).numpy(),
                                  F.fold(columns.to(dp.float64), (3, 4), 2, padding=1).numpy())
    flags = F.unfold(dp.ones(1, 1, 2, 2, dtype=dp.bool), 2, padding=1)
    assert flags.dtype == dp.bool and int(flags.sum().item()) == 16


def test_an_empty_batch_gives_an_empty_batch(backend):
    assert F.unfold(dp.zeros(0, 3, 5, 6), 2).shape == (0, 12, 20)
    assert F.fold(dp.zeros(0, 12, 20), (5, 6), 2).shape == (0, 3, 5, 6)


@pytest.mark.parametrize("layer", [nn.Unfold(2, padding=1), nn.Fold((4, 4), 2, stride=2)],
                         ids=repr)
def test_under_data_parallel_same_as_unwrapped(layer, backend, rng):
    shape = (5, 3, 4, 4) if isinstance(layer, nn.Unfold) else (5, 12, 4)
    assert_model_under_data_parallel(layer, rng.standard_normal(shape), 2)


def test_bad_input_is_an_error_naming_the_function(backend):
    with pytest.raises(ValueError, match=r"^unfold: expected a non-empty \(C, H, W\) or "
                                         r"\(N, C, H, W\) input \(the batch may be empty\), "
                                         r"got shape \(5, 6\)"):
        F.unfold(dp.zeros(5, 6), 2)
    with pytest.raises(ValueError, match=r"^Unfold: expected a non-empty .* got shape "
                                         r"\(2, 0, 5, 6\)"):
        nn.Unfold(2)(dp.zeros(2, 0, 5, 6))
    with pytest.raises(ValueError, match=r"^unfold: a kernel of size \(7, 7\) \(dilation "
                                         r"\(1, 1\), padding \(0, 0\), stride \(1, 1\)\) does "
                                         r"not fit an image of spatial size \(5, 6\)"):
        F.unfold(dp.zeros(1, 1, 5, 6), 7)
    with pytest.raises(ValueError, match=r"^fold: expected a non-empty \(C \* kh \* kw, L\) or "
                                         r"\(N, C \* kh \* kw, L\) input"):
        F.fold(dp.zeros(1, 2, 12, 20), (5, 6), 2)
    with pytest.raises(ValueError, match=r"^Fold: the input's axis -2 \(11\) must be divisible "
                                         r"by the kernel's size \(2, 2\) \(4 entries\)"):
        nn.Fold((5, 6), 2)(dp.zeros(2, 11, 20))
    with pytest.raises(ValueError, match=r"^fold: an output of size \(5, 6\) holds 4 x 5 = 20 "
                                         r"windows .* but the input's last axis has 19"):
        F.fold(dp.zeros(2, 12, 19), (5, 6), 2)
    with pytest.raises(ValueError, match=r"^fold: a kernel of size \(2, 2\) .* does not fit an "
                                         r"image of spatial size \(1, 1\)"):
        F.fold(dp.zeros(2, 12, 16), 1, 2)
    with pytest.raises(TypeError, match=r"^fold: input must be a numeric tensor \(its columns "
                                        r"are summed\), got bool"):
        F.fold(dp.ones(4, 1, dtype=dp.bool), 2, 2)
    with pytest.raises(TypeError, match=r"^unfold: input must be a Tensor"):
        F.unfold(np.zeros((1, 1, 2, 2)), 1)


@pytest.mark.parametrize(("call", "error", "expected"), [
    (lambda: nn.Unfold(0), ValueError, r"^Unfold: kernel_size must be at least 1, got 0"),
    (lambda: nn.Unfold(2, stride=0), ValueError, r"^Unfold: stride must be at least 1"),
    (lambda: nn.Unfold(2, dilation=(1, 0)), ValueError, r"^Unfold: dilation must be at least 1"),
    (lambda: nn.Unfold(2, padding=-1), ValueError, r"^Unfold: padding must be at least 0"),
    (lambda: nn.Unfold((2, 2, 2)), ValueError, r"^Unfold: kernel_size must be an int or 2 ints"),
    (lambda: nn.Unfold(2.0), TypeError, r"^Unfold: kernel_size must be an int, got 2.0"),
    (lambda: nn.Fold((5, 5, 5), 2), ValueError, r"^Fold: output_size must be an int or 2 ints"),
    (lambda: nn.Fold(0, 2), ValueError, r"^Fold: output_size must be at least 1, got 0"),
    (lambda: F.fold(dp.zeros(4, 1), 2, 2, stride=-1), ValueError,
     r"^fold: stride must be at least 1"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_bad_geometry_is_an_error_before_any_work(call, error, expected):
    with pytest.raises(error, match=expected):
        call()


def test_the_column_layout_is_channel_then_kernel_offset(backend):
    """Row ``c * kh * kw + i * kw + j`` of a column is channel ``c``'s entry at kernel offset
    ``(i, j)``, as PyTorch lays it out (the fixtures check the values; this names the rule)."""
    x = np.arange(2 * 3 * 4, dtype=np.float64).reshape(1, 2, 3, 4)
    columns = F.unfold(to_tensor(x), (2, 3)).numpy()[0]
    assert columns.shape == (2 * 6, 4)
    for c, i, j in np.ndindex(2, 2, 3):
        for l_, (p, q) in enumerate(np.ndindex(2, 2)):
            assert columns[c * 6 + i * 3 + j, l_] == x[0, c, p + i, q + j]
