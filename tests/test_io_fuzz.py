"""``dp.load`` on randomly damaged files: it returns exactly the tensors that were saved, or
raises ValueError -- never another exception, never different data, never a hang.

Each case mutates one saved file anywhere (its length prefix, its JSON header, its data): a
flipped bit, overwritten, inserted or deleted bytes, or a truncation.
"""

from __future__ import annotations

import functools
import pathlib
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dparray as dp

METADATA = {"epoch": "3", "note": "fuzzed"}


def _state():
    return {"weight": dp.arange(12.0).reshape(3, 4), "bias": dp.tensor([0.5, -1.0, 2.0]),
            "steps": dp.tensor([7, 8], dtype="int64"), "mask": dp.tensor([True, False, True]),
            "scale": dp.tensor(1.25, dtype="float64")}


@functools.cache
def _saved_payload() -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "saved.safetensors"
        dp.save(_state(), path, metadata=METADATA)
        return path.read_bytes()


@st.composite
def damaged(draw):
    """The saved file's bytes, with one mutation somewhere."""
    payload = bytearray(_saved_payload())
    kind = draw(st.sampled_from(["flip", "overwrite", "insert", "delete", "truncate"]))
    at = draw(st.integers(0, len(payload) - 1))
    chunk = draw(st.binary(min_size=1, max_size=16))
    if kind == "flip":
        payload[at] ^= 1 << draw(st.integers(0, 7))
    elif kind == "overwrite":
        payload[at:at + len(chunk)] = chunk
    elif kind == "insert":
        payload[at:at] = chunk
    elif kind == "delete":
        del payload[at:at + len(chunk)]
    else:
        del payload[at:]
    return bytes(payload)


def test_the_fuzzed_file_is_intact_to_begin_with(tmp_path):
    path = tmp_path / "w.safetensors"
    path.write_bytes(_saved_payload())
    tensors, metadata = dp.load(path, with_metadata=True)
    assert metadata == METADATA and list(tensors) == list(_state())


@pytest.mark.timeout(120)
@settings(max_examples=300, deadline=None, derandomize=True)
@given(payload=damaged())
def test_a_damaged_file_loads_exactly_or_is_a_value_error(payload):
    expected = _state()
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "damaged.safetensors"
        path.write_bytes(payload)
        try:
            loaded, metadata = dp.load(path, with_metadata=True)
        except ValueError:
            assert path.read_bytes() == payload  # a refused load changes no file
            return
    assert list(loaded) == list(expected) and metadata == METADATA
    for name, tensor in expected.items():
        assert loaded[name].dtype == tensor.dtype and loaded[name].shape == tensor.shape
        np.testing.assert_array_equal(loaded[name].numpy(), tensor.numpy())
