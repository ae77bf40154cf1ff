"""The NumPy softmax and log-softmax kernels, which run by blocks of rows: every block size and
every split over the cores gives the bits of one block; values against a float64 formula and
the reference, gradients against finite differences in float64, special values, and under
DataParallel with 2 and 3 workers."""

from __future__ import annotations

import numpy as np
import pytest

import dparray as dp
from dparray import nn
from dparray.kernels import kernels_enabled, reference_only, resolve
from dparray.nn import functional as F
from dparray.ops.reduce import LogSoftmax, Softmax
from dparray.testing import gradcheck

pytest.importorskip("numba")
from dparray.backends import _core_split, _softmax_kernels

FUNCTIONS = {"softmax": F.softmax, "log_softmax": F.log_softmax}
SHAPES = [(1, 1), (1, 9), (9, 1), (37, 300), (3, 4, 1000), (700, 850)]


def formula(x: np.ndarray, name: str) -> np.ndarray:
    """Softmax or log-softmax over the last axis, in float64, independently of dparray."""
    x = x.astype(np.float64)
    shifted = x - x.max(axis=-1, keepdims=True)
    log_total = np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return shifted - log_total if name == "log_softmax" else np.exp(shifted - log_total)


def run(x: np.ndarray, name: str, weights: np.ndarray):
    """The op's output along the last axis and the gradient of ``sum(out * weights)``."""
    t = dp.tensor(x, requires_grad=True)
    out = FUNCTIONS[name](t, dim=-1)
    grads = (out * dp.tensor(weights)).sum().backward()
    return out.numpy(), grads[t].numpy()


def test_the_numpy_backend_has_both_kernels():
    backend = dp.get_backend("numpy")
    with kernels_enabled():
        assert resolve(backend, Softmax) is _softmax_kernels.SoftmaxKernel
        assert resolve(backend, LogSoftmax) is _softmax_kernels.LogSoftmaxKernel


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_every_block_size_and_split_gives_the_bits_of_one_block(name, dtype, monkeypatch):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((203, 517)) * 4).astype(dtype)
    x[5, 7], x[60, :], x[61, 3], x[200, 9] = np.nan, -np.inf, np.inf, -np.inf
    w = rng.standard_normal(x.shape).astype(dtype)
    results = []
    with kernels_enabled():
        for block_bytes, split_from in [(1 << 62, 1 << 62), (1, 1), (3 * 517 * 4, 1),
                                        (40_000, 1 << 62)]:  # whole; a row; 3 or so; ~10 rows
            monkeypatch.setattr(_softmax_kernels, "BLOCK_BYTES", block_bytes)
            monkeypatch.setattr(_core_split, "SPLIT_FROM", split_from)
            results.append(run(x, name, w))
    for out, grad in results[1:]:
        np.testing.assert_array_equal(out, results[0][0])
        np.testing.assert_array_equal(grad, results[0][1])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cross_entropy_by_blocks_gives_the_bits_of_one_block(dtype, monkeypatch):
    """Cross-entropy's forward runs by the same blocks (its exponentials kept for backward)."""
    rng = np.random.default_rng(12)
    x = (rng.standard_normal((203, 517)) * 4).astype(dtype)
    x[5, 7], x[60, :] = np.nan, -np.inf
    y = rng.integers(0, 517, 203)
    y[9] = -100  # ignored

    def losses_and_gradient():
        t = dp.tensor(x, requires_grad=True)
        losses = F.cross_entropy(t, dp.tensor(y), reduction="none")
        return losses.numpy(), (losses * 1.0).sum().backward()[t].numpy()

    results = []
    with kernels_enabled():
        for block_bytes, split_from in [(1 << 62, 1 << 62), (1, 1), (40_000, 1)]:
            monkeypatch.setattr(_softmax_kernels, "BLOCK_BYTES", block_bytes)
            monkeypatch.setattr(_core_split, "SPLIT_FROM", split_from)
            results.append(losses_and_gradient())
    for losses, grad in results[1:]:
        np.testing.assert_array_equal(losses, results[0][0])
        np.testing.assert_array_equal(grad, results[0][1])
    with reference_only():
        ref_losses, ref_grad = losses_and_gradient()
    losses, grad = results[0]
    assert np.isnan(losses[[5, 60]]).all() and losses[9] == 0.0
    tolerance = 2e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(losses, ref_losses, rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(grad, ref_grad, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("shape", SHAPES)
def test_float64_values_and_gradients_against_the_formula(name, shape, monkeypatch):
    monkeypatch.setattr(_softmax_kernels, "BLOCK_BYTES", 4096)  # several blocks per core
    rng = np.random.default_rng(len(shape))
    x = rng.standard_normal(shape) * 3
    w = rng.standard_normal(shape)
    with kernels_enabled():
        out, grad = run(x, name, w)
    want = formula(x, name)
    np.testing.assert_allclose(out, want, rtol=1e-13, atol=1e-13)
    p = np.exp(formula(x, "log_softmax"))  # d/dx of sum(w * out), in closed form
    if name == "softmax":
        want_grad = p * (w - (w * p).sum(axis=-1, keepdims=True))
    else:
        want_grad = w - p * w.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_gradients_against_finite_differences(name, monkeypatch):
    monkeypatch.setattr(_softmax_kernels, "BLOCK_BYTES", 2 * 7 * 8)  # two rows a block
    monkeypatch.setattr(_core_split, "SPLIT_FROM", 1)
    x = dp.tensor(np.random.default_rng(3).standard_normal((2, 5, 7)), requires_grad=True)
    with kernels_enabled():
        gradcheck(lambda t: FUNCTIONS[name](t, dim=-1), [x])


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("shape", SHAPES)
def test_float32_stays_float32_within_float32_accuracy(name, shape):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    w = rng.standard_normal(shape).astype(np.float32)
    with kernels_enabled():
        out, grad = run(x, name, w)
    with reference_only():
        ref_out, ref_grad = run(x, name, w)
    assert out.dtype == grad.dtype == np.float32
    want = formula(x, name)
    # float32's rounding of the shifted score s carries into exp(s) as a relative |s| ulp
    shifted = np.abs(x - x.max(axis=-1, keepdims=True)).astype(np.float64)
    ulp = 2.0 ** -23
    bound = ulp * (2 + shifted) * want if name == "softmax" else ulp * (2 + np.abs(want))
    assert np.all(np.abs(out - want) <= bound)
    np.testing.assert_allclose(out, ref_out, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_special_values_as_the_reference(name):
    x = np.array([[0.0, 1.0, np.nan, 2.0],    # NaN: the whole row NaN
                  [-np.inf, 0.0, 1.0, -np.inf],  # -inf: probability 0
                  [np.inf, 0.0, 1.0, 2.0],    # +inf: inf - inf is NaN
                  [-np.inf] * 4,               # no finite score: NaN, as PyTorch
                  [1e30, -1e30, 0.0, 1e30]])  # huge but finite: shifted first
    w = np.ones_like(x)
    with kernels_enabled():
        out, grad = run(x, name, w)
    with reference_only():
        ref_out, ref_grad = run(x, name, w)
    np.testing.assert_array_equal(out, ref_out)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-15, atol=1e-15)
    assert np.isnan(out[0]).all() and np.isnan(out[3]).all()
    assert out[1, 0] == (-np.inf if name == "log_softmax" else 0.0)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_other_axes_and_dtypes_run_the_reference(name):
    x = np.random.default_rng(4).standard_normal((6, 5, 4))
    w = np.ones_like(x)
    t = dp.tensor(x, requires_grad=True)
    with kernels_enabled():
        out = FUNCTIONS[name](t, dim=1)
        grad = (out * dp.tensor(w)).sum().backward()[t].numpy()
    want = np.moveaxis(formula(np.moveaxis(x, 1, -1), name), -1, 1)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-13, atol=1e-13)
    assert np.isfinite(grad).all()
    half = dp.tensor(x.astype(np.float16))
    with kernels_enabled():
        assert FUNCTIONS[name](half, dim=-1).dtype == dp.float16


@pytest.mark.parametrize("workers", [2, 3])
def test_under_data_parallel_as_unwrapped(workers):
    rng = np.random.default_rng(6)
    x = dp.tensor(rng.standard_normal((13, 40)).astype(np.float32))
    y = dp.tensor(rng.integers(0, 3000, 13))
    dp.manual_seed(1)
    model = nn.Sequential(nn.Linear(40, 3000), nn.LogSoftmax(dim=1))

    def run_model(module):
        log_probs = module(x)
        grads = F.nll_loss(log_probs, y).backward()
        return log_probs.numpy(), [grads[p].numpy() for p in model.parameters()]

    with kernels_enabled():
        out, grads = run_model(model)
        dp_out, dp_grads = run_model(nn.DataParallel(model, workers))
    with reference_only():
        ref_out, ref_grads = run_model(nn.DataParallel(model, workers))
    # (the products of the chunks round differently from the whole batch's)
    for got in (dp_out, ref_out):
        np.testing.assert_allclose(got, out, rtol=1e-6, atol=1e-6)
    for a, b, c in zip(dp_grads, ref_grads, grads, strict=True):
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b, c, rtol=1e-5, atol=1e-6)


