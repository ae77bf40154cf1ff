"""The shared argument checks: wrong type is a TypeError, wrong value a ValueError."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dparray as dp
from dparray import _checks as checks


def test_check_int_accepts_ints_and_integer_scalars():
    assert checks.check_int(3, "n", "f") == 3
    assert checks.check_int(np.int64(4), "n", "f") == 4


@pytest.mark.parametrize("value", [3.0, "3", True, None, [3]])
def test_check_int_refuses_other_types(value):
    with pytest.raises(TypeError, match=r"^f: n must be an int, got "):
        checks.check_int(value, "n", "f")


def test_check_int_refuses_a_tensor_even_with_one_element():
    with pytest.raises(TypeError, match="n must be an int"):
        checks.check_int(dp.tensor(3), "n", "f")


def test_check_int_range():
    with pytest.raises(ValueError, match="f: n must be at least 1, got 0"):
        checks.check_int(0, "n", "f", minimum=1)
    with pytest.raises(ValueError, match="at most 5, got 6"):
        checks.check_int(6, "n", "f", maximum=5)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_check_number_refuses_nan_and_inf(value):
    with pytest.raises(ValueError, match="lr must be a finite number"):
        checks.check_number(value, "lr", "SGD")


def test_check_number_refuses_bools_and_overflowing_ints():
    with pytest.raises(TypeError, match="lr must be a number, got True"):
        checks.check_number(True, "lr", "SGD")
    with pytest.raises(TypeError, match="lr must be a number"):
        checks.check_number(np.bool_(True), "lr", "SGD")
    with pytest.raises(ValueError, match="lr must be a finite number"):
        checks.check_number(2**2000, "lr", "SGD")


def test_check_number_bounds_and_types():
    assert checks.check_number(np.float32(0.5), "p", "f") == 0.5
    assert checks.check_number(math.inf, "x", "f", finite=False) == math.inf
    with pytest.raises(TypeError, match=r"p must be a number, got '0\.5'"):
        checks.check_number("0.5", "p", "f")
    with pytest.raises(ValueError, match=r"less than 1\.0"):
        checks.check_number(1.0, "p", "f", below=1.0)
    with pytest.raises(ValueError, match=r"greater than 0\.0"):
        checks.check_number(0.0, "beta", "f", above=0.0)


def test_check_choice():
    assert checks.check_choice("mean", "reduction", "f", ("mean", "sum")) == "mean"
    with pytest.raises(ValueError, match="reduction must be one of 'mean', 'sum', got 'max'"):
        checks.check_choice("max", "reduction", "f", ("mean", "sum"))
    with pytest.raises(TypeError, match="reduction must be one of"):
        checks.check_choice(1, "reduction", "f", ("mean", "sum"))


def test_check_int_tuple():
    assert checks.check_int_tuple(3, "kernel_size", "f", 2) == (3, 3)
    assert checks.check_int_tuple([2, 5], "kernel_size", "f", 2) == (2, 5)
    with pytest.raises(ValueError, match="an int or 2 ints"):
        checks.check_int_tuple((1, 2, 3), "kernel_size", "f", 2)
    with pytest.raises(ValueError, match="at least 1"):
        checks.check_int_tuple((1, 0), "kernel_size", "f", 2, minimum=1)


def test_check_tensor_and_bool():
    t = dp.ones(1)
    assert checks.check_tensor(t, "x", "f") is t
    with pytest.raises(TypeError, match="x must be a Tensor, got"):
        checks.check_tensor([1.0], "x", "f")
    with pytest.raises(TypeError, match="flag must be a bool"):
        checks.check_bool(1, "flag", "f")
