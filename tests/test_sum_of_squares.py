"""``sum_of_squares``, the sum that ``grad_norm`` and ``clip_grad_norm`` take of each gradient:
the NumPy kernel (one compiled pass, summed in float64, no array of squares) against the exact
sum and the array-API reference, on every backend through ``grad_norm``; a differentiable norm
for gradients made with ``create_graph=True``; the same clipping under DataParallel."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray import nn, optim
from dparray.kernels import kernels_enabled, reference_only, resolve
from dparray.ops.sum_of_squares import sum_of_squares

numba = pytest.importorskip("numba")
from dparray.backends import _numba_setup  # noqa: E402  (after the skip: it needs Numba)

SIZES = [0, 1, 7, _numba_setup.SERIAL_BELOW - 1, _numba_setup.SERIAL_BELOW + 3, 300_001]


def _kernel():
    backend = dp.get_backend("numpy")
    with kernels_enabled():
        found = resolve(backend, sum_of_squares)
    assert found is not sum_of_squares, "the NumPy backend has no sum_of_squares kernel"
    return backend, found


def _exact(x: np.ndarray) -> float:
    return math.fsum(float(v) * float(v) for v in x.ravel())


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_kernel_is_the_exact_sum_rounded_once(size, dtype):
    backend, kernel = _kernel()
    x = np.random.default_rng(size).standard_normal(size).astype(dtype) * 3.0
    got = kernel(backend, x)
    assert isinstance(got, np.ndarray) and got.shape == () and got.dtype == np.dtype(dtype)
    exact = _exact(x)
    if dtype == "float32":
        assert got == np.float32(exact)  # float64 sums of 3e5 squares err far below float32's ulp
    else:
        assert abs(float(got) - exact) <= 1e-13 * exact
    reference = sum_of_squares(backend, x)
    assert reference.dtype == got.dtype
    assert abs(float(reference) - float(got)) <= 8 * np.finfo(dtype).eps * max(exact, 1e-300)


def test_the_kernel_takes_strided_and_multidimensional_arrays():
    backend, kernel = _kernel()
    base = np.random.default_rng(1).standard_normal((90, 80)).astype(np.float32)
    for x in (base, base[:, ::3], base.T, base[::2, 1:7]):
        assert kernel(backend, x) == np.float32(_exact(x))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_values_as_in_the_reference(dtype):
    backend, kernel = _kernel()
    big = np.finfo(dtype).max
    for values, expected in (([1.0, np.nan, 2.0], "nan"), ([1.0, -np.inf], "inf"),
                             ([big, big], "inf"), ([-0.0, 0.0], "zero")):
        x = np.array(values, dtype)
        with np.errstate(over="ignore"):  # both warn of the overflow, as NumPy does
            got = kernel(backend, x)
            reference = sum_of_squares(backend, x)
        assert got.dtype == np.dtype(dtype)
        if expected == "nan":
            assert np.isnan(got) and np.isnan(reference)
        elif expected == "inf":
            assert got == np.inf and reference == np.inf
        else:
            assert got == 0.0 and not np.signbit(got)


def test_other_dtypes_run_the_reference():
    backend, kernel = _kernel()
    x = np.arange(1000, dtype=np.float16) / np.float16(100)
    got = kernel(backend, x)
    assert got.dtype == np.float16
    assert got == sum_of_squares(backend, x)
    ints = np.arange(5)
    assert kernel(backend, ints) == 30 and kernel(backend, ints).dtype == ints.dtype


def test_grad_norm_is_the_norm_on_every_backend(backend):
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s) for s in ((3, 4), (5,), (70, 90))]
    params = [to_tensor(a, requires_grad=True) for a in arrays]
    grads = dp.Gradients({p: to_tensor(2.0 * a) for p, a in zip(params, arrays, strict=True)})
    expected = math.sqrt(sum(_exact(2.0 * a) for a in arrays))
    for context in (kernels_enabled, reference_only):
        with context():
            norm = optim.grad_norm(grads)
        assert norm.shape == () and not norm.requires_grad
        assert norm.item() == pytest.approx(expected, rel=1e-13)


def test_gradients_with_a_graph_give_a_differentiable_norm():
    """A gradient penalty: d/dw |d(sum w^3)/dw| = 6 w * 3 w^2 / |3 w^2|, and finite
    differences agree, in float64."""
    w0 = np.array([0.3, -1.2, 2.0, 0.7])

    def norm_of(values, create_graph):
        w = dp.tensor(values, requires_grad=True)
        grads = (w * w * w).sum().backward(create_graph=create_graph)
        return w, optim.grad_norm(grads)

    w, norm = norm_of(w0, True)
    assert norm.requires_grad
    got = norm.backward()[w].numpy()
    analytic = 18.0 * w0**3 / np.sqrt(np.sum((3.0 * w0**2) ** 2))
    np.testing.assert_allclose(got, analytic, rtol=1e-12)
    step = 1e-6
    numeric = [(norm_of(w0 + step * e, False)[1].item() - norm_of(w0 - step * e, False)[1].item())
               / (2 * step) for e in np.eye(4)]
    np.testing.assert_allclose(got, numeric, rtol=1e-7)


@pytest.mark.parametrize("workers", [2, 3])
def test_clipping_under_data_parallel_equals_inline(workers):
    rng = np.random.default_rng(3)
    x = dp.tensor(rng.standard_normal((12, 40)).astype(np.float32))
    y = dp.tensor(rng.standard_normal((12, 30)).astype(np.float32))
    dp.manual_seed(0)
    model = nn.Linear(40, 30)

    def clipped(module):
        grads = ((module(x) - y) ** 2).sum().backward()
        return optim.clip_grad_norm(grads, 1.0)

    inline = clipped(model)
    parallel = clipped(nn.DataParallel(model, workers))
    for p in model.parameters():
        np.testing.assert_allclose(parallel[p].numpy(), inline[p].numpy(), rtol=2e-5, atol=1e-7)
    norm = math.sqrt(sum(_exact(g.numpy()) for g in inline.values()))
    assert norm == pytest.approx(1.0, rel=1e-5)
