"""Distances (``dparray.nn.distance``, ``dparray.cdist``): ``cosine_similarity``,
``pairwise_distance``, ``cdist`` and ``pdist`` against PyTorch through the ``more_layers``
fixture (values and input gradients, float64: zero vectors, equal rows, ties of the largest
entry, every ``p``), first and second derivatives against finite differences, NaN, and the
errors, on every backend."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import to_tensor
from gradient_checks import check_gradients
from grouped_fixtures import MORE_LAYERS, check_function
from test_second_order import check_second_order
from torch_reference import check

import dparray as dp
from dparray import nn
from dparray.nn import functional as F

LAYERS = MORE_LAYERS.layer_cases("CosineSimilarity", "PairwiseDistance")
FUNCTIONAL = {"CosineSimilarity": F.cosine_similarity, "PairwiseDistance": F.pairwise_distance}


def test_the_fixture_covers_every_function_and_p():
    functions = MORE_LAYERS.function_cases()
    assert {case.function for case in functions} == {"dparray.cdist",
                                                     "dparray.nn.functional.pdist"}
    cdist_p = {case.kwargs.get("p", 2.0) for case in functions if "cdist" in case.function}
    assert cdist_p >= {0.0, 0.5, 1.0, 2.0, 3.0, math.inf}
    assert {case.layer for case in LAYERS} == set(FUNCTIONAL)


@pytest.mark.parametrize("case", LAYERS, ids=repr)
def test_modules_give_pytorchs_values_and_gradients(case, backend):
    check(case)


@pytest.mark.parametrize("case", LAYERS, ids=repr)
def test_functional_forms_give_pytorchs_values_and_gradients(case, backend):
    function = FUNCTIONAL[case.layer]
    check(case, call=lambda module, *inputs: function(*inputs, **case.kwargs))


@pytest.mark.parametrize("case", MORE_LAYERS.function_cases(), ids=repr)
def test_cdist_and_pdist_give_pytorchs_values_and_gradients(case, backend):
    check_function(case)


@pytest.mark.parametrize("p", [1.0, 1.5, 2.0, 3.0, math.inf])
def test_gradients_match_finite_differences(p, backend, rng):
    a, b = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 5, 3))

    def variables(*arrays):
        return [to_tensor(array, requires_grad=True) for array in arrays]

    check_gradients(lambda u, v: dp.cdist(u, v, p=p), variables(a, b))
    check_gradients(lambda u: F.pdist(u, p), variables(a[0]))
    check_gradients(lambda u, v: F.pairwise_distance(u, v, p), variables(a, b[:, :4]))
    check_gradients(lambda u, v: F.cosine_similarity(u, v, dim=-1), variables(a, b[:, :4]))


def test_second_derivatives_match_finite_differences(backend, rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))
    check_second_order(lambda u, v: dp.cdist(u, v, p=3.0), [a, b], rng)
    check_second_order(lambda u: F.pdist(u), [a], rng)
    check_second_order(lambda u, v: F.cosine_similarity(u, v), [a, b[:3]], rng)


def test_equal_rows_have_distance_zero_and_gradient_zero(backend, rng):
    rows = rng.standard_normal((3, 4))
    for p in (0.5, 1.0, 2.0, 3.0, math.inf):
        x = to_tensor(rows, requires_grad=True)
        y = to_tensor(rows.copy(), requires_grad=True)
        distances = dp.cdist(x, y, p=p)
        np.testing.assert_array_equal(np.diag(distances.numpy()), np.zeros(3))
        grads = (distances * dp.eye(3, dtype="float64")).sum().backward()
        np.testing.assert_array_equal(grads[x].numpy(), np.zeros((3, 4)))
        np.testing.assert_array_equal(grads[y].numpy(), np.zeros((3, 4)))


def test_cosine_similarity_of_a_zero_vector_is_zero_with_gradient_of_x_over_eps(backend):
    zero = to_tensor(np.zeros((1, 3)), requires_grad=True)
    other = to_tensor(np.array([[3.0, 4.0, 0.0]]), requires_grad=True)
    similarity = F.cosine_similarity(zero, other, eps=1e-4)
    assert similarity.item() == 0.0
    grads = similarity.sum().backward()
    np.testing.assert_allclose(grads[zero].numpy(), [[0.6e4, 0.8e4, 0.0]], rtol=1e-12)
    np.testing.assert_array_equal(grads[other].numpy(), np.zeros((1, 3)))
    small = to_tensor(np.array([[1e-5, 0.0, 0.0]]))  # below eps: x / eps, not x / |x|
    assert F.cosine_similarity(small, other, eps=1e-4).item() == pytest.approx(0.06)


def test_nan_stays_nan(backend):
    x = to_tensor(np.array([[np.nan, 0.0], [1.0, 2.0]]))
    y = to_tensor(np.zeros((2, 2)))
    for p in (1.0, 2.0, 3.0):
        assert np.isnan(dp.cdist(x, y, p=p).numpy()[0]).all()
        assert np.isfinite(dp.cdist(x, y, p=p).numpy()[1]).all()
    assert np.isnan(F.pairwise_distance(x, y).numpy()[0])


def test_shapes(backend):
    assert dp.cdist(dp.ones(2, 1, 3, 4), dp.ones(5, 6, 4)).shape == (2, 5, 3, 6)
    assert F.pdist(dp.ones(1, 3)).shape == (0,)
    assert F.pairwise_distance(dp.ones(4), dp.ones(4)).shape == ()
    assert F.pairwise_distance(dp.ones(2, 3), dp.ones(3), keepdim=True).shape == (2, 1)
    assert nn.PairwiseDistance(keepdim=True)(dp.ones(4), dp.ones(4)).shape == (1,)
    assert F.cosine_similarity(dp.ones(2, 1, 3), dp.ones(4, 3), dim=-1).shape == (2, 4)
    assert F.cosine_similarity(dp.ones(3, dtype="float64"), dp.tensor([1, 2, 3]),
                               dim=0).dtype == dp.float64
    assert F.cosine_similarity(dp.tensor(3.0), dp.tensor(-2.0), dim=0).item() == -1.0
    for p in (0.0, 1.0, 2.0, 3.0, math.inf):  # rows without columns are at distance 0
        np.testing.assert_array_equal(dp.cdist(dp.ones(3, 0), dp.ones(2, 0), p=p).numpy(),
                                      np.zeros((3, 2)))


def test_reprs_and_attributes_are_pytorchs():
    assert repr(nn.CosineSimilarity()) == "CosineSimilarity()"
    assert repr(nn.PairwiseDistance()) == "PairwiseDistance()"
    distance = nn.PairwiseDistance(p=1, eps=0.0, keepdim=True)
    assert (distance.norm, distance.eps, distance.keepdim) == (1.0, 0.0, True)
    similarity = nn.CosineSimilarity(dim=0, eps=1e-6)
    assert (similarity.dim, similarity.eps) == (0, 1e-6)


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: dp.cdist(dp.ones(4), dp.ones(2, 4)), ValueError,
     r"cdist: x1 must have at least 2 dimensions \(rows and columns\), got shape \(4,\)"),
    (lambda: dp.cdist(dp.ones(3, 4), dp.ones(2, 3)), ValueError,
     r"cdist: x1 and x2 must have the same number of columns, got shapes \(3, 4\) and \(2, 3\)"),
    (lambda: dp.cdist(dp.ones(2, 3, 4), dp.ones(3, 2, 4)), ValueError,
     r"cdist: shapes \(2,\) and \(3,\) cannot be broadcast together"),
    (lambda: dp.cdist(dp.ones(3, 4), dp.ones(2, 4), p=-1), ValueError,
     r"cdist: p must be at least 0 \(or inf\), got -1"),
    (lambda: dp.cdist(dp.ones(3, 4), dp.ones(2, 4), p=float("nan")), ValueError,
     "cdist: p must be a finite number"),
    (lambda: dp.cdist(dp.ones(3, 4, dtype="int64"), dp.ones(2, 4)), TypeError,
     "cdist: x1 must be floating, got int64"),
    (lambda: dp.cdist(dp.ones(3, 4), dp.ones(2, 4), compute_mode="fast"), ValueError,
     "cdist: compute_mode must be one of 'use_mm_for_euclid_dist_if_necessary'"),
    (lambda: dp.cdist([[1.0]], dp.ones(1, 1)), TypeError, "cdist: x1 must be a Tensor"),
    (lambda: F.pdist(dp.ones(2, 3, 4)), ValueError,
     r"pdist: input must be 2-D \(N, M\), got shape \(2, 3, 4\)"),
    (lambda: F.pdist(dp.ones(3, 4, dtype="int32")), TypeError,
     "pdist: input must be floating, got int32"),
    (lambda: F.pdist(dp.ones(3, 4), p=-0.5), ValueError, "pdist: p must be at least 0"),
    (lambda: F.pairwise_distance(dp.ones(3, 4), dp.ones(2, 4)), ValueError,
     r"pairwise_distance: shapes \(3, 4\) and \(2, 4\) cannot be broadcast together"),
    (lambda: F.pairwise_distance(dp.ones(3), dp.ones(3), p=-2), ValueError,
     "pairwise_distance: p must be at least 0"),
    (lambda: F.pairwise_distance(dp.ones(3), dp.ones(3), keepdim=1), TypeError,
     "pairwise_distance: keepdim must be a bool, got 1"),
    (lambda: F.cosine_similarity(dp.ones(3, dtype="int64"), dp.ones(3, dtype="int64"), 0),
     TypeError, "cosine_similarity: x1 or x2 must be floating, got int64 and int64"),
    (lambda: F.cosine_similarity(dp.ones(3, 4), dp.ones(2, 4)), ValueError,
     r"cosine_similarity: shapes \(3, 4\) and \(2, 4\) cannot be broadcast together"),
    (lambda: F.cosine_similarity(dp.ones(4), dp.ones(4)), ValueError,
     "cosine_similarity: axis 1 is out of range for a tensor with 1 dimensions"),
    (lambda: F.cosine_similarity(dp.ones(2, 4), dp.ones(2, 4), eps=-1.0), ValueError,
     r"cosine_similarity: eps must be at least 0\.0, got -1\.0"),
    (lambda: nn.CosineSimilarity(dim=1.0), TypeError,
     r"CosineSimilarity: dim must be an int, got 1\.0 \(float\)"),
    (lambda: nn.PairwiseDistance(p=-1), ValueError, "PairwiseDistance: p must be at least 0"),
])
def test_bad_arguments_are_errors_naming_the_function(call, error, message, backend):
    with pytest.raises(error, match=message):
        call()
