"""MKL's matrix products on the NumPy backend (``backends/_mkl.py``).

``make test`` installs the ``mkl`` extra, whose wheels exist for x86-64 Linux only: there the
tests require MKL; elsewhere they are skipped.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import threading

import numpy as np
import pytest
from dparray.backends import _blas_race, _mkl

import dparray as dp
import dparray.nn.functional as F
from dparray import kernels

pytestmark = pytest.mark.skipif(
    not (sys.platform == "linux" and platform.machine() == "x86_64"),
    reason="the mkl wheels are for x86-64 Linux only")

FLOATS = [np.float32, np.float64]
TOLERANCE = {np.float32: 1e-5, np.float64: 1e-13}


@pytest.fixture
def every_size(monkeypatch):
    """MKL takes every product, not only large ones, so small tests reach it (whichever
    library won this process's race); yields the list of MKL calls made (their names)."""
    assert _mkl.status()[0] is not None, _mkl.status()[1]
    monkeypatch.setattr(_mkl, "SMALLEST", 0)
    monkeypatch.setattr(_mkl, "_choice", (True, "MKL, for the test"))
    calls: list[str] = []
    for name in ("_gemm", "_gemm_batch"):
        monkeypatch.setattr(_mkl, name, _counted(name, getattr(_mkl, name), calls))
    return calls


def _counted(name, original, calls):
    def call(*args):
        calls.append(name)
        return original(*args)

    return call


def _check(a, b):
    got = _mkl.matmul(a, b)
    expected = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert got.shape == expected.shape and got.dtype == a.dtype
    assert got.flags.c_contiguous
    scale = max(1.0, float(np.abs(expected).max()))
    assert float(np.abs(got - expected).max()) <= TOLERANCE[a.dtype.type] * scale * a.shape[-1]


def _normal(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_2d_products_in_every_layout(every_size, dtype):
    rng = np.random.default_rng(0)
    _check(np.ones((2, 2), dtype), np.ones((2, 2), dtype))
    assert every_size == ["_gemm"]
    a, b = _normal(rng, (37, 23), dtype), _normal(rng, (23, 11), dtype)
    for left in (a, np.asfortranarray(a), _normal(rng, (23, 37), dtype).T, _normal(
            rng, (74, 23), dtype)[::2], _normal(rng, (37, 30), dtype)[:, 3:26]):
        for right in (b, np.asfortranarray(b), _normal(rng, (11, 23), dtype).T,
                      _normal(rng, (23, 22), dtype)[:, ::2]):
            _check(left, right)


@pytest.mark.parametrize("dtype", FLOATS)
def test_one_row_one_column_and_vectors_outer(every_size, dtype):
    rng = np.random.default_rng(1)
    _check(_normal(rng, (1, 9), dtype), _normal(rng, (9, 5), dtype))
    _check(_normal(rng, (6, 9), dtype), _normal(rng, (9, 1), dtype))
    _check(_normal(rng, (6, 1), dtype), _normal(rng, (1, 4), dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_stacks_in_every_layout(every_size, dtype):
    rng = np.random.default_rng(2)
    a, b = _normal(rng, (2, 3, 8, 5), dtype), _normal(rng, (2, 3, 5, 7), dtype)
    for left in (a, np.swapaxes(_normal(rng, (2, 3, 5, 8), dtype), -1, -2), a[:, :, ::2]):
        for right in (b, np.swapaxes(_normal(rng, (2, 3, 7, 5), dtype), -1, -2),
                      _normal(rng, (2, 6, 5, 7), dtype)[:, ::2]):
            _check(left, right)
    _check(_normal(rng, (4, 6, 3), dtype), _normal(rng, (4, 3, 2), dtype))


def test_what_mkl_does_not_take_goes_to_numpy(every_size):
    rng = np.random.default_rng(3)
    broadcast = (_normal(rng, (4, 6, 3), np.float64), _normal(rng, (3, 2), np.float64))
    mixed = (_normal(rng, (4, 3), np.float32), _normal(rng, (3, 2), np.float64))
    integers = (np.arange(12).reshape(4, 3), np.arange(6).reshape(3, 2))
    vector = (_normal(rng, (4, 3), np.float64), _normal(rng, 3, np.float64))
    empty = (np.ones((0, 3), np.float32), np.ones((3, 2), np.float32))
    for a, b in (broadcast, mixed, integers, vector, empty):
        got = _mkl.matmul(a, b)
        expected = a @ b
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_matrices_too_large_for_32_bit_sizes_go_to_numpy(every_size, monkeypatch):
    monkeypatch.setattr(_mkl, "LARGEST", 12)
    rng = np.random.default_rng(7)
    a, b = _normal(rng, (4, 3), np.float64), _normal(rng, (3, 4), np.float64)
    np.testing.assert_array_equal(_mkl.matmul(a, b), a @ b)
    assert not every_size
    _check(a[:, :2], b[:2, :2])
    assert every_size == ["_gemm"]


def test_products_are_bitwise_the_same_from_call_to_call_and_at_any_alignment(every_size):
    """What bitwise-repeatable training (and resuming from a checkpoint) relies on."""
    rng = np.random.default_rng(8)
    a, b = _normal(rng, (96, 300), np.float32), _normal(rng, (300, 130), np.float32)

    def copy_at(x, offset):
        buffer = np.empty(x.size + 16, x.dtype)
        view = buffer[offset:offset + x.size].reshape(x.shape)
        view[...] = x
        return view

    first = _mkl.matmul(a, b)
    for offset in range(9):
        assert np.array_equal(_mkl.matmul(copy_at(a, offset), copy_at(b, 8 - offset)), first)


def test_small_products_stay_with_numpy(monkeypatch):
    calls = []
    monkeypatch.setattr(_mkl, "_choice", (True, "MKL, for the test"))
    monkeypatch.setattr(_mkl, "_gemm", lambda *args: calls.append(args))
    small = np.ones((8, 8), np.float32)
    assert (_mkl.matmul(small, small) == 8).all() and not calls
    side = round(_mkl.SMALLEST ** (1 / 3)) + 1
    large = np.ones((side, side), np.float32)
    _mkl.matmul(large, large)
    assert len(calls) == 1


def test_the_numpy_backend_s_table_has_mkl_s_product_and_says_who_won_the_race():
    backend = dp.get_backend("numpy")
    assert _mkl.status()[0] is not None
    assert backend.kernels["matmul"] is _mkl.matmul  # which hands each product on
    mkl, why = _mkl.makes_products()
    assert dp.backend.describe(backend)["matrix products"] == why
    assert why.startswith("MKL " if mkl else "OpenBLAS (NumPy's: MKL ")


def test_openblas_makes_the_products_only_where_mkl_was_clearly_slower():
    name = "MKL 2026.2.1 (GNU OpenMP threads)"
    assert _blas_race.verdict(2.0, 1.0, name) == (False, (
        "OpenBLAS (NumPy's: MKL 2026.2.1 (GNU OpenMP threads) took 2.00x its time on this CPU; "
        "DPARRAY_BLAS=mkl for MKL's)"))
    close = _blas_race.MARGIN * 0.99
    assert _blas_race.verdict(close, 1.0, name) == (True, (
        f"MKL 2026.2.1 (GNU OpenMP threads); OpenBLAS took {1 / close:.2f}x its time on this "
        "CPU"))
    assert _blas_race.verdict(1.0, 1.5, name)[0] is True


def test_the_race_times_both_libraries_on_every_shape():
    calls = {"mkl": [], "openblas": []}

    def product(name):
        def multiply(a, b):
            calls[name].append((a.shape, b.shape, a.dtype))
            return a @ b
        return multiply

    mkl_seconds, openblas_seconds = _blas_race.race(product("mkl"), product("openblas"))
    assert 0 < mkl_seconds < float("inf") and 0 < openblas_seconds < float("inf")
    shapes = [((m, k), (k, n), np.float32) for m, k, n in _blas_race.SHAPES]
    for made in calls.values():  # one untimed round, then the timed ones
        assert made == shapes * (1 + _blas_race.ROUNDS)


def test_the_race_decides_the_products(monkeypatch):
    events = []
    monkeypatch.setattr(_mkl, "wait_for_warm_up", lambda: events.append("warm-up done"))
    monkeypatch.setattr(_blas_race, "race",
                        lambda mkl, openblas: events.append("race") or (3.0, 1.0))
    monkeypatch.delenv("DPARRAY_BLAS", raising=False)
    mkl, why = _mkl._choose()
    assert events == ["warm-up done", "race"]  # Numba's start-up thread would skew it
    assert not mkl and "took 3.00x its time" in why
    monkeypatch.setattr(_mkl, "_choice", (mkl, why))
    a = np.ones((300, 300))
    called = []
    monkeypatch.setattr(_mkl, "_gemm", lambda *args: called.append(args))
    assert (_mkl.matmul(a, a) == 300).all() and not called  # NumPy's product


def test_dparray_blas_mkl_takes_mkl_s_products_without_a_race(monkeypatch):
    def no_race(mkl, openblas):
        raise AssertionError("raced")

    monkeypatch.setattr(_blas_race, "race", no_race)
    monkeypatch.setenv("DPARRAY_BLAS", "MKL")
    assert _mkl._choose() == (True, f"{_mkl.status()[1]}; DPARRAY_BLAS=mkl")


def test_an_unknown_dparray_blas_is_a_value_error(monkeypatch):
    monkeypatch.setenv("DPARRAY_BLAS", "atlas")
    with pytest.raises(ValueError, match=r"DPARRAY_BLAS must be one of mkl, openblas or unset "
                                         r"\(the faster on this CPU, measured\), got 'atlas'"):
        _mkl._choose()


def test_layers_through_mkl_match_the_reference(every_size):
    """Linear, matmul and attention, values and gradients, with MKL and with the operator."""
    rng = np.random.default_rng(4)
    arrays = {name: _normal(rng, shape, np.float64) for name, shape in {
        "x": (3, 5, 8), "w": (6, 8), "b": (6,), "q": (3, 2, 5, 4), "k": (3, 2, 7, 4),
        "v": (3, 2, 7, 4), "m": (3, 8, 4)}.items()}

    def run():
        t = {name: dp.tensor(a, requires_grad=True) for name, a in arrays.items()}
        out = F.linear(t["x"], t["w"], t["b"]).sum() + ((t["x"] @ t["m"]) ** 2).sum() \
            + (F.scaled_dot_product_attention(t["q"], t["k"], t["v"]) ** 2).sum()
        grads = out.backward()
        return out.item(), {name: grads[tensor].numpy() for name, tensor in t.items()}

    with kernels.kernels_enabled():
        value, grads = run()
    assert {"_gemm", "_gemm_batch"} <= set(every_size)
    with kernels.reference_only():
        expected_value, expected_grads = run()
    assert value == pytest.approx(expected_value, rel=1e-13)
    for name, grad in grads.items():
        np.testing.assert_allclose(grad, expected_grads[name], rtol=1e-12, atol=1e-12)


def test_a_convolution_through_mkl_matches_the_reference(every_size):
    rng = np.random.default_rng(5)
    x, w = _normal(rng, (2, 4, 7, 6), np.float64), _normal(rng, (6, 2, 3, 3), np.float64)

    def run():
        xt, wt = dp.tensor(x, requires_grad=True), dp.tensor(w, requires_grad=True)
        out = F.conv2d(xt, wt, padding=1, groups=2)
        grads = (out ** 2).sum().backward()
        return out.numpy(), grads[xt].numpy(), grads[wt].numpy()

    with kernels.kernels_enabled():
        got = run()
    assert every_size
    with kernels.reference_only():
        expected = run()
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_threads_multiplying_at_once_each_get_their_product(every_size):
    rng = np.random.default_rng(6)
    pairs = [(_normal(rng, (64, 48), np.float32), _normal(rng, (48, 32), np.float32))
             for _ in range(8)]
    results: dict[int, np.ndarray] = {}

    def work(i):
        for _ in range(20):
            results[i] = _mkl.matmul(*pairs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(pairs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for i, (a, b) in enumerate(pairs):
        np.testing.assert_allclose(results[i], a @ b, rtol=1e-5, atol=1e-5)


def test_a_data_parallel_region_limits_mkl_threads_and_restores_them():
    from threadpoolctl import threadpool_info

    def mkl_threads():
        return [entry["num_threads"] for entry in threadpool_info()
                if entry["internal_api"] == "mkl"]

    backend = dp.get_backend("numpy")
    before = mkl_threads()
    assert before, "MKL is not loaded"
    with backend.parallel_region(before[0]):
        assert mkl_threads() == [1]
    assert mkl_threads() == before


class ThreadsSeen(dp.nn.Module):
    """Records, per call, how many threads MKL would use in the calling thread."""

    def __init__(self):
        super().__init__()
        self.weight = dp.nn.Parameter(dp.ones(3))
        self.seen = []

    def forward(self, x):
        self.seen.append((threading.get_ident(), _mkl.status()[0].MKL_Get_Max_Threads()))
        return x * self.weight


def test_each_data_parallel_worker_multiplies_on_its_share_of_the_cores():
    """MKL's thread count holds per thread: the region's limit must be set in each worker."""
    from dparray._system import available_cores

    module = ThreadsSeen()
    main_threads = _mkl.status()[0].MKL_Get_Max_Threads()
    model = dp.DataParallel(module, 2, execution="threads")
    model(dp.ones((4, 3))).sum().backward()
    workers = [count for ident, count in module.seen if ident != threading.get_ident()]
    assert workers and set(workers) == {max(1, available_cores() // 2)}
    assert _mkl.status()[0].MKL_Get_Max_Threads() == main_threads


PROGRAM = """
import dparray as dp
backend = dp.get_backend("numpy")
print("matmul" in backend.kernels, dp.backend.describe(backend)["matrix products"])
"""


def _run(program=PROGRAM, **environment):
    env = {**os.environ, **environment}
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.integration
def test_dparray_blas_openblas_keeps_numpy_s_products():
    assert _run(DPARRAY_BLAS="openblas") == \
        "False OpenBLAS (NumPy's; DPARRAY_BLAS=openblas)"


@pytest.mark.integration
def test_kernels_off_means_openblas_and_info_says_so():
    assert _run(DPARRAY_KERNELS="reference", DPARRAY_BLAS="mkl") == \
        "True OpenBLAS (NumPy's; DPARRAY_KERNELS=reference)"


@pytest.mark.integration
def test_a_64_bit_interface_asked_for_keeps_openblas():
    assert _run(MKL_INTERFACE_LAYER="ILP64") == \
        "False OpenBLAS (NumPy's; MKL_INTERFACE_LAYER asks for 64-bit integers)"


PRODUCT = """
import numpy as np
from dparray.backends import _blas_race, _mkl
a = np.ones((300, 300))
assert (_mkl.matmul(a, a) == 300).all()
print(_mkl.status()[1])
"""


@pytest.mark.integration
@pytest.mark.parametrize("layer", ["SEQUENTIAL", "INTEL", "TBB"])
def test_the_user_s_threading_layer_is_kept_and_multiplies(layer):
    assert _run(PRODUCT, MKL_THREADING_LAYER=layer).endswith(f"({layer} threads)")


@pytest.mark.integration
def test_by_default_mkl_runs_on_gnu_openmp_where_libgomp_loads():
    expected = "GNU OpenMP" if _mkl._gnu_openmp_loads() else "MKL's default"
    assert _run(PRODUCT).endswith(f"({expected} threads)")


FORK = """
import os
import numpy as np
from dparray.backends import _blas_race, _mkl
a = np.ones((800, 800))
_mkl.matmul(a, a)  # MKL's OpenMP threads are running now
child = os.fork()
if child == 0:
    ok = (_mkl.matmul(a, a) == 800).all() and _mkl.status()[0].MKL_Get_Max_Threads() == 1
    os._exit(0 if ok else 3)
print(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]))
"""


@pytest.mark.integration
def test_a_forked_child_multiplies_on_one_thread_instead_of_hanging():
    assert _run(FORK) == "0"


FIRST_CALLS = """
import threading
from dparray.backends import _blas_race, _mkl
loads, load = [], _mkl._load
_mkl._load = lambda: loads.append(1) or load()
threads = [threading.Thread(target=_mkl.status) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(len(loads))
"""


@pytest.mark.integration
def test_threads_asking_at_once_load_mkl_once():
    assert _run(FIRST_CALLS) == "1"
