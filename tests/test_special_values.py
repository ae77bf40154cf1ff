"""Every differentiable op of the op table against PyTorch on special values, forward and
gradient in float64 (issue 21): one NaN, infinity, -0.0, 1e308 or subnormal among ordinary
inputs, inputs made of nothing but special values (inf - inf, 0 * inf, ...), and 0-size axes.
PyTorch's results are ``tests/data/special_values.safetensors``
(``tests/data/make_special_value_fixtures.py``; the inputs are ``tests/special_values.py``).

Values and gradients must agree: NaN where PyTorch has NaN, the same infinities, the sign of a
zero output, finite numbers to 1e-9 relative; where PyTorch refuses a call, dparray refuses it
too. ``CONVENTIONS`` lists the deliberate differences, each with where it shows and its reason
(docs/decisions.md); a difference it does not explain fails.
"""

from __future__ import annotations

import json
import math
import pathlib
import warnings

import numpy as np
import pytest
from cases import ALL_CASES
from cases_activations import ACTIVATIONS
from safetensors import safe_open
from special_values import cotangent, inputs, labels

import dparray as dp

FIXTURE = pathlib.Path(__file__).parent / "data" / "special_values.safetensors"
RTOL = 1e-9
ATOL = 1e-320  # a few subnormal steps: a subnormal result must be one, not 0
GRAD_ATOL = 1e-300  # gradients of subnormal size are rounding (products of subnormals, BLAS)


def _table():
    with safe_open(FIXTURE, "numpy") as file:
        return (json.loads(file.metadata()["special_cases"]), file.get_tensor("base"),
                file.get_tensor("values"))


RECORDED, BASE, VALUES = _table()
CASES = {case.name: case for case in ALL_CASES}
CASES.update({f"activations.{case.name}": case for case in ACTIVATIONS})

def _input_is(test, i=0):
    """Where input ``i`` passes ``test`` (a NumPy predicate), for an elementwise op."""
    return lambda arrays, actual, expected: test(arrays[i])


def _zero_signs(arrays, actual, expected):
    return (actual == 0) & (expected == 0)


def _unusual(x):
    """Values whose products and sums leave the ordinary range: NaN, infinities, subnormals,
    and magnitudes near the largest."""
    return ~np.isfinite(x) | ((x != 0) & (np.abs(x) < 1e-300)) | (np.abs(x) > 1e300)


def _groups_with(test, axis):
    """Where the slice along ``axis`` through an element holds a value passing ``test``: the
    elements a reduction or a scan along ``axis`` mixes with it."""
    def excused(arrays, actual, expected):
        return np.broadcast_to(test(arrays[0]).any(axis=axis, keepdims=True), arrays[0].shape)
    return excused


def _everywhere_if(test):
    def excused(arrays, actual, expected):
        return np.full(arrays[0].shape, bool(test(arrays[0]).any()))
    return excused


def _relative(tolerance):
    def excused(arrays, actual, expected):
        with np.errstate(all="ignore"):
            return np.abs(actual - expected) <= tolerance * np.abs(expected)
    return excused


def _fused_products(arrays, actual, expected):
    return np.isnan(expected) & np.isinf(actual)


_SIGN = "sign(nan) is NaN, as in NumPy and the array API (PyTorch: 0)"
_REMAINDER = ("a zero remainder takes the divisor's sign, as in NumPy and the array API "
              "(PyTorch's takes the dividend's)")
_NAN_KINKS = ("no gradient passes a NaN input of a clipping activation; PyTorch's CPU kernel "
              "gives 0 in its vectorised body and passes the gradient in its scalar tail")
_PRODUCTS = ("the gradient of a product is the product of the other elements, always (PyTorch "
             "divides the product by the element when no element is 0, so that a NaN, an "
             "infinity, a subnormal or an overflowing product gives NaN or an inexact value, "
             "and ignores a NaN beside two zeros)")
_LOGCUMSUMEXP = ("logcumsumexp's gradient at +inf and at huge inputs is its limit, the share "
                 "of each later output (PyTorch: NaN, or 0 where exp overflows)")
