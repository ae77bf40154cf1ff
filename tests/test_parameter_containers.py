"""ParameterList and ParameterDict: PyTorch's names and orders (``containers`` in
``tests/data/cells_and_dropout.safetensors``, made by ``tests/data/make_cell_fixtures.py``), loading
PyTorch's state dict, registration as the rest of the library sees it (parameters, state dicts,
optimizers, gradients), the list and dict APIs, and errors."""

from __future__ import annotations

import json
from collections import OrderedDict

import numpy as np
import pytest
from safetensors import safe_open
from torch_reference import DATA

import dparray as dp
from dparray import nn


def _pytorch() -> tuple[dict[str, list[str]], dict[str, np.ndarray]]:
    """PyTorch's names for each case, and the state dict of its ``Holder``."""
    with safe_open(str(DATA / "cells_and_dropout.safetensors"), framework="numpy") as file:
        names = json.loads(file.metadata()["containers"])
        state = {key.partition("/")[2]: file.get_tensor(key) for key in file.keys()  # noqa: SIM118
                 if key.startswith("containers/")}
    return names, state


NAMES, STATE = _pytorch()


class Holder(nn.Module):
    """The fixtures' module: a Linear, a ParameterList of two and a ParameterDict of two."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 2, dtype=dp.float64)
        self.scales = nn.ParameterList([nn.Parameter(dp.zeros(2, dtype=dp.float64)),
                                        dp.zeros(3, 2, dtype=dp.float64)])
        self.extra = nn.ParameterDict({"shift": dp.zeros(2, dtype=dp.float64),
                                       "gain": dp.zeros(1, dtype=dp.float64)})

    def forward(self, x):
        y = self.fc(x) * self.scales[0] + self.extra["shift"]
        return (y @ self.scales[1].T) * self.extra["gain"]


# ---------------------------------------------------------------------- against PyTorch
def test_names_and_order_are_pytorchs(backend):
    t = dp.zeros(1)
    entries = [("b", t), ("a", t), ("c", t)]
    assert list(nn.ParameterDict(dict(entries))) == NAMES["dict_plain"]  # sorted
    assert list(nn.ParameterDict(OrderedDict(entries))) == NAMES["dict_ordered"]
    assert list(nn.ParameterDict(entries)) == NAMES["dict_pairs"]
    updated = nn.ParameterDict([("m", t)])
    updated.update({"z": t, "b": t})
    assert list(updated) == NAMES["dict_updated"]
    assert list(nn.ParameterDict(OrderedDict(entries)) | {"y": t, "x": t}) == NAMES["dict_merged"]
    holder = Holder()
    assert [name for name, _ in holder.named_parameters()] == NAMES["holder_parameters"]
    assert list(holder.state_dict()) == NAMES["holder_state_dict"]
    assert [n for n, p in holder.named_parameters() if p.requires_grad] == NAMES["holder_trainable"]


def test_pytorchs_state_dict_loads(backend):
    holder = Holder()
    holder.load_state_dict({key: dp.tensor(value) for key, value in STATE.items()})
    for key, value in holder.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), STATE[key], err_msg=key)
    assert holder.scales[1].shape == (3, 2) and holder.extra["gain"].shape == (1,)


# ---------------------------------------------------------------------- registration
def test_a_trainable_tensor_is_kept_and_another_becomes_a_parameter(backend):
    trained = nn.Parameter(dp.ones(2))
    plain = dp.ones(3)
    frozen = nn.Parameter(dp.ones(1), requires_grad=False)
    as_list = nn.ParameterList([trained, plain, frozen])
    as_dict = nn.ParameterDict({"a": trained, "b": plain, "c": frozen})
    for container, values in ((as_list, list(as_list)), (as_dict, list(as_dict.values()))):
        assert values[0] is trained  # the same tensor: an optimizer of it trains this one
        assert values[1] is not plain and values[1].requires_grad
        np.testing.assert_array_equal(values[1].numpy(), plain.numpy())
        assert values[2].requires_grad  # no Parameter type here: a frozen one is a tensor
        assert not plain.requires_grad  # the given tensor is left as it was
        assert container.parameters() == values
    params = nn.ParameterList([dp.ones(2)])
    params[0].requires_grad = False  # frozen once in: still a parameter, no longer trained
    assert [name for name, _ in params.named_parameters()] == ["0"]
    assert params.num_parameters() == 2 and params.trainable_params_count() == 0


def test_optimizers_train_the_entries(backend, rng):
    dp.manual_seed(0)
    holder = Holder()
    holder.load_state_dict({key: dp.tensor(value) for key, value in STATE.items()})
    before = {key: value.numpy().copy() for key, value in holder.state_dict().items()}
    optimizer = dp.optim.SGD(holder.parameters(), lr=0.1)
    x = dp.tensor(rng.standard_normal((4, 3)))
    grads = (holder(x) ** 2).sum().backward()
    for name, p in holder.named_parameters():
        assert p in grads, name
    optimizer.step(grads)
    for name, p in holder.named_parameters():
        expected = before[name] - 0.1 * grads[p].numpy()
        np.testing.assert_allclose(p.numpy(), expected, rtol=1e-12, err_msg=name)
    assert holder.scales[1] is holder.parameters()[3]  # updated in place of the same tensor


def test_to_moves_and_casts_the_entries(backend):
    holder = Holder()
    holder.to(dp.float32)
    assert {p.dtype for p in holder.parameters()} == {dp.float32}
    assert holder.extra["shift"].dtype == dp.float32 and holder.scales[0].dtype == dp.float32


# ---------------------------------------------------------------------- the list API
def test_parameter_list_api(backend):
    a, b, c = (nn.Parameter(dp.full((i + 1,), float(i))) for i in range(3))
    params = nn.ParameterList()
    assert len(params) == 0 and list(params) == [] and repr(params) == "ParameterList()"
    assert params.append(a) is params
    assert params.extend([b]) is params
    params += (c,)
    assert len(params) == 3 and list(params) == [a, b, c]
    assert params[0] is a and params[-1] is c and params[-3] is a
    sliced = params[::2]
    assert isinstance(sliced, nn.ParameterList) and list(sliced) == [a, c]
    assert [name for name, _ in sliced.named_parameters()] == ["0", "1"]
    assert list(params[5:]) == []
    params[1] = c
    assert params[1] is c and params.parameters() == [a, c]  # c once: it is shared
    assert list(params.state_dict()) == ["0", "1", "2"]
    assert params[np.int64(2)] is c  # NumPy integers index too
    where = _device_note(a)
    assert repr(params) == ("ParameterList(\n"
                            f"  (0): Parameter containing: [float32 of size 1{where}]\n"
                            f"  (1): Parameter containing: [float32 of size 3{where}]\n"
                            f"  (2): Parameter containing: [float32 of size 3{where}]\n"
                            ")")
    assert repr(nn.ParameterList([dp.zeros(2, 3, dtype=dp.float64)])) == (
        f"ParameterList(\n  (0): Parameter containing: [float64 of size 2x3{where}]\n)")


def _device_note(tensor):
    """What a container's repr adds for a tensor's device: nothing on the CPU, as PyTorch."""
    return "" if tensor.backend.name == "numpy" else f" ({tensor.device})"


def test_parameter_list_errors(backend):
    params = nn.ParameterList([dp.ones(2)])
    with pytest.raises(TypeError, match=r"^ParameterList.append: values must be tensors, got"):
        params.append([1.0, 2.0])
    with pytest.raises(TypeError, match=r"^ParameterList.extend: expected an iterable of "
                                        r"tensors, got tensor"):
        params.extend(dp.ones(3))
    with pytest.raises(TypeError, match=r"^ParameterList.extend: values must be tensors, got 3"):
        params.extend([dp.ones(1), 3])
    assert len(params) == 1  # nothing of a refused extend is added
    with pytest.raises(IndexError, match=r"^ParameterList: index 1 is out of range for 1 "
                                         r"parameters"):
        params[1]
    with pytest.raises(IndexError, match=r"index -2 is out of range"):
        params[-2] = dp.ones(1)
    with pytest.raises(TypeError, match=r"^ParameterList: indices must be integers or slices, "
                                        r"got '0'"):
        params["0"]
    with pytest.raises(TypeError, match=r"^ParameterList holds parameters and cannot be called"):
        params(dp.ones(2))


# ---------------------------------------------------------------------- the dict API
def test_parameter_dict_api(backend):
    a, b, c = (nn.Parameter(dp.full((i + 1,), float(i))) for i in range(3))
    params = nn.ParameterDict([("a", a), ("b", b)])
    assert len(params) == 2 and "a" in params and "z" not in params and 0 not in params
    assert params["b"] is b and params.get("b") is b and params.get("z") is None
    assert params.get("z", c) is c
    assert list(params.keys()) == ["a", "b"] and list(params.values()) == [a, b]
    assert list(params.items()) == [("a", a), ("b", b)] and list(reversed(params)) == ["b", "a"]
    assert params.setdefault("a", c) is a and params.setdefault("c", c) is c
    assert list(params) == ["a", "b", "c"]
    copy = params.copy()
    assert list(copy.items()) == list(params.items())  # the same tensors, in the same order
    assert params.pop("b") is b and list(params) == ["a", "c"] and "b" in copy
    assert params.popitem() == ("c", c) and list(params) == ["a"]
    del params["a"]
    assert len(params) == 0 and params.parameters() == []
    shared = params.fromkeys(["x", "y"], a)
    assert list(shared) == ["x", "y"] and shared["x"] is shared["y"] is a
    assert list(shared.state_dict()) == ["x", "y"] and shared.parameters() == [a]
    merged = shared | {"w": b}
    assert list(merged) == ["x", "y", "w"] and list(shared) == ["x", "y"]
    assert list({"w": b} | shared) == ["w", "x", "y"]
    shared |= nn.ParameterDict(OrderedDict([("v", c), ("u", c)]))
    assert list(shared) == ["x", "y", "v", "u"]
    shared["x"] = b  # replaced in place: the order stays
    assert list(shared) == ["x", "y", "v", "u"] and shared["x"] is b
    shared.clear()
    assert len(shared) == 0
    holder = nn.ParameterDict({"w": a})
    assert repr(holder) == (f"ParameterDict(\n  (w): Parameter containing: [float32 of size "
                            f"1{_device_note(a)}]\n)")


def test_parameter_dict_errors(backend):
    params = nn.ParameterDict({"a": dp.ones(1)})
    with pytest.raises(KeyError):
        params["z"]
    with pytest.raises(KeyError):
        del params["z"]
    with pytest.raises(KeyError, match="is empty"):
        nn.ParameterDict().popitem()
    with pytest.raises(TypeError, match=r"^ParameterDict: keys must be strings, got 1"):
        params[1] = dp.ones(1)
    for key in ("", "a.b"):
        with pytest.raises(ValueError, match=r"^ParameterDict: a key must be a non-empty string "
                                             r"without '\.'"):
            params[key] = dp.ones(1)
    with pytest.raises(ValueError, match=r"^ParameterDict: the key 'keys' is an attribute of "
                                         r"ParameterDict; choose another"):
        params["keys"] = dp.ones(1)
    with pytest.raises(TypeError, match=r"^ParameterDict: values must be tensors, got None"):
        params.setdefault("b")
    with pytest.raises(TypeError, match=r"^ParameterDict.update: expected a mapping or \(key, "
                                        r"tensor\) pairs, got 3"):
        params.update(3)
    with pytest.raises(TypeError, match=r"^ParameterDict.update: element 1 must be a \(key, "
                                        r"tensor\) pair, got 'b'"):
        params.update([("c", dp.ones(1)), "b"])
    with pytest.raises(ValueError, match=r"^ParameterDict.update: element 0 must be a \(key, "
                                         r"tensor\) pair, got 3 items"):
        params.update([("c", dp.ones(1), 0)])
    with pytest.raises(TypeError, match=r"^ParameterDict.update: keys must be strings, got 2"):
        params.update({"c": dp.ones(1), 2: dp.ones(1)})
    with pytest.raises(TypeError, match=r"^ParameterDict.update: values must be tensors"):
        params.update({"c": dp.ones(1), "d": [1.0]})
    assert list(params) == ["a"]  # nothing of a refused update is added
    with pytest.raises(TypeError, match=r"^ParameterDict holds parameters and cannot be called"):
        params()
