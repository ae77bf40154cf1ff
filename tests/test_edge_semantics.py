"""Edge semantics, on every backend, as PyTorch has them unless the array API standard says
otherwise (docs/decisions.md lists each choice): integer promotion to the default float,
``pow``'s gradients at a zero or negative base, reductions of 0-d tensors, means and variances
of too few elements, ``clip``'s bounds, and NaN results computed without NumPy warnings."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import dparray as dp

INTS = np.array([1, 4, 9, -2])


# ----------------------------------------------------------------- integer -> the default float
PROMOTING = [
    ("int / int", lambda i: i / dp.tensor([2, 2, 2, 2]), lambda i: i / 2),
    ("int / python int", lambda i: i / 2, lambda i: i / 2),
    ("python int / int", lambda i: 1 / i, lambda i: 1 / i),
    ("int ** 0.5", lambda i: dp.abs(i) ** 0.5, lambda i: np.abs(i) ** 0.5),
    ("2.0 ** int", lambda i: 2.0**i, lambda i: 2.0**i),
    ("int + 0.5", lambda i: i + 0.5, lambda i: i + 0.5),
    ("0.5 - int", lambda i: 0.5 - i, lambda i: 0.5 - i),
    ("int * 0.5", lambda i: i * 0.5, lambda i: i * 0.5),
    ("int % 2.5", lambda i: i % 2.5, lambda i: np.remainder(i, 2.5)),
    ("maximum(int, 0.5)", lambda i: dp.maximum(i, 0.5), lambda i: np.maximum(i, 0.5)),
    ("where(int, 0.5)", lambda i: dp.where(i > 2, i, 0.5), lambda i: np.where(i > 2, i, 0.5)),
    ("clip(int, 0.5)", lambda i: i.clip(0.5), lambda i: np.clip(i, 0.5, None)),
    ("exp", dp.exp, np.exp),
    ("log", lambda i: dp.log(dp.abs(i)), lambda i: np.log(np.abs(i))),
    ("sqrt", lambda i: dp.sqrt(dp.abs(i)), lambda i: np.sqrt(np.abs(i))),
    ("sin", dp.sin, np.sin),
    ("atan2", lambda i: dp.atan2(i, i), lambda i: np.arctan2(i, i)),
    ("tanh", dp.tanh, np.tanh),
    ("sigmoid", dp.sigmoid, lambda i: 1 / (1 + np.exp(-i))),
    ("erf", dp.erf, lambda i: np.array([math.erf(v) for v in i])),
    ("rsqrt", lambda i: dp.rsqrt(dp.abs(i)), lambda i: 1 / np.sqrt(np.abs(i))),
    ("log1p", lambda i: dp.log1p(dp.abs(i)), lambda i: np.log1p(np.abs(i))),
    ("logaddexp", lambda i: dp.logaddexp(i, i), lambda i: np.logaddexp(i, i)),
    ("lerp", lambda i: dp.lerp(i, i * 2, 0.5), lambda i: i * 1.5),
    ("round(decimals=-1)", lambda i: (i * 10).round(decimals=-1), lambda i: i * 10.0),
    ("mean", lambda i: i.mean(), np.mean),
    ("var", lambda i: i.var(correction=1), lambda i: np.var(i, ddof=1)),
    ("std", lambda i: i.std(), lambda i: np.std(i, ddof=1)),  # PyTorch's default correction
    ("logsumexp", dp.logsumexp, lambda i: np.log(np.sum(np.exp(i)))),
    ("softmax", dp.softmax, lambda i: np.exp(i) / np.exp(i).sum()),
    ("log_softmax", dp.log_softmax, lambda i: i - np.log(np.exp(i).sum())),
    ("logcumsumexp", dp.logcumsumexp, np.logaddexp.accumulate),
]


@pytest.mark.parametrize("op, reference", [p[1:] for p in PROMOTING],
                         ids=[p[0] for p in PROMOTING])
def test_integers_promote_to_the_default_float(op, reference, backend):
    out = op(dp.tensor(INTS))
    assert out.dtype == dp.float32  # not NumPy's float64
    expected = reference(INTS.astype(np.float64))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6, atol=1e-6)
    dp.set_default_dtype(dp.float64)
    try:
        assert op(dp.tensor(INTS)).dtype == dp.float64
    finally:
        dp.set_default_dtype(dp.float32)


@pytest.mark.parametrize("op", [
    lambda i: i * 3, lambda i: i + 1, lambda i: i**2, lambda i: i // 2, lambda i: i % 3,
    lambda i: dp.abs(i), lambda i: dp.floor(i), lambda i: i.sum(), lambda i: i.prod(),
    lambda i: i.cumsum(), lambda i: dp.maximum(i, 0), lambda i: i.clip(0, 5),
], ids=["*", "+", "**", "//", "%", "abs", "floor", "sum", "prod", "cumsum", "maximum", "clip"])
def test_integer_valued_ops_stay_integer(op, backend):
    assert op(dp.tensor(INTS)).dtype == dp.int64


@pytest.mark.parametrize("op", [
    lambda a, b: a / b, lambda a, b: a**b, dp.atan2, lambda a, b: a % b, dp.logaddexp,
    lambda a, b: a + b, lambda a, b: b - a, dp.maximum,
], ids=["/", "**", "atan2", "%", "logaddexp", "+", "-", "maximum"])
def test_an_integer_tensor_with_a_float_tensor_takes_the_float_dtype(op, backend):
    # PyTorch: across kinds the result has the floating operand's dtype, here float64, not the
    # default float32; the values are those of the integers converted first
    ints = dp.tensor(INTS)
    floats = dp.tensor([1.5, 2.0, 0.5, 4.0], dtype="float64", requires_grad=True)
    out = op(ints, floats)
    assert out.dtype == dp.float64
    np.testing.assert_array_equal(out.numpy(), op(dp.tensor(INTS, dtype="float64"), floats).numpy())
    assert out.sum().backward()[floats].dtype == dp.float64


# --------------------------------------------------------------------------- pow's gradients
def _ieee_pow(a: float, b: float) -> float:
    """``a ** b`` with IEEE's special values (Python raises for some of them)."""
    if a == 0:
        return math.inf if b < 0 else (1.0 if b == 0 else 0.0)
    if a < 0 and b != int(b):
        return math.nan
    return a**b


