"""bfloat16 and float16 as dparray dtypes: on which backends, creation, promotion, casting,
printing, reductions, and safetensors files exchanged with PyTorch (fixtures made by
``tests/data/make_mixed_precision_fixtures.py``)."""

from __future__ import annotations

import json
import pathlib
import struct

import ml_dtypes
import numpy as np
import pytest

import dparray as dp
from dparray import dtypes

DATA = pathlib.Path(__file__).parent / "data"
LOW = ["bfloat16", "float16"]
NUMPY_LOW = {"bfloat16": np.dtype(ml_dtypes.bfloat16), "float16": np.dtype(np.float16)}


def _has(backend, name):
    return dtypes.supports(backend, name)


def test_every_backend_says_which_low_precision_dtypes_it_has(backend):
    expected = {"numpy": {"bfloat16", "float16"}, "array_api_strict": set()}
    has = {name for name in LOW if _has(backend, name)}
    if backend.name in expected:
        assert has == expected[backend.name]
    else:  # CuPy: float16 always, bfloat16 where the installed CuPy has it
        assert "float16" in has


def test_a_backend_without_the_dtype_refuses_it_by_name():
    with dp.use_backend("array_api_strict"):
        for name in LOW:
            with pytest.raises(TypeError, match=f"'array_api_strict' does not support dtype "
                                                f"{name}.*array API standard has no {name}"):
                dp.tensor([1.0], dtype=name)
            with pytest.raises(TypeError, match=f"does not support dtype {name}"):
                dp.ones(2).astype(name)


@pytest.mark.parametrize("name", LOW)
def test_creation_and_the_native_dtype(name):
    t = dp.tensor([1.5, -0.25], dtype=name)
    assert t.dtype is getattr(dp, name) and t.data.dtype == NUMPY_LOW[name]
    assert dtypes.to_dtype(NUMPY_LOW[name], t.backend) is t.dtype
    assert dtypes.to_dtype(name) is t.dtype
    assert dp.zeros(3, dtype=name).dtype is t.dtype and dp.randn(2, dtype=name).dtype is t.dtype
    assert t.tolist() == [1.5, -0.25] and isinstance(t[0].item(), float)


def test_bfloat16_rounds_to_nearest_even_and_holds_float32s_range():
    # 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even one, 1
    t = dp.tensor([1 + 2**-8, 1 + 3 * 2**-8, 3e38, 1e-40], dtype="bfloat16")
    assert t.tolist() == [1.0, 1 + 2**-6, float(np.float32(3e38).astype(ml_dtypes.bfloat16)),
                          float(np.float32(1e-40).astype(ml_dtypes.bfloat16))]
    assert dtypes.value_range(dp.bfloat16) == (-3.3895313892515355e38, 3.3895313892515355e38)
    with pytest.raises(ValueError, match="does not fit bfloat16"):
        dp.full((2,), 3.4e38, dtype="bfloat16")
    with pytest.raises(ValueError, match="does not fit float16"):
        dp.full((2,), 7e4, dtype="float16")


@pytest.mark.parametrize("name", LOW)
def test_promotion_follows_pytorch(name):
    low = dp.tensor([1.0, 2.0], dtype=name)
    assert (low + 0.5).dtype is low.dtype  # a Python scalar never widens
    assert (low * dp.ones(2)).dtype is dp.float32
    assert (low + dp.ones(2, dtype="float64")).dtype is dp.float64
    other = "float16" if name == "bfloat16" else "bfloat16"
    assert (low + dp.tensor([1.0, 1.0], dtype=other)).dtype is dp.float32
    integers, mask = dp.tensor([1, 2]), dp.tensor([True, False])
    assert (low + integers).dtype is low.dtype  # the floating kind wins, as in PyTorch
    assert (integers * low).dtype is low.dtype
    assert (low + mask).dtype is low.dtype
    assert dp.where(mask, low, integers).dtype is low.dtype
    assert dp.cat([low, integers]).dtype is low.dtype
    assert (low + integers).tolist() == [2.0, 4.0]


@pytest.mark.parametrize("name", LOW)
def test_casts_are_differentiable_and_gradients_keep_the_variables_dtype(name):
    w = dp.tensor([1.0, -3.0], requires_grad=True)
    low = w.astype(name)
    assert low.dtype.name == name
    grads = (low * low).sum().backward()
    assert grads[w].dtype is dp.float32 and grads[w].tolist() == [2.0, -6.0]
    v = dp.tensor([1.0, 2.0], dtype=name, requires_grad=True)
    assert ((v * 3.0).sum().backward()[v]).dtype.name == name


