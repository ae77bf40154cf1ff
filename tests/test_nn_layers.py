"""Each layer: output against a formula written here, gradients (inputs and parameters)
against finite differences in float64, on every backend."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import to_tensor
from nn_helpers import module_gradcheck

import dparray as dp
from dparray import nn

F64 = dp.float64
_erf = np.vectorize(math.erf)


def params(module):
    return {name: p.numpy() for name, p in module.named_parameters()}


def test_linear(backend, rng):
    layer = nn.Linear(4, 3, dtype=F64)
    x = rng.standard_normal((5, 4))
    p = params(layer)
    np.testing.assert_allclose(layer(to_tensor(x)).numpy(), x @ p["weight"].T + p["bias"],
                               rtol=1e-12)
    bound = 1 / math.sqrt(4)
    assert np.all(np.abs(p["weight"]) <= bound) and p["weight"].shape == (3, 4)
    module_gradcheck(layer, to_tensor(x, requires_grad=True))
    module_gradcheck(nn.Linear(4, 2, bias=False, dtype=F64),
                     to_tensor(rng.standard_normal((2, 3, 4)), requires_grad=True))
    assert nn.Linear(2, 2).weight.dtype == dp.float32


def test_linear_names_the_layer_and_shapes(backend):
    with pytest.raises(ValueError, match=r"Linear\(in_features=4, out_features=3, bias=True\): "
                                         r"expected input with 4 features .* shape \(2, 5\)"):
        nn.Linear(4, 3)(dp.ones(2, 5))


@pytest.mark.parametrize("layer, formula", [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.GELU(), lambda x: x * 0.5 * (1 + _erf(x / math.sqrt(2)))),
    (nn.GELU("tanh"), lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi)
                                                      * (x + 0.044715 * x**3)))),
    (nn.Tanh(), np.tanh),
    (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (nn.Softmax(dim=1), lambda x: np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)),
    (nn.LogSoftmax(dim=-1), lambda x: x - np.log(np.exp(x).sum(axis=-1, keepdims=True))),
    (nn.Identity(), lambda x: x),
    (nn.Flatten(), lambda x: x.reshape(x.shape[0], -1)),
], ids=lambda v: repr(v) if isinstance(v, nn.Module) else "")
def test_parameter_free_layers(layer, formula, backend, rng):
    x = rng.uniform(0.2, 1.5, (3, 2, 2)) * rng.choice([-1.0, 1.0], (3, 2, 2))
    np.testing.assert_allclose(layer(to_tensor(x)).numpy(), formula(x), rtol=1e-12, atol=1e-14)
    module_gradcheck(layer, to_tensor(x, requires_grad=True))


def test_dropout(backend):
    x = dp.ones(200, 50, dtype=F64)
    layer = nn.Dropout(0.25)
    dp.manual_seed(3)
    first = layer(x).numpy()
    dp.manual_seed(3)
    assert np.array_equal(first, layer(x).numpy())  # reproducible under a seed
    assert set(np.unique(first)) == {0.0, 1 / 0.75}
    assert abs((first == 0).mean() - 0.25) < 0.02
    assert layer.eval()(x) is x
    module_gradcheck(nn.Dropout(0.5), dp.randn(3, 4, dtype=F64, requires_grad=True))
    for p in (-0.1, 1.0, 2):
        with pytest.raises(ValueError, match=r"Dropout: p must be in \[0, 1\), got "):
            nn.Dropout(p)
    with pytest.raises(TypeError, match=r"Dropout: p must be a number, got '0\.5'"):
        nn.Dropout("0.5")


def test_layer_norm(backend, rng):
    layer = nn.LayerNorm((3, 4), dtype=F64)
    layer.weight.data = to_tensor(rng.standard_normal((3, 4))).data
    layer.bias.data = to_tensor(rng.standard_normal((3, 4))).data
    x = rng.standard_normal((2, 3, 4))
    mean = x.mean(axis=(1, 2), keepdims=True)
    var = x.var(axis=(1, 2), keepdims=True)
    p = params(layer)
    expected = (x - mean) / np.sqrt(var + 1e-5) * p["weight"] + p["bias"]
    np.testing.assert_allclose(layer(to_tensor(x)).numpy(), expected, rtol=1e-10)
    module_gradcheck(layer, to_tensor(x, requires_grad=True))
    with pytest.raises(ValueError,
                       match=r"layer_norm: input of shape \(2, 4, 3\) does not end in \(3, 4\)"):
        layer(dp.ones(2, 4, 3, dtype=F64))


def test_norm_reprs_say_whether_there_is_a_bias():
    """As PyTorch's: ``bias=`` follows the affine flag."""
    assert repr(nn.LayerNorm(4, bias=False)) == (
        "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=False)")
    assert repr(nn.BatchNorm1d(3, bias=False)) == (
        "BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=False, "
        "track_running_stats=True)")
    assert repr(nn.GroupNorm(2, 4, affine=False)) == (
        "GroupNorm(2, 4, eps=1e-05, affine=False, bias=False)")


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5)])
def test_batch_norm(shape, backend, rng):
    layer = nn.BatchNorm1d(3, momentum=0.2, dtype=F64)
    x = rng.standard_normal(shape) * 2 + 1
    axes = (0,) if len(shape) == 2 else (0, 2)
    view = (1, 3) + ((1,) if len(shape) == 3 else ())
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    out = layer(to_tensor(x)).numpy()
    np.testing.assert_allclose(out, (x - mean.reshape(view)) / np.sqrt(var.reshape(view) + 1e-5),
                               rtol=1e-10)
    count = x.size // 3
    np.testing.assert_allclose(layer.running_mean.numpy(), 0.2 * mean, rtol=1e-12)
    np.testing.assert_allclose(layer.running_var.numpy(), 0.8 + 0.2 * var * count / (count - 1),
                               rtol=1e-12)
    assert layer.num_batches_tracked.item() == 1
    layer.eval()
    expected = (x - layer.running_mean.numpy().reshape(view)) / np.sqrt(
        layer.running_var.numpy().reshape(view) + 1e-5)
    np.testing.assert_allclose(layer(to_tensor(x)).numpy(), expected, rtol=1e-10)
    layer.train()
    module_gradcheck(layer, to_tensor(x, requires_grad=True))


