"""State-dict files: round trips, atomic writes, damaged files, and PyTorch compatibility."""

from __future__ import annotations

import os
import pathlib
import stat

import numpy as np
import pytest

import dparray as dp
from dparray import nn

DATA = pathlib.Path(__file__).parent / "data"


def _model():
    return nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(8, 6), nn.BatchNorm1d(6), nn.GELU(), nn.LayerNorm(6),
                         nn.Linear(6, 3))


def test_save_load_gives_identical_outputs(backend, tmp_path):
    dp.manual_seed(0)
    model = _model()
    model(dp.randn(8, 1, 4, 4))  # move the running statistics
    model.eval()
    x = dp.randn(3, 1, 4, 4)
    path = tmp_path / "model.safetensors"
    dp.save(model.state_dict(), path, metadata={"epoch": "3"})
    other = _model().eval()
    other.load_state_dict(dp.load(path))
    np.testing.assert_array_equal(other(x).numpy(), model(x).numpy())
    assert list(dp.load(path)) == list(model.state_dict())  # the file keeps the order
    assert [p.name for p in tmp_path.iterdir()] == ["model.safetensors"]  # no temporary left
    mode = stat.S_IMODE(os.stat(path).st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask


def test_load_onto_a_chosen_backend(tmp_path):
    path = tmp_path / "w.safetensors"
    dp.save({"w": dp.arange(6.0).reshape(2, 3)}, path)
    loaded = dp.load(path, backend="array_api_strict")["w"]
    assert loaded.backend.name == "array_api_strict" and loaded.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_overwrite_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "w.safetensors"
    dp.save({"w": dp.ones(3)}, path)

    def fail(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        dp.save({"w": dp.zeros(3)}, path)
    monkeypatch.undo()
    assert dp.load(path)["w"].tolist() == [1.0, 1.0, 1.0]  # the old file is intact
    assert [p.name for p in tmp_path.iterdir()] == ["w.safetensors"]


def test_damaged_files_are_clear_errors(tmp_path):
    path = tmp_path / "w.safetensors"
    dp.save({"w": dp.arange(100.0)}, path)
    payload = path.read_bytes()
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(payload[:-10])
    with pytest.raises(ValueError, match=r"truncated\.safetensors is not a valid safetensors file"):
        dp.load(truncated)
    tampered = tmp_path / "tampered.safetensors"
    tampered.write_bytes(payload[:-4] + bytes(b ^ 0xFF for b in payload[-4:]))
    with pytest.raises(ValueError, match=r"tampered\.safetensors is corrupted"):
        dp.load(tampered)
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all}")
    with pytest.raises(ValueError, match="not a valid safetensors file"):
        dp.load(garbage)
    with pytest.raises(OSError):
        dp.load(tmp_path / "missing.safetensors")
    with pytest.raises(OSError):
        dp.save({"w": dp.ones(1)}, tmp_path / "no" / "such" / "folder.safetensors")


def test_bad_state_dicts_are_refused_before_writing(tmp_path):
    path = tmp_path / "w.safetensors"
    with pytest.raises(TypeError, match="w: expected a Tensor, got list"):
        dp.save({"w": [1.0]}, path)
    with pytest.raises(TypeError, match="names must be str"):
        dp.save({1: dp.ones(1)}, path)
    assert not path.exists()


def test_wrong_files_leave_the_module_unchanged(tmp_path):
    model = _model()
    before = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    state = model.state_dict()
    state["3.weight"] = dp.zeros(5, 8)
    del state["7.bias"]
    path = tmp_path / "bad.safetensors"
    dp.save(state, path)
    with pytest.raises(ValueError, match=r"missing keys: 7\.bias.*3\.weight: shape \(5, 8\)"):
        model.load_state_dict(dp.load(path))
    assert all(np.array_equal(model.state_dict()[k].numpy(), v) for k, v in before.items())


def test_weights_written_by_pytorch_give_pytorchs_outputs(backend):
    """The fixture was saved by PyTorch 2.13 (tests/data/make_torch_fixture.py)."""
    model = _model().eval()
    model.load_state_dict(dp.load(DATA / "torch_net.safetensors"))
    io = dp.load(DATA / "torch_net_io.safetensors")
    np.testing.assert_allclose(model(io["input"]).numpy(), io["output"].numpy(), rtol=1e-5,
                               atol=1e-5)


def test_round_trip_with_live_pytorch(tmp_path):
    torch = pytest.importorskip("torch", reason="PyTorch is optional; the fixture test above "
                                                "covers the format without it")
    import importlib.util

    from safetensors.torch import load_file, save_file
    spec = importlib.util.spec_from_file_location("fixture", DATA / "make_torch_fixture.py")
    fixture = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fixture)
    torch.manual_seed(1)
    reference = fixture.build().eval()
    save_file(reference.state_dict(), tmp_path / "from_torch.safetensors")
    ours = _model().eval()
    ours.load_state_dict(dp.load(tmp_path / "from_torch.safetensors"))
    x = np.random.default_rng(0).standard_normal((4, 1, 4, 4)).astype(np.float32)
    with torch.no_grad():
        expected = reference(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ours(dp.tensor(x)).numpy(), expected, rtol=1e-5, atol=1e-5)
    dp.manual_seed(5)
    mine = _model().eval()
    dp.save(mine.state_dict(), tmp_path / "from_dparray.safetensors")
    back = fixture.build().eval()
    back.load_state_dict(load_file(tmp_path / "from_dparray.safetensors"))
    with torch.no_grad():
        np.testing.assert_allclose(back(torch.from_numpy(x)).numpy(), mine(dp.tensor(x)).numpy(),
                                   rtol=1e-5, atol=1e-5)
