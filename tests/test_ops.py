"""Every op: its value against an independent reference, its gradient against finite
differences in float64, float32 kept, on every backend -- the cases of ``cases.py``,
``cases_indexing.py`` and ``cases_activations.py``; the ops with constant results exactly
against NumPy; and the semantics each op documents (ties, NaN, out-of-range arguments)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from cases import ALL_CASES, CONSTANT_CASES
from cases_activations import ACTIVATIONS
from cases_indexing import INDEXING_CASES
from conftest import to_tensor
from gradient_checks import check_gradients

import dparray as dp
from dparray.ops import _portable

EVERY_CASE = [*ALL_CASES, *INDEXING_CASES, *ACTIVATIONS]


@pytest.mark.parametrize("case", EVERY_CASE, ids=repr)
def test_value_matches_reference(case, backend, rng):
    arrays = case.inputs(rng)
    out = case.function(*[to_tensor(a) for a in arrays])
    expected = np.asarray(case.reference(*arrays))
    assert out.shape == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", EVERY_CASE, ids=repr)
def test_gradient_matches_finite_differences(case, backend, kernels, rng):
    inputs = [to_tensor(a, requires_grad=True) for a in case.inputs(rng)]
    check_gradients(case.function, inputs)


@pytest.mark.parametrize("case", EVERY_CASE, ids=repr)
def test_float32_stays_float32(case, backend, rng):
    inputs = [to_tensor(a.astype(np.float32), requires_grad=True) for a in case.inputs(rng)]
    out = case.function(*inputs)
    assert out.dtype.name == "float32"
    grads = out.sum().backward()
    for t in inputs:
        assert grads[t].dtype.name == "float32"
        assert grads[t].shape == t.shape


@pytest.mark.parametrize("case", CONSTANT_CASES, ids=repr)
def test_constant_op_matches_numpy_exactly(case, backend):
    out = case.function(*[to_tensor(a) for a in case.inputs])
    expected = np.asarray(case.reference(*case.inputs))
    assert not out.requires_grad
    assert out.shape == expected.shape
    assert out.dtype.name == expected.dtype.name
    np.testing.assert_array_equal(out.numpy(), expected)


# ------------------------------------------------------------------------- Tensor method forms
METHODS = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "atanh",
           "floor", "ceil", "round", "trunc", "sign", "exp2", "expm1", "log1p", "erf",
           "isnan", "isinf", "isfinite", "prod", "std", "argmin", "sort", "argsort"]


@pytest.mark.parametrize("name", METHODS)
def test_method_is_the_op(name, backend, rng):
    x = to_tensor(rng.uniform(-0.9, 0.9, (3, 4)))
    np.testing.assert_array_equal(getattr(x, name)().numpy(), getattr(dp, name)(x).numpy())


def test_binary_methods_and_reflected_operators(backend):
    a, b = dp.tensor([5.5, -5.5, 3.0]), dp.tensor([2.0, 2.0, -4.0])
    assert a.remainder(b).tolist() == (a % b).tolist() == [1.5, 0.5, -1.0]
    assert a.floor_divide(b).tolist() == (a // b).tolist() == [2.0, -3.0, -1.0]
    assert (7.0 % b).tolist() == [1.0, 1.0, -1.0] and (7.0 // b).tolist() == [3.0, 3.0, -2.0]
    assert a.atan2(b).tolist() == dp.atan2(a, b).tolist()
    assert a.logaddexp(b).tolist() == dp.logaddexp(a, b).tolist()
    assert a.lerp(b, 0.5).tolist() == [3.75, -1.75, -0.5]
    assert a.cumsum().tolist() == [5.5, 0.0, 3.0] and a.cumprod().tolist() == [5.5, -30.25, -90.75]
    assert a.logical_and(b > 0).tolist() == [True, True, False]
    assert a.logical_or(a < 0).tolist() == [True, True, True]
    assert a.isclose(a + 1e-9).tolist() == [True, True, True] and a.allclose(a)


def test_allclose_is_a_python_bool(backend):
    a = dp.tensor([1.0, 2.0])
    assert dp.allclose(a, a + 1e-7) is True
    assert dp.allclose(a, a + 1e-3) is False
    assert dp.allclose(a, dp.tensor([1.0, math.nan]), equal_nan=True) is False
    assert dp.allclose(a, 1.0, atol=1.5) is True  # a Python number broadcasts


# ------------------------------------------------------------------------------ scans, sorting
def test_cummax_ties_take_the_later_position_and_get_the_gradient(backend):
    # PyTorch: cummax([1, 3, 3, 2]) has indices [0, 1, 2, 2], and the gradient of each running
    # value goes to its index: [1, 1, 2, 0] for a gradient of ones
    x = dp.tensor([[1.0, 3.0, 3.0, 2.0]], dtype="float64", requires_grad=True)
    values, indices = x.cummax(axis=1)
    assert values.tolist() == [[1.0, 3.0, 3.0, 3.0]] and indices.tolist() == [[0, 1, 2, 2]]
    assert values.sum().backward()[x].tolist() == [[1.0, 1.0, 2.0, 0.0]]
    values, indices = dp.cummin(dp.tensor([3.0, 1.0, 1.0, 2.0]))
    assert values.tolist() == [3.0, 1.0, 1.0, 1.0] and indices.tolist() == [0, 1, 2, 2]


def test_cummax_propagates_nan_like_pytorch(backend):
    # PyTorch: values [1, 3, 3, 3, nan, nan, nan], indices [0, 1, 2, 2, 4, 4, 6]
    x = dp.tensor([1.0, 3.0, 3.0, 2.0, math.nan, 5.0, math.nan], requires_grad=True)
    values, indices = dp.cummax(x)
    np.testing.assert_array_equal(values.numpy(), [1.0, 3.0, 3.0, 3.0, np.nan, np.nan, np.nan])
    assert indices.tolist() == [0, 1, 2, 2, 4, 4, 6]
    assert (values * dp.tensor([1.0, 2, 3, 4, 5, 6, 7])).sum().backward()[x].tolist() == [
        1.0, 2.0, 7.0, 0.0, 11.0, 0.0, 7.0]


def test_cumprod_gradient_with_zeros_is_the_product_of_the_others(backend):
    # d/dx_i sum_k prod_{j<=k} x_j = sum_{k>=i} prod_{j<=k, j!=i} x_j, written out for
    # x = [2, 0, 3, 4]: [1, 2 + 6 + 24, 0, 0] (PyTorch gives the same)
    x = dp.tensor([2.0, 0.0, 3.0, 4.0], dtype="float64", requires_grad=True)
    assert dp.cumprod(x).sum().backward()[x].tolist() == [1.0, 32.0, 0.0, 0.0]
    y = dp.tensor([2.0, 0.0, 3.0, 0.0], dtype="float64", requires_grad=True)
    assert dp.cumprod(y).sum().backward()[y].tolist() == [1.0, 8.0, 0.0, 0.0]


def test_prod_gradient_with_one_and_with_two_zeros(backend):
    x = dp.tensor([[0.0, 2.0, 3.0], [0.0, 2.0, 0.0]], dtype="float64", requires_grad=True)
    grads = x.prod(axis=1).sum().backward()[x]
    assert grads.tolist() == [[6.0, 0.0, 0.0], [0.0, 0.0, 0.0]]


def test_sort_puts_nan_last_and_descending_keeps_ties_in_order(backend):
    x = dp.tensor([3.0, math.nan, 1.0, 3.0])
    np.testing.assert_array_equal(dp.sort(x).numpy(), [1.0, 3.0, 3.0, np.nan])
    np.testing.assert_array_equal(x.sort(descending=True).numpy(), [np.nan, 3.0, 3.0, 1.0])
    # PyTorch's stable sort: indices [2, 0, 3, 1] ascending, [1, 0, 3, 2] descending
    assert dp.argsort(x).tolist() == [2, 0, 3, 1]
    assert dp.argsort(x, descending=True).tolist() == [1, 0, 3, 2]


def test_sort_gradient_goes_back_to_the_original_positions(backend):
    x = dp.tensor([[3.0, 1.0, 2.0]], dtype="float64", requires_grad=True)
    weights = dp.tensor([[10.0, 20.0, 30.0]], dtype="float64")
    grads = (dp.sort(x, axis=1) * weights).sum().backward()[x]
    assert grads.tolist() == [[30.0, 10.0, 20.0]]


def test_topk_ties_smallest_and_gradient(backend):
    # PyTorch: topk([1, 3, 3, 2], 2) picks indices [1, 2]; largest=False picks [0, 3]
    x = dp.tensor([1.0, 3.0, 3.0, 2.0], requires_grad=True)
    values, indices = dp.topk(x, 2)
    assert values.tolist() == [3.0, 3.0] and indices.tolist() == [1, 2]
    assert x.topk(2, largest=False).indices.tolist() == [0, 3]
    assert x.topk(2, sorted=False).values.tolist() == [3.0, 3.0]
    grads = (values * dp.tensor([1.0, 10.0])).sum().backward()[x]
    assert grads.tolist() == [0.0, 1.0, 10.0, 0.0]
    assert dp.topk(x, 0).values.shape == (0,)


def test_sorting_and_scan_argument_errors(backend):
    x = dp.ones(2, 3)
    with pytest.raises(ValueError, match=r"topk: k must be at most 3, the size of axis 1"):
        dp.topk(x, 4)
    with pytest.raises(ValueError, match=r"^topk: k must be at least 0, got -1"):
        dp.topk(x, -1)
    with pytest.raises(TypeError, match=r"^topk: k must be an int, got 1.5"):
        dp.topk(x, 1.5)
    with pytest.raises(TypeError, match=r"^sort: descending must be a bool"):
        dp.sort(x, descending="yes")
    with pytest.raises(TypeError, match=r"^topk: sorted must be a bool"):
        dp.topk(x, 1, sorted=None)
    with pytest.raises(ValueError, match=r"^cumsum: axis is needed for a tensor with 2 dim"):
        dp.cumsum(x)
    with pytest.raises(ValueError, match=r"^cummax: axis 2 is out of range"):
        dp.cummax(x, axis=2)
    with pytest.raises(ValueError, match=r"^argmin: axis 1 of shape \(2, 0\) has no elements"):
        dp.argmin(dp.ones(2, 0), axis=1)
    with pytest.raises(ValueError, match=r"^argmax: the tensor of shape .* has no elements"):
        dp.argmax(dp.ones(0))


def test_scans_and_sorts_along_an_empty_axis(backend):
    x = dp.ones(2, 0, dtype="float64", requires_grad=True)
    for op in (lambda t: dp.cumsum(t, axis=1), lambda t: dp.cumprod(t, axis=1),
               lambda t: dp.cummax(t, axis=1).values, lambda t: dp.logcumsumexp(t, axis=1),
               lambda t: dp.sort(t, axis=1)):
        out = op(x)
        assert out.shape == (2, 0)
        assert out.sum().backward()[x].shape == (2, 0)


class _Without:
    """An array namespace lacking some functions, to exercise the portable fallbacks."""

    def __init__(self, xp, *missing):
        self._xp, self._missing = xp, missing

    def __getattr__(self, name):
        if name in self._missing:
            raise AttributeError(name)
        return getattr(self._xp, name)


def test_portable_fallbacks_match_the_standard_functions(backend, rng):
    xp = backend.xp
    x = backend.asarray(rng.standard_normal((3, 4, 5)))
    order = xp.argsort(x, axis=1)
    bare = _Without(xp, "take_along_axis", "cumulative_prod")
    for axis in (0, 1, 2):
        np.testing.assert_allclose(
            np.asarray(_portable.cumulative_prod(bare, x, axis)),
            np.cumprod(np.asarray(x), axis=axis), rtol=1e-13)
    np.testing.assert_array_equal(
        np.asarray(_portable.take_along_axis(bare, x, order[:, :2, ...], 1)),
        np.take_along_axis(np.asarray(x), np.asarray(order)[:, :2], axis=1))


# ------------------------------------------------------------------- integer and bitwise ops
def test_shifts_beyond_the_width_follow_pytorch(backend):
    # PyTorch: a shift by a negative amount or by >= the bit width gives 0 for <<, and the sign
    # (0 or -1) for >>
    x = dp.tensor([1, -8, 3], dtype="int64")
    assert (x << dp.tensor([64, -1, 63])).tolist() == [0, 0, -(2**63)]
    assert (x >> dp.tensor([64, -1, 1])).tolist() == [0, -1, 1]
    assert (x << 70).tolist() == [0, 0, 0] and (x >> 70).tolist() == [0, -1, 0]
    small = dp.tensor([3, -3], dtype="int8")
    assert (small << 7).tolist() == [-128, -128] and (small >> 8).tolist() == [0, -1]
    assert (dp.tensor([200], dtype="uint8") >> 9).tolist() == [0]


def test_integer_division_by_zero_is_an_error(backend):
    x = dp.tensor([5, 6])
    with pytest.raises(ZeroDivisionError, match=r"^floor_divide: integer division by zero"):
        x // 0
    with pytest.raises(ZeroDivisionError, match=r"^remainder: integer division by zero"):
        x % dp.tensor([1, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's, as for 1.0 / 0.0
        assert (dp.tensor([5.0]) % 0.0).isnan().item()  # floats follow IEEE: NaN ...
        assert (dp.tensor([5.0]) // 0.0).isinf().item()  # ... and inf


def test_integer_and_bitwise_type_errors(backend):
    ints, floats, mask = dp.tensor([1, 2]), dp.tensor([1.0, 2.0]), dp.tensor([True, False])
    with pytest.raises(TypeError, match=r"^bitwise_and needs integer or bool operands, got float3"):
        floats & ints
    with pytest.raises(TypeError, match=r"^bitwise_left_shift needs integer operands, got bool"):
        mask << 1
    assert (mask | ints).tolist() == [1, 2] and (mask | ints).dtype == dp.int64  # PyTorch's
    with pytest.raises(TypeError, match=r"needs integer or bool operands, got float32"):
        _ = ~floats
    with pytest.raises(TypeError, match=r"^bitwise_xor needs integer or bool operands, got float"):
        ints ^ 1.5
    with pytest.raises(TypeError, match=r"^remainder needs numbers, got a bool operand"):
        mask % 2
    with pytest.raises(ValueError, match=r"^pow: integers to negative integer powers"):
        ints ** -1
    # a tensor of powers is computed, as in PyTorch: 1 ** -2 is 1, 2 ** -1 truncates to 0
    assert (ints ** dp.tensor([-2, -1])).tolist() == [1, 0]
    assert (dp.tensor([-1, -1, 3]) ** dp.tensor([-3, -2, -1])).tolist() == [-1, 1, 0]
    assert (2 ** dp.tensor([-1, 3])).tolist() == [0, 8]
    with pytest.raises(TypeError, match=r"^logical_and needs at least one Tensor, got bool"):
        dp.logical_and(True, False)
    with pytest.raises(TypeError, match=r"^isnan needs a Tensor, got list"):
        dp.isnan([1.0])
    assert (ints & True).tolist() == [1, 0]  # a Python bool with integers is 0 or 1


def test_round_decimals_and_argument_checks(backend):
    x = dp.tensor([1.2345, 25.0, 35.0, 0.5, 1.5], dtype="float64")
    assert x.round(decimals=2).tolist() == [1.23, 25.0, 35.0, 0.5, 1.5]
    assert x.round(decimals=-1).tolist() == [0.0, 20.0, 40.0, 0.0, 0.0]  # halves to even
    with pytest.raises(TypeError, match=r"^round: decimals must be an int, got 1.5"):
        x.round(decimals=1.5)
    with pytest.raises(TypeError, match=r"^isclose: rtol must be a number"):
        dp.isclose(x, x, rtol="small")
    with pytest.raises(ValueError, match=r"^isclose: atol must be at least 0.0"):
        dp.isclose(x, x, atol=-1.0)
