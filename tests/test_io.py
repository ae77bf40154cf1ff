"""State-dict files: round trips, atomic writes, damaged files, and PyTorch compatibility."""

from __future__ import annotations

import errno
import json
import os
import pathlib
import re
import signal
import stat
import struct
import subprocess
import sys

import numpy as np
import pytest
import safetensors.numpy

import dparray as dp
from dparray import io as dp_io
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
    with pytest.raises(TypeError, match=r"save: w is \{1\.0\} \(set\); dparray saves tensors"):
        dp.save({"w": {1.0}}, path)
    with pytest.raises(TypeError, match=r"save: the state has a key \('a', 1\)"):
        dp.save({("a", 1): dp.ones(1)}, path)
    with pytest.raises(TypeError, match="save: model has a key True"):
        dp.save({"model": {True: dp.ones(1)}}, path)
    with pytest.raises(TypeError, match="save needs a mapping"):
        dp.save([dp.ones(1)], path)
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


def _snapshot(folder):
    """Every entry of ``folder``: a link's target, or a file's bytes and permission bits."""
    entries = {}
    for entry in sorted(pathlib.Path(folder).iterdir()):
        if entry.is_symlink():
            entries[entry.name] = ("link", os.readlink(entry))
        elif entry.is_file():
            entries[entry.name] = ("file", entry.read_bytes(), stat.S_IMODE(entry.stat().st_mode))
        else:
            entries[entry.name] = ("other", stat.S_IFMT(entry.lstat().st_mode))
    return entries


def _craft(path, header, data=b""):
    """A safetensors file with exactly this header (a dict) and data section."""
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)
    return path


def _signed(metadata, entries=()):
    """``metadata`` with the checksum dparray would write for it (what a forger can do too)."""
    return {**metadata, dp_io.CHECKSUM_KEY: dp_io._checksum(list(entries), metadata)}


W_ENTRY = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
W_DATA = np.array([1.5, -2.0], dtype="<f4").tobytes()


@pytest.mark.parametrize("dtype, code", [("uint16", "U16"), ("uint32", "U32"),
                                         ("uint64", "U64"), ("complex64", "C64")])
def test_dtypes_dparray_lacks_are_refused_before_any_tensor_is_made(tmp_path, monkeypatch,
                                                                    dtype, code):
    path = tmp_path / "w.safetensors"
    path.write_bytes(safetensors.numpy.save({"a_float": np.ones(3, "float32"),
                                             "odd": np.zeros(2, dtype)}))
    made = []
    monkeypatch.setattr(dp_io, "Tensor", lambda *args: made.append(args))
    with pytest.raises(ValueError, match=rf"tensor 'odd' has dtype {code}, which dparray has "
                                         "no equivalent for"):
        dp.load(path)
    assert made == []


def test_a_dtype_name_safetensors_lacks_too(tmp_path):
    path = _craft(tmp_path / "w.safetensors",
                  {"w": {"dtype": "U16", "shape": [2], "data_offsets": [0, 4]}}, b"\0" * 4)
    with pytest.raises(ValueError, match="tensor 'w' has dtype U16"):  # (BF16 it has)
        dp.load(path)


@pytest.mark.parametrize("keys", [
    '[1, "w"]', "[" * 100_000 + "]" * 100_000, '{"w": 0}', '"w"', "null", '["w", "w"]',
    '["v"]', '["w", "v"]', "[]", "not json",
], ids=["an int", "deeply nested", "an object", "a string", "null", "twice", "another name",
        "one name too many", "empty", "not json"])
def test_crafted_key_orders_are_corrupted_files(tmp_path, keys):
    entries = [("w", "F32", (2,), W_DATA)]
    for name, metadata in [("forged.safetensors", _signed({dp_io.ORDER_KEY: keys}, entries)),
                           ("unsigned.safetensors", {dp_io.ORDER_KEY: keys})]:
        path = _craft(tmp_path / name, {"__metadata__": metadata, "w": W_ENTRY}, W_DATA)
        with pytest.raises(ValueError, match=rf"{name} is corrupted"):
            dp.load(path)


