"""PyTorch habits on modules: the ``training`` attribute beside the specification's
``set_training``/``is_training``/``train()``/``eval()``, and ``inplace=`` on every layer and
function that PyTorch gives it (the list comes from ``tests/data/make_module_fixtures.py``),
accepted and without effect."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from safetensors import safe_open

import dparray as dp
from dparray import nn
from dparray.nn import functional as F

with safe_open(str(pathlib.Path(__file__).parent / "data" / "module.safetensors"),
               framework="numpy") as _file:
    INPLACE = json.loads(_file.metadata()["inplace"])
LAYERS = [name for name in INPLACE["layers"] if hasattr(nn, name)]
FUNCTIONS = [name for name in INPLACE["functions"] if hasattr(F, name)]
REQUIRED = {"Threshold": (0.5, -1.0), "threshold": (0.5, -1.0)}  # arguments without defaults
# the channel dropouts' own input ranks (a (4, 3) input is one they deprecate, with a warning)
SHAPES = {"Dropout1d": (4, 3, 5), "Dropout2d": (2, 4, 3, 5), "Dropout3d": (2, 4, 3, 5, 2)}
SHAPES.update({name.lower(): shape for name, shape in SHAPES.items()})


class Noisy(nn.Module):
    """A module that reads ``self.training`` in forward, as PyTorch code does."""

    def __init__(self):
        super().__init__()
        self.inner = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))

    def forward(self, x):
        return x + 1.0 if self.training else x


def test_training_reads_and_sets_the_mode():
    model = Noisy()
    assert model.training is True and model.inner[1].training is True
    model.eval()
    assert model.training is False and model.inner.training is False
    assert model.inner[1].training is False and not model.inner[1].is_training()
    assert model(dp.zeros(1)).tolist() == [0.0]
    model.train()
    assert all(m.training for m in model.modules())
    model.training = False  # this module only, as in PyTorch
    assert model.is_training() is False and model.inner.is_training() is True
    assert model(dp.zeros(1)).tolist() == [0.0]
    model.inner[1].training = False
    assert model.inner[1].is_training() is False and model.inner[0].training is True
    model.set_training(True)
    assert all(m.training and m.is_training() for m in model.modules())
    assert "training" not in dict(model.named_children()) and "training" not in model.state_dict()


def test_setting_training_to_a_non_bool_is_refused():
    model = Noisy()
    with pytest.raises(TypeError, match=r"^Noisy\.training must be a bool, got 0"):
        model.training = 0
    assert model.training is True


def test_a_wrapper_reports_and_sets_its_modules_mode():
    model = Noisy()
    parallel = dp.DataParallel(model, 2)
    assert parallel.training is True
    parallel.training = False
    assert model.training is False and parallel.training is False and parallel.is_training() \
        is False
    parallel.train()
    assert model.training is True


def test_the_fixture_lists_pytorchs_inplace_layers():
    assert {"ReLU", "Dropout", "LeakyReLU", "Hardtanh"} <= set(INPLACE["layers"])
    assert {"relu", "dropout", "leaky_relu"} <= set(INPLACE["functions"])


@pytest.mark.parametrize("name", LAYERS)
def test_every_layer_pytorch_gives_inplace_accepts_it_and_changes_nothing(name, backend, rng):
    x = dp.tensor(rng.standard_normal(SHAPES.get(name, (4, 3))) * 3)
    before = x.numpy().copy()
    required = REQUIRED.get(name, ())
    layer, plain = getattr(nn, name)(*required, inplace=True), getattr(nn, name)(*required)
    assert layer.inplace is True and plain.inplace is False
    assert "inplace=True" in repr(layer)
    dp.manual_seed(0)
    out = layer(x)
    dp.manual_seed(0)
    np.testing.assert_array_equal(out.numpy(), plain(x).numpy())
    assert out is not x
    np.testing.assert_array_equal(x.numpy(), before)  # the input is left as it was
    with pytest.raises(TypeError, match=f"^{name}: inplace must be a bool, got 'yes'"):
        getattr(nn, name)(*required, inplace="yes")


@pytest.mark.parametrize("name", FUNCTIONS)
def test_every_function_pytorch_gives_inplace_accepts_it(name, backend, rng):
    x = dp.tensor(rng.standard_normal(SHAPES.get(name, (4, 3))) * 3)
    before = x.numpy().copy()
    function = getattr(F, name)
    required = REQUIRED.get(name, ())
    dp.manual_seed(0)
    out = function(x, *required, inplace=True)
    dp.manual_seed(0)
    np.testing.assert_array_equal(out.numpy(), function(x, *required).numpy())
    np.testing.assert_array_equal(x.numpy(), before)
    with pytest.raises(TypeError, match=f"^{name}: inplace must be a bool, got 1"):
        function(x, *required, inplace=1)


def test_the_pytorch_reprs():
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)" and repr(nn.ReLU()) == "ReLU()"
    assert repr(nn.Dropout(0.2)) == "Dropout(p=0.2, inplace=False)"
