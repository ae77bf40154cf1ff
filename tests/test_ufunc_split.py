"""NumPy ufuncs sliced over the cores (``backends/_ufunc_split.py``): the bits of one call.

Kernels hand their costly NumPy passes (exp, tanh, log1p) to ``apply``, which runs slices of
the array on a small thread pool. Each element must get what one call gives it, in the
caller's NumPy error state; inside a DataParallel worker, or for a small array, the ufunc
runs whole on the caller's thread.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
from conftest import to_tensor
from dparray.backends import _ufunc_split
from dparray.backends._numba_setup import usable, worker_threads

from dparray._system import available_cores
from dparray.nn import functional as F


@pytest.mark.parametrize("ufunc", [np.log1p, np.log, np.exp])
def test_a_sliced_ufunc_gives_the_whole_calls_bits(ufunc, rng):
    x = rng.uniform(-1.0, 1.0, _ufunc_split.SPLIT_FROM * 3 + 7).astype(np.float32)
    with np.errstate(invalid="ignore"):  # log of the negative half: NaN
        out = _ufunc_split.apply(ufunc, x, np.empty_like(x))
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

    x = np.full(_ufunc_split.SPLIT_FROM * 2, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(divide="ignore"):
            out = _ufunc_split.apply(spy, x, np.empty_like(x))
    np.testing.assert_array_equal(out, np.full(x.size, -np.inf))
    assert any(name.startswith("dparray-ufunc") for name in threads)


def test_inside_a_data_parallel_worker_or_when_small_the_ufunc_runs_whole():
    assert usable()  # worker_threads acts once the kernels are in use
    calls = []

    def counted(x, out):
        calls.append(x.size)
        return np.exp(x, out=out)

    big = np.zeros(_ufunc_split.SPLIT_FROM * 2)
    with worker_threads(2):
        _ufunc_split.apply(counted, big, np.empty_like(big))
    small = np.zeros(_ufunc_split.SPLIT_FROM - 1)
    _ufunc_split.apply(counted, small, np.empty_like(small))
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
    real_workers = _ufunc_split._workers
    monkeypatch.setattr(_ufunc_split, "_workers", lambda n: pools.append(n) or real_workers(n))
    sliced = run()
    assert pools or available_cores() < 2  # the kernel did slice its passes
    monkeypatch.setattr(_ufunc_split, "SPLIT_FROM", 1 << 62)
    whole = run()
    for got, want in zip(sliced, whole, strict=True):
        np.testing.assert_array_equal(got, want)
