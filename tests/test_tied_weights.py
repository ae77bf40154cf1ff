"""Tied weights and shared modules against PyTorch (``tests/data/make_module_fixtures.py``): the
state dict lists a shared tensor under every name, as PyTorch's does, so strict loading works
in both directions; ``named_parameters`` lists it once; either form of state dict loads."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from conftest import to_tensor
from safetensors import safe_open
from safetensors.numpy import load_file

import dparray as dp
from dparray import nn

DATA = pathlib.Path(__file__).parent / "data" / "module.safetensors"
VOCAB, BLOCK, MODEL = 11, 5, 6

with safe_open(str(DATA), framework="numpy") as _file:
    NAMES = json.loads(_file.metadata()["names"])
    ARRAYS = {key: _file.get_tensor(key) for key in _file.keys()}  # noqa: SIM118
PYTORCH_STATE = {key[len("state."):]: value for key, value in ARRAYS.items()
                 if key.startswith("state.")}


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(MODEL, MODEL, dtype="float64")
        self.register_buffer("scale", dp.ones(MODEL, dtype="float64"))

    def forward(self, x):
        return self.linear(x) * self.scale


class TiedLM(nn.Module):
    """The fixture's model: ``lm_head.weight is wte.weight``, ``blocks`` uses ``shared`` twice."""

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, MODEL, dtype="float64")
        self.wpe = nn.Embedding(BLOCK, MODEL, dtype="float64")
        self.shared = Gate()
        self.blocks = nn.Sequential(self.shared, nn.Tanh(), self.shared)
        self.ln_f = nn.LayerNorm(MODEL, dtype="float64")
        self.lm_head = nn.Linear(MODEL, VOCAB, bias=False, dtype="float64")
        self.lm_head.weight = self.wte.weight

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(dp.arange(idx.shape[1]))
        return self.lm_head(self.ln_f(self.blocks(x)))


def _pytorch_state():
    return {key: to_tensor(value) for key, value in PYTORCH_STATE.items()}


def test_names_are_pytorchs():
    model = TiedLM()
    assert [name for name, _ in model.named_parameters()] == NAMES["named_parameters"]
    assert [name for name, _ in model.named_parameters(remove_duplicate=False)] == \
        NAMES["named_parameters_all"]
    assert [name for name, _ in model.named_buffers()] == NAMES["named_buffers"]
    keys = list(model.state_dict())
    assert len(keys) == len(set(keys)) and set(keys) == set(NAMES["state_dict"])
    assert len(model.parameters()) == len(NAMES["named_parameters"])  # each tensor once
    assert model.num_parameters() == sum(PYTORCH_STATE[name].size
                                         for name in NAMES["named_parameters"])


def test_pytorchs_state_dict_loads_strictly_and_computes_pytorchs_results(backend):
    model = TiedLM()
    tied, shared = model.wte.weight, model.shared.linear.weight
    result = model.load_state_dict(_pytorch_state())  # strict: every name of PyTorch's file
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert model.lm_head.weight is tied and model.wte.weight is tied  # still one tensor
    assert model.blocks[0] is model.shared and model.blocks[2].linear.weight is shared
    np.testing.assert_array_equal(tied.numpy(), PYTORCH_STATE["wte.weight"])
    np.testing.assert_array_equal(model.shared.scale.numpy(), PYTORCH_STATE["shared.scale"])
    logits = model(to_tensor(ARRAYS["input.idx"]))
    np.testing.assert_allclose(logits.numpy(), ARRAYS["output.logits"], rtol=1e-12, atol=1e-13)
    grads = (logits * to_tensor(ARRAYS["cotangent"])).sum().backward()
    assert len(grads) == len(NAMES["named_parameters"])
    for name, p in model.named_parameters():  # the tied weight's gradient sums both uses
        np.testing.assert_allclose(grads[p].numpy(), ARRAYS[f"grad.{name}"], rtol=1e-11,
                                   atol=1e-12, err_msg=name)


