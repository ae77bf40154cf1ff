"""Ops at the edges a differential probe against PyTorch found wrong (issue 21): NaN through
``logsumexp``, every target ignored, integer max pooling, powers of -0.0, infinite inputs,
0-size axes, bool padding, the dtype of integer sums. Each test failed before its fix."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import dparray as dp
from dparray import nn, optim
from dparray.nn import functional as F

F64 = "float64"
INF, NAN = math.inf, math.nan


def _grads(function, *values, dtype=F64):
    """``function``'s value and the gradients of its sum, for float64 inputs ``values``."""
    inputs = [dp.tensor(v, dtype=dtype, requires_grad=True) for v in values]
    out = function(*inputs)
    grads = out.sum().backward()
    return out.numpy(), [grads[x].numpy() for x in inputs]


# ------------------------------------------------------------------------------ logsumexp
@pytest.mark.parametrize("values, expected", [
    ([NAN], NAN), ([NAN, 1.0], NAN), ([-INF, NAN], NAN), ([INF, NAN], NAN),
    ([INF, 1.0], INF), ([-INF, -INF], -INF), ([1.0, -INF], 1.0),
])
def test_logsumexp_keeps_nan_and_infinities(backend, values, expected):
    out = dp.logsumexp(dp.tensor(values, dtype=F64), axis=0).item()
    np.testing.assert_equal(out, expected)  # NaN equals NaN here, and only NaN
    rows = dp.tensor([values, [0.0] * len(values)], dtype=F64)
    np.testing.assert_equal(dp.logsumexp(rows, axis=1).numpy()[0], expected)


# -------------------------------------------------------------------- every target ignored
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("weighted", [False, True])
def test_a_batch_whose_every_target_is_ignored_passes_no_gradient(backend, kernels, loss,
                                                                  weighted):
    """PyTorch: the mean is NaN (0 / 0) but the gradient is 0, so a step changes nothing."""
    function = getattr(F, loss)
    weight = dp.tensor([0.5, 2.0, 1.5]) if weighted else None
    dp.manual_seed(0)
    model = nn.Linear(4, 3)
    before = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    x, target = dp.randn(5, 4), dp.tensor([1, 1, 1, 1, 1])
    out = model(x)
    value = function(out if loss == "cross_entropy" else F.log_softmax(out, dim=1), target,
                     weight=weight, ignore_index=1)
    assert math.isnan(value.item())
    grads = value.backward()
    for p in model.parameters():
        np.testing.assert_array_equal(grads[p].numpy(), np.zeros(p.shape))
    optim.SGD(model.parameters(), lr=0.1).step(grads)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k])
    # the first snippet of the issue
    z = dp.tensor([[1.0]], requires_grad=True)
    assert function(z, dp.tensor([1]), ignore_index=1).backward()[z].tolist() == [[0.0]]


def test_a_batch_with_some_targets_kept_still_learns_from_them(backend, kernels):
    z = dp.tensor([[1.0, 2.0], [0.5, -1.0]], dtype=F64, requires_grad=True)
    target = dp.tensor([1, 0])
    grads = F.cross_entropy(z, target, ignore_index=0).backward()[z].numpy()
    p = np.exp([1.0, 2.0]) / np.exp([1.0, 2.0]).sum()
    np.testing.assert_allclose(grads, [p - [0.0, 1.0], [0.0, 0.0]], rtol=1e-12)


