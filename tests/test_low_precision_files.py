"""bfloat16 and float16 tensors through the file paths beside the flat state dict: the streamed
writer's layout (the safetensors library's, byte for byte, with BF16 between I32 and F16),
nested state (``dp.save`` of dicts and lists) and checkpoints, every bit kept."""

from __future__ import annotations

import json
import struct

import ml_dtypes
import numpy as np
import safetensors.numpy

import dparray as dp
from dparray import nn, optim

# ties, NaN with a payload, infinities, a subnormal, -0.0: every bit must come back
_BITS = np.array([0x3F80, 0x3F81, 0x7FC1, 0x7F80, 0xFF80, 0x0001, 0x8000, 0xC2F7],
                 dtype=np.uint16)


def _low(name):
    dtype = ml_dtypes.bfloat16 if name == "bfloat16" else np.float16
    return dp.tensor(_BITS.view(dtype).reshape(2, 4).copy())


def _bits(tensor):
    return np.asarray(tensor.numpy()).view(np.uint16).tolist()


def _split(payload):
    """A safetensors file's header (JSON, in its order) and its data section."""
    (length,) = struct.unpack("<Q", payload[:8])
    return json.loads(payload[8:8 + length]), payload[8 + length:]


def test_the_streamed_file_is_the_safetensors_librarys(tmp_path):
    state = {"brain": _low("bfloat16"), "half": _low("float16"), "wide": dp.randn(3),
             "ints": dp.tensor([1, 2], dtype="int32"), "shorts": dp.tensor([3], dtype="int16"),
             "empty": dp.zeros(0, 2, dtype="bfloat16")}
    path = tmp_path / "w.safetensors"
    dp.save(state, path)
    arrays = {name: np.asarray(t.numpy()) for name, t in state.items()}
    header, data = _split(path.read_bytes())
    their_header, their_data = _split(safetensors.numpy.save(arrays))
    del header["__metadata__"]  # dparray's checksum and order; test_io_hardening checks it
    assert list(header.items()) == list(their_header.items()) and data == their_data
    assert [entry["dtype"] for entry in header.values()] == ["F32", "I32", "BF16", "BF16",
                                                             "F16", "I16"]
    loaded = dp.load(path)
    assert list(loaded) == list(state)
    for name, tensor in state.items():
        assert loaded[name].dtype is tensor.dtype and loaded[name].shape == tensor.shape
        assert _bits(loaded[name]) == _bits(tensor)


def test_nested_state_keeps_low_precision_tensors(tmp_path):
    state = {"model": {"w": _low("bfloat16"), "h": _low("float16")},
             "history": [_low("bfloat16"), {"step": 3}], "pair": (_low("float16"), None)}
    dp.save(state, tmp_path / "nested.safetensors")
    back = dp.load(tmp_path / "nested.safetensors")
    assert set(back) == {"model", "history", "pair"} and back["history"][1] == {"step": 3}
    for got, sent in ((back["model"]["w"], state["model"]["w"]),
                      (back["model"]["h"], state["model"]["h"]),
                      (back["history"][0], state["history"][0]),
                      (back["pair"][0], state["pair"][0])):
        assert got.dtype is sent.dtype and _bits(got) == _bits(sent)
    assert back["pair"][1] is None and isinstance(back["pair"], tuple)


def test_a_checkpoint_keeps_a_bfloat16_model_and_a_scaler(tmp_path):
    dp.manual_seed(0)
    model = nn.Linear(4, 3).to(dp.bfloat16)
    scaler = dp.amp.GradScaler(init_scale=1024.0)
    dp.save_checkpoint(tmp_path / "c.safetensors", model=model,
                       optimizer=optim.SGD(model.parameters(), lr=0.1), scaler=scaler, step=5)
    twin = nn.Linear(4, 3).to(dp.bfloat16)
    twin_scaler = dp.amp.GradScaler()
    restored = dp.load_checkpoint(tmp_path / "c.safetensors", model=twin,
                                  optimizer=optim.SGD(twin.parameters(), lr=0.1),
                                  scaler=twin_scaler)
    assert restored.step == 5 and twin_scaler.get_scale() == 1024.0
    for name, tensor in model.state_dict().items():
        assert twin.state_dict()[name].dtype is dp.bfloat16
        assert _bits(twin.state_dict()[name]) == _bits(tensor)
