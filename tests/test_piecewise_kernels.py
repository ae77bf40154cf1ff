"""Leaky ReLU, hardtanh, ReLU6, hardswish and the hard sigmoid: their NumPy kernels give the
references' values and gradients to the bit (every byte: the sign of zero and NaN too).

The kernels keep the references' arithmetic (``dparray.ops.activations``) in the arrays' type
and NumPy's ``clip`` (a value equal to a bound stays as it is; NaN passes), so the two agree
exactly: at NaN, +-inf, +-0, subnormals, on the bounds and kinks, with bounds float32 cannot
hold, below and above the serial-loop threshold, for strided inputs, through the ``nn``
modules, under ``create_graph`` and inside DataParallel.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import (
    assert_activation_under_data_parallel,
    assert_integer_input_gives_the_references_float,
    derivatives_as_the_reference_gives_them,
    special_floats,
    to_tensor,
    value_and_gradient,
)

import dparray as dp
from dparray.kernels import reference_only, resolve
from dparray.nn import functional as F
from dparray.testing import gradcheck

SIZES = [19, 40_000, 300_001]


def independent(name: str, low: float = -1.0, high: float = 1.0, slope: float = 0.01):
    """Each activation and its derivative from its definition, in float64."""
    def clip(v, lo, hi):
        return np.where(v < lo, lo, np.where(v > hi, hi, v))

    formulas = {
        "leaky_relu": (lambda x: np.where(x > 0, x, slope * x),
                       lambda x: np.where(x > 0, 1.0, slope)),
        "hardtanh": (lambda x: clip(x, low, high),
                     lambda x: ((x > low) & (x < high)).astype(float)),
        "hardswish": (lambda x: x * clip(x + 3, 0, 6) / 6,
                      lambda x: np.where(x <= -3, 0.0, np.where(x >= 3, 1.0, x / 3 + 0.5))),
        "hardsigmoid": (lambda x: clip(x + 3, 0, 6) / 6,
                        lambda x: ((x > -3) & (x < 3)) / 6.0),
    }
    return formulas[name]


CASES = {
    "F.leaky_relu": (F.leaky_relu, independent("leaky_relu")),
    "F.leaky_relu(0.2)": (lambda t: F.leaky_relu(t, 0.2), independent("leaky_relu", slope=0.2)),
    "F.leaky_relu(-0.3)": (lambda t: F.leaky_relu(t, -0.3),
                           independent("leaky_relu", slope=-0.3)),
    "F.hardtanh": (F.hardtanh, independent("hardtanh")),
    "F.hardtanh(0.1, 0.7)": (lambda t: F.hardtanh(t, 0.1, 0.7),
                             independent("hardtanh", 0.1, 0.7)),
    "F.hardtanh(0, 0)": (lambda t: F.hardtanh(t, 0.0, 0.0), independent("hardtanh", 0.0, 0.0)),
    "F.relu6": (F.relu6, independent("hardtanh", 0.0, 6.0)),
    "F.hardswish": (F.hardswish, independent("hardswish")),
    "F.hardsigmoid": (F.hardsigmoid, independent("hardsigmoid")),
}
KINKS = [-6.0, -3.0, -1.0, -0.0, 0.0, 0.1, 0.7, 1.0, 3.0, 6.0]


def inputs(dtype: type, size: int, rng: np.random.Generator) -> np.ndarray:
    x = special_floats(dtype, size, rng) / 4  # most values between the kinks
    kinks = np.array(KINKS * 3, dtype)[: max(size - 19, 0)]
    x[size - kinks.size:] = kinks
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("size", SIZES)
def test_values_and_gradients_are_the_references_to_the_byte(case, dtype, size, rng):
    function, (value, derivative) = CASES[case]
    x = inputs(dtype, size, rng)
    grad = rng.standard_normal(size).astype(dtype)
    grad[-3:] = [np.inf, np.nan, 0.0]
    kernel = value_and_gradient(function, x, grad)
    with reference_only():
        reference = value_and_gradient(function, x, grad)
    for got, want in zip(kernel, reference, strict=True):
        assert got.dtype == dtype
        assert got.tobytes() == want.tobytes()
    finite = (np.abs(x) < 1e30) & np.isfinite(grad)  # x * 6 overflows float32 near its max
    x64 = x[finite].astype(np.float64)
    tolerance = 1e-6 if dtype == np.float32 else 1e-15
    np.testing.assert_allclose(kernel[0][finite], value(x64), rtol=tolerance, atol=1e-30)
    # the kinks where the type puts them: hardtanh(0.1, 0.7)'s bounds are float32's there
    np.testing.assert_allclose(kernel[1][finite], grad[finite] * derivative(x[finite]),
                               rtol=tolerance, atol=tolerance)


def test_the_numpy_backend_runs_the_kernels():
    from dparray.ops import activations

    numpy = dp.get_backend("numpy")
    for reference in (activations.LeakyRelu, activations.Hardtanh, activations.Hardswish,
                      activations.Hardsigmoid):
        assert resolve(numpy, reference).__name__ == reference.__name__ + "Kernel"
        with reference_only():
            assert resolve(numpy, reference) is reference


@pytest.mark.parametrize("module, function", [
    (lambda: dp.nn.LeakyReLU(0.2), lambda t: F.leaky_relu(t, 0.2)),
    (lambda: dp.nn.Hardtanh(-2.0, 0.5), lambda t: F.hardtanh(t, -2.0, 0.5)),
    (dp.nn.ReLU6, F.relu6), (dp.nn.Hardswish, F.hardswish), (dp.nn.Hardsigmoid, F.hardsigmoid)])
def test_the_modules_run_the_kernels_as_the_functions_do(module, function, rng):
    x = inputs(np.float32, 40_000, rng).reshape(200, 200)
    grad = rng.standard_normal(x.shape).astype(np.float32)
    got = value_and_gradient(module(), x, grad)
    with reference_only():
        reference = value_and_gradient(module(), x, grad)
    for a, b, c in zip(got, value_and_gradient(function, x, grad), reference, strict=True):
        assert a.tobytes() == b.tobytes() == c.tobytes()


@pytest.mark.parametrize("case", CASES)
def test_strided_inputs_and_gradients(case, backend, kernels, rng):
    function, (value, derivative) = CASES[case]
    x = rng.standard_normal((6, 8))[:, ::2].T * 4  # neither C- nor F-ordered after the slice
    grad = rng.standard_normal((8, 6))[::2].copy(order="F")
    t = to_tensor(x, requires_grad=True, backend=backend)
    out = function(t)
    got = out.backward(to_tensor(grad, backend=backend))[t]
    assert out.shape == x.shape and got.shape == x.shape
    np.testing.assert_allclose(out.numpy(), value(x), rtol=1e-15)
    np.testing.assert_allclose(got.numpy(), grad * derivative(x), rtol=1e-15)


@pytest.mark.parametrize("case", CASES)
def test_gradcheck_in_float64(case, backend, kernels, rng):
    x = rng.standard_normal((5, 7)) * 4
    x[np.abs(np.abs(x) - 3) < 0.05] += 0.2  # not on a kink, where differences straddle it
    x[np.abs(x) < 0.05] += 0.2
    gradcheck(CASES[case][0], [to_tensor(x, requires_grad=True, backend=backend)])


def test_hardswishs_second_derivative_is_the_references(rng):
    x0 = rng.standard_normal((40, 1000)) * 4
    first, again = derivatives_as_the_reference_gives_them(F.hardswish, x0)
    np.testing.assert_allclose(first, independent("hardswish")[1](x0), rtol=1e-15)
    np.testing.assert_allclose(again, np.where((x0 > -3) & (x0 < 3), 1 / 3, 0.0), rtol=1e-15)


@pytest.mark.parametrize("case", ["F.leaky_relu(0.2)", "F.relu6", "F.hardsigmoid"])
def test_a_gradient_made_with_create_graph_is_the_references(case, rng):
    """Piecewise linear: the gradient is a graph (of the replayed reference) but no longer
    depends on ``x``."""
    function, (_, derivative) = CASES[case]
    x0 = rng.standard_normal((40, 1000)) * 4

    def gradient():
        x = to_tensor(x0, requires_grad=True)
        (first,) = dp.autograd.grad(function(x).sum(), [x], create_graph=True)
        return first.numpy()

    with reference_only():
        reference = gradient()
    np.testing.assert_array_equal(gradient(), reference)
    np.testing.assert_allclose(reference, derivative(x0), rtol=1e-15)


@pytest.mark.parametrize("case", CASES)
def test_integer_input_gives_the_references_float(case, backend, kernels):
    assert_integer_input_gives_the_references_float(CASES[case][0], backend)


def test_a_slope_too_large_for_float32_runs_the_reference(rng):
    x = inputs(np.float32, 40_000, rng)
    grad = rng.standard_normal(x.size).astype(np.float32)
    function = lambda t: F.leaky_relu(t, 1e300)  # noqa: E731
    kernel = value_and_gradient(function, x, grad)
    with reference_only():
        reference = value_and_gradient(function, x, grad)
    for got, want in zip(kernel, reference, strict=True):
        assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("activation", [lambda: dp.nn.LeakyReLU(0.2), dp.nn.ReLU6,
                                        dp.nn.Hardswish, dp.nn.Hardsigmoid])
@pytest.mark.parametrize("workers", [2, 3])
def test_under_data_parallel_the_same_as_unwrapped(activation, workers, rng):
    assert_activation_under_data_parallel(activation(), workers, rng)