# -------------------------------------------------------------------------- integer pooling
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8"])
def test_max_pool_of_integers_never_lets_the_padding_win(backend, dtype):
    values = np.array([[-5, -7, 3], [-2, -9, -1]]) if dtype != "uint8" else \
        np.array([[5, 7, 3], [2, 9, 1]])
    x = dp.tensor(values.reshape(1, 1, 2, 3), dtype=dtype)
    expected = F.max_pool2d(x.astype(F64), 2, stride=1, padding=1)
    out = F.max_pool2d(x, 2, stride=1, padding=1)
    assert out.dtype.name == dtype
    np.testing.assert_array_equal(out.numpy(), expected.numpy().astype(dtype))
    flat = dp.tensor(values[:1], dtype=dtype)  # (N, C, L) = (1, 1, 3)
    out1, where = F.max_pool1d(flat.reshape(1, 1, 3), 3, stride=1, padding=1,
                               return_indices=True)
    np.testing.assert_array_equal(out1.numpy().ravel(), np.maximum.accumulate(
        [values[0, :2].max(), values[0].max(), values[0, 1:].max()])[[0, 1, 2]])
    assert where.numpy().min() >= 0  # a winner is always a real entry, never the padding


# ------------------------------------------------------------------------- powers of -0.0
EXPONENTS = [-3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, -INF, INF, NAN]


def _ieee_pow(a, b):
    """IEEE 754's ``pow`` for a zero base ``a``, from its rules: 1 for ``b == 0``, NaN for NaN;
    else 0 for ``b > 0`` and inf for ``b < 0``, negative when ``a`` is -0.0 and ``b`` an odd
    integer."""
    if b == 0:
        return 1.0
    if math.isnan(b):
        return NAN
    magnitude = 0.0 if b > 0 else INF
    odd = math.isfinite(b) and b % 2 == 1
    return -magnitude if odd and math.copysign(1.0, a) < 0 else magnitude


def _ieee(a, b):
    """The value and the two gradients (PyTorch's conventions) of ``a ** b`` at a zero ``a``."""
    out = _ieee_pow(a, b)
    base = 0.0 if b == 0 else b * _ieee_pow(a, b - 1)
    exponent = 0.0 if b >= 0 else out * -INF  # log(+-0) = -inf; 0 where b >= 0 (PyTorch)
    return out, base, exponent


def _same(actual, expected):
    """Equal as IEEE values, the sign of a zero and NaN included."""
    if math.isnan(expected):
        return math.isnan(actual)
    return actual == expected and math.copysign(1.0, actual) == math.copysign(1.0, expected)


@pytest.mark.parametrize("base", [-0.0, 0.0])
@pytest.mark.parametrize("exponent", EXPONENTS)
def test_powers_of_signed_zeros_are_ieee_values_with_their_gradients(backend, base, exponent):
    """``(-0.0) ** -1`` is -inf (IEEE's pow, and PyTorch); before, the sign was dropped."""
    out, base_grad, exponent_grad = _ieee(base, exponent)
    with warnings.catch_warnings():  # no warning for a zero base (but inf * 0 is NaN, and warns)
        warnings.simplefilter("error" if math.isfinite(exponent) else "ignore", RuntimeWarning)
        value, (grad,) = _grads(lambda a: a ** exponent, base)
        tensor_value, (grad_a, grad_b) = _grads(lambda a, b: a ** b, base, exponent)
        scalar_base = dp.tensor(exponent, dtype=F64)
    assert _same(float(tensor_value), float(out))
    assert _same(float(grad_a), float(base_grad)) and _same(float(grad_b), float(exponent_grad))
    if exponent not in (-0.5, 0.5):  # x ** 0.5 is sqrt(x) for NumPy and PyTorch: -0.0 at -0.0
        assert _same(float(value), float(out)) and _same(float(grad), float(base_grad))
    assert _same(float((base ** scalar_base).item()), float(out))  # a Python base


def test_the_issue_snippets_of_powers_at_negative_zero(backend):
    assert (dp.tensor(-0.0) ** -1).item() == -INF
    value, (grad,) = _grads(lambda x: x ** -2, -0.0)
    assert value == INF and grad == INF  # -2 * (-0.0) ** -3 = -2 * -inf
    assert math.copysign(1.0, (dp.tensor(-0.0, dtype=F64) ** dp.tensor(1.0, dtype=F64)).item()) < 0
    assert math.copysign(1.0, (dp.tensor([-0.0]) ** 3.0).item()) < 0
    assert (dp.tensor([-0.0, 2.0]) ** -1).dtype.name == "float32"  # the tensor's dtype kept