_FMA = ("matrix products are the BLAS library's: with fused multiply-adds a product that "
        "overflows on its own (-1e308 * 2) need not, so inf plus it is inf, not NaN")
_NAN_MAXIMUM = ("a NaN maximum (or minimum) passes its gradient to the NaNs, as PyTorch's max() "
                "and max(dim) do (torch.amax, which this case is recorded with for its tie "
                "rule, makes the whole row NaN)")

# each op's deliberate differences from PyTorch: (what: "value" or "grad<i>", where it
# differs -- a mask of the input's (for "grad") or the output's elements --, the reason);
# every one is in docs/decisions.md
CONVENTIONS = {
    "sign": [("value", _input_is(np.isnan), _SIGN)],
    "abs": [("grad0", _input_is(np.isnan), "abs's gradient at NaN is sign(NaN): " + _SIGN)],
    "relu": [("value", _zero_signs, "relu(-0.0) is 0.0, NumPy's maximum(x, 0) (PyTorch: -0.0)")],
    "maximum": [("value", _zero_signs, "the maximum of two zeros is the second, NumPy's "
                                       "(PyTorch's: the first)")],
    "maximum_scalar": [("value", _zero_signs, "as maximum's")],
    "remainder": [("value", _zero_signs, _REMAINDER)],
    "remainder_negative_divisor": [("value", _zero_signs, _REMAINDER)],
    "cumsum_axis0_noncontiguous": [
        ("value", _zero_signs, "a running sum starts with the first entry itself, -0.0 kept "
                               "(PyTorch's along axis 0 adds it to +0.0)")],
    "max_axis": [("grad0", _groups_with(np.isnan, 1), _NAN_MAXIMUM)],
    "min_axis_keepdims": [("grad0", _groups_with(np.isnan, 0), _NAN_MAXIMUM)],
    "prod_all": [("grad0", _everywhere_if(_unusual), _PRODUCTS)],
    "cumprod": [("grad0", _groups_with(_unusual, 1), _PRODUCTS)],
    "cumprod_with_zeros": [("grad0", _groups_with(_unusual, 1), _PRODUCTS)],
    "logcumsumexp": [("grad0", _groups_with(_unusual, 1), _LOGCUMSUMEXP)],
    "logcumsumexp_wide": [("grad0", _groups_with(_unusual, 0), _LOGCUMSUMEXP)],
    **{name: [("grad1", _fused_products, _FMA)]
       for name in ("matmul_2d", "matmul_2d_noncontiguous", "matmul_batch_broadcast",
                    "matmul_batched")},
    "activations.hardsigmoid": [
        ("grad0", _relative(1e-7), "PyTorch's float64 gradient multiplies by 1/6 rounded to "
                                   "float32; dparray's is exact")],
    "activations.hardswish": [
        ("grad0", _input_is(np.isnan), "a NaN input gets a NaN gradient; PyTorch's CPU kernel "
                                       "does in its vectorised body, not in its scalar tail")],
    **{name: [("grad0", _input_is(np.isnan), _NAN_KINKS)]
       for name in ("activations.hardtanh", "activations.hardtanh_bounds",
                    "activations.relu6")},
    "activations.softsign": [
        ("grad0", _input_is(np.isinf), "softsign's gradient at +-inf is its limit, 0 "
                                       "(PyTorch: NaN)")],
}


def test_every_differentiable_op_of_the_table_is_recorded():
    assert set(RECORDED) == set(CASES)
    for key, case in CASES.items():
        shapes = [list(s) for s in case.shapes]
        assert RECORDED[key]["shapes"] == shapes, key
        assert [label for label, _ in RECORDED[key]["variants"]] == labels(case.shapes), key


def _base(key):
    entry = RECORDED[key]
    return [BASE[offset:offset + math.prod(shape)].reshape(shape)
            for shape, offset in zip(entry["shapes"], entry["base"], strict=True)]