@pytest.mark.parametrize("header", [
    {"w": W_ENTRY, "__metadata__": {"k": 1}},
    {"w": W_ENTRY, "__metadata__": []},
    {"w": {"dtype": "F32", "shape": [2]}},
    {"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], "extra": 1}},
    {"w": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}},
    {"w": {"dtype": "F32", "shape": [True, 2], "data_offsets": [0, 8]}},
    {"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}},
    {"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}},
    {"w": {"dtype": 32, "shape": [2], "data_offsets": [0, 8]}},
    {"w": W_ENTRY, "v": W_ENTRY},
    {"w": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}},
    [1, 2],
], ids=["int metadata", "list metadata", "no offsets", "extra field", "negative size",
        "bool size", "size mismatch", "reversed offsets", "int dtype", "overlap", "gap",
        "not an object"])
def test_malformed_headers_are_invalid_files(tmp_path, header):
    path = _craft(tmp_path / "w.safetensors", header, W_DATA)
    with pytest.raises(ValueError, match=r"w\.safetensors is not a valid safetensors file"):
        dp.load(path)


def test_a_header_with_a_name_twice_or_nan_is_invalid(tmp_path):
    entry = json.dumps(W_ENTRY)
    for text in [f'{{"w": {entry}, "w": {entry}}}', '{"w": NaN}']:
        path = tmp_path / "w.safetensors"
        path.write_bytes(struct.pack("<Q", len(text)) + text.encode() + W_DATA)
        with pytest.raises(ValueError, match="not a valid safetensors file: its header is not"):
            dp.load(path)


@pytest.mark.timeout(20)
def test_load_refuses_what_is_not_a_regular_file_without_reading_it(tmp_path):
    fifo = tmp_path / "pipe.safetensors"
    os.mkfifo(fifo)  # no writer: opening it for reading would block forever
    with pytest.raises(OSError, match="load needs a regular file, this is a FIFO") as error:
        dp.load(fifo)
    assert error.value.errno == errno.EINVAL and error.value.filename == str(fifo)
    for device in ["/dev/zero", "/dev/urandom"]:  # endless: reading them would never stop
        with pytest.raises(OSError, match="this is a character device"):
            dp.load(device)
    link = tmp_path / "zero.safetensors"
    link.symlink_to("/dev/zero")
    with pytest.raises(OSError, match="this is a character device"):
        dp.load(link)
    with pytest.raises(IsADirectoryError, match="load needs a regular file, this is a directory"):
        dp.load(tmp_path)


def test_a_file_that_shrinks_while_read_is_invalid(tmp_path, monkeypatch):
    path = tmp_path / "w.safetensors"
    dp.save({"w": dp.ones(4)}, path)
    real_fstat = os.fstat

    def larger(descriptor):  # as if the file were truncated between fstat and read
        info = real_fstat(descriptor)
        return os.stat_result((*info[:6], info.st_size + 10, *info[7:]))

    monkeypatch.setattr(os, "fstat", larger)  # found by the header's check of the size
    with pytest.raises(ValueError, match=r"w\.safetensors is not a valid safetensors file: its "
                                         r"tensors need 16 bytes of data, it has 26"):
        dp.load(path)
    monkeypatch.undo()
    real_read_exactly = dp_io.read_exactly

    def truncating(file, buffer, where):  # the file shrinks once its header has been read
        if len(buffer) == 16:
            os.truncate(path, os.path.getsize(path) - 3)
        return real_read_exactly(file, buffer, where)

    monkeypatch.setattr(dp_io, "read_exactly", truncating)
    with pytest.raises(ValueError, match=r"w\.safetensors changed while it was read: it shrank "
                                         r"by at least 3 bytes"):
        dp.load(path)


SAVER = """
import os, sys, time
import dparray as dp

def stall(descriptor):  # hold the save between writing its bytes and renaming them
    print("written", flush=True)
    time.sleep(120)

os.fsync = stall
dp.save({"w": dp.zeros(8 * 1024 * 1024)}, sys.argv[1])
"""


@pytest.mark.integration
@pytest.mark.timeout(60)
def test_a_save_killed_mid_write_leaves_a_temporary_the_next_save_removes(tmp_path):
    path = tmp_path / "w.safetensors"
    dp.save({"w": dp.ones(3)}, path)
    before = path.read_bytes()
    saver = subprocess.Popen([sys.executable, "-c", SAVER, str(path)], stdout=subprocess.PIPE,
                             text=True)
    try:
        assert saver.stdout.readline() == "written\n"
        saver.send_signal(signal.SIGKILL)  # kill -9: no cleanup code runs
    finally:
        saver.kill()
        saver.wait(timeout=30)
    [stale] = [p for p in tmp_path.iterdir() if p.name != "w.safetensors"]
    assert re.fullmatch(rf"\.w\.safetensors\.{saver.pid}\.[0-9a-f]{{16}}\.tmp", stale.name)
    assert stale.stat().st_size > 32 * 1024 * 1024  # the whole payload was there
    assert path.read_bytes() == before  # the target was never touched
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = [tmp_path / f".w.safetensors.{pid}.{'ab' * 8}.tmp"
                for pid in (sleeper.pid, os.getpid())]  # a live writer's, and this one's
        other = tmp_path / f".other.safetensors.{saver.pid}.{'cd' * 8}.tmp"
        for keep in [*live, other]:
            keep.write_bytes(b"in progress")
        dp.save({"w": dp.zeros(2)}, path)
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            ["w.safetensors", other.name, *(p.name for p in live)])
        assert dp.load(path)["w"].tolist() == [0.0, 0.0]
    finally:
        sleeper.kill()
        sleeper.wait(timeout=30)


