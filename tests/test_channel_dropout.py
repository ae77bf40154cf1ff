"""Channel dropout (dropout1d/2d/3d, Dropout1d/2d/3d) and alpha dropout (alpha_dropout,
feature_alpha_dropout, AlphaDropout, FeatureAlphaDropout).

Masks are random, so PyTorch's cannot be matched bit for bit: against PyTorch's outputs
(``dropout`` in ``tests/data/cells_and_dropout.safetensors``, made by
``tests/data/make_cell_fixtures.py``) the value of a dropped element and the map of the kept ones
must be PyTorch's, and the masks must have PyTorch's layout (which axes share a draw). Beyond
that: statistics (the fraction dropped, mean and variance kept by alpha dropout) from a seeded
stream, whole channels, repeatability under a seed, the identity in evaluation, gradients
(mask times scale, and finite differences), PyTorch's warnings, and errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from conftest import to_tensor
from nn_helpers import module_gradcheck
from torch_reference import load_grouped

import dparray as dp
from dparray import nn
from dparray.nn import functional as F

F64 = dp.float64
SATURATION = -1.7580993408473766  # SELU's -scale * alpha, PyTorch's alpha'
CHANNEL_FUNCTIONS = [F.dropout1d, F.dropout2d, F.dropout3d]
BATCHED = {F.dropout1d: (5, 7, 6), F.dropout2d: (5, 7, 3, 2), F.dropout3d: (5, 7, 2, 3, 1)}
DESCRIBED, ARRAYS = load_grouped("cells_and_dropout.safetensors", "dropout")


def _leading(function: str, ndim: int) -> int:
    """How many leading axes get a draw each (the others share it), as PyTorch reads input:
    one for unbatched channel input, none (every element) for alpha_dropout."""
    if function == "alpha_dropout":
        return ndim
    unbatched = {"dropout1d": 2, "dropout3d": 4}.get(function)
    return 1 if ndim == unbatched else 2


def _alpha(p: float) -> tuple[float, float]:
    a = ((1.0 - p) * (1.0 + p * SATURATION**2)) ** -0.5
    return a, -a * SATURATION * p


def _shared_along_trailing_axes(mask: np.ndarray, leading: int) -> bool:
    flat = mask.reshape(*mask.shape[:leading], -1)
    return bool(np.all(flat == flat[..., :1]))


# ---------------------------------------------------------------------- against PyTorch
def test_the_fixtures_cover_every_function():
    functions = {info["function"] for info in DESCRIBED.values()}
    assert functions == {"dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                         "feature_alpha_dropout"}
    assert {"dropout1d_unbatched", "dropout3d_unbatched"} <= set(DESCRIBED)


@pytest.mark.parametrize("name", list(DESCRIBED))
def test_dropped_value_kept_values_and_mask_layout_are_pytorchs(name, backend):
    function, p = DESCRIBED[name]["function"], DESCRIBED[name]["p"]
    x, theirs = ARRAYS[name]["input"], ARRAYS[name]["output"]
    values, counts = np.unique(theirs, return_counts=True)
    dropped_value = values[np.argmax(counts)]  # every dropped element has the same value
    with dp.fork_rng(3):
        ours = getattr(F, function)(to_tensor(x), p=p, training=True).numpy()
    assert ours.shape == x.shape and ours.dtype == np.float64
    dropped = np.isclose(ours, dropped_value, rtol=1e-13, atol=1e-15)
    kept_theirs = ~np.isclose(theirs, dropped_value, rtol=1e-13, atol=1e-15)
    assert 0 < dropped.mean() < 1 and 0 < kept_theirs.mean() < 1
    # PyTorch's kept elements lie on one line y = a x + b; dparray's kept ones on the same
    slope, intercept = np.polyfit(x[kept_theirs], theirs[kept_theirs], 1)
    np.testing.assert_allclose(ours[~dropped], slope * x[~dropped] + intercept, rtol=1e-10)
    leading = _leading(function, x.ndim)
    assert _shared_along_trailing_axes(kept_theirs, leading)  # the layout read right
    assert _shared_along_trailing_axes(dropped, leading)
    if leading < x.ndim:  # and no coarser: channels of one sample differ
        assert not _shared_along_trailing_axes(dropped, leading - 1)


# ---------------------------------------------------------------------- channels
@pytest.mark.parametrize("function", CHANNEL_FUNCTIONS, ids=lambda f: f.__name__)
def test_whole_channels_zeroed_or_scaled_at_rate_p(function, backend, rng):
    shape = (200, 50, *BATCHED[function][2:])
    x = rng.uniform(0.5, 1.5, shape)
    p = 0.3
    dp.manual_seed(4)
    y = function(to_tensor(x), p=p).numpy()
    kept = y != 0
    assert _shared_along_trailing_axes(kept, 2)
    np.testing.assert_allclose(y[kept], x[kept] / (1 - p), rtol=1e-15)
    channels = kept.reshape(200, 50, -1)[..., 0]
    sigma = math.sqrt(p * (1 - p) / channels.size)
    assert abs((1 - channels.mean()) - p) < 4 * sigma


@pytest.mark.parametrize(("function", "shape"), [(F.dropout1d, (40, 3)),
                                                 (F.dropout3d, (40, 2, 3, 2))],
                         ids=["dropout1d", "dropout3d"])
def test_unbatched_input_drops_its_channels_without_warning(function, shape, backend, rng):
    x = rng.uniform(0.5, 1.5, shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = function(to_tensor(x), p=0.5).numpy()
    kept = y != 0
    assert _shared_along_trailing_axes(kept, 1) and 0 < kept.mean() < 1


def test_dropout2d_reads_3d_input_as_pytorch_does_with_its_warning(backend, rng):
    x = rng.uniform(0.5, 1.5, (30, 20, 4))
    with pytest.warns(UserWarning, match=r"^dropout2d: received 3-D input, taken as \(N, C, L\)"):
        y = F.dropout2d(to_tensor(x), p=0.5).numpy()
    kept = y != 0
    assert _shared_along_trailing_axes(kept, 2) and not _shared_along_trailing_axes(kept, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.dropout2d(dp.ones(2, 3, 4, 4))
        nn.Dropout2d().eval()(dp.ones(2, 3, 4, 4))


# ---------------------------------------------------------------------- alpha dropout
@pytest.mark.parametrize("p", [0.1, 0.5])
def test_alpha_dropout_keeps_zero_mean_and_unit_variance(p, backend, rng):
    x = to_tensor(rng.standard_normal(200_000))
    dp.manual_seed(5)
    y = F.alpha_dropout(x, p=p, training=True).numpy()
    a, b = _alpha(p)
    dropped = np.isclose(y, a * SATURATION + b, rtol=1e-14)
    np.testing.assert_allclose(y[~dropped], a * x.numpy()[~dropped] + b, rtol=1e-13, atol=1e-15)
    assert abs(dropped.mean() - p) < 4 * math.sqrt(p * (1 - p) / y.size)
    assert abs(y.mean()) < 0.01 and abs(y.var() - 1.0) < 0.01


def test_feature_alpha_dropout_keeps_zero_mean_and_unit_variance(backend, rng):
    x = to_tensor(rng.standard_normal((100, 400, 2, 2)))
    p = 0.2
    dp.manual_seed(6)
    y = F.feature_alpha_dropout(x, p=p, training=True).numpy()
    a, b = _alpha(p)
    dropped = np.isclose(y, a * SATURATION + b, rtol=1e-14)
    assert _shared_along_trailing_axes(dropped, 2)
    np.testing.assert_allclose(y[~dropped], a * x.numpy()[~dropped] + b, rtol=1e-13, atol=1e-15)
    assert abs(y.mean()) < 0.02 and abs(y.var() - 1.0) < 0.02


def test_alpha_dropout_keeps_the_dtype(backend):
    x = dp.randn(4, 3, 5)
    for function in (F.alpha_dropout, F.feature_alpha_dropout, F.dropout1d):
        assert function(x, 0.5, True).dtype == dp.float32


# ---------------------------------------------------------------------- randomness, modes
MODULES = [nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout]
MODULE_SHAPES = {nn.Dropout1d: (4, 6, 5), nn.Dropout2d: (4, 6, 3, 2),
                 nn.Dropout3d: (4, 6, 2, 2, 2), nn.AlphaDropout: (4, 6, 5),
                 nn.FeatureAlphaDropout: (4, 6, 3, 2)}


@pytest.mark.parametrize("layer", MODULES, ids=lambda c: c.__name__)
def test_masks_repeat_under_a_seed_and_change_between_calls(layer, backend, rng):
    module = layer(0.5)
    x = to_tensor(rng.uniform(0.5, 1.5, MODULE_SHAPES[layer]))
    dp.manual_seed(7)
    first, second = module(x).numpy(), module(x).numpy()
    dp.manual_seed(7)
    np.testing.assert_array_equal(module(x).numpy(), first)
    assert not np.array_equal(first, second)


@pytest.mark.parametrize("layer", MODULES, ids=lambda c: c.__name__)
def test_evaluation_and_p_zero_are_the_identity(layer, backend):
    x = dp.ones(*MODULE_SHAPES[layer])
    module = layer(0.5)
    assert module.couples_rows()  # the masks follow DataParallel's chunks' streams
    assert module.eval()(x) is x and not module.couples_rows()
    assert layer(0.0)(x) is x and not layer(0.0).couples_rows()


def test_functions_are_the_identity_out_of_training_and_alpha_defaults_to_it(backend):
    for function in CHANNEL_FUNCTIONS:
        x = dp.ones(*BATCHED[function])
        assert function(x, 0.5, training=False) is x and function(x, 0.0) is x
        assert function(x, 0.5, True, inplace=True) is not x  # accepted; a new tensor
    x = dp.ones(2, 3, 4)
    assert F.alpha_dropout(x, 0.5) is x and F.feature_alpha_dropout(x, 0.5) is x  # training=False
    assert F.alpha_dropout(x, 0.0, training=True) is x


# ---------------------------------------------------------------------- gradients
@pytest.mark.parametrize("function", [*CHANNEL_FUNCTIONS, F.alpha_dropout,
                                      F.feature_alpha_dropout], ids=lambda f: f.__name__)
def test_the_gradient_is_the_mask_times_the_scale(function, backend, rng):
    p = 0.4
    shape = BATCHED.get(function, (5, 7, 3))
    x = to_tensor(rng.uniform(0.5, 1.5, shape), requires_grad=True)
    weights = rng.standard_normal(shape)
    dp.manual_seed(8)
    y = function(x, p, True)
    grad = (y * to_tensor(weights)).sum().backward()[x].numpy()
    if function in CHANNEL_FUNCTIONS:
        kept, scale = y.numpy() != 0, 1.0 / (1.0 - p)
    else:
        a, b = _alpha(p)
        kept, scale = ~np.isclose(y.numpy(), a * SATURATION + b, rtol=1e-14), a
    assert 0 < kept.mean() < 1
    np.testing.assert_allclose(grad, np.where(kept, weights * scale, 0.0), rtol=1e-14)


@pytest.mark.parametrize("layer", MODULES, ids=lambda c: c.__name__)
def test_gradients_by_finite_differences(layer, backend, rng):
    x = to_tensor(rng.standard_normal(MODULE_SHAPES[layer]), requires_grad=True)
    module_gradcheck(layer(0.3), x, seed=9)


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize(("function", "shape", "leading"), [
    (F.dropout2d, (30, 20), 2), (F.dropout2d, (10, 6, 2, 2, 2), 2), (F.dropout3d, (30, 4), 1),
    (F.dropout3d, (30,), 1), (F.dropout3d, (10, 6, 2, 2, 2, 2), 1)],
    ids=["dropout2d-2d", "dropout2d-5d", "dropout3d-2d", "dropout3d-1d", "dropout3d-6d"])
def test_deprecated_ranks_are_read_as_pytorch_reads_them_with_its_warning(function, shape,
                                                                          leading, backend, rng):
    """dropout2d reads them as (N, C, ...), dropout3d as unbatched (C, ...)."""
    x = rng.uniform(0.5, 1.5, shape)
    name = function.__name__
    with pytest.warns(UserWarning, match=rf"^{name}: received a {len(shape)}-D input, which is "
                                         r"deprecated \(in PyTorch too\)"):
        y = function(to_tensor(x), p=0.5).numpy()
    kept = y != 0
    assert _shared_along_trailing_axes(kept, leading) and 0 < kept.mean() < 1
    if leading > 1:
        assert not _shared_along_trailing_axes(kept, leading - 1)


@pytest.mark.parametrize(("function", "shape", "message"), [
    (F.dropout1d, (2, 3, 4, 5), r"^dropout1d: expected 3-D \(N, C, L\) or 2-D \(C, L\) input, "
                                r"got 4-D input of shape \(2, 3, 4, 5\)"),
    (F.dropout1d, (5,), r"^dropout1d: expected 3-D \(N, C, L\) or 2-D \(C, L\) input, got 1-D"),
    (F.dropout2d, (5,), r"^dropout2d: expected 4-D \(N, C, H, W\) input, got 1-D input of "
                        r"shape \(5,\)"),
    (F.dropout3d, (), r"^dropout3d: expected 5-D \(N, C, D, H, W\) or 4-D \(C, D, H, W\) input, "
                      r"got a 0-d tensor"),
], ids=["dropout1d-4d", "dropout1d-1d", "dropout2d-1d", "dropout3d-0d"])
def test_ranks_pytorch_refuses_are_value_errors(function, shape, message, backend):
    with pytest.raises(ValueError, match=message):
        function(dp.ones(*shape), training=False)  # refused whatever the mode


def test_bad_arguments(backend):
    x = dp.ones(2, 3, 4)
    for function in (F.dropout1d, F.alpha_dropout, F.feature_alpha_dropout):
        name = function.__name__
        for p in (1.0, -0.1, 2):
            with pytest.raises(ValueError, match=rf"^{name}: p must be in \[0, 1\), got {p}"):
                function(x, p)
        with pytest.raises(TypeError, match=rf"^{name}: p must be a number"):
            function(x, "0.5")
        with pytest.raises(TypeError, match=rf"^{name}: inplace must be a bool"):
            function(x, 0.5, True, 1)
        with pytest.raises(TypeError, match=rf"^{name}: input must be a Tensor"):
            function([[1.0, 2.0]], 0.5)
        with pytest.raises(TypeError, match=rf"^{name}: input must be a floating-point tensor, "
                                            r"got int64"):
            function(dp.ones(2, 3, 4, dtype=dp.int64), 0.5)
    with pytest.raises(ValueError, match=r"^feature_alpha_dropout: expected input \(N, C, \.\.\.\) "
                                         r"of at least 2 axes, got 1-D input of shape \(5,\)"):
        F.feature_alpha_dropout(dp.ones(5), 0.5)
    for layer in MODULES:
        with pytest.raises(ValueError, match=rf"^{layer.__name__}: p must be in \[0, 1\)"):
            layer(1.0)
        with pytest.raises(TypeError, match=rf"^{layer.__name__}: inplace must be a bool"):
            layer(0.5, "yes")


def test_repr_is_pytorchs():
    assert repr(nn.Dropout1d()) == "Dropout1d(p=0.5, inplace=False)"
    assert repr(nn.Dropout3d(0.25, inplace=True)) == "Dropout3d(p=0.25, inplace=True)"
    assert repr(nn.AlphaDropout(0.2)) == "AlphaDropout(p=0.2, inplace=False)"
    assert repr(nn.FeatureAlphaDropout(0.3, True)) == "FeatureAlphaDropout(p=0.3, inplace=True)"
