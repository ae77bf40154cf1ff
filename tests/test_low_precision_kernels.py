"""The NumPy backend's low-precision kernels (``backends/_low_precision.py``): the compiled
float32 <-> bfloat16 conversion against ml_dtypes, bit for bit, and the bfloat16/float16
products -- MKL's ``cblas_gemm_bf16bf16f32`` / ``cblas_gemm_f16f16f32`` (forced here where the
CPU has no native support, where MKL runs them slowly but correctly) and the converted float32
products of the fallback -- against float64 products of the same rounded operands; and the
ops built on products under every path, against float32."""

from __future__ import annotations

import platform
import sys

import ml_dtypes
import numpy as np
import pytest
from dparray.backends import _blas_race, _low_precision, _mkl

import dparray as dp
from dparray import kernels
from dparray.ops.linalg import array_matmul, upcast_matmul, wide_matmul

BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
LOW = {"bfloat16": BF16, "float16": F16}
HAS_MKL = sys.platform == "linux" and platform.machine() == "x86_64"


# ---------------------------------------------------------------------------- conversion
def _to_bfloat16_bits(bits):
    x = np.asarray(bits, np.uint32)
    return _low_precision.convert(x.view(np.float32), BF16).view(np.uint16)


def _expected_bits(bits):
    with np.errstate(invalid="ignore"):
        return np.asarray(bits, np.uint32).view(np.float32).astype(BF16).view(np.uint16)


def test_every_bfloat16_widens_exactly():
    every = np.arange(1 << 16, dtype=np.uint16).view(BF16)
    mine = _low_precision.convert(every, np.dtype(np.float32))
    assert mine.dtype == np.float32
    np.testing.assert_array_equal(mine.view(np.uint32), every.astype(np.float32).view(np.uint32))


def test_rounding_ties_nan_inf_and_subnormals_match_ml_dtypes():
    high = np.arange(1 << 16, dtype=np.uint32) << 16  # every bfloat16, as float32 bits
    # below half, just below, exactly half (a tie: to even), just above, the largest low part
    lows = np.array([0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF], np.uint32)
    bits = (high[:, None] | lows[None, :]).ravel()  # NaNs, infinities, subnormals included
    np.testing.assert_array_equal(_to_bfloat16_bits(bits), _expected_bits(bits))
    # the cases by name
    cases = {0x3F808000: 0x3F80, 0x3F818000: 0x3F82, 0x3F808001: 0x3F81,  # ties to even
             0x7F7FFFFF: 0x7F80, 0xFF7FFFFF: 0xFF80,  # past the largest finite: infinity
             0x7F800000: 0x7F80, 0xFF800000: 0xFF80, 0x00000001: 0x0000, 0x00008000: 0x0000,
             0x00018000: 0x0002, 0x007FFFFF: 0x0080,  # subnormals, and into the normals
             0x7F800001: 0x7FC0, 0xFF800001: 0xFFC0, 0x7FC00000: 0x7FC0}  # NaN stays NaN
    got = _to_bfloat16_bits(list(cases))
    assert [hex(v) for v in got] == [hex(v) for v in cases.values()]


def test_random_float32s_round_as_ml_dtypes_rounds_them():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 1 << 32, size=1 << 20, dtype=np.uint64).astype(np.uint32)
    np.testing.assert_array_equal(_to_bfloat16_bits(bits), _expected_bits(bits))
    small = bits[:100]  # below the parallel threshold: the serial compilation
    np.testing.assert_array_equal(_to_bfloat16_bits(small), _expected_bits(small))


def test_other_casts_and_layouts_are_numpys():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for source, target in ((x.T, BF16), (x.astype(np.float64), BF16), (x, F16)):
        out = _low_precision.convert(source, target)
        np.testing.assert_array_equal(out.astype(np.float64),
                                      source.astype(target).astype(np.float64))
        assert out.dtype == target
    assert _low_precision.convert(x, np.dtype(np.float32)) is x


@pytest.mark.parametrize("with_kernels", [True, False])
def test_astype_and_its_gradient_with_and_without_the_kernel(with_kernels):
    x = dp.tensor(np.linspace(-3, 3, 50_000, dtype=np.float32), requires_grad=True)
    context = kernels.kernels_enabled() if with_kernels else kernels.reference_only()
    with context:
        low = x.astype("bfloat16")
        grads = (low * low).sum().backward()
    np.testing.assert_array_equal(low.numpy(), x.numpy().astype(BF16))
    assert grads[x].dtype is dp.float32
    np.testing.assert_array_equal(grads[x].numpy(),
                                  (2 * x.numpy().astype(BF16)).astype(np.float32))


