"""``EmbeddingBag`` and ``F.embedding_bag``: against PyTorch's fixtures
(``tests/data/pooling_layers.safetensors``, made by ``tests/data/make_pooling_fixtures.py``: outputs
and the gradients of the weight and of ``per_sample_weights``, for sum, mean and max over 2-D input
and over 1-D input with offsets -- ``include_last_offset``, padding, empty bags, bags of padding
only, an empty input, ties), state dicts with PyTorch's keys, finite differences, PyTorch's
initialisation and repr, and errors (the unsupported arguments among them)."""

from __future__ import annotations

import numpy as np
import pytest
from gradient_checks import check_gradients
from grouped_fixtures import POOLING, check_function
from torch_reference import check, check_state_dict_round_trip

import dparray as dp
from dparray import nn
from dparray.nn import functional as F

LAYER_CASES = POOLING.layer_cases("EmbeddingBag")
FUNCTION_CASES = POOLING.function_cases("embedding_bag")


def test_the_fixtures_cover_every_mode_and_form():
    names = {case.name for case in FUNCTION_CASES}
    for mode in ("sum", "mean", "max"):
        for form in ("2d", "2d_padding", "offsets", "offsets_padding", "last_offset",
                     "empty_input"):
            assert f"f_bag_{mode}_{form}" in names
    weighted = next(case for case in FUNCTION_CASES if case.name == "f_bag_weighted_2d")
    assert "grad.input.2" in weighted.arrays  # the gradient of per_sample_weights
    ties = next(case for case in FUNCTION_CASES if case.name == "f_bag_max_ties")
    first_bag = ties.arrays["input.1"][ties.arrays["input.0"][:4]]
    assert ((first_bag == first_bag.max(axis=0)).sum(axis=0) > 1).all()  # tied maxima
    assert {case.name for case in LAYER_CASES} >= {"bag_mean_2d", "bag_sum_weighted"}


@pytest.mark.parametrize("case", LAYER_CASES, ids=repr)
def test_layers_match_pytorch(case, backend, kernels):
    check(case)


@pytest.mark.parametrize("case", LAYER_CASES, ids=repr)
def test_state_dict_round_trip(case, backend, tmp_path):
    check_state_dict_round_trip(case, tmp_path)


@pytest.mark.parametrize("case", FUNCTION_CASES, ids=repr)
def test_functions_match_pytorch(case, backend, kernels):
    check_function(case)


@pytest.mark.parametrize(("layer", "kwargs", "expected"), POOLING.layer_reprs("EmbeddingBag"))
def test_reprs_are_pytorchs(layer, kwargs, expected):
    assert repr(getattr(nn, layer)(**kwargs)) == expected


# ---------------------------------------------------------------------- semantics
def test_bags_reduce_the_rows_they_hold(backend, rng):
    weight = rng.standard_normal((6, 3))
    x, offsets = [4, 0, 0, 2, 5, 1], [0, 1, 4, 4]
    out = F.embedding_bag(dp.tensor(x), dp.tensor(weight), dp.tensor(offsets), mode="mean",
                          padding_idx=2)
    want = [weight[4], (weight[0] + weight[0]) / 2, np.zeros(3), (weight[5] + weight[1]) / 2]
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)
    out = F.embedding_bag(dp.tensor(x), dp.tensor(weight), dp.tensor(offsets), mode="max")
    want = [weight[4], np.maximum(weight[0], weight[2]), np.zeros(3),
            np.maximum(weight[5], weight[1])]
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_weight_gradients_match_finite_differences(mode, backend, rng):
    weight = dp.tensor(rng.permutation(18).reshape(6, 3) * 0.1, requires_grad=True)
    x, offsets = dp.tensor([1, 3, 3, 0, 5, 1, 2]), dp.tensor([0, 3, 3, 5])
    check_gradients(lambda w: F.embedding_bag(x, w, offsets, mode=mode, padding_idx=5),
                    [weight])


def test_per_sample_weight_gradients_match_finite_differences(backend, rng):
    weight = dp.tensor(rng.standard_normal((5, 4)), requires_grad=True)
    scale = dp.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    x = dp.tensor([[1, 4], [0, 0], [2, 3]])
    check_gradients(lambda w, s: F.embedding_bag(x, w, mode="sum", per_sample_weights=s),
                    [weight, scale])


def test_the_padding_row_starts_at_zero_and_stays_out():
    bag = nn.EmbeddingBag(5, 3, padding_idx=-2, dtype="float64")
    assert bag.padding_idx == 3 and bag.weight[3].tolist() == [0.0, 0.0, 0.0]
    assert np.abs(bag.weight.numpy()).sum() > 0
    grads = bag(dp.tensor([[3, 1], [3, 3]])).sum().backward()
    assert grads[bag.weight][3].tolist() == [0.0, 0.0, 0.0]


def test_from_pretrained_holds_the_table_frozen():
    table = dp.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    bag = nn.EmbeddingBag.from_pretrained(table, mode="sum")
    assert bag(dp.tensor([0, 2, 1]), dp.tensor([0, 2])).tolist() == [[6.0, 8.0], [3.0, 4.0]]
    assert not bag.weight.requires_grad and list(bag.state_dict()) == ["weight"]
    assert nn.EmbeddingBag.from_pretrained(table, freeze=False).weight.requires_grad


