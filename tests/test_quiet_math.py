"""dparray's ops compute IEEE's special values without NumPy's RuntimeWarnings, as PyTorch
does (the suite runs with RuntimeWarnings as errors), and leave the user's own NumPy as it was.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dparray as dp

SPECIAL = [0.0, -1.0, 1.0, float("inf"), float("-inf"), float("nan"), 1e308, -1e308]

UNARY = ["log", "log2", "log10", "log1p", "sqrt", "rsqrt", "exp", "exp2", "expm1", "sin", "cos",
         "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "tanh",
         "sigmoid", "erf", "softplus", "gelu", "silu", "mish", "softsign", "hardswish",
         "logsumexp", "sum", "mean", "prod", "var", "std", "cumsum", "cumprod", "softmax"]
BINARY = ["add", "sub", "mul", "div", "pow", "remainder", "floor_divide", "atan2", "logaddexp"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_ops_and_their_gradients_are_silent(name, backend):
    x = dp.tensor(SPECIAL, dtype="float64", requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = getattr(dp, name)(x)
        out.backward(dp.ones_like(out))


@pytest.mark.parametrize("name", BINARY)
def test_binary_ops_and_their_gradients_are_silent(name, backend):
    a = dp.tensor([v for v in SPECIAL for _ in SPECIAL], dtype="float64", requires_grad=True)
    b = dp.tensor(SPECIAL * len(SPECIAL), dtype="float64", requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = getattr(dp, name)(a, b)
        out.backward(dp.ones_like(out))


def test_log_of_zero_is_minus_infinity_as_in_pytorch(backend):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dp.log(dp.zeros(1)).tolist() == [float("-inf")]
        assert (dp.ones(1) / 0.0).tolist() == [float("inf")]


def test_the_users_own_numpy_still_warns():
    dp.log(dp.zeros(1))
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        np.log(np.zeros(1))
