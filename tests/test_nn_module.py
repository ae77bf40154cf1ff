"""The specification's Module API: names, counts, freezing, modes, state dicts."""

from __future__ import annotations

import numpy as np
import pytest

import dparray as dp
from dparray import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.norm = nn.BatchNorm1d(4)
        self.layers = nn.Sequential(nn.ReLU(), nn.Linear(4, 2), nn.Dropout(0.1))

    def forward(self, x):
        return self.layers(self.norm(self.fc1(x)))


def test_names_follow_pytorch(backend):
    net = Net()
    assert [name for name, _ in net.named_parameters()] == [
        "fc1.weight", "fc1.bias", "norm.weight", "norm.bias", "layers.1.weight",
        "layers.1.bias"]
    assert [name for name, _ in net.named_buffers()] == [
        "norm.running_mean", "norm.running_var", "norm.num_batches_tracked"]
    assert list(net.state_dict()) == [name for name, _ in net.named_parameters()] + [
        name for name, _ in net.named_buffers()]
    assert [name for name, _ in net.named_modules()] == [
        "", "fc1", "norm", "layers", "layers.0", "layers.1", "layers.2"]
    assert net.parameters()[0] is net.fc1.weight


def test_counts_and_freezing(backend):
    net = Net()
    assert net.num_parameters() == 3 * 4 + 4 + 4 + 4 + 4 * 2 + 2
    assert net.trainable_params_count() == net.num_parameters()
    net.fc1.weight.is_variable = False
    assert net.trainable_params_count() == net.num_parameters() - 12
    assert net.num_parameters() == 34  # a frozen parameter is still a parameter
    frozen = net.frozen_parameters()
    assert len(frozen) == 6 and not any(p.is_variable for p in frozen)
    assert all(np.array_equal(f.numpy(), p.numpy()) for f, p in zip(frozen, net.parameters(),
                                                                    strict=True))
    net.eval()
    grads = net(dp.randn(5, 3)).sum().backward()
    assert net.fc1.weight not in grads and net.fc1.bias in grads  # gradients stop there
    net.requires_grad_(False)
    assert net.trainable_params_count() == 0


def test_training_mode_reaches_every_module(backend):
    net = Net()
    assert net.is_training() and all(m.is_training() for m in net.modules())
    assert net.eval() is net
    assert not any(m.is_training() for m in net.modules())
    net.set_training(True)
    assert all(m.is_training() for m in net.modules())
    net.train(False)
    assert not net.layers[2].is_training()


def test_repr_is_nested():
    text = repr(nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.Tanh())))
    assert text == (
        "Sequential(\n"
        "  (0): Linear(in_features=2, out_features=3, bias=True)\n"
        "  (1): Sequential(\n"
        "    (0): Tanh()\n"
        "  )\n"
        ")"
    )


def test_sequential_is_indexable_iterable_and_appendable(backend):
    model = nn.Sequential(nn.Linear(2, 3))
    model.append(nn.ReLU())
    assert len(model) == 2 and isinstance(model[1], nn.ReLU) and isinstance(model[-1], nn.ReLU)
    assert [type(m).__name__ for m in model] == ["Linear", "ReLU"]
    assert isinstance(model[:1], nn.Sequential) and len(model[:1]) == 1
    with pytest.raises(TypeError, match="holds Modules"):
        model.append(3)


def test_attribute_assignment_registers_and_unregisters(backend):
    module = nn.Module()
    module.w = dp.ones(2, requires_grad=True)
    module.constant = dp.ones(2)  # not a variable: a plain attribute
    module.child = nn.Linear(1, 1)
    assert [n for n, _ in module.named_parameters()] == ["w", "child.weight", "child.bias"]
    module.w = dp.zeros(2)  # replacing a parameter keeps it registered
    assert next(n for n, _ in module.named_parameters()) == "w"
    module.child = None
    assert [n for n, _ in module.named_parameters()] == ["w"]
    del module.w
    assert module.named_parameters() == []
    with pytest.raises(RuntimeError, match=r"must call super\(\).__init__\(\)"):
        class Broken(nn.Module):
            def __init__(self):
                self.x = 1

        Broken()


def test_state_dict_is_a_snapshot_and_loads_back(backend):
    net = Net()
    saved = net.state_dict()
    before = {k: v.numpy().copy() for k, v in saved.items()}
    for p in net.parameters():
        p.data = (p * 0.0).data
    assert all(np.array_equal(saved[k].numpy(), before[k]) for k in saved)
    assert net.load_state_dict(saved) == ([], [])
    assert all(np.array_equal(net.state_dict()[k].numpy(), before[k]) for k in saved)


def test_load_state_dict_checks_everything_first(backend):
    net = Net()
    original = {k: v.numpy().copy() for k, v in net.state_dict().items()}
    bad = dict(net.state_dict())
    bad["fc1.weight"] = dp.zeros(5, 5)
    del bad["fc1.bias"]
    bad["extra"] = dp.zeros(1)
    bad["layers.1.bias"] = dp.zeros(2, dtype="float64")
    with pytest.raises(ValueError) as error:
        net.load_state_dict(bad)
    message = str(error.value)
    assert "missing keys: fc1.bias" in message and "unexpected keys: extra" in message
    assert "fc1.weight: shape (5, 5) in the state dict, (4, 3) here" in message
    assert "layers.1.bias: dtype float64 in the state dict, float32 here" in message
    assert all(np.array_equal(net.state_dict()[k].numpy(), v) for k, v in original.items())
    partial = {"fc1.bias": dp.ones(4), "other": dp.ones(1)}
    result = net.load_state_dict(partial, strict=False)
    assert "fc1.weight" in result.missing_keys and result.unexpected_keys == ["other"]
    assert net.fc1.bias.tolist() == [1.0] * 4


def test_to_dtype_and_backend(backend):
    net = Net()
    weight = net.fc1.weight
    net.to(dp.float64)
    assert net.fc1.weight is weight and weight.dtype == dp.float64
    assert net.norm.num_batches_tracked.dtype == dp.int64  # only floating tensors are cast
    other = "numpy" if backend.name != "numpy" else "array_api_strict"
    net.to(other)
    assert all(p.backend.name == other for p in net.parameters() + net.buffers())
    assert net(dp.ones(2, 3, dtype="float64", backend=other)).backend.name == other


def test_parameter_helper(backend):
    p = nn.Parameter(dp.ones(2))
    assert p.is_variable
    assert not nn.Parameter([1.0], requires_grad=False).is_variable
