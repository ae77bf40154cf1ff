"""What ported PyTorch programs write, against PyTorch: ``tests/data/porting.safetensors``.

The fixture is made by ``tests/data/make_porting_fixtures.py`` (see there for its layout):
item assignment and its gradients (PyTorch's ``index_put``), ``dim=``/``keepdim=`` on the
functions, PyTorch's Tensor methods, the shapes and dtypes of the random functions, and the
spellings of devices, dtype aliases and type names.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import numpy as np
import pytest
from safetensors import safe_open

import dparray as dp

DATA = pathlib.Path(__file__).parent / "data" / "porting.safetensors"


def _load() -> tuple[dict[str, Any], dict[str, dict[str, dict[str, np.ndarray]]]]:
    with safe_open(str(DATA), framework="numpy") as file:
        described = json.loads(file.metadata()["groups"])
        arrays: dict[str, dict[str, dict[str, np.ndarray]]] = {}
        for key in file.keys():  # noqa: SIM118 - safe_open is not a mapping
            group, case, rest = key.split("/", 2)
            arrays.setdefault(group, {}).setdefault(case, {})[rest] = file.get_tensor(key)
    return described, arrays


CASES, ARRAYS = _load()
FLOAT16 = {"numpy", "cupy"}  # the array API has no float16: array_api_strict lacks it


def _tensor(array: np.ndarray, requires_grad: bool = False) -> dp.Tensor:
    return dp.tensor(np.asarray(array), requires_grad=requires_grad)


def _close(actual: dp.Tensor, expected: np.ndarray, rtol: float = 1e-12) -> None:
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual.numpy(), expected, rtol=rtol, atol=1e-14)


def _key(spec: list[dict[str, Any]], arrays: dict[str, np.ndarray]) -> tuple[Any, ...]:
    parts: list[Any] = []
    for entry in spec:
        ((kind, value),) = entry.items()
        parts.append({"int": lambda v: v, "slice": lambda v: slice(*v),
                      "none": lambda v: None, "ellipsis": lambda v: Ellipsis,
                      "index": lambda v: _tensor(arrays[f"index.{v}"]),
                      "mask": lambda v: _tensor(arrays[f"index.{v}"])}[kind](value))
    return tuple(parts)


@pytest.mark.parametrize("name", list(CASES["assign"]))
def test_item_assignment_and_its_gradients_match_pytorch(name, backend):
    case, arrays = CASES["assign"][name], ARRAYS["assign"][name]
    x = _tensor(arrays["x"], requires_grad=True)
    value = _tensor(arrays["value"], requires_grad=True)
    key = _key(case["key"], arrays)
    if case["accumulate"]:
        y = dp.index_put(x, key, value, accumulate=True)
    else:
        y = x.clone()
        y[key] = value  # PyTorch's habit, as written
    _close(y, arrays["output"])
    grads = (y * _tensor(arrays["cotangent"])).sum().backward()
    _close(grads[x], arrays["grad.x"])
    _close(grads[value], arrays["grad.value"])


@pytest.mark.parametrize("name", [n for n, c in CASES["assign"].items()
                                  if any("index" in part for part in c["key"])])
def test_index_put_is_item_assignment_out_of_place(name, backend):
    case, arrays = CASES["assign"][name], ARRAYS["assign"][name]
    x = _tensor(arrays["x"])
    value = _tensor(arrays["value"])
    out = dp.index_put(x, _key(case["key"], arrays), value, accumulate=case["accumulate"])
    _close(out, arrays["output"])
    _close(x, arrays["x"])  # x itself is left as it was


DP_NAMES = {"amax": "max"}  # PyTorch's amax is the array API's max


@pytest.mark.parametrize("name", list(CASES["dim"]))
def test_pytorch_argument_names_on_the_functions(name, backend):
    case, arrays = CASES["dim"][name], ARRAYS["dim"][name]
    inputs = [_tensor(arrays[f"input.{i}"]) for i in range(sum(k.startswith("input.")
                                                               for k in arrays))]
    function = getattr(dp, DP_NAMES.get(case["function"], case["function"]))
    out = function(inputs if case["list"] else inputs[0], **case["kwargs"])
    outputs = list(out) if isinstance(out, tuple) else [out]
    expected = [arrays[f"output.{i}"] for i in range(len(outputs))]
    assert len(expected) == sum(k.startswith("output.") for k in arrays)
    for actual, wanted in zip(outputs, expected, strict=True):
        _close(actual, wanted)


METHOD_FORMS = [n for n, c in CASES["dim"].items() if not c["list"]]


@pytest.mark.parametrize("name", METHOD_FORMS)
def test_pytorch_argument_names_on_the_methods(name, backend):
    case, arrays = CASES["dim"][name], ARRAYS["dim"][name]
    x = _tensor(arrays["input.0"])
    method = getattr(x, DP_NAMES.get(case["function"], case["function"]))
    out = method(**case["kwargs"])
    for i, actual in enumerate(list(out) if isinstance(out, tuple) else [out]):
        _close(actual, arrays[f"output.{i}"])


@pytest.mark.parametrize("name", [n for n, c in CASES["method"].items()
                                  if isinstance(c, dict) and "dtype" in c])
def test_tensor_methods_match_pytorch(name, backend):
    case, arrays = CASES["method"][name], ARRAYS["method"][name]
    x = _tensor(arrays["input"])
    args = [_tensor(arrays[f"arg.{a['tensor']}"]) if isinstance(a, dict) else a
            for a in case["args"]]
    if case["dtype"] == "float16" and backend.name not in FLOAT16:
        with pytest.raises(TypeError, match="does not support dtype float16"):
            getattr(x, case["method"])(*args, **case["kwargs"])
        return
    out = getattr(x, case["method"])(*args, **case["kwargs"])
    assert out.dtype.name == case["dtype"]
    expected = arrays["output"]
    if expected.dtype == np.float16:
        np.testing.assert_array_equal(out.numpy(), expected)
    else:
        _close(out, expected)


@pytest.mark.parametrize("name", [n for n, c in CASES["method"].items()
                                  if isinstance(c, dict) and "value" in c])
def test_tensor_methods_returning_python_values_match_pytorch(name, backend):
    case = CASES["method"][name]
    value = getattr(dp.zeros(*case["shape"]), case["method"])(*case["args"])
    expected = case["value"]
    if case["method"] == "type":
        expected = expected.replace("torch.", "dparray.")
    assert value == (tuple(expected) if isinstance(expected, list) else expected)


@pytest.mark.parametrize(("value", "spec", "expected"), CASES["method"]["format"])
def test_a_0d_tensor_formats_as_pytorch_formats_it(value, spec, expected, backend):
    assert format(dp.tensor(value, dtype="float64"), spec) == expected
    assert f"{dp.tensor(value, dtype='float64'):{spec}}" == expected


def test_type_names_match_pytorch():
    for dtype, name in CASES["names"]["types"].items():
        assert dp.zeros(1, dtype=dtype).type() == name.replace("torch.", "dparray.")
        assert dp.zeros(1).type(name).dtype.name == dtype  # and the name casts


RANDOM = {
    "randint_high_size": lambda: dp.randint(10, (2, 3)),
    "randint_low_high_size": lambda: dp.randint(3, 10, (4,)),
    "randint_dtype": lambda: dp.randint(0, 5, (3,), dtype=dp.int32),
    "randint_like_float": lambda: dp.randint_like(dp.zeros(2, 3), 10),
    "randint_like_low_high": lambda: dp.randint_like(dp.zeros(4, dtype=dp.int32), 2, 9),
    "rand_like": lambda: dp.rand_like(dp.zeros(3, 2, dtype=dp.float64)),
    "randn_like": lambda: dp.randn_like(dp.zeros(5)),
    "bernoulli": lambda: dp.bernoulli(dp.full((3, 4), 0.5, dtype=dp.float64)),
    "bernoulli_p": lambda: dp.bernoulli(dp.zeros(2, 5), 0.25),
    "multinomial_1d": lambda: dp.multinomial(dp.tensor([1.0, 2.0, 3.0]), 2),
    "multinomial_2d_replacement": lambda: dp.multinomial(dp.rand(4, 6), 10, replacement=True),
    "normal_tensor_float": lambda: dp.normal(dp.zeros(2, 3), 1.0),
    "normal_float_tensor": lambda: dp.normal(0.0, dp.ones(4, dtype=dp.float64)),
    "normal_tensors": lambda: dp.normal(dp.zeros(3, 1), dp.ones(1, 4)),
    "normal_floats_size": lambda: dp.normal(2.0, 3.0, (2, 5)),
    "randperm": lambda: dp.randperm(6),
    "randperm_dtype": lambda: dp.randperm(6, dtype=dp.int32),
    "randn_generator": lambda: dp.randn(2, 3, generator=dp.Generator().manual_seed(1)),
}


def test_every_random_case_is_checked():
    assert set(RANDOM) == set(CASES["random"])


@pytest.mark.parametrize("name", list(CASES["random"]))
def test_random_functions_take_pytorchs_arguments(name, backend):
    out = RANDOM[name]()
    assert out.shape == tuple(CASES["random"][name]["shape"])
    assert out.dtype.name == CASES["random"][name]["dtype"]
    assert out.backend is backend


def test_device_spellings_match_pytorch():
    for spelling, expected in CASES["names"]["devices"].items():
        device = dp.device("cuda", 2) if spelling == "('cuda', 2)" else dp.device(spelling)
        assert (str(device), repr(device), device.type, device.index) == (
            expected["str"], expected["repr"], expected["type"], expected["index"])
    for pair, expected in CASES["names"]["equal"].items():
        a, b = pair.split(" == ")
        assert (dp.device(a) == dp.device(b)) is expected


def test_dtype_aliases_match_pytorch():
    for alias, name in CASES["names"]["aliases"].items():
        assert getattr(dp, alias) is dp.dtypes.ALL_DTYPES[name]
        assert dp.dtypes.TORCH_ALIASES[alias] is dp.dtypes.ALL_DTYPES[name]