def _ieee_log(a: float) -> float:
    return -math.inf if a == 0 else (math.nan if a < 0 else math.log(a))


def _pytorch_pow_gradients(a: float, b: float) -> tuple[float, float]:
    """PyTorch's ``pow_backward`` and ``pow_backward_exponent``: the base's gradient
    ``b * a ** (b - 1)`` masked to 0 where ``b == 0``; the exponent's ``a ** b * log(a)``
    masked to 0 where ``a == 0 and b >= 0`` (checked against torch 2.13)."""
    base = 0.0 if b == 0 else b * _ieee_pow(a, b - 1)
    exponent = 0.0 if (a == 0 and b >= 0) else _ieee_pow(a, b) * _ieee_log(a)
    return base, exponent


BASES = [0.0, 0.0, 0.0, 0.0, 0.0, -2.0, -2.0, 2.0, 3.0]
EXPONENTS = [0.0, 1.0, 2.0, -1.0, 0.5, 2.0, 3.0, 0.0, -1.5]


def test_pow_gradients_at_zero_and_negative_bases_match_pytorch(backend):
    a = dp.tensor(BASES, dtype="float64", requires_grad=True)
    b = dp.tensor(EXPONENTS, dtype="float64", requires_grad=True)
    grads = (a**b).sum().backward()
    expected = [_pytorch_pow_gradients(x, y) for x, y in zip(BASES, EXPONENTS, strict=True)]
    np.testing.assert_allclose(grads[a].numpy(), [e[0] for e in expected], rtol=1e-14)
    np.testing.assert_allclose(grads[b].numpy(), [e[1] for e in expected], rtol=1e-14)
    # among them: d/dx x ** 0 at 0 is 0, 0 ** y has exponent gradient 0 for y >= 0, -inf for
    # y < 0, and a negative base gives NaN for the exponent
    assert grads[a].tolist()[0] == 0.0 and grads[b].tolist()[:5] == [0.0] * 3 + [-math.inf, 0.0]
    assert math.isnan(grads[b].tolist()[5])