def _wrong(actual, expected, signed_zeros, atol):
    """Where ``actual`` is not ``expected``: NaN for NaN, the same infinities, finite numbers
    close, and (``signed_zeros``) zeros of the same sign."""
    nan = np.isnan(expected)
    wrong = nan != np.isnan(actual)
    infinite = np.isinf(expected)
    wrong |= infinite & (actual != expected)
    with np.errstate(all="ignore"):
        close = np.abs(actual - expected) <= atol + RTOL * np.abs(expected)
    wrong |= ~nan & ~infinite & ~close
    if signed_zeros:
        wrong |= (expected == 0) & (actual == 0) & (np.signbit(actual) != np.signbit(expected))
    return wrong


def _compare(key, what, arrays, actual, expected, excuse=True):
    """Why ``actual`` (the value, or gradient ``what``) differs from PyTorch's where no
    convention of the op explains it, or None."""
    if actual.shape != expected.shape:
        return f"shape {actual.shape}, PyTorch {expected.shape}"
    value = what == "value"
    wrong = _wrong(actual, expected, signed_zeros=value, atol=ATOL if value else GRAD_ATOL)
    if excuse:
        for kind, excused, _ in CONVENTIONS.get(key, []):
            if kind == what:
                wrong &= ~np.broadcast_to(excused(arrays, actual, expected), wrong.shape)
    if not wrong.any():
        return None
    where = np.flatnonzero(wrong)[:4]
    return (f"at {where.tolist()}: {actual.reshape(-1)[where].tolist()}, PyTorch "
            f"{expected.reshape(-1)[where].tolist()}")


def _check(key, label, recorded, excuse=True):
    """Every difference from PyTorch of the op ``key`` on the inputs ``label``, as (what, why)
    pairs: "value" or "grad<i>"."""
    case = CASES[key]
    arrays = inputs(_base(key), label)
    tensors = [dp.tensor(a, dtype="float64", requires_grad=True) for a in arrays]
    if isinstance(recorded, str):
        try:
            case.function(*tensors)
        except (ValueError, IndexError, TypeError, RuntimeError):
            return []
        return [("value", f"no error, PyTorch: {recorded}")]
    shape, offset, grad_offsets = recorded
    size = math.prod(shape)
    try:
        out = case.function(*tensors)
    except Exception as error:  # reported with the case
        return [("value", f"{type(error).__name__}: {error}")]
    found = []
    why = _compare(key, "value", arrays, np.asarray(out.numpy()),
                   VALUES[offset:offset + size].reshape(shape), excuse)
    if why:
        found.append(("value", why))
    weight = dp.tensor(np.array(cotangent(size), dtype=np.float64).reshape(shape))
    grads = (out * weight).sum().backward()
    for i, (t, grad_offset) in enumerate(zip(tensors, grad_offsets, strict=True)):
        if grad_offset is None:
            continue
        n = math.prod(t.shape)
        why = _compare(key, f"grad{i}", arrays, np.asarray(grads[t].numpy()),
                       VALUES[grad_offset:grad_offset + n].reshape(t.shape), excuse)
        if why:
            found.append((f"grad{i}", why))
    return found


def _quietly(function, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # the inputs' own arithmetic
        warnings.simplefilter("ignore", UserWarning)  # var's documented "no degrees of freedom"
        return function(*args)


@pytest.mark.parametrize("key", sorted(CASES))
def test_special_values_give_pytorchs_values_and_gradients(key, backend, kernels):
    failures = [f"{label} {what}: {why}" for label, recorded in RECORDED[key]["variants"]
                for what, why in _quietly(_check, key, label, recorded)]
    assert not failures, f"{key} differs from PyTorch:\n" + "\n".join(failures)


@pytest.mark.parametrize("key", sorted(CONVENTIONS))
def test_every_convention_is_still_needed(key):
    """A listed difference that no longer shows is stale: remove it (and its entry in
    docs/decisions.md)."""
    found = {what for label, recorded in RECORDED[key]["variants"]
             for what, _ in _quietly(_check, key, label, recorded, False)}
    assert found >= {what for what, _, _ in CONVENTIONS[key]}, key
