"""The 1-D and 3-D adaptive pools (``dparray.nn.adaptive_pooling``) and the ``*_with_indices`` forms
of the max pools: against PyTorch's fixtures (``tests/data/pooling_layers.safetensors``, made by
``tests/data/make_pooling_fixtures.py``: values, indices and input gradients, batched and unbatched,
windows that overlap and windows that grow), against finite differences, PyTorch's rule for ties
(the first maximum in row-major order wins), its reprs, and errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor
from gradient_checks import check_gradients
from grouped_fixtures import POOLING, check_function
from torch_reference import check

import dparray as dp
from dparray import nn
from dparray.nn import functional as F

LAYERS = ["AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool3d"]
FUNCTIONS = ["adaptive_avg_pool1d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
             "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices",
             "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
             "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices"]
LAYER_CASES = POOLING.layer_cases(*LAYERS)
FUNCTION_CASES = POOLING.function_cases(*FUNCTIONS)


def _distinct(rng, *shape):
    """float64 values without ties, at least 0.1 apart: no kink within a difference step."""
    return rng.permutation(int(np.prod(shape))).reshape(shape) * 0.1


# ---------------------------------------------------------------------- against PyTorch
def test_the_fixtures_cover_every_layer_and_function():
    assert {case.layer for case in LAYER_CASES} == set(LAYERS)
    assert {case.function for case in FUNCTION_CASES} == set(FUNCTIONS)
    unbatched = [case for case in LAYER_CASES if case.name.endswith("unbatched")]
    assert {case.layer for case in unbatched} == set(LAYERS)
    with_indices = [case for case in LAYER_CASES if "output.1" in case.arrays]
    assert {case.layer for case in with_indices} == {"AdaptiveMaxPool1d", "AdaptiveMaxPool3d"}


@pytest.mark.parametrize("case", LAYER_CASES, ids=repr)
def test_layers_match_pytorch(case, backend, kernels):
    check(case)


@pytest.mark.parametrize("case", FUNCTION_CASES, ids=repr)
def test_functions_match_pytorch(case, backend, kernels):
    check_function(case)


@pytest.mark.parametrize(("layer", "kwargs", "expected"), POOLING.layer_reprs(*LAYERS))
def test_reprs_are_pytorchs(layer, kwargs, expected):
    assert repr(getattr(nn, layer)(**kwargs)) == expected


# ---------------------------------------------------------------------- gradients and ties
@pytest.mark.parametrize(("shape", "size"), [((2, 3, 7), 3), ((3, 4), 6), ((1, 2, 5), 5)])
def test_1d_gradients_match_finite_differences(shape, size, backend, rng):
    x = dp.tensor(_distinct(rng, *shape), requires_grad=True)
    check_gradients(lambda t: F.adaptive_avg_pool1d(t, size), [x])
    check_gradients(lambda t: F.adaptive_max_pool1d(t, size), [x])


@pytest.mark.parametrize(("shape", "size"), [((1, 2, 3, 5, 4), (2, 3, 3)),
                                             ((2, 3, 4, 2), (3, None, 2))])
def test_3d_gradients_match_finite_differences(shape, size, backend, rng):
    x = dp.tensor(_distinct(rng, *shape), requires_grad=True)
    check_gradients(lambda t: F.adaptive_avg_pool3d(t, size), [x])
    check_gradients(lambda t: F.adaptive_max_pool3d(t, size), [x])


def test_the_first_maximum_of_a_volume_wins_and_takes_the_gradient(backend):
    x = dp.ones(1, 1, 4, 4, 4, dtype=dp.float64, requires_grad=True)
    out, indices = F.adaptive_max_pool3d(x, 2, return_indices=True)
    starts = [(d * 4 + h) * 4 + w for d in (0, 2) for h in (0, 2) for w in (0, 2)]
    assert indices.reshape(-1).tolist() == starts
    grad = out.sum().backward()[x].numpy().reshape(-1)
    assert grad[starts].tolist() == [1.0] * 8 and grad.sum() == 8.0


def test_indices_point_at_the_maxima(backend, rng):
    x = dp.tensor(rng.standard_normal((2, 3, 5, 6, 7)))
    out, indices = F.adaptive_max_pool3d(x, (3, 4, 4), return_indices=True)
    flat = x.numpy().reshape(2, 3, -1)
    picked = np.take_along_axis(flat, indices.numpy().reshape(2, 3, -1), axis=2)
    np.testing.assert_array_equal(picked, out.numpy().reshape(2, 3, -1))
    assert indices.dtype == dp.int64


def test_max_pools_take_integer_input(backend):
    x = dp.tensor([[[3, 1, 4, 1, 5, 9, 2]]])
    out, indices = F.adaptive_max_pool1d(x, 3, return_indices=True)
    assert out.tolist() == [[[4, 5, 9]]] and indices.tolist() == [[[2, 4, 5]]]
    assert out.dtype == x.dtype


def test_with_indices_forms_ignore_return_indices(backend, rng):
    x = dp.tensor(rng.standard_normal((1, 2, 6)))
    for pair in (F.adaptive_max_pool1d_with_indices(x, 3, return_indices=False),
                 F.max_pool1d_with_indices(x, 2, return_indices=False)):
        assert isinstance(pair, tuple) and len(pair) == 2


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: F.adaptive_avg_pool1d(dp.ones(2, 3, 4, 5), 2), ValueError,
     r"^adaptive_avg_pool1d: expected an \(N, C, L\) or unbatched \(C, L\) input, got shape"),
    (lambda: F.adaptive_max_pool3d(dp.ones(2, 3, 4), 2), ValueError,
     r"expected an \(N, C, D, H, W\) or unbatched \(C, D, H, W\) input"),
    (lambda: F.adaptive_avg_pool1d(dp.ones(2, 3, 0), 2), ValueError, r"non-empty spatial axes"),
    (lambda: F.adaptive_avg_pool1d(dp.ones(2, 3, 4, dtype=dp.int64), 2), TypeError,
     r"^adaptive_avg_pool1d: input must be a floating-point tensor, got int64"),
    (lambda: F.adaptive_avg_pool1d(dp.ones(2, 3, 4), None), TypeError,
     r"^adaptive_avg_pool1d: output_size must be an int, got None"),
    (lambda: F.adaptive_avg_pool1d(dp.ones(2, 3, 4), (2, 2)), ValueError,
     r"^adaptive_avg_pool1d: output_size must be an int or 1 ints, got \(2, 2\)"),
    (lambda: F.adaptive_avg_pool3d(dp.ones(1, 1, 2, 2, 2), (2, 2)), ValueError,
     r"output_size must be an int or 3 ints"),
    (lambda: F.adaptive_avg_pool3d(dp.ones(1, 1, 2, 2, 2), (2, 0, 1)), ValueError,
     r"output_size must be at least 1, got 0"),
    (lambda: F.adaptive_max_pool1d(dp.ones(1, 1, 4), 2, return_indices=1), TypeError,
     r"^adaptive_max_pool1d: return_indices must be a bool"),
    (lambda: F.adaptive_max_pool3d([1.0], 2), TypeError, r"input must be a Tensor"),
    (lambda: nn.AdaptiveMaxPool3d((1, 2)), ValueError,
     r"^AdaptiveMaxPool3d: output_size must be an int or 3 ints"),
    (lambda: nn.AdaptiveAvgPool1d(3)(dp.ones(3)), ValueError, r"^AdaptiveAvgPool1d: expected"),
    (lambda: F.max_pool2d_with_indices(dp.ones(1, 1, 2, 2), 3), ValueError,
     r"^max_pool2d_with_indices: a kernel of size"),
])
def test_bad_arguments_are_refused(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("pool", [
    lambda x: F.adaptive_avg_pool2d(x, (3, 2)), lambda x: nn.AdaptiveAvgPool2d((None, 2))(x),
    lambda x: F.adaptive_max_pool2d(x, 3, return_indices=True),
    lambda x: nn.AdaptiveMaxPool2d((2, 4), return_indices=True)(x)])
def test_the_2d_pools_take_unbatched_input_as_a_batch_of_one(pool, backend, rng):
    values = rng.standard_normal((3, 5, 7))
    x = to_tensor(values, requires_grad=True, backend=backend)
    batched = to_tensor(values[None], requires_grad=True, backend=backend)
    got, want = pool(x), pool(batched)
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape[1:]
        np.testing.assert_array_equal(g.numpy(), w.numpy()[0])
    grad_x = (got[0] ** 2).sum().backward()[x]
    grad_batched = (want[0] ** 2).sum().backward()[batched]
    np.testing.assert_array_equal(grad_x.numpy(), grad_batched.numpy()[0])