@pytest.mark.parametrize("name", LOW)
def test_sums_means_and_variances_accumulate_in_float32(name):
    ones = dp.ones((3, 3000), dtype=name)  # in bfloat16, 256 + 1 would round back to 256

    def rounded(total):
        return float(np.float32(total).astype(NUMPY_LOW[name]))

    assert ones.sum().item() == rounded(9000) and rounded(9000) > 8990  # rounded once
    assert ones.sum(axis=1).tolist() == [rounded(3000)] * 3
    assert ones.mean().item() == 1.0 and ones.var().item() == 0.0
    w = dp.ones((4, 3000), requires_grad=True)
    bias = dp.zeros(3000, dtype=name, requires_grad=True)
    grads = (w.astype(name) + bias).sum().backward()  # the bias's gradient: summed broadcast
    assert grads[bias].tolist() == [4.0] * 3000


def test_bfloat16_prints_its_values_as_floats():
    text = repr(dp.tensor([0.0, 1.0, 0.1], dtype="bfloat16"))
    assert text == "tensor([0.        , 1.        , 0.10009766], dtype=bfloat16, backend=numpy)"
    assert repr(dp.tensor([0.5, 1.0], dtype="float16")) == \
        "tensor([0.5, 1. ], dtype=float16, backend=numpy)"
    assert repr(dp.bfloat16) == "dparray.bfloat16"


def test_clip_and_the_hard_activations_work_in_bfloat16():
    x = dp.tensor([-4.0, -1.0, 0.5, 2.0, float("nan")], dtype="bfloat16")
    np.testing.assert_array_equal(x.clip(-1.5, 1.0).numpy().astype(np.float32),
                                  [-1.5, -1.0, 0.5, 1.0, np.nan])
    assert x.clip(2.0, 1.0).tolist()[:4] == [1.0] * 4  # min > max: max everywhere
    hard = dp.nn.functional.hardtanh(x)
    np.testing.assert_array_equal(hard.numpy().astype(np.float32), [-1, -1, 0.5, 1, np.nan])


# -------------------------------------------------------------- files exchanged with PyTorch
def _pytorch_file():
    return dp.load(DATA / "mixed_precision.safetensors")


@pytest.mark.parametrize("name", LOW)
def test_pytorchs_low_precision_tensors_load_with_their_values(name):
    saved = _pytorch_file()
    values, as_float32 = saved[f"exchange/{name}"], saved[f"exchange/{name}.float32"]
    assert values.dtype.name == name and as_float32.dtype is dp.float32
    np.testing.assert_array_equal(values.astype("float32").numpy(), as_float32.numpy())
    np.testing.assert_array_equal(np.signbit(values.numpy()), np.signbit(as_float32.numpy()))


def _raw_tensor(path, name):
    """The dtype and bytes safetensors stores for tensor ``name`` in ``path``: what PyTorch's
    reader turns into a tensor."""
    payload = pathlib.Path(path).read_bytes()
    (length,) = struct.unpack("<Q", payload[:8])
    entry = json.loads(payload[8:8 + length])[name]
    start, end = entry["data_offsets"]
    return entry["dtype"], entry["shape"], payload[8 + length + start:8 + length + end]


@pytest.mark.parametrize("name", LOW)
def test_dparrays_low_precision_files_hold_what_pytorch_writes(name, tmp_path):
    values = _pytorch_file()[f"exchange/{name}"]
    dp.save({"values": dp.tensor(values.numpy().copy())}, tmp_path / "mine.safetensors")
    mine = _raw_tensor(tmp_path / "mine.safetensors", "values")
    theirs = _raw_tensor(DATA / "mixed_precision.safetensors", f"exchange/{name}")
    assert mine == theirs and mine[0] == {"bfloat16": "BF16", "float16": "F16"}[name]
    back = dp.load(tmp_path / "mine.safetensors")["values"]
    assert back.numpy().tobytes() == values.numpy().tobytes()  # NaN's bits included


def test_a_low_precision_file_on_a_backend_without_the_dtype_is_refused(tmp_path):
    with pytest.raises(TypeError, match="holds bfloat16 tensors, and backend "
                                        "'array_api_strict' has no bfloat16"):
        dp.load(DATA / "mixed_precision.safetensors", backend="array_api_strict")