def test_batch_norm_errors(backend):
    layer = nn.BatchNorm1d(3)
    with pytest.raises(ValueError, match=r"BatchNorm1d\(3.*expected \(N, 3\) or \(N, 3, L\) "
                                         r"input, got shape \(2, 3, 4, 5\)"):
        layer(dp.ones(2, 3, 4, 5))
    with pytest.raises(ValueError, match="more than one value per channel"):
        layer(dp.ones(1, 3))
    layer.eval()
    assert layer(dp.ones(1, 3)).shape == (1, 3)  # running statistics: one row is fine


def test_embedding(backend, rng):
    layer = nn.Embedding(5, 3, dtype=F64)
    index = dp.tensor([[0, 4], [4, 4]])
    out = layer(index)
    np.testing.assert_array_equal(out.numpy(), layer.weight.numpy()[np.array([[0, 4], [4, 4]])])
    grads = (out * 2.0).sum().backward()
    expected = np.zeros((5, 3))
    expected[0], expected[4] = 2.0, 6.0  # repeated rows accumulate
    np.testing.assert_array_equal(grads[layer.weight].numpy(), expected)
    module_gradcheck(layer, index)
    with pytest.raises(TypeError, match="integer tensor of indices"):
        layer(dp.ones(2))
    with pytest.raises(IndexError, match="out of range"):
        layer(dp.tensor([5]))


def _conv_reference(x, w, b, stride, padding, dilation):
    n, _c, h, wd = x.shape
    oc, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    oh = (h + 2 * padding - dilation * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * padding - dilation * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, oc, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride:i * stride + dilation * (kh - 1) + 1:dilation,
                       j * stride:j * stride + dilation * (kw - 1) + 1:dilation]
            out[:, :, i, j] = np.einsum("nckl,ockl->no", patch, w) + b
    return out


@pytest.mark.parametrize("stride, padding, dilation", [(1, 0, 1), (2, 1, 1), (1, 2, 2)])
def test_conv2d(stride, padding, dilation, backend, rng):
    layer = nn.Conv2d(2, 3, 3, stride=stride, padding=padding, dilation=dilation, dtype=F64)
    x = rng.standard_normal((2, 2, 6, 5))
    p = params(layer)
    expected = _conv_reference(x, p["weight"], p["bias"], stride, padding, dilation)
    np.testing.assert_allclose(layer(to_tensor(x)).numpy(), expected, rtol=1e-10, atol=1e-12)
    bound = 1 / math.sqrt(2 * 9)
    assert p["weight"].shape == (3, 2, 3, 3) and np.all(np.abs(p["weight"]) <= bound)
    module_gradcheck(layer, to_tensor(x[:1, :, :5, :4], requires_grad=True))


def test_conv2d_errors(backend):
    with pytest.raises(ValueError, match=r"Conv2d: expected \(N, 2, H, W\) or unbatched "
                                         r"\(2, H, W\) input for weight of shape \(3, 2, 3, 3\) "
                                         r"and groups=1, got shape \(5, 5\)"):
        nn.Conv2d(2, 3, 3)(dp.ones(5, 5))
    with pytest.raises(ValueError, match=r"must be divisible by groups \(2\)"):
        nn.Conv2d(3, 2, 3, groups=2)
    with pytest.raises(ValueError, match="does not fit an input of spatial size"):
        nn.Conv2d(1, 1, 5)(dp.ones(1, 1, 3, 3))


def _pool_reference(x, k, s, p, reduce, fill):
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=fill)
    oh, ow = (xp.shape[2] - k) // s + 1, (xp.shape[3] - k) // s + 1
    out = np.zeros((*x.shape[:2], oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = reduce(xp[:, :, i * s:i * s + k, j * s:j * s + k], axis=(2, 3))
    return out


@pytest.mark.parametrize("kernel, stride, padding", [(2, None, 0), (3, 2, 1)])
def test_pooling(kernel, stride, padding, backend, rng):
    x = (rng.permutation(2 * 3 * 5 * 6) * 0.1).reshape(2, 3, 5, 6)  # distinct: no tied maxima
    s = stride or kernel
    maximum = nn.MaxPool2d(kernel, stride, padding)
    average = nn.AvgPool2d(kernel, stride, padding)
    np.testing.assert_allclose(maximum(to_tensor(x)).numpy(),
                               _pool_reference(x, kernel, s, padding, np.max, -np.inf))
    np.testing.assert_allclose(average(to_tensor(x)).numpy(),
                               _pool_reference(x, kernel, s, padding, np.mean, 0.0), rtol=1e-12)
    module_gradcheck(maximum, to_tensor(x[:1, :2], requires_grad=True))
    module_gradcheck(average, to_tensor(x[:1, :2], requires_grad=True))
    with pytest.raises(ValueError, match=r"MaxPool2d.*expected an \(N, C, H, W\) or unbatched "
                                         r"\(C, H, W\) input"):
        maximum(dp.ones(3, 4))
