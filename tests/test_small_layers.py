"""Embedding with ``padding_idx`` and ``from_pretrained``, Unflatten, ModuleDict and
``Module.apply``: their state dicts, DataParallel, and their errors (against PyTorch in
``test_torch_parity.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray import nn
from dparray.nn import functional as F
from dparray.testing import gradcheck

F64 = "float64"

# ------------------------------------------------------------------ Embedding
def test_padding_row_starts_at_zero_and_gets_no_gradient(backend):
    dp.manual_seed(0)
    layer = nn.Embedding(5, 3, padding_idx=-2, dtype=F64)
    assert layer.padding_idx == 3 and repr(layer) == "Embedding(5, 3, padding_idx=3)"
    weight = layer.weight.numpy()
    np.testing.assert_array_equal(weight[3], [0.0, 0.0, 0.0])
    assert np.all(weight[[0, 1, 2, 4]] != 0.0)
    layer.weight.data = to_tensor(np.arange(15.0).reshape(5, 3)).data  # a non-zero padding row
    index = np.array([[3, 1, 3], [0, 3, 1]])
    out = layer(dp.tensor(index))
    np.testing.assert_array_equal(out.numpy(), np.arange(15.0).reshape(5, 3)[index])
    grads = (out * 2.0).sum().backward()
    expected = np.zeros((5, 3))
    expected[0], expected[1] = 2.0, 4.0  # row 3 looked up three times, no gradient
    np.testing.assert_array_equal(grads[layer.weight].numpy(), expected)
    functional = F.embedding(dp.tensor(index), layer.weight, padding_idx=3)
    np.testing.assert_array_equal(functional.numpy(), out.numpy())


def test_embedding_without_padding_draws_what_it_drew_before(backend):
    dp.manual_seed(4)
    plain = nn.Embedding(4, 2, dtype=F64).weight.numpy()
    dp.manual_seed(4)
    padded = nn.Embedding(4, 2, padding_idx=1, dtype=F64).weight.numpy()
    np.testing.assert_array_equal(padded[[0, 2, 3]], plain[[0, 2, 3]])


def test_from_pretrained(backend, rng):
    table = rng.standard_normal((4, 3))
    frozen = nn.Embedding.from_pretrained(to_tensor(table), padding_idx=1)
    assert frozen.weight.dtype.name == F64 and frozen.padding_idx == 1
    np.testing.assert_array_equal(frozen.weight.numpy(), table)  # the padding row kept
    assert not frozen.weight.requires_grad
    assert [name for name, _ in frozen.named_parameters()] == ["weight"]  # still a parameter
    assert frozen.num_parameters() == 12 and frozen.trainable_params_count() == 0
    np.testing.assert_array_equal(frozen(dp.tensor([2, 0])).numpy(), table[[2, 0]])
    trained = nn.Embedding.from_pretrained(to_tensor(table), freeze=False)
    out = trained(dp.tensor([[1, 1]]))
    grads = out.sum().backward()
    np.testing.assert_array_equal(grads[trained.weight].numpy()[1], [2.0, 2.0, 2.0])
    dp.manual_seed(7)
    nn.Embedding.from_pretrained(to_tensor(table))
    after = dp.randn(3, dtype=F64).numpy()
    dp.manual_seed(7)
    np.testing.assert_array_equal(after, dp.randn(3, dtype=F64).numpy())  # no draws spent


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("execution", ["threads", "inline"])
def test_embedding_under_data_parallel_same_as_unwrapped(workers, execution, backend, rng):
    dp.manual_seed(0)
    layer = nn.Embedding(6, 4, padding_idx=0, dtype=F64)
    index = dp.tensor(rng.integers(0, 6, (7, 3)))
    cotangent = to_tensor(rng.standard_normal((7, 3, 4)))
    model = dp.DataParallel(layer, workers, execution=execution)
    expected = layer(index)
    expected_grad = (expected * cotangent).sum().backward()[layer.weight]
    got = model(index)
    grad = (got * cotangent).sum().backward()[layer.weight]
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)
    np.testing.assert_allclose(grad.numpy(), expected_grad.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(grad.numpy()[0], np.zeros(4))


def test_embedding_errors(backend):
    with pytest.raises(ValueError, match=r"Embedding: max_norm is not supported \(PyTorch "
                                         r"renormalises"):
        nn.Embedding(4, 2, max_norm=1.0)
    with pytest.raises(ValueError, match="embedding: max_norm is not supported"):
        F.embedding(dp.tensor([0]), dp.zeros(4, 2), max_norm=2.0)
    with pytest.raises(ValueError, match="Embedding: padding_idx must be at most 3, got 4"):
        nn.Embedding(4, 2, padding_idx=4)
    with pytest.raises(ValueError, match="Embedding: padding_idx must be at least -4, got -5"):
        nn.Embedding(4, 2, padding_idx=-5)
    with pytest.raises(TypeError, match=r"Embedding: padding_idx must be an int, got 1\.0"):
        nn.Embedding(4, 2, padding_idx=1.0)
    with pytest.raises(TypeError, match="Embedding: num_embeddings must be an int"):
        nn.Embedding("4", 2)
    where = "Embedding.from_pretrained"
    with pytest.raises(ValueError, match=rf"{where}: embeddings must be 2-dimensional .*got "
                                         r"shape \(3,\)"):
        nn.Embedding.from_pretrained(dp.zeros(3))
    with pytest.raises(TypeError, match=f"{where}: embeddings must be floating, got int64"):
        nn.Embedding.from_pretrained(dp.tensor([[1, 2]]))
    with pytest.raises(TypeError, match=f"{where}: embeddings must be a Tensor"):
        nn.Embedding.from_pretrained([[1.0, 2.0]])
    with pytest.raises(TypeError, match=f"{where}: freeze must be a bool"):
        nn.Embedding.from_pretrained(dp.zeros(2, 2), freeze=None)
    with pytest.raises(ValueError, match=f"{where}: max_norm is not supported"):
        nn.Embedding.from_pretrained(dp.zeros(2, 2), max_norm=1.0)


# ------------------------------------------------------------------ Unflatten
def test_unflatten(backend, rng):
    x = to_tensor(rng.standard_normal((2, 12, 3)), requires_grad=True)
    assert nn.Unflatten(1, (3, 4))(x).shape == (2, 3, 4, 3)
    assert nn.Unflatten(1, [2, -1, 3])(x).shape == (2, 2, 2, 3, 3)
    assert nn.Unflatten(-1, (1, 3))(x).shape == (2, 12, 1, 3)
    np.testing.assert_array_equal(nn.Unflatten(1, (3, 4))(x).numpy(),
                                  x.numpy().reshape(2, 3, 4, 3))
    assert repr(nn.Unflatten(1, [2, -1])) == "Unflatten(dim=1, unflattened_size=(2, -1))"
    gradcheck(nn.Unflatten(1, (4, 3)), [x])
    layer = nn.Flatten(1, 2)
    assert layer(nn.Unflatten(1, (6, 2))(x)).shape == x.shape  # Flatten undoes it


def test_unflatten_errors(backend):
    with pytest.raises(TypeError, match="Unflatten: unflattened_size must be a tuple or list of "
                                        "ints, got 2"):
        nn.Unflatten(1, 2)
    with pytest.raises(TypeError, match=r"Unflatten: unflattened_size must be an int, got 2\.0"):
        nn.Unflatten(1, (2.0, 3))
    with pytest.raises(ValueError, match="Unflatten: at most one size in unflattened_size can "
                                         "be -1"):
        nn.Unflatten(1, (-1, -1))
    with pytest.raises(ValueError, match="Unflatten: unflattened_size must be at least -1"):
        nn.Unflatten(1, (-2, 3))
    with pytest.raises(ValueError, match="Unflatten: unflattened_size must not be empty"):
        nn.Unflatten(1, ())
    with pytest.raises(ValueError, match=r"Unflatten: sizes \(2, 4\) do not fit axis 1 of size 6"):
        nn.Unflatten(1, (2, 4))(dp.zeros(3, 6))
    with pytest.raises(ValueError, match=r"sizes \(4, -1\) do not fit axis 1 of size 6"):
        nn.Unflatten(1, (4, -1))(dp.zeros(3, 6))
    with pytest.raises(ValueError, match=r"Unflatten: dim 2 is out of range for input of shape "
                                         r"\(3, 6\)"):
        nn.Unflatten(2, (2, 3))(dp.zeros(3, 6))
    with pytest.raises(TypeError, match="Unflatten: input must be a Tensor"):
        nn.Unflatten(0, (1,))([1.0])


# ------------------------------------------------------------------ ModuleDict
def _heads():
    return nn.ModuleDict({"cls": nn.Linear(4, 3, dtype=F64), "box": nn.Linear(4, 2, dtype=F64)})


def test_module_dict_api():
    heads = _heads()
    assert list(heads) == ["cls", "box"] == list(heads.keys())
    assert len(heads) == 2 and "box" in heads and "mask" not in heads and 3 not in heads
    assert [type(m).__name__ for m in heads.values()] == ["Linear", "Linear"]
    assert [k for k, _ in heads.items()] == ["cls", "box"]
    assert [name for name, _ in heads.named_parameters()] == \
        ["cls.weight", "cls.bias", "box.weight", "box.bias"]
    relu = nn.ReLU()
    heads["act"] = relu
    heads.update([("norm", nn.LayerNorm(3)), ("act", nn.Tanh())])  # replacing keeps the place
    assert list(heads) == ["cls", "box", "act", "norm"]
    assert isinstance(heads["act"], nn.Tanh)
    heads.update({"box": relu})
    assert list(heads) == ["cls", "box", "act", "norm"] and heads["box"] is relu
    assert heads.pop("box") is relu and "box" not in heads and not hasattr(heads, "box")
    del heads["act"]
    assert list(heads) == ["cls", "norm"]
    heads.update(nn.ModuleDict({"extra": nn.Identity()}))
    assert list(heads) == ["cls", "norm", "extra"]
    heads.clear()
    assert len(heads) == 0 and heads.parameters() == []
    assert list(nn.ModuleDict([("a", nn.ReLU())])) == ["a"]
    assert repr(nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()})) == \
        "ModuleDict(\n  (b): ReLU()\n  (a): Tanh()\n)"


def test_module_dict_state_dict_round_trip(backend, tmp_path):
    dp.manual_seed(1)
    heads = _heads()
    path = tmp_path / "heads.safetensors"
    dp.save(heads.state_dict(), path)
    assert sorted(dp.load(path)) == ["box.bias", "box.weight", "cls.bias", "cls.weight"]
    dp.manual_seed(2)
    fresh = _heads()
    fresh.load_state_dict(dp.load(path))
    for (key, a), (_, b) in zip(fresh.state_dict().items(), heads.state_dict().items(),
                                strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=key)


class _TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = _heads()

    def forward(self, x):
        return dp.cat([self.heads["cls"](x), self.heads["box"](x)], axis=1)


@pytest.mark.parametrize("workers", [2, 3])
def test_module_dict_model_under_data_parallel(workers, backend, rng):
    dp.manual_seed(0)
    model = _TwoHeads()
    parallel = dp.DataParallel(model, workers, execution="threads")
    assert next(name for name, _ in parallel.named_parameters()) == "heads.cls.weight"
    x = to_tensor(rng.standard_normal((5, 4)))
    cotangent = to_tensor(rng.standard_normal((5, 5)))
    expected = model(x)
    expected_grads = (expected * cotangent).sum().backward()
    got = parallel(x)
    grads = (got * cotangent).sum().backward()
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)
    for p in model.parameters():
        np.testing.assert_allclose(grads[p].numpy(), expected_grads[p].numpy(), rtol=1e-12,
                                   atol=1e-14)


def test_module_dict_errors():
    heads = _heads()
    with pytest.raises(TypeError, match="ModuleDict: keys must be strings, got 3"):
        heads[3] = nn.ReLU()
    with pytest.raises(TypeError, match="ModuleDict: values must be Modules, got 3"):
        heads["x"] = 3
    for key in ("", "a.b"):
        with pytest.raises(ValueError, match=r"ModuleDict: a key must be a non-empty string "
                                             r"without '\.'"):
            heads[key] = nn.ReLU()
    for key in ("keys", "forward", "_training"):
        with pytest.raises(ValueError, match=f"ModuleDict: the key '{key}' is an attribute"):
            heads[key] = nn.ReLU()
    with pytest.raises(KeyError, match="mask"):
        heads["mask"]
    with pytest.raises(KeyError, match="mask"):
        heads.pop("mask")
    with pytest.raises(KeyError, match="mask"):
        del heads["mask"]
    with pytest.raises(TypeError, match=r"ModuleDict\.update: expected a mapping or"):
        heads.update(3)
    with pytest.raises(TypeError, match=r"ModuleDict\.update: element 0 must be a"):
        heads.update(["ab"])
    with pytest.raises(ValueError, match=r"ModuleDict\.update: element 1 must be a .*got 3 items"):
        heads.update([("ok", nn.ReLU()), ("x", nn.ReLU(), 3)])
    with pytest.raises(TypeError, match="values must be Modules"):
        heads.update({"fine": nn.ReLU(), "bad": "relu"})
    assert list(heads) == ["cls", "box"]  # a refused update adds nothing


# ------------------------------------------------------------------ Module.apply
def test_apply_visits_children_first_then_self():
    inner = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    model = nn.Sequential(inner, nn.ModuleDict({"out": nn.Linear(2, 1)}))
    seen = []
    assert model.apply(seen.append) is model
    assert [type(m).__name__ for m in seen] == \
        ["Linear", "ReLU", "Sequential", "Linear", "ModuleDict", "Sequential"]
    assert seen[2] is inner and seen[-1] is model


def test_apply_visits_a_shared_module_once_and_initialises(backend):
    shared = nn.Linear(3, 3, dtype=F64)
    model = nn.Sequential(shared, nn.Tanh(), shared)
    seen = []

    def zero_linear(module):
        seen.append(module)
        if isinstance(module, nn.Linear):
            module.weight.data = dp.zeros(3, 3, dtype=F64).data

    model.apply(zero_linear)
    assert seen.count(shared) == 1 and len(seen) == 3
    np.testing.assert_array_equal(shared.weight.numpy(), np.zeros((3, 3)))


def test_apply_through_data_parallel_and_errors():
    layer = nn.Linear(2, 2)
    parallel = dp.DataParallel(nn.Sequential(layer), 2)
    seen = []
    assert parallel.apply(seen.append) is parallel
    assert seen[0] is layer and seen[-1] is parallel and len(seen) == 3
    with pytest.raises(TypeError, match="apply: fn must be callable, got int"):
        layer.apply(3)
