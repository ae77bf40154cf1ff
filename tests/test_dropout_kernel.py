"""The NumPy dropout kernel against the reference: the same mask from the same seed, and the
output and the gradient to the bit -- float32 and float64, odd and strided shapes, sizes on
both sides of the serial threshold, special values, other dtypes (the reference's), and under
DataParallel with 2 and 3 workers."""

from __future__ import annotations

import numpy as np
import pytest

import dparray as dp
from dparray import nn
from dparray.kernels import kernels_enabled, reference_only, resolve
from dparray.nn import functional as F
from dparray.ops.dropout import Dropout

pytest.importorskip("numba")
from dparray.backends import _numba_setup

SHAPES = [(0, 5), (1,), (7, 3), (_numba_setup.SERIAL_BELOW + 5,), (33, 41, 57)]


def _run(x: np.ndarray, p: float, context, weights: np.ndarray | None = None, seed: int = 0):
    """Dropout's output and the gradient of ``sum(out * weights)`` with respect to ``x``."""
    with context():
        dp.manual_seed(seed)
        t = dp.tensor(x, requires_grad=True)
        out = F.dropout(t, p=p, training=True)
        w = weights if weights is not None else np.ones(x.shape, x.dtype)
        grads = (out * dp.tensor(w)).sum().backward()
    return out.numpy(), grads[t].numpy()


def test_the_numpy_backend_has_the_kernel():
    with kernels_enabled():
        assert resolve(dp.get_backend("numpy"), Dropout) is not Dropout


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_the_kernel_is_the_reference_to_the_bit(shape, dtype, p):
    rng = np.random.default_rng(len(shape))
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal(shape).astype(dtype)
    out, grad = _run(x, p, kernels_enabled, w)
    ref_out, ref_grad = _run(x, p, reference_only, w)
    assert out.dtype == np.dtype(dtype) and grad.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, ref_out)
    np.testing.assert_array_equal(grad, ref_grad)
    # and against the formula: kept elements scaled by 1 / (1 - p), the others 0
    kept = out != 0
    scale = np.asarray(1.0 / (1.0 - p), dtype)
    np.testing.assert_array_equal(out, np.where(kept, x * scale, 0))
    np.testing.assert_array_equal(grad, np.where(kept, w * scale, 0))
    if x.size > 10_000:
        assert abs(kept.mean() - (1.0 - p)) < 0.01


def test_strided_input_and_special_values():
    base = np.random.default_rng(5).standard_normal((64, 90))
    base[::3, ::7] = np.nan
    base[1::5, ::4] = np.inf
    base[2::6, 1::3] = -0.0
    x = base[:, ::2].T.astype(np.float32)  # a strided, transposed view
    out, grad = _run(x, 0.4, kernels_enabled)
    ref_out, ref_grad = _run(x, 0.4, reference_only)
    np.testing.assert_array_equal(out, ref_out)  # NaN where kept, 0 where dropped
    np.testing.assert_array_equal(grad, ref_grad)
    assert np.array_equal(np.signbit(out), np.signbit(ref_out))


def test_other_dtypes_run_the_reference():
    x = (np.arange(200, dtype=np.float16) - 100) / np.float16(7)
    out, grad = _run(x, 0.3, kernels_enabled)
    ref_out, ref_grad = _run(x, 0.3, reference_only)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, ref_out)
    np.testing.assert_array_equal(grad, ref_grad)


@pytest.mark.parametrize("workers", [2, 3])
def test_under_data_parallel_the_kernel_is_the_reference(workers):
    rng = np.random.default_rng(6)
    x = dp.tensor(rng.standard_normal((13, 40)).astype(np.float32))

    def run(context):
        with context():
            dp.manual_seed(1)
            model = nn.Sequential(nn.Linear(40, 300), nn.Dropout(0.3), nn.Linear(300, 2))
            parallel = nn.DataParallel(model, workers)
            out = parallel(x)
            grads = out.sum().backward()
            return out.numpy(), [grads[p].numpy() for p in model.parameters()]

    out, grads = run(kernels_enabled)
    ref_out, ref_grads = run(reference_only)
    np.testing.assert_array_equal(out, ref_out)
    for a, b in zip(grads, ref_grads, strict=True):
        np.testing.assert_array_equal(a, b)