def test_log_softmax_unrecorded_gives_the_recorded_bits():
    """Without a graph the forward keeps no exponentials (another path): the same output."""
    x = np.random.default_rng(8).standard_normal((300, 900)).astype(np.float32)
    with kernels_enabled():
        recorded = F.log_softmax(dp.tensor(x, requires_grad=True), dim=-1).numpy()
        with dp.no_grad():
            plain = F.log_softmax(dp.tensor(x), dim=-1).numpy()
    np.testing.assert_array_equal(plain, recorded)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_a_retained_graph_gives_the_same_gradient_twice(name):
    x = dp.tensor(np.random.default_rng(9).standard_normal((40, 600)), requires_grad=True)
    w = dp.tensor(np.random.default_rng(10).standard_normal((40, 600)))
    with kernels_enabled():
        loss = (FUNCTIONS[name](x, dim=-1) * w).sum()
        first = loss.backward(retain_graph=True)[x].numpy()
        second = loss.backward()[x].numpy()
    np.testing.assert_array_equal(first, second)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_derivatives_of_derivatives_through_the_kernel(name):
    """create_graph differentiates the kernel's node through the reference's backward."""
    rng = np.random.default_rng(11)
    x0, w, v = (rng.standard_normal((6, 9)) for _ in range(3))

    def hessian_vector(context):
        with context():
            x = dp.tensor(x0, requires_grad=True)
            (g,) = dp.autograd.grad((FUNCTIONS[name](x, dim=-1) * dp.tensor(w)).sum(), x,
                                    create_graph=True)
            (hv,) = dp.autograd.grad((g * dp.tensor(v)).sum(), x)
        return g.numpy(), hv.numpy()

    g, hv = hessian_vector(kernels_enabled)
    ref_g, ref_hv = hessian_vector(reference_only)
    np.testing.assert_allclose(g, ref_g, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(hv, ref_hv, rtol=1e-12, atol=1e-12)
    assert np.abs(hv).max() > 1e-3  # a second derivative that is really there
