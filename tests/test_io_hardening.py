"""Files at the edges a stress probe found (issue 21, items 6, 7, 14, 15): a damaged header is
found before the data is read, a save streams its tensors instead of copying the payload, names
that UTF-8 cannot hold are refused both ways, and shapes no array can have are clean errors
that name the file. The files stay the ones the safetensors library writes."""

from __future__ import annotations

import json
import struct
import tracemalloc

import numpy as np
import pytest
import safetensors.numpy
from safetensors import safe_open

import dparray as dp
from dparray import io as dp_io

MIB = 1 << 20


def _craft(path, header, data=b""):
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)
    return path


def _peak(function):
    """The most memory the Python and NumPy allocators held at once during ``function()``,
    beyond what was held before."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        function()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


# ------------------------------------------------------------------ the header before the data
def _large_file(path, prefix, size=256 * MIB):
    """A sparse file of ``size`` bytes that starts with ``prefix`` (no disk space used)."""
    with open(path, "wb") as file:
        file.write(prefix)
        file.truncate(size)
    return path


ENTRY = b'{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'


@pytest.mark.parametrize("prefix, message", [
    (struct.pack("<Q", 40) + b"{garbage, not the JSON of a header}     ", "is not JSON"),
    (b"\xff" * 8, "its header claims 18446744073709551615 bytes, the file has"),
    (struct.pack("<Q", 200 * MIB), "a safetensors header has at most 100000000"),
    (struct.pack("<Q", len(ENTRY)) + ENTRY, "its tensors need 8 bytes of data, it has"),
], ids=["garbage JSON", "a huge length", "a header too long", "more data than described"])
def test_a_damaged_header_is_found_before_the_data_is_read(tmp_path, prefix, message):
    """Before: the whole file was read first (2 GiB of RSS for a 2 GiB file, a MemoryError
    for 8 GiB), then the header refused."""
    path = _large_file(tmp_path / "large.safetensors", prefix)
    errors = []
    assert _peak(lambda: errors.append(_error(path))) < 16 * MIB  # never the file's 256 MiB
    assert "large.safetensors is not a valid safetensors file" in errors[0]
    assert message in errors[0]


def _error(path):
    with pytest.raises(ValueError) as caught:
        dp.load(path)
    return str(caught.value)


def test_loading_reads_each_tensor_once_into_its_own_array(tmp_path):
    path = tmp_path / "w.safetensors"
    dp.save({"w": dp.arange(8 * MIB // 4, dtype="float32"), "b": dp.ones(3, dtype="int16")},
            path)
    loaded = {}
    peak = _peak(lambda: loaded.update(dp.load(path)))
    assert peak < 8 * MIB * 1.25  # the tensors themselves, no copy of the file beside them
    np.testing.assert_array_equal(loaded["w"].numpy(), np.arange(8 * MIB // 4, dtype="float32"))
    assert loaded["w"].numpy().flags.aligned and loaded["b"].tolist() == [1, 1, 1]


# ----------------------------------------------------------------------- streamed saving
def test_saving_streams_the_tensors_instead_of_copying_the_payload(tmp_path):
    """Before: the payload was built in memory (three times its size in RSS, counting the
    tensors). Now each tensor goes from its own memory to the file."""
    state = {"w": dp.arange(16 * MIB // 4, dtype="float32"), "v": dp.ones(MIB, dtype="float64")}
    path = tmp_path / "w.safetensors"
    assert _peak(lambda: dp.save(state, path)) < 2 * MIB
    np.testing.assert_array_equal(dp.load(path)["w"].numpy(), state["w"].numpy())


@pytest.mark.parametrize("metadata", [None, {"epoch": "3", "note": "é ü 中 \n\t\"quoted\""}])
def test_the_file_is_the_one_the_safetensors_library_writes(tmp_path, metadata):
    """The same header (tensors laid out by dtype, then name; 8-byte padding), byte for byte
    the same data; readers of the library read it as it was saved."""
    state = {"z.weight": dp.randn(3, 4), "a.bias": dp.zeros(2, dtype="float64"),
             "steps": dp.tensor([7, 8]), "mask": dp.tensor([True, False]),
             "small": dp.tensor([1, 2], dtype="int8"), "half": dp.ones(3, dtype="float16"),
             "count": dp.tensor(5, dtype="int32"), "empty": dp.zeros(0, 3),
             "bytes": dp.tensor([255], dtype="uint8"), "i16": dp.tensor([-3], dtype="int16")}
    path = tmp_path / "w.safetensors"
    dp.save(state, path, metadata=metadata)
    payload = path.read_bytes()
    (length,) = struct.unpack("<Q", payload[:8])
    header = json.loads(payload[8:8 + length])
    arrays = {name: np.asarray(t.numpy()) for name, t in state.items()}
    theirs = safetensors.numpy.save(arrays, metadata=header["__metadata__"])
    (their_length,) = struct.unpack("<Q", theirs[:8])
    assert length == their_length and length % 8 == 0
    assert header == json.loads(theirs[8:8 + their_length])
    assert list(header) == list(json.loads(theirs[8:8 + their_length]))  # one layout
    assert payload[8 + length:] == theirs[8 + their_length:]
    loaded = safetensors.numpy.load_file(path)
    assert set(loaded) == set(state)
    for name, array in arrays.items():
        assert loaded[name].dtype == array.dtype
        np.testing.assert_array_equal(loaded[name], array)
    with safe_open(path, "numpy") as file:
        assert {k: v for k, v in file.metadata().items()
                if not k.startswith("dparray.")} == (metadata or {})


# ----------------------------------------------------------------------------- Unicode
LONE = "\ud800"


@pytest.mark.parametrize("where", ["name", "metadata key", "metadata value"])
def test_text_with_a_lone_surrogate_is_refused_at_load(tmp_path, where):
    """JSON's escapes can spell a lone surrogate, which no UTF-8 file can hold: loaded, the
    name could never be saved again. Before: it loaded, and the next save failed."""
    name = f"w{LONE}" if where == "name" else "w"
    entry = {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}
    metadata = {f"k{LONE}": "v"} if where == "metadata key" else {"k": f"v{LONE}"}
    header = {name: entry, "__metadata__": metadata} if where != "name" else {name: entry}
    path = _craft(tmp_path / "w.safetensors", header, np.ones(1, "<f4").tobytes())
    with pytest.raises(ValueError, match=r"w\.safetensors is not a valid safetensors file: the "
                                         r".* is not valid Unicode \(a lone surrogate\)"):
        dp.load(path)


def test_text_with_a_lone_surrogate_is_refused_at_save_before_writing(tmp_path):
    path = tmp_path / "w.safetensors"
    with pytest.raises(ValueError, match="save: the tensor name 'w\\\\ud800' is not valid Unicode"):
        dp.save({f"w{LONE}": dp.ones(1)}, path)
    with pytest.raises(ValueError, match=r"save: the metadata value .* is not valid Unicode"):
        dp.save({"w": dp.ones(1)}, path, metadata={"note": LONE})
    with pytest.raises(ValueError, match=r"save: the tensor name .* is not valid Unicode"):
        dp.save({"model": {LONE: dp.ones(1)}}, path)
    assert list(tmp_path.iterdir()) == []
    dp.save({"w\u00e9\U0001f600": dp.ones(1)}, path, metadata={"k\u4e2d": "\U0001f600"})
    tensors, metadata = dp.load(path, with_metadata=True)  # any real Unicode round-trips
    assert list(tensors) == ["w\u00e9\U0001f600"] and metadata == {"k\u4e2d": "\U0001f600"}


# ------------------------------------------------------------------------- impossible shapes
@pytest.mark.parametrize("shape, message", [
    ([2**62, 2**62, 0], r"has shape \[4611686018427387904, 4611686018427387904, 0\], too large"),
    ([2**40, 2**40, 0], r"has shape .*, too large for any array"),
    ([0, 2**63], r"has shape .*, too large for any array"),
    ([1] * 1_000_000, "has 1000000 axes; an array has at most 64"),
    ([1] * 65, "has 65 axes"),
], ids=["2**62 x 2**62 x 0", "2**40 x 2**40 x 0", "0 x 2**63", "a million axes", "65 axes"])
def test_a_shape_no_array_can_have_is_an_error_naming_the_file(tmp_path, shape, message):
    """Before: NumPy's own message ("array is too big", "maximum supported dimension"),
    without the file."""
    path = _craft(tmp_path / "odd.safetensors",
                  {"w": {"dtype": "F32", "shape": shape, "data_offsets": [0, 0]}})
    with pytest.raises(ValueError, match=r"odd\.safetensors is not a valid safetensors file: "
                                         rf"tensor 'w' {message}"):
        dp.load(path)


def test_every_shape_an_array_can_have_loads(tmp_path):
    path = _craft(tmp_path / "w.safetensors", {
        "deep": {"dtype": "F32", "shape": [1] * 64, "data_offsets": [0, 4]},
        "wide": {"dtype": "U8", "shape": [2**62, 0], "data_offsets": [4, 4]},
    }, np.ones(1, "<f4").tobytes())
    loaded = dp.load(path)
    assert loaded["deep"].shape == (1,) * 64 and loaded["wide"].shape == (2**62, 0)


def test_the_limits_are_the_librarys(tmp_path):
    assert dp_io.MAX_HEADER_BYTES == 100_000_000 and dp_io.MAX_AXES == 64