# --------------------------------------------------------------- infinite inputs' gradients
@pytest.mark.parametrize("loss", ["huber_loss", "smooth_l1_loss"])
def test_an_infinite_difference_gives_the_huber_losses_their_finite_slope(backend, loss):
    function = getattr(F, loss)
    inputs = np.array([INF, -INF, 0.25, -3.0, 1.0, NAN])
    target = np.array([1.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    for parameter in (1.0, 0.5):
        kwargs = {"delta" if loss == "huber_loss" else "beta": parameter}
        value, (g_in, g_target) = _grads(
            lambda a, b, kw=kwargs: function(a, b, reduction="none", **kw), inputs, target)
        d = inputs - target
        with np.errstate(invalid="ignore"):
            slope = np.clip(d, -parameter, parameter)
        if loss == "smooth_l1_loss":
            slope = slope / parameter
        np.testing.assert_array_equal(g_in, slope)  # +-parameter (or +-1) at +-inf, NaN at NaN
        np.testing.assert_array_equal(g_target, -slope)
        assert value[0] == INF and value[1] == INF and math.isnan(value[5])


def test_huber_losses_keep_their_values(backend):
    d = np.array([-3.0, -1.0, -0.4, 0.0, 0.3, 1.0, 2.5])
    for delta in (1.0, 0.5, 2.0):
        huber = F.huber_loss(dp.tensor(d, dtype=F64), dp.zeros(7, dtype=F64), "none", delta)
        expected = np.where(np.abs(d) < delta, 0.5 * d * d, delta * (np.abs(d) - 0.5 * delta))
        np.testing.assert_allclose(huber.numpy(), expected, rtol=1e-15)
        smooth = F.smooth_l1_loss(dp.tensor(d, dtype=F64), dp.zeros(7, dtype=F64), "sum", delta)
        np.testing.assert_allclose(smooth.item(), (expected / delta).sum(), rtol=1e-14)
    _, (grad,) = _grads(lambda a: F.smooth_l1_loss(a, dp.zeros(3, dtype=F64), beta=0.0),
                        [-2.0, 0.5, INF])
    np.testing.assert_array_equal(grad, np.array([-1.0, 1.0, 1.0]) / 3)  # beta=0: L1


@pytest.mark.parametrize("a, b, grad_a, grad_b", [
    (INF, 1.0, 1.0, 0.0), (1.0, INF, 0.0, 1.0), (-INF, 1.0, 0.0, 1.0), (INF, -INF, 1.0, 0.0),
    (INF, INF, NAN, NAN), (-INF, -INF, NAN, NAN), (NAN, 1.0, NAN, NAN), (1000.0, -1000.0, 1.0, 0.0),
])
def test_logaddexp_of_infinities_has_pytorchs_gradient(backend, a, b, grad_a, grad_b):
    """PyTorch's ``grad / (1 + exp(other - self))``: the finite limit where one is infinite."""
    with warnings.catch_warnings():  # no warning where the result is defined
        finite = not math.isnan(grad_a)
        warnings.simplefilter("error" if finite else "ignore", RuntimeWarning)
        _, (ga, gb) = _grads(dp.logaddexp, a, b)
    np.testing.assert_equal([float(ga), float(gb)], [grad_a, grad_b])


# ----------------------------------------------------------------------------- 0-size axes
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_over_an_empty_axis_is_empty(backend, kernels, name):
    for shape, axis in [((2, 0), 1), ((0, 3), 0), ((2, 0, 3), 1), ((2, 0), -1)]:
        x = dp.zeros(*shape, dtype=F64, requires_grad=True)
        out = getattr(dp, name)(x, axis=axis)
        assert out.shape == shape
        assert out.sum().backward()[x].shape == shape
    assert getattr(F, name)(dp.zeros(3, 0), dim=-1).shape == (3, 0)


def test_linear_on_a_zero_size_feature_axis_gives_the_bias(backend):
    """PyTorch: an empty sum is 0, so every output is the bias."""
    layer = nn.Linear(0, 3, dtype=F64)
    layer.bias = nn.Parameter(dp.tensor([1.0, -2.0, 0.5], dtype=F64))
    for shape in [(2, 4, 0), (5, 0), (1, 2, 3, 0)]:
        x = dp.zeros(*shape, dtype=F64, requires_grad=True)
        out = layer(x)
        assert out.shape == (*shape[:-1], 3)
        np.testing.assert_array_equal(out.numpy(), np.broadcast_to([1.0, -2.0, 0.5], out.shape))
        grads = out.sum().backward()
        rows = math.prod(shape[:-1])
        assert grads[x].shape == shape and grads[layer.weight].shape == (3, 0)
        np.testing.assert_array_equal(grads[layer.bias].numpy(), [rows] * 3)
    assert nn.Linear(3, 2)(dp.zeros(0, 4, 3)).shape == (0, 4, 2)  # no rows at all


def test_scatter_with_an_empty_index_changes_nothing(backend):
    x = dp.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=F64, requires_grad=True)
    src = dp.zeros(2, 0, dtype=F64, requires_grad=True)
    empty = dp.zeros((2, 0), dtype="int64")
    out = dp.scatter(x, 1, empty, src)
    np.testing.assert_array_equal(out.numpy(), x.numpy())
    grads = (out * dp.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=F64)).sum().backward()
    np.testing.assert_array_equal(grads[x].numpy(), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert grads[src].shape == (2, 0)
    assert dp.scatter(x, 1, empty, value=9.0).tolist() == x.tolist()
    flat = dp.scatter(dp.ones(3), 0, dp.tensor([], dtype="int64"), dp.zeros(0))
    assert flat.tolist() == [1.0, 1.0, 1.0]


# ------------------------------------------------------------------------------ padding
def test_padding_a_bool_tensor_fills_false_by_default(backend):
    mask = dp.tensor([[True, False], [False, True]])
    out = dp.pad(mask, (1, 0, 0, 1))
    assert out.dtype.name == "bool"
    assert out.tolist() == [[False, True, False], [False, False, True], [False, False, False]]
    assert F.pad(mask, (1, 1), value=True).tolist()[0] == [True, True, False, True]
    with pytest.raises(TypeError, match="pad: value must be a bool"):
        dp.pad(mask, (1, 1), value=2)


# ------------------------------------------------------------------------ integer sums
@pytest.mark.parametrize("name", ["sum", "prod", "cumsum", "cumprod"])
def test_sums_and_products_of_uint8_are_int64(backend, name):
    """As in PyTorch; NumPy's uint64 is no dparray dtype, so ``.dtype`` failed."""
    x = dp.tensor([200, 100, 2], dtype="uint8")
    out = getattr(dp, name)(x)
    assert out.dtype.name == "int64"
    reference = getattr(np, name)(np.array([200, 100, 2], dtype=np.int64))
    np.testing.assert_array_equal(out.numpy(), reference)


# ----------------------------------------------------------------------------- hardsigmoid
def test_hardsigmoids_float64_gradient_is_exactly_one_sixth(backend):
    """Issue 21 says dparray's float64 gradient used a float32 constant; it never did: the
    float32 constant is PyTorch's (its float64 kernel gives 0.1666666716337204, see
    docs/decisions.md). This pins dparray's exact value in float64 and in float32."""
    for dtype in (F64, "float32"):
        x = dp.tensor([0.5, -2.9, 2.9], dtype=dtype, requires_grad=True)
        grad = nn.Hardsigmoid()(x).sum().backward()[x].numpy()
        np.testing.assert_array_equal(grad, np.full(3, 1.0, dtype) / np.asarray(6.0, dtype))