# ------------------------------------------------------------------------------ products
def _reference(a, b):
    """The exact product of the rounded operands, in float64."""
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


def _check_product(got, a, b, dtype, wide=False):
    expected = _reference(a, b)
    assert got.dtype == (np.float32 if wide else dtype) and got.shape == expected.shape
    scale = max(1.0, float(np.abs(expected).max()))
    # wide: float32 accumulation, about k float32 ulps; else rounded once to the dtype
    tolerance = (1e-6 * a.shape[-1] if wide else float(np.finfo(dtype).eps)) * scale
    assert float(np.abs(got.astype(np.float64) - expected).max()) <= tolerance


def _operands(rng, shape_a, shape_b, dtype):
    return (rng.standard_normal(shape_a).astype(np.float32).astype(dtype),
            rng.standard_normal(shape_b).astype(np.float32).astype(dtype))


@pytest.fixture(params=["mkl", "converted"])
def path(request, monkeypatch):
    """The kernel's two ways: MKL's low-precision product (forced: this CPU may lack the
    instructions that make it fast, not those that make it right) or the converted float32
    one; yields the names of the MKL calls made."""
    calls: list[str] = []
    if request.param == "mkl":
        if not HAS_MKL:
            pytest.skip("the mkl wheels are for x86-64 Linux only")
        assert _mkl.status()[0] is not None, _mkl.status()[1]
        monkeypatch.setattr(_low_precision, "native", lambda name: (True, "forced by the test"))
        monkeypatch.setattr(_mkl, "SMALLEST", 0)
        monkeypatch.setattr(_mkl, "BATCH_SMALLEST", 0)
        original = _mkl._low_gemm
        monkeypatch.setattr(_mkl, "_low_gemm",
                            lambda *args: calls.append("low") or original(*args))
    else:
        monkeypatch.setattr(_low_precision, "native", lambda name: (False, "forced by the test"))
    return request.param, calls


@pytest.mark.parametrize("name", ["bfloat16", "float16"])
def test_products_in_every_layout(path, name):
    kind, calls = path
    dtype, rng = LOW[name], np.random.default_rng(1)
    a, b = _operands(rng, (37, 23), (23, 11), dtype)
    for left in (a, np.asfortranarray(a), a[::-1], np.ascontiguousarray(a.T).T):
        for right in (b, np.asfortranarray(b), b[:, ::-1]):
            for wide in (False, True):
                got = _low_precision.low_precision_matmul(np, left, right, wide)
                _check_product(got, left, right, dtype, wide)
    assert bool(calls) == (kind == "mkl")


@pytest.mark.parametrize("name", ["bfloat16", "float16"])
def test_stacks_of_products(path, name):
    dtype, rng = LOW[name], np.random.default_rng(2)
    a, b = _operands(rng, (2, 3, 9, 8), (2, 3, 8, 5), dtype)
    _check_product(_low_precision.low_precision_matmul(np, a, b, False), a, b, dtype)
    _check_product(_low_precision.low_precision_matmul(np, a, b, True), a, b, dtype, wide=True)
    vector = _low_precision.low_precision_matmul(np, a[0, 0], b[0, 0, :, 0], False)  # 1-D
    _check_product(vector, a[0, 0], b[0, 0, :, 0], dtype)


@pytest.mark.parametrize("name", ["bfloat16", "float16"])
def test_products_accumulate_in_float32(path, name):
    """3001 ones: a low-precision accumulator would stop at 256 (bfloat16) or 2048 (float16);
    float32's reaches 3001, then rounded once."""
    dtype = LOW[name]
    a, b = np.ones((2, 3001), dtype), np.ones((3001, 3), dtype)
    got = _low_precision.low_precision_matmul(np, a, b, False)
    assert got.astype(np.float32).tolist() == [[float(np.float32(3001).astype(dtype))] * 3] * 2
    assert _low_precision.low_precision_matmul(np, a, b, True).tolist() == [[3001.0] * 3] * 2


@pytest.mark.parametrize("name", ["bfloat16", "float16"])
def test_the_reference_product(name):
    dtype, rng = LOW[name], np.random.default_rng(3)
    a, b = _operands(rng, (6, 40), (40, 7), dtype)
    _check_product(upcast_matmul(np, a, b, False), a, b, dtype)
    _check_product(upcast_matmul(np, a, b, True), a, b, dtype, wide=True)
    ones = upcast_matmul(np, np.ones((1, 3001), dtype), np.ones((3001, 1), dtype), True)
    assert ones.tolist() == [[3001.0]]


