"""``dp.save`` of nested state (issue 22): ``{"model": ..., "optimizer": ..., "iter": n,
"config": {...}}`` in one safetensors file, without pickle, and back as it was; whole modules
stay refused with a message that says what to do instead."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
import safetensors.numpy

import dparray as dp
from dparray import io as dp_io
from dparray import nn, optim


def _loss(model, x):
    y = model(x)
    return (y * y).mean()


def _trained():
    dp.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    opt = optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(2):
        opt.step(_loss(model, dp.randn(5, 3)).backward())
    return model, opt


CONFIG = {"lr": 0.01, "layers": [3, 4, 2], "name": "run é", "flag": True, "none": None,
          "pair": (1, 2.5), 7: "an int key", "deep": {"deeper": [{"x": -1}]}}


def _same(a, b):
    """Equal nested values, tensors by dtype, shape and values, containers by type."""
    assert type(a) is type(b), (a, b)
    if isinstance(a, dp.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    else:
        assert a == b


def test_nested_state_round_trips_and_resumes(backend, tmp_path):
    model, opt = _trained()
    state = {"model": model.state_dict(), "optimizer": opt.state_dict(), "iter": 12,
             "config": CONFIG, "loss": float("nan")}
    path = tmp_path / "run.safetensors"
    dp.save(state, path, metadata={"note": "nested"})
    loaded, metadata = dp.load(path, with_metadata=True)
    assert metadata == {"note": "nested"} and loaded["iter"] == 12
    assert np.isnan(loaded["loss"])
    _same({k: v for k, v in loaded.items() if k != "loss"},
          {k: v for k, v in state.items() if k != "loss"})
    other = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    other_opt = optim.Adam(other.parameters(), lr=0.5)
    other.load_state_dict(loaded["model"])
    other_opt.load_state_dict(loaded["optimizer"])
    x = dp.randn(5, 3)
    opt.step(_loss(model, x).backward())
    other_opt.step(_loss(other, x).backward())
    for (name, p), q in zip(model.named_parameters(), other.parameters(), strict=True):
        np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=name)


def test_the_tensors_are_flat_entries_any_safetensors_reader_opens(tmp_path):
    model, opt = _trained()
    path = tmp_path / "run.safetensors"
    dp.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": 3}, path)
    arrays = safetensors.numpy.load_file(path)
    assert {f"model/{k}" for k in model.state_dict()} <= set(arrays)
    assert "optimizer/state/0/exp_avg" in arrays
    np.testing.assert_array_equal(arrays["model/0.weight"], model.state_dict()["0.weight"].numpy())


def test_a_flat_state_dict_is_written_as_before(tmp_path):
    """No structure in the header: the file PyTorch's safetensors reading gets, as before."""
    model, _ = _trained()
    path = tmp_path / "w.safetensors"
    dp.save(model.state_dict(), path)
    payload = path.read_bytes()
    (length,) = struct.unpack("<Q", payload[:8])
    header = json.loads(payload[8:8 + length])
    assert set(header["__metadata__"]) == {dp_io.CHECKSUM_KEY, dp_io.ORDER_KEY}
    assert set(header) - {"__metadata__"} == set(model.state_dict())
    assert list(dp.load(path)) == list(model.state_dict())


@pytest.mark.parametrize("make", [lambda m, o: m, lambda m, o: o,
                                  lambda m, o: dp.DataParallel(m, num_workers=2)],
                         ids=["module", "optimizer", "DataParallel"])
def test_whole_objects_are_refused_with_what_to_do_instead(tmp_path, make):
    model, opt = _trained()
    path = tmp_path / "w.safetensors"
    obj = make(model, opt)
    with pytest.raises(TypeError, match=r"save: got .*; dparray saves no objects \(nothing is "
                                        r"pickled\)\. Save its state -- dp\.save\(model\."
                                        r"state_dict\(\), path\)"):
        dp.save(obj, path)
    with pytest.raises(TypeError, match=r"save: model is .*\(never pickled objects\); save its "
                                        r"state_dict\(\) instead"):
        dp.save({"model": obj, "step": 1}, path)
    assert not path.exists()


def test_two_tensors_with_one_name_are_refused(tmp_path):
    path = tmp_path / "w.safetensors"
    with pytest.raises(ValueError, match=r"save: two entries of the state are named 'a/b'"):
        dp.save({"a/b": dp.ones(1), "a": {"b": dp.zeros(1)}}, path)
    assert not path.exists()


def test_a_damaged_structure_is_a_corrupted_file(tmp_path):
    path = tmp_path / "w.safetensors"
    for description in ('{"dict": [["w", {"tensor": "missing"}]]}', '{"list": []}', "[1,",
                        '{"dict": []}'):
        reserved = {dp_io.STRUCTURE_KEY: description}  # signed: only the description is wrong
        dp_io._write({"w": dp.ones(2)}, path, {}, reserved, follow_symlinks=True)
        with pytest.raises(ValueError, match=r"w\.safetensors is corrupted: its "
                                             r"dparray\.structure metadata is not one dparray"):
            dp.load(path)


def test_checkpoints_still_load_flat(tmp_path):
    model, opt = _trained()
    path = tmp_path / "ckpt.safetensors"
    dp.save_checkpoint(path, model=model, optimizer=opt, step=2)
    tensors = dp.load(path)
    assert all(isinstance(t, dp.Tensor) for t in tensors.values())
    assert "model/0.weight" in tensors
