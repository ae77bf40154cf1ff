"""The activations: values against NumPy formulas and gradients by finite differences on every
backend (``cases_activations.py``), PReLU's layer and DataParallel, and the argument errors;
the layers against PyTorch at random points and at every kink in ``test_torch_parity.py``."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor
from nn_helpers import module_gradcheck

import dparray as dp
from dparray import nn
from dparray.nn import functional as F
from dparray.testing import gradcheck

F64 = "float64"


# ------------------------------------------------------------------ functions
def test_integer_input_gives_the_default_float(backend):
    ints = dp.tensor([-2, 0, 3])
    for function in (dp.leaky_relu, dp.elu, dp.selu, dp.silu, dp.hardtanh, dp.relu6,
                     dp.softsign, dp.logsigmoid, F.softplus):
        out = function(ints)
        assert out.dtype.name == "float32", function.__name__
    np.testing.assert_allclose(dp.relu6(dp.tensor([-2, 3, 9])).numpy(), [0.0, 3.0, 6.0])


def test_extreme_inputs_stay_finite(backend):
    x = dp.tensor([-1000.0, -50.0, 50.0, 1000.0], dtype=F64, requires_grad=True)
    for function in (dp.silu, dp.mish, dp.logsigmoid, F.softplus, dp.elu, dp.selu, dp.celu):
        out = function(x)
        grads = out.sum().backward()[x]
        assert np.isfinite(out.numpy()).all() and np.isfinite(grads.numpy()).all(), function
    np.testing.assert_allclose(dp.logsigmoid(x).numpy(), [-1000.0, -50.0, -np.exp(-50.0), 0.0],
                               rtol=1e-12)


# ------------------------------------------------------------------ layers
def test_prelu_layer(backend, rng):
    layer = nn.PReLU(3, init=0.1, dtype=F64)
    assert [(name, p.shape) for name, p in layer.named_parameters()] == [("weight", (3,))]
    np.testing.assert_array_equal(layer.weight.numpy(), [0.1, 0.1, 0.1])
    assert layer.num_parameters() == 3  # the specification's count of scalars, a method
    assert repr(layer) == "PReLU(num_parameters=3)"
    x = to_tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    weight = to_tensor(np.array([0.1, -0.2, 0.3]), requires_grad=True)
    module_gradcheck(layer, x)
    gradcheck(F.prelu, [x, weight])
    assert nn.PReLU(dtype=F64)(dp.tensor(-2.0, dtype=F64)).item() == -0.5  # 0-d input


def test_activation_layers_repr_like_pytorch():
    assert repr(nn.LeakyReLU(0.2)) == "LeakyReLU(negative_slope=0.2)"
    assert repr(nn.ELU()) == "ELU(alpha=1.0)"
    assert repr(nn.CELU(0.5, inplace=True)) == "CELU(alpha=0.5, inplace=True)"
    assert repr(nn.SELU()) == "SELU()"
    assert repr(nn.Hardtanh(-2, 2)) == "Hardtanh(min_val=-2.0, max_val=2.0)"
    assert repr(nn.ReLU6()) == "ReLU6()"
    assert repr(nn.Softplus(2, 10)) == "Softplus(beta=2.0, threshold=10.0)"
    assert repr(nn.Softmin(1)) == "Softmin(dim=1)"


def test_inplace_is_accepted_and_changes_nothing(backend):
    x = dp.tensor([-1.0, 2.0], dtype=F64)
    for layer in (nn.LeakyReLU(inplace=True), nn.ELU(inplace=True), nn.SELU(inplace=True),
                  nn.Hardtanh(inplace=True), nn.ReLU6(inplace=True), nn.SiLU(inplace=True),
                  nn.Mish(inplace=True), nn.Hardswish(inplace=True)):
        out = layer(x)
        assert out is not x
        np.testing.assert_array_equal(x.numpy(), [-1.0, 2.0])
    np.testing.assert_array_equal(F.leaky_relu(x, 0.5, inplace=True).numpy(), [-0.5, 2.0])


# ------------------------------------------------------------------ DataParallel
def _outputs_and_gradients(model, layer, x, cotangent):
    out = model(x)
    grads = (out * cotangent).sum().backward()
    return out.numpy(), grads[x].numpy(), grads[layer.weight].numpy()


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("execution", ["threads", "inline"])
def test_prelu_under_data_parallel_same_as_unwrapped(workers, execution, backend, rng):
    layer = nn.PReLU(4, init=0.2, dtype=F64)
    layer.weight.data = to_tensor(np.array([0.1, -0.3, 0.5, 2.0])).data
    x = to_tensor(rng.standard_normal((7, 4, 3)), requires_grad=True)
    cotangent = to_tensor(rng.standard_normal((7, 4, 3)))
    model = dp.DataParallel(layer, workers, execution=execution)
    expected = _outputs_and_gradients(layer, layer, x, cotangent)
    got = _outputs_and_gradients(model, layer, x, cotangent)
    for value, want in zip(got, expected, strict=True):
        np.testing.assert_allclose(value, want, rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------ errors
def test_constructor_errors():
    with pytest.raises(TypeError, match=r"LeakyReLU: negative_slope must be a number, got '0\.1'"):
        nn.LeakyReLU("0.1")
    with pytest.raises(ValueError, match="ELU: alpha must be a finite number, got nan"):
        nn.ELU(float("nan"))
    with pytest.raises(ValueError, match="CELU: alpha must not be 0"):
        nn.CELU(0.0)
    with pytest.raises(ValueError, match=r"Hardtanh: min_val must not be greater than max_val, "
                                         r"got 1\.0 > -1\.0"):
        nn.Hardtanh(1.0, -1.0)
    with pytest.raises(ValueError, match=r"Softplus: beta must be greater than 0\.0, got 0"):
        nn.Softplus(beta=0)
    with pytest.raises(ValueError, match="Softplus: threshold must be a finite number"):
        nn.Softplus(threshold=float("inf"))
    with pytest.raises(ValueError, match="PReLU: num_parameters must be at least 1, got 0"):
        nn.PReLU(0)
    with pytest.raises(TypeError, match=r"PReLU: num_parameters must be an int, got 2\.0"):
        nn.PReLU(2.0)
    with pytest.raises(TypeError, match="PReLU: init must be a number"):
        nn.PReLU(init=None)
    with pytest.raises(TypeError, match="SiLU: inplace must be a bool, got 1"):
        nn.SiLU(inplace=1)
    with pytest.raises(TypeError, match=r"Softmin: dim must be an int, got 1\.0"):
        nn.Softmin(1.0)


def test_call_errors(backend):
    with pytest.raises(TypeError, match=r"leaky_relu: x must be a Tensor, got \[1\.0\] \(list\)"):
        F.leaky_relu([1.0])
    with pytest.raises(TypeError, match=r"Mish: input must be a Tensor, got 2\.0"):
        nn.Mish()(2.0)
    with pytest.raises(TypeError, match="Softmin: input must be a Tensor"):
        nn.Softmin()([1.0])
    with pytest.raises(ValueError, match="hardtanh: min_val must not be greater than max_val"):
        F.hardtanh(dp.zeros(2), 2.0, 1.0)
    with pytest.raises(ValueError, match="celu: alpha must not be 0"):
        F.celu(dp.zeros(2), 0)
    with pytest.raises(ValueError, match=r"softplus: beta must be greater than 0\.0, got -1\.0"):
        F.softplus(dp.zeros(2), beta=-1.0)
    with pytest.raises(TypeError, match="elu: inplace must be a bool"):
        F.elu(dp.zeros(2), inplace="no")
    layer = nn.PReLU(3)
    before = layer.weight.numpy().copy()
    with pytest.raises(ValueError, match=r"PReLU: weight must have shape \(1,\) or \(4,\) for "
                                         r"input of shape \(2, 4\), got \(3,\)"):
        layer(dp.zeros(2, 4))
    with pytest.raises(ValueError, match=r"weight must have shape \(1,\) or \(1,\) for input "
                                         r"of shape \(3,\), got \(3,\)"):
        layer(dp.zeros(3))  # no channel axis: one slope only, as in PyTorch
    np.testing.assert_array_equal(layer.weight.numpy(), before)
    with pytest.raises(TypeError, match="prelu: weight must be floating, got int64"):
        F.prelu(dp.zeros(2, 3), dp.tensor([1]))
    with pytest.raises(TypeError, match="prelu: weight must be a Tensor"):
        F.prelu(dp.zeros(2, 3), 0.25)
