"""``nn.init``'s in-place initialisers: their samples against PyTorch's (``tests/data/
make_init_fixtures.py``: the mean, spread and range of one large draw each), their bounds and
distributions against the formulas, ``calculate_gain`` against PyTorch's table, and that they
replace a tensor's value in place -- a tied weight stays tied."""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest
from conftest import to_tensor
from safetensors import safe_open
from scipy import stats

import dparray as dp
from dparray import nn
from dparray.nn import init

DATA = pathlib.Path(__file__).parent / "data" / "init.safetensors"
with safe_open(str(DATA), framework="numpy") as _file:
    CASES = json.loads(_file.metadata()["initialisers"])
    GAINS = json.loads(_file.metadata()["gains"])
    ARRAYS = {key: _file.get_tensor(key) for key in _file.keys()}  # noqa: SIM118
RANDOM = [name for name in CASES if f"{name}/stats" in ARRAYS]
FIXED = [name for name in CASES if f"{name}/value" in ARRAYS]
BOUNDED = ("uniform_", "xavier_uniform_", "kaiming_uniform_", "trunc_normal_")


def _drawn(name, dtype="float64"):
    case = CASES[name]
    t = dp.zeros(tuple(case["shape"]), dtype=dtype, requires_grad=True)
    assert getattr(init, case["function"])(t, **case["kwargs"]) is t
    return t


@pytest.mark.parametrize("name", RANDOM)
def test_samples_look_like_pytorchs(name, backend):
    dp.manual_seed(0)
    values = _drawn(name).numpy().ravel()
    mean, std, low, high = ARRAYS[f"{name}/stats"]
    n = values.size
    # two independent draws: their means differ by about std * sqrt(2 / n), their spreads by
    # about std / sqrt(n); six times that is far below what a wrong gain or fan would change
    assert abs(values.mean() - mean) <= 6 * std * math.sqrt(2 / n)
    assert abs(values.std(ddof=1) - std) <= 6 * std / math.sqrt(n)
    if CASES[name]["function"] in BOUNDED:  # the same range, to a small fraction of it
        assert abs(values.min() - low) <= 1e-3 * (high - low)
        assert abs(values.max() - high) <= 1e-3 * (high - low)


@pytest.mark.parametrize("name", FIXED)
def test_fixed_values_are_pytorchs(name, backend):
    np.testing.assert_array_equal(_drawn(name).numpy(), ARRAYS[f"{name}/value"])


def test_calculate_gain_is_pytorchs_table():
    for nonlinearity, param, gain in GAINS:
        assert init.calculate_gain(nonlinearity, param) == pytest.approx(gain, rel=1e-15), \
            (nonlinearity, param)
    assert len(GAINS) >= len(init.NONLINEARITIES)


@pytest.mark.parametrize("function, kwargs, bound", [
    ("uniform_", {"a": -2.0, "b": 0.5}, None),
    ("kaiming_uniform_", {}, math.sqrt(2.0 / (1 + 0.01**2)) * math.sqrt(3.0 / (30 * 9))),
    ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"},
     math.sqrt(2.0) * math.sqrt(3.0 / (40 * 9))),
    ("kaiming_uniform_", {"a": math.sqrt(5)}, 1 / math.sqrt(30 * 9)),  # PyTorch's layers
    ("xavier_uniform_", {"gain": 3.0}, 3.0 * math.sqrt(6.0 / (30 * 9 + 40 * 9))),
])
def test_uniform_draws_fill_their_bounds(function, kwargs, bound, backend):
    dp.manual_seed(1)
    w = getattr(init, function)(dp.zeros((40, 30, 3, 3), dtype="float64"), **kwargs)
    values = w.numpy()
    low, high = (kwargs["a"], kwargs["b"]) if bound is None else (-bound, bound)
    assert values.min() >= low and values.max() < high
    assert values.min() < low + 1e-3 * (high - low) and values.max() > high - 1e-3 * (high - low)


@pytest.mark.parametrize("mean, std, a, b", [(0.0, 1.0, -2.0, 2.0), (0.3, 0.5, -0.2, 2.0),
                                             (1.0, 2.0, 3.0, 4.0)])
