"""NumPy calls sliced over the cores (``backends/_core_split.py``): the bits of one call.

Kernels hand their costly NumPy passes (exp, tanh, log1p) to ``apply``, and the product
kernel its stacks of small matrices to ``stacked_matmul``; slices run on a small thread pool.
Each element must get what one call gives it, in the caller's NumPy error state; inside a
DataParallel worker, or for a small array, the call runs whole on the caller's thread.
"""

from __future__ import annotations

import functools
import threading
import time
import warnings

import numpy as np
import pytest
from conftest import to_tensor
from dparray.backends import _core_split

import dparray as dp
from dparray._system import available_cores
from dparray.nn import functional as F


@pytest.mark.parametrize("ufunc", [np.log1p, np.log, np.exp])
def test_a_sliced_ufunc_gives_the_whole_calls_bits(ufunc, rng):
    x = rng.uniform(-1.0, 1.0, _core_split.SPLIT_FROM * 3 + 7).astype(np.float32)
    with np.errstate(invalid="ignore"):  # log of the negative half: NaN
        out = _core_split.apply(ufunc, x, np.empty_like(x))
        np.testing.assert_array_equal(out, ufunc(x))


@pytest.mark.skipif(available_cores() < 2, reason="needs two CPU cores")
def test_slices_run_on_the_pool_and_see_the_callers_error_state():
    """log1p(-1) is -inf with a divide-by-zero warning: silenced by the caller's errstate in
    every slice, the pool's included."""
    threads = set()
    real = np.log1p

    def spy(x, out):
        threads.add(threading.current_thread().name)
        return real(x, out=out)

    x = np.full(_core_split.SPLIT_FROM * 2, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(divide="ignore"):
            out = _core_split.apply(spy, x, np.empty_like(x))
    np.testing.assert_array_equal(out, np.full(x.size, -np.inf))
    assert any(name.startswith("dparray-split") for name in threads)


def test_inside_a_data_parallel_worker_or_when_small_the_ufunc_runs_whole():
    calls = []

    def counted(x, out):
        calls.append(x.size)
        return np.exp(x, out=out)

    big = np.zeros(_core_split.SPLIT_FROM * 2)
    with _core_split.worker_share(available_cores()):
        _core_split.apply(counted, big, np.empty_like(big))
    small = np.zeros(_core_split.SPLIT_FROM - 1)
    _core_split.apply(counted, small, np.empty_like(small))
    assert calls == [big.size, small.size]


@pytest.mark.parametrize("op", ["softmax", "log_softmax", "cross_entropy", "gelu_tanh"])
def test_kernels_give_the_same_bits_sliced_or_whole(op, monkeypatch, rng):
    x = rng.standard_normal((40, 4000)).astype(np.float32)  # above SPLIT_FROM
    labels = rng.integers(0, 4000, 40)

    def run():
        t = to_tensor(x, requires_grad=True)
        if op == "cross_entropy":
            out = F.cross_entropy(t, to_tensor(labels))
        elif op == "gelu_tanh":
            out = F.gelu(t, approximate="tanh")
        else:
            out = getattr(F, op)(t, dim=-1)
        cotangent = np.linspace(-1, 1, out.numpy().size).astype(np.float32)
        grad = out.backward(to_tensor(cotangent.reshape(out.shape)))[t]
        return out.numpy(), grad.numpy()

    pools = []
    real_workers = _core_split._workers
    monkeypatch.setattr(_core_split, "_workers", lambda n: pools.append(n) or real_workers(n))
    sliced = run()
    assert pools or available_cores() < 2  # the kernel did slice its passes
    monkeypatch.setattr(_core_split, "SPLIT_FROM", 1 << 62)
    whole = run()
    for got, want in zip(sliced, whole, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("keep_empty_rows", [False, True])
def test_the_row_shift_in_slices_gives_the_whole_shifts_bits(keep_empty_rows, monkeypatch, rng):
    from dparray.backends._softmax_kernels import by_row_blocks, shift

    def shift_rows(rows, keep_empty_rows):
        return by_row_blocks(functools.partial(shift, keep_empty_rows=keep_empty_rows), rows,
                             np.empty_like(rows))

    rows = rng.standard_normal((301, 700)).astype(np.float32)
    rows[3, 5], rows[150, :], rows[299, 7] = np.nan, -np.inf, np.inf
    sliced = shift_rows(rows, keep_empty_rows)
    monkeypatch.setattr(_core_split, "SPLIT_FROM", 1 << 62)
    np.testing.assert_array_equal(sliced, shift_rows(rows, keep_empty_rows))
    assert np.isnan(sliced[150]).all() != keep_empty_rows  # -inf - -inf, unless kept


# ----------------------------------------------------------------------------- stacks
def attention_like(dtype, rng):
    """Per-head views of one projection, as attention multiplies them: strided stacks."""
    qkv = rng.standard_normal((32, 64, 384)).astype(dtype)
    q = qkv[:, :, :128].reshape(32, 64, 4, 32).transpose(0, 2, 1, 3)
    k = qkv[:, :, 128:256].reshape(32, 64, 4, 32).transpose(0, 2, 3, 1)
    return q, k


@pytest.mark.skipif(available_cores() < 2, reason="needs two CPU cores")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_sliced_stack_of_products_gives_the_whole_products_bits(dtype, rng):
    q, k = attention_like(dtype, rng)
    for a, b in [(q, k), (q @ k, q), (np.ascontiguousarray(q[0]), np.ascontiguousarray(k[0]))]:
        out = _core_split.stacked_matmul(a, b)
        if a.ndim == 3 and a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2] < \
                _core_split.STACK_SPLIT_FROM:
            assert out is None  # too little work to hand out
            continue
        assert out is not None and out.dtype == dtype
        np.testing.assert_array_equal(out, a @ b)


def test_products_it_does_not_cover_are_left_to_the_caller(rng):
    q, k = attention_like(np.float32, rng)
    big = np.ones((4, 128, 128, 128), np.float32)[..., :64, :]  # over SMALL_PRODUCT each
    cases = [(q, k[:1]),  # broadcast leading axes
             (q, k.astype(np.float64)),  # two dtypes
             (q.astype(np.float16), k.astype(np.float16)),  # not a BLAS type
             (big, big.transpose(0, 1, 3, 2)),
             (q[0, 0], k[0, 0])]  # one matrix
    for a, b in cases:
        assert _core_split.stacked_matmul(a, b) is None
    with _core_split.worker_share(available_cores()):
        assert _core_split.stacked_matmul(q, k) is None


@pytest.mark.skipif(available_cores() < 2, reason="needs two CPU cores")
def test_the_product_kernel_slices_openblas_stacks(monkeypatch, rng):
    """Through ``dp.matmul``: sliced when OpenBLAS makes the products, the same bits as one
    NumPy call."""
    from dparray.backends import _mkl

    monkeypatch.setattr(_mkl, "_choice", (False, "OpenBLAS (chosen by the test)"))
    q, k = attention_like(np.float32, rng)
    slices = []
    real_run = _core_split._run
    monkeypatch.setattr(_core_split, "_run", lambda calls: slices.append(len(calls))
                        or real_run(calls))
    out = dp.matmul(to_tensor(q), to_tensor(k)).numpy()
    if _mkl.status()[0] is not None:  # the product kernel is in the table with MKL installed
        assert slices
    np.testing.assert_array_equal(out, q @ k)


@pytest.mark.skipif(available_cores() < 2, reason="needs two CPU cores")
def test_an_error_in_a_slice_is_raised_once_every_slice_is_done():
    finished = []

    def slow_or_failing(x, out):
        if threading.current_thread() is threading.main_thread():
            raise ValueError("the first slice failed")
        time.sleep(0.05)
        finished.append(x.size)
        return np.exp(x, out=out)

    x = np.zeros(_core_split.SPLIT_FROM * 2)
    with pytest.raises(ValueError, match="the first slice failed"):
        _core_split.apply(slow_or_failing, x, np.empty_like(x))
    assert finished  # the pool's slice had ended before the error reached the caller
