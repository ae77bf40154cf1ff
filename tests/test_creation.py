"""Factories refuse what they cannot represent: a clear TypeError or ValueError naming the
problem, never a silent wrap-around, a dependency's KeyError, or a half-made tensor."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dparray as dp
from dparray import dtypes

INT64_MAX = 2**63 - 1


@pytest.mark.parametrize("data, error, message", [
    ("abc", TypeError, r"must be numbers .* found 'abc'"),
    (1 + 2j, TypeError, r"found \(1\+2j\) \(complex\)"),
    ([1.0, 2j], TypeError, r"found 2j \(complex\)"),
    (None, TypeError, "found None"),
    ([[1.0], [None]], TypeError, "found None"),
    (object(), TypeError, r"found <object object .*> \(object\)"),
    ({"a": 1}, TypeError, r"found \{'a': 1\} \(dict\)"),
    ([1, "2"], TypeError, "found '2'"),
    (2**70, ValueError, f"the integer {2**70} does not fit int64"),
    (-(2**63) - 1, ValueError, "does not fit int64"),
    ([1, 2**63], ValueError, f"the integer {2**63} does not fit int64"),  # NumPy: float64
    ([[1, 2], [3]], ValueError, r"ragged: the sequences at nesting depth 1 have different "
                                r"lengths \[1, 2\]"),
    ([1, [2]], ValueError, "ragged: at nesting depth 1 it mixes sequences and single values"),
    ([[[1.0, 2.0]], [[1.0]]], ValueError, "ragged: .* depth 2"),
])
def test_tensor_refuses_data_it_cannot_hold(data, error, message, backend):
    with pytest.raises(error, match=f"^tensor: .*{message}"):
        dp.tensor(data)


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64", "complex64", "complex128"])
def test_tensor_refuses_arrays_of_dtypes_dparray_lacks_by_name(dtype):
    with pytest.raises(TypeError, match=f"tensor: dparray has no dtype {dtype}; it has bool"):
        dp.tensor(np.zeros(2, dtype=dtype), backend="numpy")
    with pytest.raises(TypeError, match=f"dparray has no dtype {dtype}"):
        dp.Tensor(np.zeros(2, dtype=dtype), "numpy").dtype  # noqa: B018


def test_tensor_refuses_string_arrays(backend):
    with pytest.raises(TypeError, match="tensor: dparray has no dtype <U1"):
        dp.tensor(np.array(["a"]), backend="numpy")


@pytest.mark.parametrize("data, dtype", [([300], "int8"), ([-1], "uint8"), ([1e20], "int64"),
                                         (256, "uint8")])
def test_tensor_refuses_values_beyond_an_explicit_dtype(data, dtype, backend):
    with pytest.raises(ValueError, match="tensor: the data does not fit its dtype"):
        dp.tensor(data, dtype=dtype)


def test_tensor_takes_the_extremes_of_int64_and_big_ints_as_floats(backend):
    assert dp.tensor([INT64_MAX, -INT64_MAX - 1]).tolist() == [INT64_MAX, -INT64_MAX - 1]
    assert dp.tensor(2**70, dtype="float64").item() == float(2**70)
    nested = [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]
    np.testing.assert_array_equal(dp.tensor(nested).numpy(), np.array(nested, np.float32))
    assert dp.tensor([]).shape == (0,) and dp.tensor([[], []]).shape == (2, 0)
    assert dp.tensor(range(3)).tolist() == [0, 1, 2]


@pytest.mark.parametrize("value, dtype, message", [
    (1e6, "int8", r"fill_value 1000000 does not fit int8 \(-128 to 127\)"),
    (128, "int8", "fill_value 128 does not fit int8"),
    (-129, "int8", "fill_value -129 does not fit int8"),
    (256, "uint8", r"does not fit uint8 \(0 to 255\)"),
    (-1, "uint8", "fill_value -1 does not fit uint8"),
    (2**31, "int32", "does not fit int32"),
    (2**63, "int64", "does not fit int64"),
    (2**63, None, "does not fit int64"),
    (1.5, "int64", "fill_value must be a whole number for dtype int64, got 1.5"),
    (math.nan, "int32", "must be a whole number for dtype int32, got nan"),
    (math.inf, "int16", "must be a whole number"),
    (1e39, "float32", "fill_value 1e\\+39 does not fit float32"),
    (1e39, None, "does not fit float32"),
    (2**1024, "float64", "does not fit float64"),
])
def test_full_refuses_values_that_do_not_fit(value, dtype, message, backend):
    with pytest.raises(ValueError, match=f"^full: .*{message}"):
        dp.full((2,), value, dtype=dtype)


@pytest.mark.parametrize("value", ["1", None, 1 + 2j, [1]])
def test_full_refuses_non_numbers(value, backend):
    with pytest.raises(TypeError, match=r"^full: fill_value must be a real number"):
        dp.full((2,), value)
    with pytest.raises(TypeError, match=r"^full: fill_value must be"):
        dp.full((2,), value, dtype="float32")


def test_full_keeps_values_that_fit(backend):
    lo, hi = np.iinfo(np.int8).min, np.iinfo(np.int8).max
    assert dp.full((2,), hi, dtype="int8").tolist() == [hi, hi]
    assert dp.full((1,), lo, dtype="int8").tolist() == [lo]
    assert dp.full((2,), 3.0, dtype="int32").tolist() == [3, 3]
    assert dp.full((2,), True, dtype="int64").tolist() == [1, 1]
    assert dp.full((2,), 5, dtype="bool").tolist() == [True, True]  # as PyTorch
    assert dp.full((1,), np.int64(7)).dtype == dp.int64
    assert dp.full((1,), math.inf).tolist() == [math.inf]
    assert math.isnan(dp.full((1,), math.nan).item())
    big = float(np.finfo(np.float32).max)
    assert dp.full((1,), big).item() == big


@pytest.mark.parametrize("args, error, message", [
    ((0, 10, 0), ValueError, "arange: step must not be zero"),
    ((0.0, 1.0, 0.0), ValueError, "step must not be zero"),
    ((0, math.nan), ValueError, "stop must be a finite number"),
    ((math.inf,), ValueError, "stop must be a finite number"),
    ((0, 10, math.inf), ValueError, "step must be a finite number"),
    (("3",), TypeError, "arange: stop must be a number, got '3'"),
    ((0, 3, None), TypeError, "step must be a number, got None"),
])
def test_arange_refuses_bad_bounds_and_steps(args, error, message, backend):
    with pytest.raises(error, match=message):
        dp.arange(*args)


def test_arange_matches_numpy(backend):
    for args in [(5,), (2, 9, 3), (0.0, 1.0, 0.25), (3, 0, -1), (5, 0)]:
        expected = np.arange(*args)
        got = dp.arange(*args)
        np.testing.assert_allclose(got.numpy(), expected)
        assert got.dtype == (dp.int64 if expected.dtype.kind == "i" else dp.float32)


@pytest.mark.parametrize("call, error, message", [
    (lambda: dp.randn(3.0), TypeError, r"^randn: each size in shape \(3\.0,\) must be an int"),
    (lambda: dp.rand(2, None), TypeError, r"^rand: each size in shape \(2, None\) must be"),
    (lambda: dp.zeros(-1), ValueError, r"^zeros: each size in shape \(-1,\) must be at least 0"),
    (lambda: dp.ones((2, "3")), TypeError, r"^ones: each size in shape \(2, '3'\) must be an"),
    (lambda: dp.ones([2, True]), TypeError, r"shape \[2, True\]|shape \(2, True\)"),
    (lambda: dp.full((2.0,), 1.0), TypeError, r"^full: each size in shape \(2\.0,\)"),
    (lambda: dp.full(-2, 1.0), ValueError, r"^full: each size in shape \(-2,\)"),
])
def test_shapes_must_be_non_negative_ints(call, error, message, backend):
    with pytest.raises(error, match=message):
        call()


def test_shapes_take_ints_in_every_spelling(backend):
    assert dp.zeros(2, 3).shape == dp.zeros((2, 3)).shape == dp.zeros([2, 3]).shape == (2, 3)
    assert dp.zeros(np.int64(4)).shape == (4,) and dp.ones().shape == ()
    assert dp.randn(0, 2).shape == (0, 2)


@pytest.mark.parametrize("call, error, message", [
    (lambda: dp.manual_seed(1.0), TypeError, "seed must be an int, got 1.0"),
    (lambda: dp.manual_seed("1"), TypeError, "seed must be an int, got '1'"),
    (lambda: dp.manual_seed(True), TypeError, "seed must be an int, got True"),
    (lambda: dp.manual_seed(-1), ValueError, "seed must be at least 0, got -1"),
    (lambda: dp.randn(2, seed=1.5), TypeError, "^randn: seed must be an int"),
    (lambda: dp.rand(2, seed=-3), ValueError, "^rand: seed must be at least 0"),
    (lambda: dp.randperm(3, seed="x"), TypeError, "^randperm: seed must be an int"),
    (lambda: dp.randperm(2.0), TypeError, "^randperm: n must be an int, got 2.0"),
    (lambda: dp.randperm(-1), ValueError, "^randperm: n must be at least 0, got -1"),
])
def test_seeds_and_counts_are_ints(call, error, message, backend):
    dp.manual_seed(11)
    with pytest.raises(error, match=message):
        call()
    assert dp.random.initial_seed() == 11  # a refused seed changes nothing


def test_fork_rng_refuses_a_bad_seed(backend):
    with pytest.raises(ValueError, match="seed must be at least 0"), dp.fork_rng(-5):
        pass
    dp.manual_seed(np.int64(3))
    assert dp.random.initial_seed() == 3


def test_value_range_matches_numpy():
    for dtype in dtypes.ALL_DTYPES.values():
        info = np.finfo(dtype.name) if dtype.is_floating else (
            None if dtype.kind == "bool" else np.iinfo(dtype.name))
        expected = (0, 1) if info is None else (info.min, info.max)
        assert dtypes.value_range(dtype) == expected, dtype