def test_trunc_normal_follows_the_truncated_normal(mean, std, a, b, backend):
    dp.manual_seed(2)
    values = init.trunc_normal_(dp.zeros(20000, dtype="float64"), mean, std, a, b).numpy()
    assert values.min() >= a and values.max() <= b
    reference = stats.truncnorm((a - mean) / std, (b - mean) / std, loc=mean, scale=std)
    assert stats.kstest(values, reference.cdf).statistic < 1.63 / math.sqrt(values.size)


@pytest.mark.parametrize("shape, gain", [((30, 20), 1.0), ((20, 30), 2.0), ((8, 3, 2, 2), 0.5),
                                         ((5, 5), 1.0)])
@pytest.mark.parametrize("dtype, tolerance", [("float64", 1e-12), ("float32", 2e-5)])
def test_orthogonal_rows_or_columns_are_orthonormal(shape, gain, dtype, tolerance, backend):
    dp.manual_seed(3)
    w = init.orthogonal_(dp.zeros(shape, dtype=dtype, requires_grad=True), gain)
    assert w.dtype.name == dtype and w.shape == shape
    q = w.numpy().reshape(shape[0], -1).astype(np.float64) / gain
    product = q @ q.T if q.shape[0] <= q.shape[1] else q.T @ q
    np.testing.assert_allclose(product, np.eye(product.shape[0]), atol=tolerance)


# --------------------------------------------------------------------------- in place
def test_an_initialiser_replaces_the_value_and_keeps_the_tensor(backend):
    layer = nn.Linear(5, 4)
    weight, bias = layer.weight, layer.bias
    old = weight.numpy().copy()
    assert init.kaiming_normal_(weight, nonlinearity="relu") is weight
    assert init.zeros_(bias) is bias
    assert layer.weight is weight and layer.parameters() == [weight, bias]
    assert not np.array_equal(weight.numpy(), old) and bias.tolist() == [0.0] * 4
    assert weight.is_variable and weight.grad_fn is None and weight.dtype == dp.float32
    grads = layer(dp.ones(2, 5)).sum().backward()  # still trained as before
    assert grads[weight].shape == (4, 5) and grads[bias].tolist() == [2.0] * 4


def test_an_initialiser_keeps_a_tied_weight_tied(backend):
    class TinyGPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(10, 4)
            self.block = nn.Linear(4, 4)
            self.lm_head = nn.Linear(4, 10, bias=False)
            self.wte.weight = self.lm_head.weight  # nanoGPT's tying

        def forward(self, idx):
            return self.lm_head(self.block(self.wte(idx)))

    def init_weights(module):  # nanoGPT's _init_weights
        if isinstance(module, nn.Linear):
            init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            init.normal_(module.weight, mean=0.0, std=0.02)

    dp.manual_seed(4)
    model = TinyGPT()
    tied = model.lm_head.weight
    assert model.apply(init_weights) is model
    assert model.wte.weight is tied and model.lm_head.weight is tied
    assert len(model.parameters()) == 3
    state = model.state_dict()
    np.testing.assert_array_equal(state["wte.weight"].numpy(), state["lm_head.weight"].numpy())
    assert abs(tied.numpy().std() - 0.02) < 0.01 and model.block.bias.tolist() == [0.0] * 4
    grads = model(dp.tensor([[1, 2, 3]])).sum().backward()
    assert set(grads) == {tied, model.block.weight, model.block.bias}


def test_draws_follow_the_seed_and_keep_dtype_and_backend(backend):
    for dtype in ("float32", "float64"):
        dp.manual_seed(5)
        first = init.xavier_normal_(dp.zeros((6, 7), dtype=dtype)).numpy()
        dp.manual_seed(5)
        again = init.xavier_normal_(dp.zeros((6, 7), dtype=dtype))
        assert again.dtype.name == dtype and again.backend is dp.get_backend()
        np.testing.assert_array_equal(again.numpy(), first)


def test_constant_and_fixed_fills_take_any_dtype(backend):
    counts = init.constant_(dp.zeros(3, dtype="int64"), 7)
    assert counts.dtype == dp.int64 and counts.tolist() == [7, 7, 7]
    assert init.ones_(dp.zeros(2, dtype="bool")).tolist() == [True, True]
    assert init.eye_(dp.zeros((2, 3), dtype="int32")).tolist() == [[1, 0, 0], [0, 1, 0]]
    frozen = nn.Linear(2, 2).requires_grad_(False).weight  # a frozen parameter, too
    assert init.constant_(frozen, 0.5).tolist() == [[0.5, 0.5], [0.5, 0.5]]