def test_array_matmul_dispatches_by_dtype():
    rng = np.random.default_rng(4)
    backend = dp.get_backend("numpy")
    a, b = _operands(rng, (5, 6), (6, 4), BF16)
    with kernels.reference_only():
        assert array_matmul(backend)(a, b).dtype == BF16
        assert wide_matmul(backend)(a, b).dtype == np.float32
    f32 = array_matmul(backend)(a.astype(np.float32), b.astype(np.float32))
    assert f32.dtype == np.float32
    mixed = array_matmul(backend)(a, b.astype(np.float32))  # mixed dtypes promote, as @ does
    assert mixed.dtype == np.float32


@pytest.mark.parametrize("name", ["bfloat16", "float16"])
def test_ops_on_low_precision_inputs_match_float32(path, name, kernels):
    """Each product-based op, given low-precision inputs, against the same op on their
    float32 copies: within a few rounding errors of the low-precision dtype."""
    rng = np.random.default_rng(5)
    F = dp.nn.functional

    def low(*shape):
        return dp.tensor(rng.standard_normal(shape).astype(np.float32)).astype(name)

    cases = {
        "matmul": (lambda a, b: a @ b, [low(3, 5, 8), low(3, 8, 4)]),
        "linear": (F.linear, [low(7, 9), low(5, 9), low(5)]),
        "conv2d": (lambda x, w, bias: F.conv2d(x, w, bias, padding=1),
                   [low(2, 3, 6, 6), low(4, 3, 3, 3), low(4)]),
        "conv1d": (F.conv1d, [low(2, 3, 9), low(4, 3, 3), low(4)]),
        "conv_transpose2d": (lambda x, w: F.conv_transpose2d(x, w, stride=2),
                             [low(2, 3, 4, 4), low(3, 2, 3, 3)]),
        "attention": (F.scaled_dot_product_attention, [low(2, 5, 4), low(2, 6, 4),
                                                       low(2, 6, 4)]),
        "einsum": (lambda a, b: dp.einsum("ij,kj->ik", a, b), [low(4, 6), low(3, 6)]),
    }
    eps = float(np.finfo(LOW[name]).eps)
    for op, (function, inputs) in cases.items():
        variables = [t.detach().requires_grad_() for t in inputs]
        out = function(*variables)
        assert out.dtype.name == name, op
        grads = (out.astype("float32") ** 2).sum().backward()
        wide = [t.astype("float32").detach().requires_grad_() for t in inputs]
        expected = function(*wide)
        expected_grads = (expected ** 2).sum().backward()
        _close(out, expected, 2 * eps, op)
        for v, w in zip(variables, wide, strict=True):
            assert grads[v].dtype.name == name
            _close(grads[v], expected_grads[w], 8 * eps, f"{op} gradient")


def _close(got, expected, tolerance, what):
    got = got.astype("float64").numpy()
    expected = expected.astype("float64").numpy()
    error = float(np.linalg.norm(got - expected)) / max(float(np.linalg.norm(expected)), 1e-30)
    assert error <= tolerance, f"{what}: relative error {error:.2e} > {tolerance:.2e}"


def test_the_kernel_tables_hold_the_low_precision_entries():
    from dparray.backends import _cupy_kernels, _numpy_kernels

    numpy_table = _numpy_kernels.table()
    assert numpy_table["low_precision_matmul"] is _low_precision.low_precision_matmul
    assert numpy_table["astype"] is _low_precision.AsTypeKernel
    assert "low_precision_matmul" in _cupy_kernels.table()


def test_dparray_info_says_whether_low_precision_products_are_accelerated():
    facts = dp.backend.describe(dp.get_backend("numpy"))
    for name in ("bfloat16", "float16"):
        fast, why = _low_precision.native(name)
        line = facts[f"{name} products"]
        assert line.startswith("accelerated" if fast else "not accelerated") and why in line