def test_its_file_has_every_key_pytorch_loads_strictly(backend, tmp_path):
    model = TiedLM()
    model.load_state_dict(_pytorch_state())
    path = tmp_path / "tied.safetensors"
    dp.save(model.state_dict(), path)
    saved = load_file(str(path))
    assert set(saved) == set(NAMES["state_dict"])  # PyTorch's strict load wants these keys
    for key, value in saved.items():
        assert value.shape == PYTORCH_STATE[key].shape and value.dtype == np.float64, key
        np.testing.assert_array_equal(value, PYTORCH_STATE[key], err_msg=key)
    again = TiedLM()
    again.load_state_dict(dp.load(path))
    np.testing.assert_array_equal(again.lm_head.weight.numpy(), PYTORCH_STATE["wte.weight"])
    assert again.lm_head.weight is again.wte.weight


@pytest.mark.parametrize("dropped", [
    ["lm_head.weight"], ["wte.weight"], ["blocks.0.linear.weight", "blocks.2.linear.weight"],
    ["shared.scale", "blocks.0.scale"],
    ["lm_head.weight", "blocks.0.linear.weight", "blocks.0.linear.bias", "blocks.0.scale",
     "blocks.2.linear.weight", "blocks.2.linear.bias", "blocks.2.scale"],
], ids=["head", "embedding", "one-use", "buffer", "once-each"])
def test_a_state_dict_with_each_shared_tensor_once_loads_strictly(dropped, backend):
    model = TiedLM()
    state = {k: v for k, v in _pytorch_state().items() if k not in dropped}
    result = model.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    np.testing.assert_array_equal(model.lm_head.weight.numpy(), PYTORCH_STATE["wte.weight"])
    np.testing.assert_array_equal(model.blocks[2].scale.numpy(), PYTORCH_STATE["shared.scale"])
    np.testing.assert_array_equal(model.blocks[0].linear.weight.numpy(),
                                  PYTORCH_STATE["shared.linear.weight"])


def test_a_shared_tensor_missing_under_every_name_is_missing(backend):
    model = TiedLM()
    before = model.wte.weight.numpy().copy()
    state = {k: v for k, v in _pytorch_state().items()
             if k not in ("lm_head.weight", "wte.weight")}
    with pytest.raises(ValueError, match=r"missing keys: wte\.weight, lm_head\.weight$"):
        model.load_state_dict(state)
    np.testing.assert_array_equal(model.wte.weight.numpy(), before)
    result = model.load_state_dict(state, strict=False)
    assert result.missing_keys == ["wte.weight", "lm_head.weight"]


def test_different_values_for_one_tensor_are_refused_and_change_nothing(backend):
    model = TiedLM()
    before = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    state = _pytorch_state()
    state["lm_head.weight"] = state["lm_head.weight"] * 2.0
    with pytest.raises(ValueError, match=r"wte\.weight and lm_head\.weight are one tensor here "
                                         r"\(tied\), but their values in the state dict differ"):
        model.load_state_dict(state)
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), before[key])
    nan = dict(state, **{"wte.weight": dp.full((VOCAB, MODEL), float("nan"), dtype="float64"),
                         "lm_head.weight": dp.full((VOCAB, MODEL), float("nan"),
                                                   dtype="float64")})
    model.load_state_dict(nan)  # NaN equals NaN here: the same value under both names
    assert np.isnan(model.lm_head.weight.numpy()).all()


def test_a_wrong_shape_under_one_name_is_reported_by_that_name(backend):
    model = TiedLM()
    state = _pytorch_state()
    state["lm_head.weight"] = dp.zeros(3, dtype="float64")
    with pytest.raises(ValueError, match=r"lm_head\.weight: shape \(3,\) in the state dict, "
                                         r"\(11, 6\) here"):
        model.load_state_dict(state)


def test_state_dict_walks_a_module_that_contains_itself_once_per_path():
    outer = nn.Sequential(nn.Linear(2, 2))
    outer.append(outer)  # a cycle: each path stops where it would repeat
    assert list(outer.state_dict()) == ["0.weight", "0.bias"]
    assert [name for name, _ in outer.named_modules(remove_duplicate=False)] == ["", "0"]