def test_pow_negative_base_fractional_exponent_is_nan_like_pytorch(backend):
    a = dp.tensor([-2.0], dtype="float64", requires_grad=True)
    b = dp.tensor([0.5], dtype="float64", requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's own, about (-2) ** 0.5
        out = a**b
        grads = out.sum().backward()
    assert all(math.isnan(v) for v in (out.item(), grads[a].item(), grads[b].item()))


@pytest.mark.parametrize("exponent", [0.0, 1.0, 2.0, 0.5, -1.0, 3])
def test_pow_scalar_exponent_gradient_at_zero(exponent, backend):
    # PyTorch: 0 for x ** 0 and x ** 2, 1 for x ** 1, inf for x ** 0.5, -inf for x ** -1
    x = dp.tensor([0.0, 1.5], dtype="float64", requires_grad=True)
    grad = (x**exponent).sum().backward()[x].tolist()
    assert grad == [_pytorch_pow_gradients(0.0, exponent)[0],
                    pytest.approx(_pytorch_pow_gradients(1.5, exponent)[0], rel=1e-14)]


@pytest.mark.parametrize("base", [0.0, -2.0, 2.0])
def test_pow_scalar_base_never_raises(base, backend):
    # this raised "math domain error" for base <= 0 before
    y = dp.tensor([0.0, 2.0, -1.0, 0.5], dtype="float64", requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's, for (-2) ** 0.5 only
        out = base**y
        grad = out.sum().backward()[y].numpy()
    expected = [_pytorch_pow_gradients(base, v) for v in (0.0, 2.0, -1.0, 0.5)]
    np.testing.assert_allclose(out.numpy(), [_ieee_pow(base, v) for v in (0.0, 2.0, -1.0, 0.5)])
    if base < 0:  # PyTorch: log of a negative scalar base is NaN, so every gradient is NaN
        assert np.isnan(grad).all()
    else:
        np.testing.assert_allclose(grad, [e[1] for e in expected], rtol=1e-14)


def test_zero_base_raises_no_warning_in_either_direction(backend):
    x = dp.tensor([0.0, 0.0, 2.0], dtype="float64", requires_grad=True)
    e = dp.tensor([-1.0, 0.5, -2.0], dtype="float64", requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = x**e
        grads = out.sum().backward()
        (0.0**e).sum().backward()
        (x**-1.0).sum().backward()
    assert out.tolist() == [math.inf, 0.0, 0.25]
    assert grads[x].tolist() == [-math.inf, math.inf, -0.25]


# ---------------------------------------------------------------- reductions of 0-d tensors
ZERO_D = [
    ("sum", lambda t, a: t.sum(axis=a), 2.5, 1.0),
    ("mean", lambda t, a: t.mean(axis=a), 2.5, 1.0),
    ("max", lambda t, a: t.max(axis=a), 2.5, 1.0),
    ("min", lambda t, a: t.min(axis=a, keepdims=True), 2.5, 1.0),
    ("prod", lambda t, a: t.prod(axis=a), 2.5, 1.0),
    ("var", lambda t, a: t.var(axis=a, correction=0), 0.0, 0.0),
    ("logsumexp", lambda t, a: t.logsumexp(axis=a), 2.5, 1.0),
    ("softmax", lambda t, a: t.softmax(axis=a), 1.0, 0.0),
    ("log_softmax", lambda t, a: t.log_softmax(axis=a), 0.0, 0.0),
    ("cumsum", lambda t, a: t.cumsum(a), 2.5, 1.0),
    ("cumprod", lambda t, a: t.cumprod(a), 2.5, 1.0),
    ("cummax", lambda t, a: t.cummax(a).values, 2.5, 1.0),
    ("logcumsumexp", lambda t, a: t.logcumsumexp(a), 2.5, 1.0),
    ("sort", lambda t, a: t.sort(axis=a), 2.5, 1.0),
    ("topk", lambda t, a: t.topk(1, axis=a).values, 2.5, 1.0),
]


@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("op, value, gradient", [z[1:] for z in ZERO_D],
                         ids=[z[0] for z in ZERO_D])
def test_a_0d_tensor_is_its_own_reduction(op, value, gradient, axis, backend):
    # PyTorch: torch.sum(torch.tensor(2.5), 0) is tensor(2.5); softmax of a 0-d tensor is 1
    x = dp.tensor(2.5, dtype="float64", requires_grad=True)
    out = op(x, axis)
    assert out.shape == () and out.item() == pytest.approx(value, abs=1e-15)
    assert out.backward()[x].item() == pytest.approx(gradient, abs=1e-15)


def test_0d_positions_and_out_of_range_axes(backend):
    x = dp.tensor(2.5)
    assert x.argmax(axis=0).item() == 0 and x.argmin(axis=-1).item() == 0
    assert x.argsort(axis=0).item() == 0 and x.cummax(0).indices.item() == 0
    assert x.topk(1).indices.item() == 0
    for op in (lambda: x.sum(axis=1), lambda: x.softmax(axis=1), lambda: x.argmax(axis=-2),
               lambda: x.cumsum(1), lambda: x.sort(axis=1)):
        with pytest.raises(ValueError, match=r"axis .* is out of range for a tensor with 1 dim"):
            op()
    with pytest.raises(ValueError, match=r"repeated axis"):
        x.sum(axis=(0, -1))


# ------------------------------------------------------------ means and variances of too few
def test_mean_over_an_empty_axis_is_nan_and_its_gradient_empty(backend):
    # PyTorch: torch.mean(torch.empty(0, 3), 0) is [nan, nan, nan]; the gradient has shape (0, 3)
    x = dp.zeros(0, 3, dtype="float64", requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = x.mean(axis=0)
        grad = out.sum().backward()[x]
        assert math.isnan(dp.zeros(0).mean().item())
    assert out.shape == (3,) and np.isnan(out.numpy()).all()
    assert grad.shape == (0, 3)
    assert x.mean(axis=1, keepdims=True).shape == (0, 1)  # no element is reduced: empty result


@pytest.mark.parametrize("op", [dp.var, dp.std], ids=["var", "std"])
def test_no_degrees_of_freedom_give_nan_with_a_warning(op, backend):
    # the array API: NaN where N - correction <= 0 (PyTorch warns alike, and gives inf for
    # N - correction < 0, where dparray follows the standard)
    x = dp.tensor([[1.0], [2.0]], dtype="float64", requires_grad=True)
    with pytest.warns(UserWarning, match=r"1 element.* with correction 1 leave no degrees"):
        out = op(x, axis=1, correction=1)
    assert np.isnan(out.numpy()).all() and out.shape == (2,)
    assert np.isnan(out.sum().backward()[x].numpy()).all()
    with pytest.warns(UserWarning, match=r"2 element.* with correction 3"):
        assert math.isnan(op(dp.tensor([1.0, 5.0]), correction=3).item())
    with pytest.warns(UserWarning, match=r"0 element"):
        assert op(dp.zeros(0, 2), axis=0).shape == (2,)


def test_var_correction_is_checked(backend):
    with pytest.raises(ValueError, match=r"^var: correction must be at least 0.0, got -1"):
        dp.var(dp.ones(3), correction=-1)
    with pytest.raises(TypeError, match=r"^std: correction must be a number"):
        dp.std(dp.ones(3), correction="1")


def test_std_of_a_constant_has_zero_gradient(backend):
    # PyTorch masks std's gradient to 0 where std is 0 (sqrt alone would give NaN)
    x = dp.tensor([2.0, 2.0, 2.0], dtype="float64", requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.std(correction=1).backward()[x].tolist() == [0.0, 0.0, 0.0]


# ------------------------------------------------------------------------------------- clip
def test_clip_with_min_above_max_is_max_everywhere(backend):
    # PyTorch: torch.clamp(x, min=1, max=0) is 0 everywhere, and its gradient is 0 everywhere
    x = dp.tensor([-1.0, 0.5, 3.0], dtype="float64", requires_grad=True)
    out = dp.clip(x, 1.0, 0.0)
    assert out.tolist() == [0.0, 0.0, 0.0]
    assert out.sum().backward()[x].tolist() == [0.0, 0.0, 0.0]
    assert dp.clip(dp.tensor([1, 5, 9]), 6, 2).tolist() == [2, 2, 2]


def test_clip_needs_a_bound(backend):
    with pytest.raises(ValueError, match=r"^clip: at least one of min and max must be given"):
        dp.clip(dp.ones(2))
    with pytest.raises(TypeError, match=r"^clip: min must be a number, got 'a'"):
        dp.clip(dp.ones(2), "a")


def test_clamp_is_clip_under_pytorchs_name(backend):
    x = dp.tensor([-2.0, 0.5, 3.0], dtype="float64", requires_grad=True)
    for out in (dp.clamp(x, -1.0, 1.0), x.clamp(-1.0, 1.0), x.clamp(min=-1.0, max=1.0)):
        assert out.tolist() == [-1.0, 0.5, 1.0]
        assert out.sum().backward()[x].tolist() == [0.0, 1.0, 0.0]
    assert x.clamp(min=0.0).tolist() == [0.0, 0.5, 3.0]
    assert x.clamp(max=0.0).tolist() == [-2.0, 0.0, 0.0]
    with pytest.raises(ValueError, match=r"^clip: at least one of min and max must be given"):
        x.clamp()


# -------------------------------------------- NaN and inf computed without NumPy's warnings
@pytest.mark.parametrize("value, compute", [
    (0.0, lambda x: x.prod()),
    (0.0, lambda x: x.cumprod(0)),
    (0.0, lambda x: dp.atan2(x, x)),
    (0.0, lambda x: x.std() * x.var()),
    (0.0, lambda x: x.mean(axis=0) ** 0.5),
    (-math.inf, lambda x: dp.logcumsumexp(x)),
    (-math.inf, lambda x: dp.cummax(x).values),
], ids=["prod", "cumprod", "atan2 at 0", "std", "sqrt at 0", "logcumsumexp", "cummax"])
def test_library_paths_at_zero_and_infinity_do_not_warn(value, compute, backend):
    x = dp.tensor([value] * 3, dtype="float64", requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = compute(x)
        grads = out.sum().backward()
    assert x in grads


def test_logsumexp_of_minus_infinity_is_minus_infinity_without_a_warning(backend):
    x = dp.tensor([[-math.inf, -math.inf], [0.0, -math.inf]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.logsumexp(axis=1).tolist() == [-math.inf, 0.0]
        assert dp.logsumexp(dp.zeros(0)).item() == -math.inf  # the empty sum is 0


def test_isclose_with_infinities_does_not_warn(backend):
    a = dp.tensor([math.inf, -math.inf, math.inf, math.nan, 1.0])
    b = dp.tensor([math.inf, math.inf, 1.0, math.nan, math.inf])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dp.isclose(a, b).tolist() == [True, False, False, False, False]
        assert dp.isclose(a, b, equal_nan=True).tolist() == [True, False, False, True, False]