def test_a_2d_input_without_entries_gives_empty_bags(backend):
    out = F.embedding_bag(dp.zeros(3, 0, dtype=dp.int64), dp.ones(4, 2), mode="max")
    assert out.tolist() == [[0.0, 0.0]] * 3


# ---------------------------------------------------------------------- errors
W = dp.ones(5, 2)
FLAT, AT = dp.tensor([1, 2, 3]), dp.tensor([0, 2])


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: F.embedding_bag(FLAT, W, AT, max_norm=1.0), ValueError,
     r"^embedding_bag: max_norm is not supported \(PyTorch renormalises"),
    (lambda: F.embedding_bag(FLAT, W, AT, scale_grad_by_freq=True), ValueError,
     r"^embedding_bag: scale_grad_by_freq=True is not supported"),
    (lambda: F.embedding_bag(FLAT, W, AT, sparse=True), ValueError,
     r"^embedding_bag: sparse=True is not supported"),
    (lambda: nn.EmbeddingBag(5, 2, max_norm=2.0), ValueError,
     r"^EmbeddingBag: max_norm is not supported"),
    (lambda: nn.EmbeddingBag(5, 2, sparse=True), ValueError,
     r"^EmbeddingBag: sparse=True is not supported"),
    (lambda: F.embedding_bag(FLAT, W, AT, mode="avg"), ValueError,
     r"^embedding_bag: mode must be one of 'sum', 'mean', 'max', got 'avg'"),
    (lambda: F.embedding_bag(FLAT, W, AT, per_sample_weights=dp.ones(3)), ValueError,
     r"^embedding_bag: per_sample_weights is only supported with mode='sum', got mode='mean'"),
    (lambda: F.embedding_bag(FLAT, W, AT, mode="sum", per_sample_weights=dp.ones(2)),
     ValueError, r"per_sample_weights of shape \(2,\) must have the input's shape \(3,\)"),
    (lambda: F.embedding_bag(FLAT, W, AT, mode="sum",
                             per_sample_weights=dp.ones(3, dtype=dp.float64)), TypeError,
     r"per_sample_weights must have the weight's dtype float32, got float64"),
    (lambda: F.embedding_bag(dp.tensor([[1, 2]]), W, AT), ValueError,
     r"^embedding_bag: offsets must be None for 2-D input"),
    (lambda: F.embedding_bag(FLAT, W), ValueError, r"^embedding_bag: 1-D input needs offsets"),
    (lambda: F.embedding_bag(FLAT, W, dp.tensor([[0]])), ValueError,
     r"^embedding_bag: offsets must have one axis, got shape \(1, 1\)"),
    (lambda: F.embedding_bag(FLAT, W, dp.tensor([1, 2])), ValueError,
     r"^embedding_bag: offsets\[0\] must be 0 \(the first bag starts the input\), got 1"),
    (lambda: F.embedding_bag(FLAT, W, dp.tensor([0, 2, 1])), ValueError,
     r"^embedding_bag: offsets must be non-decreasing, got offsets\[2\] = 1 after "
     r"offsets\[1\] = 2"),
    (lambda: F.embedding_bag(FLAT, W, dp.tensor([0, 4])), ValueError,
     r"^embedding_bag: offsets\[-1\] \(4\) is beyond the input's length 3"),
    (lambda: F.embedding_bag(FLAT, W, AT, include_last_offset=True), ValueError,
     r"^embedding_bag: with include_last_offset, offsets\[-1\] must be the input's length 3, "
     r"got 2"),
    (lambda: F.embedding_bag(FLAT, W, dp.tensor([0.0, 2.0])), TypeError,
     r"^embedding_bag: offsets must be an integer tensor, got float32"),
    (lambda: F.embedding_bag(dp.tensor([1.0, 2.0]), W, AT), TypeError,
     r"^embedding_bag: input must be an integer tensor of indices, got float32"),
    (lambda: F.embedding_bag(dp.tensor([1, 5]), W, AT), IndexError,
     r"^embedding_bag: input holds indices from 1 to 5, outside \[0, 5\)"),
    (lambda: F.embedding_bag(dp.tensor([[[1]]]), W), ValueError,
     r"^embedding_bag: input must be 1-D \(with offsets\) or 2-D, got shape \(1, 1, 1\)"),
    (lambda: F.embedding_bag(FLAT, dp.ones(5), AT), ValueError,
     r"^embedding_bag: weight must be 2-D \(num_embeddings, embedding_dim\)"),
    (lambda: F.embedding_bag(FLAT, dp.ones(5, 2, dtype=dp.int64), AT), TypeError,
     r"^embedding_bag: weight must be a floating-point tensor"),
    (lambda: F.embedding_bag(FLAT, W, AT, padding_idx=5), ValueError,
     r"^embedding_bag: padding_idx must be at most 4, got 5"),
    (lambda: nn.EmbeddingBag(5, 2, padding_idx=-6), ValueError,
     r"^EmbeddingBag: padding_idx must be at least -5, got -6"),
    (lambda: nn.EmbeddingBag(5, 2, _weight=dp.ones(4, 2)), ValueError,
     r"^EmbeddingBag: _weight of shape \(4, 2\) does not match"),
    (lambda: nn.EmbeddingBag.from_pretrained(dp.ones(3)), ValueError,
     r"^EmbeddingBag.from_pretrained: embeddings must be 2-dimensional"),
])
def test_bad_arguments_are_refused(call, error, message):
    with pytest.raises(error, match=message):
        call()