def test_a_tensor_without_elements_is_left_alone(backend):
    empty = dp.zeros((0, 3), dtype="float64")
    with pytest.warns(UserWarning, match="kaiming_uniform_: initializing a tensor without "
                                         "elements is a no-op"):
        assert init.kaiming_uniform_(empty) is empty
    for function in (init.xavier_uniform_, init.orthogonal_, init.normal_, init.uniform_):
        assert function(empty).shape == (0, 3)


@pytest.mark.parametrize("call, error, message", [
    (lambda t: init.normal_(t * 2.0), ValueError,
     r"^normal_: the tensor was computed by \w+; initialise a parameter or another leaf tensor"),
    (lambda t: init.uniform_(dp.zeros(3, dtype="int64")), TypeError,
     "^uniform_: draws floating values, got a tensor of dtype int64"),
    (lambda t: init.normal_([1.0, 2.0]), TypeError, "^normal_: tensor must be a Tensor"),
    (lambda t: init.uniform_(t, 1.0, 0.0), ValueError,
     "^uniform_: a must not exceed b, got a=1.0, b=0.0"),
    (lambda t: init.normal_(t, std=-1.0), ValueError, r"^normal_: std must be at least 0\.0"),
    (lambda t: init.normal_(t, mean=math.nan), ValueError, "^normal_: mean must be a finite"),
    (lambda t: init.trunc_normal_(t, a=1.0, b=1.0), ValueError,
     "^trunc_normal_: a must be less than b"),
    (lambda t: init.trunc_normal_(t, std=0.0), ValueError,
     r"^trunc_normal_: std must be greater than 0\.0"),
    (lambda t: init.xavier_uniform_(dp.zeros(4)), ValueError,
     r"^xavier_uniform_: fan in and fan out need a tensor of at least 2 dimensions, got shape "
     r"\(4,\)"),
    (lambda t: init.kaiming_normal_(t, mode="fan_avg"), ValueError,
     "^kaiming_normal_: mode must be one of 'fan_in', 'fan_out', got 'fan_avg'"),
    (lambda t: init.kaiming_uniform_(t, nonlinearity="gelu"), ValueError,
     "^kaiming_uniform_: unsupported nonlinearity 'gelu'; expected one of 'linear'"),
    (lambda t: init.kaiming_uniform_(t, a="0.1"), TypeError,
     "^kaiming_uniform_: a must be a number, got '0.1'"),
    (lambda t: init.orthogonal_(dp.zeros(3)), ValueError,
     r"^orthogonal_: needs a tensor of at least 2 dimensions, got shape \(3,\)"),
    (lambda t: init.eye_(dp.zeros((2, 2, 2))), ValueError, "^eye_: needs a 2-D tensor"),
    (lambda t: init.constant_(dp.zeros(2, dtype="int64"), 1.5), ValueError, "^constant_: "),
    (lambda t: init.calculate_gain("swish"), ValueError,
     "^calculate_gain: unsupported nonlinearity 'swish'"),
    (lambda t: init.calculate_gain("leaky_relu", "0.1"), TypeError,
     r"^calculate_gain: param \(the negative slope\) must be a number, got '0.1'"),
])
def test_bad_calls_are_refused_and_change_nothing(call, error, message, backend):
    t = dp.ones((3, 2), requires_grad=True)
    with pytest.raises(error, match=message):
        call(t)
    assert t.tolist() == [[1.0, 1.0]] * 3


def test_trunc_normal_warns_as_pytorch_when_the_mean_is_far_outside(backend):
    with pytest.warns(UserWarning, match=r"trunc_normal_: mean is more than 2 std from \[a, b\]"):
        init.trunc_normal_(dp.zeros(5, dtype="float64"), mean=10.0, std=1.0, a=-1.0, b=1.0)


def test_the_layers_own_initialisation_is_kaiming_uniform_with_a_sqrt_5(backend):
    dp.manual_seed(6)
    weight = nn.Linear(300, 400, dtype="float64").weight.numpy()
    reference = ARRAYS["kaiming_uniform_linear_default/stats"]  # PyTorch's Linear(300, 400)
    assert abs(weight.std(ddof=1) - reference[1]) <= 6 * reference[1] / math.sqrt(weight.size)
    assert abs(np.abs(weight).max() - reference[3]) <= 1e-3 * reference[3]
    assert to_tensor(weight).shape == (400, 300)
