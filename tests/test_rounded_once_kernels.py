"""The kernels whose float32 transcendental is computed in float64 and rounded once: softplus
(``dparray.softplus`` and PyTorch's thresholded form), log-sigmoid and Mish (``log1p``), and
ELU, SELU and CELU (``expm1``), against their references.

The kernels keep the references' arithmetic in the arrays' type and NumPy's ``exp``; the
``log1p`` or ``expm1`` is libm's in float64 (so values and gradients are the references' to
the bit where NumPy's float64 ``log1p`` and ``expm1`` are libm's too, and within NumPy's own
accuracy of them where it runs its AVX-512 versions: ``numpy_math_ulps``) and, in float32,
float64's rounded once, so a float32 value is within two ulps (plus NumPy's own error, on
AVX-512) of the reference's and exactly what that arithmetic gives (computed here with
NumPy); float32 gradients are the references' to the bit, except Mish's, which reads its own
``tanh(softplus(x))``. Checked at NaN, +-inf, +-0, subnormals and where ``exp`` under- or
overflows, below and above the serial-loop and slicing thresholds, for strided inputs, through
the ``nn`` modules, under ``create_graph`` and inside DataParallel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import (
    assert_activation_under_data_parallel,
    assert_integer_input_gives_the_references_float,
    assert_the_references_float64,
    derivatives_as_the_reference_gives_them,
    float32_values_in_zero_to_one,
    numpy_math_ulps,
    special_floats,
    to_tensor,
    value_and_gradient,
)

import dparray as dp
from dparray.kernels import reference_only, resolve
from dparray.nn import functional as F
from dparray.testing import gradcheck

SIZES = [19, 40_000, 300_001]  # serial loops; parallel loops, one exp slice; several slices
F32 = np.float32


def log1p_rounded_once(e: np.ndarray) -> np.ndarray:
    return np.log1p(e.astype(np.float64)).astype(F32)


def stable_sigmoid(z: np.ndarray, e: np.ndarray) -> np.ndarray:
    return np.where(z >= 0, 1 / (1 + e), e / (1 + e))


def softplus_float32(beta: float, threshold: float) -> Callable[..., Any]:
    """The kernels' float32 arithmetic: ``max(x, 0) + log(1 + e) / beta`` without a
    threshold (``dp.softplus``), ``(max(z, 0) + log(1 + e)) / beta`` with one."""
    def formula(x: np.ndarray, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        b = F32(beta)
        z = b * x
        e = np.exp(-np.abs(z))
        log = log1p_rounded_once(e)
        if threshold == np.inf:
            value = np.maximum(x, F32(0)) + log / b
        else:
            value = np.where(z > F32(threshold), x, (np.maximum(z, F32(0)) + log) / b)
        return value, np.where(z > F32(threshold), grad, grad * stable_sigmoid(z, e))

    return formula


def logsigmoid_float32(x: np.ndarray, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    e = np.exp(-np.abs(x))
    return np.minimum(x, F32(0)) - log1p_rounded_once(e), grad * stable_sigmoid(-x, e)


def mish_float32(x: np.ndarray, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    e = np.exp(-np.abs(x))
    t = np.tanh(np.maximum(x, F32(0)) + log1p_rounded_once(e))
    return x * t, grad * (t + x * (F32(1) - t * t) * stable_sigmoid(x, e))


def elu_float32(alpha: float, scale: float = 1.0, input_scale: float = 1.0) -> Callable[..., Any]:
    """``scale * x`` above 0, else ``scale * alpha * expm1(input_scale * x)``, the ``expm1``
    float64's rounded once."""
    def formula(x: np.ndarray, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        negative = F32(input_scale) * np.where(x > 0, F32(0), x)
        expm1 = np.expm1(negative.astype(np.float64)).astype(F32)
        value = np.where(x > 0, F32(scale) * x, F32(scale * alpha) * expm1)
        slope = F32(scale * alpha * input_scale) * np.exp(negative)
        return value, grad * np.where(x > 0, F32(scale), slope)

    return formula


SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
CASES = {
    "dp.softplus": (dp.softplus, softplus_float32(1.0, np.inf)),
    "dp.softplus(beta=2.5)": (lambda t: dp.softplus(t, beta=2.5), softplus_float32(2.5, np.inf)),
    "F.softplus": (F.softplus, softplus_float32(1.0, 20.0)),
    "F.softplus(0.3, 1.7)": (lambda t: F.softplus(t, 0.3, 1.7), softplus_float32(0.3, 1.7)),
    "F.logsigmoid": (F.logsigmoid, logsigmoid_float32),
    "F.mish": (F.mish, mish_float32),
    "F.elu": (F.elu, elu_float32(1.0)),
    "F.elu(alpha=0.5)": (lambda t: F.elu(t, 0.5), elu_float32(0.5)),
    "F.selu": (F.selu, elu_float32(SELU_ALPHA, SELU_SCALE)),
    "F.celu(alpha=2)": (lambda t: F.celu(t, 2.0), elu_float32(2.0, 1.0, 0.5)),
    "F.celu(alpha=-0.7)": (lambda t: F.celu(t, -0.7), elu_float32(-0.7, 1.0, 1 / -0.7)),
}


def ulps_apart(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many float32 values lie between ``a`` and ``b`` (0 where both are NaN)."""
    both_nan = np.isnan(a) & np.isnan(b)
    ordered = [np.where(v.view(np.int32) < 0, np.int64(-(2 ** 31)) - v.view(np.int32),
                        v.view(np.int32)).astype(np.int64) for v in (a, b)]
    return np.where(both_nan, 0, np.abs(ordered[0] - ordered[1]))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("size", SIZES)
def test_float64_values_and_gradients_are_the_references_to_the_bit(case, size, rng):
    function, _ = CASES[case]
    x = special_floats(np.float64, size, rng)
    grad = rng.standard_normal(size)
    grad[-3:] = [np.inf, np.nan, 0.0]
    kernel = value_and_gradient(function, x, grad)
    with reference_only():
        reference = value_and_gradient(function, x, grad)
    for got, want, scale in zip(kernel, reference, (None, grad), strict=True):
        assert got.dtype == np.float64
        assert_the_references_float64(got, want, scale)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("size", SIZES)
def test_float32_is_the_logarithm_rounded_once_within_two_ulps_of_the_reference(case, size,
                                                                                 rng):
    function, formula = CASES[case]
    x = special_floats(F32, size, rng)
    grad = rng.standard_normal(size).astype(F32)
    grad[-3:] = [np.inf, np.nan, 0.0]
    kernel = value_and_gradient(function, x, grad)
    with reference_only():
        reference = value_and_gradient(function, x, grad)
    with np.errstate(all="ignore"):
        expected = formula(x, grad)
    for got, want in zip(kernel, expected, strict=True):
        assert got.dtype == F32
        np.testing.assert_array_equal(got, want)
    assert ulps_apart(kernel[0], reference[0]).max() <= 2 + numpy_math_ulps()
    if case != "F.mish":  # Mish's gradient reads its own tanh(softplus(x))
        np.testing.assert_array_equal(kernel[1], reference[1])


@pytest.mark.parametrize("size", [None, 11])  # the parallel loop, and its serial twin
def test_the_float32_logarithm_is_the_correctly_rounded_one(size, rng):
    """With ``x = 0`` the softplus loop returns ``log(1 + e)`` alone."""
    from dparray.backends._numba_setup import loops

    e = float32_values_in_zero_to_one(rng)[:size]
    e = np.concatenate([e, np.array([np.nan, np.inf], F32)]) if size is None else e
    out = np.empty_like(e)
    loops().softplus(np.zeros_like(e), e, F32(1), F32(1), out)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(out, log1p_rounded_once(e))
        numpy_float32 = np.log1p(e)
    finite = np.isfinite(numpy_float32)
    assert ulps_apart(out[finite], numpy_float32[finite]).max() <= 1 + numpy_math_ulps()


@pytest.mark.parametrize("size", [None, 11])  # the parallel loop, and its serial twin
def test_the_float32_expm1_is_the_correctly_rounded_one(size, rng):
    """With ``scale = scale * alpha = 1`` the ELU loop returns ``expm1(input_scale * x)`` for
    ``x <= 0``; ``input_scale = -1`` covers the positive side (CELU with a negative alpha)."""
    from dparray.backends._numba_setup import loops

    spread = np.exp(rng.uniform(np.log(1e-40), np.log(130.0), 600_000)).astype(F32)
    edges = np.array([0.0, np.finfo(F32).smallest_subnormal, np.finfo(F32).tiny, 1e-8, 0.3466,
                      0.3467, 88.72, 88.73, 103.9, 104.0, 120.0, 121.0, np.inf, np.nan], F32)
    magnitudes = np.concatenate([edges, spread, rng.random(300_000, dtype=F32)])[:size]
    one = F32(1)
    for input_scale in (one, -one):
        out = np.empty_like(magnitudes)
        loops().elu(-magnitudes, input_scale, one, one, one, out)
        with np.errstate(over="ignore", invalid="ignore"):
            exponent = (input_scale * -magnitudes).astype(np.float64)
            np.testing.assert_array_equal(out, np.expm1(exponent).astype(F32))
            numpy_float32 = np.expm1(input_scale * -magnitudes)
        assert ulps_apart(out, numpy_float32).max() <= 1 + numpy_math_ulps()
        assert np.signbit(out[0]) == (input_scale > 0)  # expm1(-0.0) = -0.0, as in libm


def test_the_numpy_backend_runs_the_kernels():
    from dparray.ops import activations, elementwise

    numpy = dp.get_backend("numpy")
    references = {elementwise.Softplus: "SoftplusKernel",
                  activations.Softplus: "SoftplusWithThresholdKernel",
                  activations.LogSigmoid: "LogSigmoidKernel", activations.Mish: "MishKernel",
                  activations.Elu: "EluKernel"}
    for reference, kernel in references.items():
        assert resolve(numpy, reference).__name__ == kernel
        with reference_only():
            assert resolve(numpy, reference) is reference


@pytest.mark.parametrize("module, function", [
    (lambda: dp.nn.Softplus(0.5, 3.0), lambda t: F.softplus(t, 0.5, 3.0)),
    (dp.nn.LogSigmoid, F.logsigmoid), (dp.nn.Mish, F.mish),
    (lambda: dp.nn.ELU(0.5), lambda t: F.elu(t, 0.5)), (dp.nn.SELU, F.selu),
    (lambda: dp.nn.CELU(1.5), lambda t: F.celu(t, 1.5))])
def test_the_modules_run_the_kernels_as_the_functions_do(module, function, rng):
    x = special_floats(F32, 40_000, rng).reshape(200, 200)
    grad = rng.standard_normal(x.shape).astype(F32)
    got = value_and_gradient(module(), x, grad)
    for dtype_got, want in zip(got, value_and_gradient(function, x, grad), strict=True):
        np.testing.assert_array_equal(dtype_got, want)
    with reference_only():
        reference = value_and_gradient(module(), x, grad)
    assert ulps_apart(got[0], reference[0]).max() <= 2 + numpy_math_ulps()


@pytest.mark.parametrize("case", CASES)
def test_strided_inputs_and_gradients(case, backend, kernels, rng):
    function, _ = CASES[case]
    x = rng.standard_normal((6, 8))[:, ::2].T * 5  # neither C- nor F-ordered after the slice
    grad = rng.standard_normal((8, 6))[::2].copy(order="F")
    t = to_tensor(x, requires_grad=True, backend=backend)
    out = function(t)
    got = out.backward(to_tensor(grad, backend=backend))[t]
    with reference_only():
        want = value_and_gradient(function, np.ascontiguousarray(x), np.ascontiguousarray(grad))
    assert out.shape == x.shape and got.shape == x.shape
    np.testing.assert_allclose(out.numpy(), want[0], rtol=1e-15, atol=1e-300)
    np.testing.assert_allclose(got.numpy(), want[1], rtol=1e-15, atol=1e-300)


@pytest.mark.parametrize("case", CASES)
def test_gradcheck_in_float64(case, backend, kernels, rng):
    x = to_tensor(rng.standard_normal((5, 7)) * 2, requires_grad=True, backend=backend)
    gradcheck(CASES[case][0], [x])


def softplus_closed_form(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``d/dx log(1 + e^x) = s`` and ``d2/dx2 = s (1 - s)``, ``s = 1 / (1 + e^-x)``."""
    s = 1 / (1 + np.exp(-x))
    return s, s * (1 - s)


def logsigmoid_closed_form(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``d/dx log s(x) = 1 - s`` and ``d2/dx2 = -s (1 - s)``."""
    s = 1 / (1 + np.exp(-x))
    return 1 - s, -s * (1 - s)


def mish_closed_form(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mish's first and second derivatives, ``t = tanh(softplus(x))``, ``t' = (1 - t^2) s``."""
    s = 1 / (1 + np.exp(-x))
    t = np.tanh(np.log1p(np.exp(x)))
    dt = (1 - t * t) * s
    return t + x * dt, 2 * dt + x * (dt * (1 - s) - 2 * t * dt * s)


def elu_closed_form(alpha: float, input_scale: float) -> Callable[..., Any]:
    """``alpha * (exp(c x) - 1)`` below 0: first derivative ``alpha c exp(c x)``, second
    ``alpha c^2 exp(c x)``; 1 and 0 above."""
    def derivatives(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        e = np.exp(input_scale * np.minimum(x, 0))
        first = np.where(x > 0, 1.0, alpha * input_scale * e)
        return first, np.where(x > 0, 0.0, alpha * input_scale ** 2 * e)

    return derivatives


@pytest.mark.parametrize("function, closed_form", [
    (dp.softplus, softplus_closed_form), (F.softplus, softplus_closed_form),
    (F.logsigmoid, logsigmoid_closed_form),
    (F.mish, mish_closed_form), (lambda t: F.elu(t, 0.5), elu_closed_form(0.5, 1.0)),
    (lambda t: F.celu(t, 2.0), elu_closed_form(2.0, 0.5))])
def test_second_derivatives_are_the_references(function, closed_form, rng):
    x0 = rng.standard_normal((40, 1000)) * 3

    kernel = derivatives_as_the_reference_gives_them(function, x0)
    first, again = closed_form(x0)
    np.testing.assert_allclose(kernel[0], first, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(kernel[1], again, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("case", CASES)
def test_integer_input_gives_the_references_float(case, backend, kernels):
    function, _ = CASES[case]
    assert_integer_input_gives_the_references_float(function, backend)


def test_a_beta_too_large_for_float32_runs_the_reference(rng):
    x = special_floats(F32, 40_000, rng)
    grad = rng.standard_normal(x.size).astype(F32)
    for function in (lambda t: dp.softplus(t, beta=1e300), lambda t: F.softplus(t, 1e300, 5.0)):
        kernel = value_and_gradient(function, x, grad)
        with reference_only():
            reference = value_and_gradient(function, x, grad)
        for got, want in zip(kernel, reference, strict=True):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("make", [lambda module: module.elementwise.Softplus(1.0),
                                  lambda module: module.activations.Softplus(2.0, 3.0),
                                  lambda module: module.activations.LogSigmoid()])
def test_a_gradient_of_another_dtype_takes_the_references_backward(make, rng):
    from dparray import ops

    x = rng.standard_normal(40_000).astype(F32)
    grad = rng.standard_normal(40_000)  # float64 into a float32 node
    reference = make(ops)
    kernel = resolve(dp.get_backend("numpy"), type(reference))(*vars(reference).values())
    assert type(kernel) is not type(reference)
    for node in (kernel, reference):
        node(to_tensor(x, requires_grad=True))
    got, want = kernel.backward(grad), reference.backward(grad)
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("activation", [lambda: dp.nn.Softplus(2.0), dp.nn.LogSigmoid,
                                        dp.nn.Mish, dp.nn.ELU, dp.nn.SELU])
@pytest.mark.parametrize("workers", [2, 3])
def test_under_data_parallel_the_same_as_unwrapped(activation, workers, rng):
    assert_activation_under_data_parallel(activation(), workers, rng)