def test_resaving_keeps_the_permission_bits(tmp_path):
    path = tmp_path / "w.safetensors"
    dp.save({"w": dp.ones(3)}, path)
    for mode in (0o600, 0o640, 0o444):
        os.chmod(path, mode)
        dp.save({"w": dp.zeros(3)}, path)
        assert stat.S_IMODE(os.stat(path).st_mode) == mode
    assert dp.load(path)["w"].tolist() == [0.0, 0.0, 0.0]


def test_saving_onto_a_fifo_a_device_or_a_folder_is_refused(tmp_path):
    fifo = tmp_path / "pipe.safetensors"
    os.mkfifo(fifo)
    (tmp_path / "folder.safetensors").mkdir()
    (tmp_path / "null.safetensors").symlink_to("/dev/null")
    before = _snapshot(tmp_path)
    with pytest.raises(OSError, match="save needs a regular file, this is a FIFO"):
        dp.save({"w": dp.ones(1)}, fifo)
    with pytest.raises(OSError, match="this is a character device"):
        dp.save({"w": dp.ones(1)}, tmp_path / "null.safetensors")
    with pytest.raises(IsADirectoryError, match="this is a directory"):
        dp.save({"w": dp.ones(1)}, tmp_path / "folder.safetensors")
    with pytest.raises(OSError, match="this is a FIFO"):
        dp.save({"w": dp.ones(1)}, fifo, follow_symlinks=False)
    assert _snapshot(tmp_path) == before and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_saving_onto_a_symlink_replaces_its_target_and_keeps_the_link(tmp_path):
    target = tmp_path / "real" / "w.safetensors"
    target.parent.mkdir()
    dp.save({"w": dp.ones(2)}, target)
    os.chmod(target, 0o600)
    link = tmp_path / "latest.safetensors"
    link.symlink_to(target)
    dp.save({"w": dp.zeros(2)}, link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert dp.load(target)["w"].tolist() == [0.0, 0.0]
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert sorted(p.name for p in target.parent.iterdir()) == ["w.safetensors"]  # no temporary
    dangling = tmp_path / "next.safetensors"
    dangling.symlink_to(tmp_path / "real" / "new.safetensors")
    dp.save({"w": dp.ones(1)}, dangling)  # like an editor: the file the link names appears
    assert dp.load(tmp_path / "real" / "new.safetensors")["w"].tolist() == [1.0]
    loop = tmp_path / "loop.safetensors"
    loop.symlink_to(loop)
    before = _snapshot(tmp_path)
    with pytest.raises(OSError, match="the symbolic links loop"):
        dp.save({"w": dp.ones(1)}, loop)
    assert _snapshot(tmp_path) == before


def test_follow_symlinks_false_replaces_the_link_itself(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    link = tmp_path / "w.safetensors"
    link.symlink_to(outside)
    dp.save({"w": dp.ones(2)}, link, follow_symlinks=False)
    assert not link.is_symlink() and dp.load(link)["w"].tolist() == [1.0, 1.0]
    assert outside.read_text() == "keep me"
    with pytest.raises(TypeError, match="save: follow_symlinks must be a bool"):
        dp.save({"w": dp.ones(2)}, link, follow_symlinks="no")


@pytest.mark.parametrize("state, metadata, error, message", [
    ({"__metadata__": "x"}, None, ValueError, "'__metadata__' is safetensors' name"),
    (None, {"dparray.sha256": "0" * 64}, ValueError, "keys starting with 'dparray.' are"),
    (None, {"dparray.keys": "[]"}, ValueError, "keys starting with 'dparray.' are"),
    (None, {"epoch": 3}, TypeError, "metadata must map str to str, got 'epoch': 3"),
    (None, {3: "epoch"}, TypeError, "metadata must map str to str"),
    (None, [("epoch", "3")], TypeError, "metadata must be a mapping of str to str"),
], ids=["reserved name", "checksum key", "order key", "int value", "int key", "a list"])
def test_reserved_names_and_non_string_metadata_are_refused(tmp_path, state, metadata, error,
                                                            message):
    path = tmp_path / "w.safetensors"
    dp.save({"w": dp.ones(2)}, path)
    before = _snapshot(tmp_path)
    state = {"w": dp.zeros(2)} if state is None else {k: dp.zeros(1) for k in state}
    with pytest.raises(error, match=message):
        dp.save(state, path, metadata=metadata)
    assert _snapshot(tmp_path) == before


def test_load_returns_the_metadata_when_asked(tmp_path):
    path = tmp_path / "w.safetensors"
    dp.save({"w": dp.ones(2)}, path, metadata={"epoch": "3", "note": "ünïcode"})
    tensors, metadata = dp.load(path, with_metadata=True)
    assert list(tensors) == ["w"] and metadata == {"epoch": "3", "note": "ünïcode"}
    assert dp.load(path).keys() == tensors.keys()
    with pytest.raises(TypeError, match="load: with_metadata must be a bool"):
        dp.load(path, with_metadata=1)
    foreign = tmp_path / "foreign.safetensors"
    foreign.write_bytes(safetensors.numpy.save({"w": np.ones(2, "float32")},
                                               metadata={"format": "pt"}))
    assert dp.load(foreign, with_metadata=True)[1] == {"format": "pt"}


def test_the_checksum_is_mandatory_and_covers_the_metadata(tmp_path):
    path = tmp_path / "w.safetensors"
    dp.save({"w": dp.arange(4.0)}, path, metadata={"epoch": "3"})
    payload = path.read_bytes()
    mutations = {
        "checksum renamed": payload.replace(b"dparray.sha256", b"dparray.sha257"),
        "checksum key moved out": payload.replace(b"dparray.sha256", b"xparray.sha256"),
        "metadata changed": payload.replace(b'"epoch":"3"', b'"epoch":"4"'),
        "metadata key changed": payload.replace(b'"epoch"', b'"epocx"'),
        "order renamed": payload.replace(b"dparray.keys", b"dparray.keyz"),
    }
    for name, mutated in mutations.items():
        assert mutated != payload, name
        damaged = tmp_path / "damaged.safetensors"
        damaged.write_bytes(mutated)
        with pytest.raises(ValueError, match=r"damaged\.safetensors is corrupted"):
            dp.load(damaged)
    foreign = tmp_path / "foreign.safetensors"  # no dparray metadata: checked for form only
    foreign.write_bytes(safetensors.numpy.save({"w": np.arange(3, dtype="int16")}))
    assert dp.load(foreign)["w"].tolist() == [0, 1, 2]


def test_empty_and_zero_size_tensors_round_trip(backend, tmp_path):
    path = tmp_path / "w.safetensors"
    dp.save({}, path)
    assert dp.load(path) == {}
    state = {"empty": dp.zeros(0, 3), "scalar": dp.tensor(2.5), "flag": dp.tensor([True, False]),
             "small": dp.tensor([1, -2], dtype="int8")}
    dp.save(state, path)
    loaded = dp.load(path)
    assert list(loaded) == list(state)
    for name, value in state.items():
        assert loaded[name].shape == value.shape and loaded[name].dtype == value.dtype
        np.testing.assert_array_equal(loaded[name].numpy(), value.numpy())


# ---------------------- the demo never writes through a link (its run: tests/test_cli.py)

def test_the_write_probe_uses_a_fresh_name_and_follows_no_link(tmp_path):
    from dparray.cli import demo

    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / ".dparray-write-test").symlink_to(outside)  # the probe's old, fixed name
    before = _snapshot(out)
    demo._check_writable(str(out))
    assert _snapshot(out) == before and outside.read_text() == "keep me"


def test_the_write_probe_makes_a_missing_out_folder_and_leaves_nothing(tmp_path):
    from dparray.cli import demo

    out = tmp_path / "new" / "out"
    demo._check_writable(str(out))
    assert out.is_dir() and list(out.iterdir()) == []