def test_acceleration_follows_the_cpu_flags_and_mkls_instruction_limit(monkeypatch):
    if _mkl.status()[0] is None:
        pytest.skip("needs MKL")
    monkeypatch.setattr(_mkl, "cpu_flags", lambda: frozenset({"avx2", "amx_bf16", "amx_tile"}))
    monkeypatch.delenv("MKL_ENABLE_INSTRUCTIONS", raising=False)
    assert _mkl.accelerated("bfloat16") == (True, "MKL on AMX")
    assert _mkl.accelerated("float16")[0] is False
    monkeypatch.setenv("MKL_ENABLE_INSTRUCTIONS", "AVX512")
    fast, why = _mkl.accelerated("bfloat16")
    assert not fast and "MKL_ENABLE_INSTRUCTIONS=AVX512 turns it off" in why
    monkeypatch.setattr(_mkl, "cpu_flags", lambda: frozenset({"avx2"}))
    monkeypatch.delenv("MKL_ENABLE_INSTRUCTIONS")
    assert _mkl.accelerated("bfloat16") == (False, "the CPU has no AMX or AVX512-BF16")


def test_where_the_cpu_has_the_instructions_a_race_decides(monkeypatch):
    monkeypatch.setattr(_low_precision, "_races", {})
    monkeypatch.delenv("DPARRAY_BLAS", raising=False)
    monkeypatch.setattr(_mkl, "accelerated", lambda name: (True, "MKL on AMX"))
    timings = {"slower": (2.0, 1.0), "faster": (1.0, 2.5)}
    for verdict, (native_seconds, float32_seconds) in timings.items():
        monkeypatch.setattr(_blas_race, "race_low_precision",
                            lambda native, float32, dtype, t=(native_seconds, float32_seconds): t)
        monkeypatch.setattr(_low_precision, "_races", {})
        fast, why = _low_precision.native("bfloat16")
        if verdict == "slower":
            assert (fast, why) == (False, "MKL on AMX, but its bfloat16 product ran at 0.50x "
                                          "the float32 product's speed on this CPU, measured")
        else:
            assert (fast, why) == (True, "MKL on AMX; 2.50x the float32 product's speed on "
                                         "this CPU, measured")


def test_no_race_without_the_instructions_or_with_mkl_chosen(monkeypatch):
    def no_race(*args):
        raise AssertionError("raced")

    monkeypatch.setattr(_blas_race, "race_low_precision", no_race)
    monkeypatch.setattr(_low_precision, "_races", {})
    monkeypatch.setattr(_mkl, "accelerated", lambda name: (False, "the CPU has no AMX"))
    assert _low_precision.native("float16") == (False, "the CPU has no AMX")
    monkeypatch.setattr(_mkl, "accelerated", lambda name: (True, "MKL on AMX"))
    monkeypatch.setenv("DPARRAY_BLAS", "mkl")
    assert _low_precision.native("bfloat16") == (True, "MKL on AMX")


def test_the_low_precision_race_times_both_products_on_its_shape():
    seen = []

    def product(name):
        def multiply(a, b):
            seen.append((name, a.shape, b.shape, a.dtype))
            return np.zeros((a.shape[0], b.shape[1]), np.float32)
        return multiply

    dtype = LOW["bfloat16"]
    native_seconds, float32_seconds = _blas_race.race_low_precision(
        product("native"), product("float32"), dtype)
    assert 0 < native_seconds < float("inf") and 0 < float32_seconds < float("inf")
    m, k, n = _blas_race.LOW_PRECISION_SHAPE
    rounds = 1 + _blas_race.ROUNDS
    assert sorted(seen) == sorted([("native", (m, k), (k, n), dtype)] * rounds
                                  + [("float32", (m, k), (k, n), dtype)] * rounds)


@pytest.mark.parametrize("name", ["bfloat16", "float16"])
def test_the_cupy_kernels_logic_on_numpy_arrays(name):
    """``_cupy_low_precision`` uses only what NumPy arrays also have (``@``, ``astype``): its
    dispatch, run here on NumPy's arrays, where CuPy's cuBLAS call is NumPy's product."""
    from dparray.backends import _cupy_low_precision

    dtype, rng = LOW[name], np.random.default_rng(6)
    a, b = _operands(rng, (9, 30), (30, 4), dtype)
    same = _cupy_low_precision.low_precision_matmul(np, a, b, False)
    wide = _cupy_low_precision.low_precision_matmul(np, a, b, True)
    assert same.dtype == dtype and wide.dtype == np.float32
    np.testing.assert_array_equal(wide.astype(dtype), same)  # one product, rounded once
    mixed = _cupy_low_precision.low_precision_matmul(np, a, b.astype(np.float32), True)
    np.testing.assert_allclose(mixed, _reference(a, b), rtol=1e-5, atol=1e-5)
