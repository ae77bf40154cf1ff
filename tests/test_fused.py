"""Every fused op (one graph node for a composite layer) against its composition of small ops.

Each fused op must give the value and the gradients of the composition it replaces (float64,
tight tolerance), pass gradcheck, keep float32 in float32, and propagate NaN and inf as the
composition does -- on every backend, with the backend's kernel table and with the array-API
references only (the ``kernels`` fixture), on odd shapes: one row, one column, non-contiguous
inputs.
"""

from __future__ import annotations

import gc
import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
from conftest import to_tensor
from gradient_checks import check_gradients
from nn_helpers import assert_same_gradients

import dparray as dp
from dparray.nn import functional as F
from dparray.ops.nn import unfold
from dparray.testing import gradcheck


# ----------------------------------------------------------------------------- compositions
def composed_layer_norm(x, weight, bias, ndim=1):
    axes = tuple(range(x.ndim - ndim, x.ndim))
    centred = x - x.mean(axis=axes, keepdims=True)
    variance = (centred * centred).mean(axis=axes, keepdims=True)
    out = centred / (variance + 1e-5).sqrt()
    return out * weight + bias


def composed_batch_norm(x, weight, bias):
    axes = (0, *range(2, x.ndim))
    view = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    centred = x - x.mean(axis=axes, keepdims=True)
    variance = (centred * centred).mean(axis=axes, keepdims=True)
    out = centred / (variance + 1e-5).sqrt()
    return out * weight.reshape(view) + bias.reshape(view)


def composed_batch_norm_eval(x, weight, bias, mean, var):
    view = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    out = (x - mean.reshape(view)) / (var.reshape(view) + 1e-5).sqrt()
    return out * weight.reshape(view) + bias.reshape(view)


def composed_gelu(x):
    cdf = dp.tensor(0.5 * (1.0 + np.vectorize(math.erf)(x.numpy() / math.sqrt(2.0))))
    density = dp.tensor(np.exp(-0.5 * x.numpy() ** 2) / math.sqrt(2 * math.pi))
    return _value_with_gradient(x, x.numpy() * cdf.numpy(), cdf.numpy() + x.numpy() *
                                density.numpy())


def composed_relu(x):
    return _value_with_gradient(x, np.maximum(x.numpy(), 0.0), (x.numpy() > 0) * 1.0)


def composed_softmax(x, axis):
    e = (x - x.max(axis=axis, keepdims=True).detach()).exp()
    return e / e.sum(axis=axis, keepdims=True)


def composed_log_softmax(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True).detach()
    return shifted - shifted.exp().sum(axis=axis, keepdims=True).log()


def composed_cross_entropy(x, target, weight, smoothing):
    logp = composed_log_softmax(x, 1)
    classes = x.shape[1]
    onehot = dp.tensor(np.eye(classes)[target.numpy()])
    w = weight.numpy()[target.numpy()]
    picked = -(logp * onehot).sum(axis=1) * dp.tensor(w)
    uniform = -(logp * weight).sum(axis=1) / classes
    return ((1 - smoothing) * picked + smoothing * uniform).sum() / float(w.sum())


def composed_conv2d(x, weight, bias, stride, padding, dilation):
    n = x.shape[0]
    out_channels, channels, kh, kw = weight.shape
    windows = unfold(x, (kh, kw), stride, padding, dilation)
    oh, ow = windows.shape[3:]
    columns = windows.reshape(n, channels * kh * kw, oh * ow)
    out = weight.reshape(out_channels, channels * kh * kw) @ columns
    return (out + bias.reshape(1, out_channels, 1)).reshape(n, out_channels, oh, ow)


def composed_max_pool2d(x, kernel, stride, padding):
    return unfold(x, kernel, stride, padding, (1, 1), pad_value=-math.inf).max(axis=2)


def composed_avg_pool2d(x, kernel, stride, padding):
    return unfold(x, kernel, stride, padding, (1, 1)).mean(axis=2)


def _value_with_gradient(x, value, derivative):
    """A tensor of ``value`` whose gradient with respect to ``x`` is ``derivative`` (an
    independent elementwise reference, computed on the host)."""

    class Known(dp.Function):
        def forward(self, data):
            return self.backend.asarray(value)

        def backward(self, grad):
            return grad * self.backend.asarray(derivative)

    return Known()(x)


# ----------------------------------------------------------------------------- the cases
@dataclass
class FusedCase:
    name: str
    fused: Callable[..., dp.Tensor]
    composed: Callable[..., dp.Tensor]
    shapes: list[tuple[int, ...]]
    draw: list[str] = field(default_factory=list)  # "normal", "positive", "distinct"
    constants: list[int] = field(default_factory=list)  # inputs that are not variables

    def __repr__(self) -> str:
        return self.name

    def arrays(self, rng: np.random.Generator, noncontiguous: bool = False) -> list[np.ndarray]:
        result = []
        for i, shape in enumerate(self.shapes):
            kind = self.draw[i] if i < len(self.draw) else "normal"
            if kind == "positive":
                a = rng.uniform(0.5, 2.0, shape)
            elif kind == "distinct":  # no ties in a window
                a = rng.permutation(math.prod(shape)).reshape(shape) * 0.1
            elif kind == "labels":
                a = rng.integers(0, shape[-1], shape[:-1])
            else:
                a = rng.standard_normal(shape)
            if noncontiguous and a.ndim >= 2 and a.dtype == np.float64:
                a = np.asfortranarray(a)  # the same values, column-major strides
            result.append(a)
        return result


def _ce(smoothing, weighted):
    def fused(x, target, weight):
        return F.cross_entropy(x, target, weight if weighted else None,
                               label_smoothing=smoothing)

    def composed(x, target, weight):
        return composed_cross_entropy(x, target, weight if weighted else dp.ones_like(weight),
                                      smoothing)

    return fused, composed


CASES = [
    FusedCase("layer_norm", lambda x, w, b: F.layer_norm(x, (5,), w, b), composed_layer_norm,
              [(4, 5), (5,), (5,)]),
    FusedCase("layer_norm_one_row", lambda x, w, b: F.layer_norm(x, (7,), w, b),
              composed_layer_norm, [(1, 7), (7,), (7,)]),
    FusedCase("layer_norm_one_column", lambda x, w, b: F.layer_norm(x, (1, 3), w, b),
              lambda x, w, b: composed_layer_norm(x, w, b, ndim=2), [(3, 1, 3), (1, 3), (1, 3)]),
    FusedCase("layer_norm_3d", lambda x, w, b: F.layer_norm(x, (3, 4), w, b),
              lambda x, w, b: composed_layer_norm(x, w, b, ndim=2), [(2, 3, 4), (3, 4), (3, 4)]),
    FusedCase("batch_norm_2d", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
              composed_batch_norm, [(6, 3), (3,), (3,)]),
    FusedCase("batch_norm_4d", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
              composed_batch_norm, [(3, 2, 4, 5), (2,), (2,)]),
    FusedCase("batch_norm_one_channel",
              lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
              composed_batch_norm, [(4, 1, 3), (1,), (1,)]),
    FusedCase("batch_norm_eval",
              lambda x, w, b, m, v: F.batch_norm(x, m, v, w, b, training=False),
              composed_batch_norm_eval, [(5, 3, 2), (3,), (3,), (3,), (3,)],
              ["normal", "normal", "normal", "normal", "positive"], constants=[3, 4]),
    FusedCase("softmax_last", lambda x: F.softmax(x, dim=-1), lambda x: composed_softmax(x, -1),
              [(4, 6)]),
    FusedCase("softmax_first", lambda x: F.softmax(x, dim=0), lambda x: composed_softmax(x, 0),
              [(4, 6)]),
    FusedCase("softmax_one_column", lambda x: F.softmax(x, dim=-1),
              lambda x: composed_softmax(x, -1), [(5, 1)]),
    FusedCase("log_softmax_middle", lambda x: F.log_softmax(x, dim=1),
              lambda x: composed_log_softmax(x, 1), [(2, 5, 3)]),
    FusedCase("cross_entropy", *_ce(0.0, False), [(6, 4), (6, 4), (4,)],
              ["normal", "labels", "positive"], constants=[1, 2]),
    FusedCase("cross_entropy_weight_smoothing", *_ce(0.2, True), [(6, 4), (6, 4), (4,)],
              ["normal", "labels", "positive"], constants=[1, 2]),
    FusedCase("cross_entropy_one_row", *_ce(0.1, False), [(1, 3), (1, 3), (3,)],
              ["normal", "labels", "positive"], constants=[1, 2]),
    FusedCase("conv2d", lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2),
                                                 dilation=(1, 2)),
              lambda x, w, b: composed_conv2d(x, w, b, (2, 1), (1, 2), (1, 2)),
              [(2, 3, 6, 7), (4, 3, 3, 2), (4,)]),
    FusedCase("conv2d_one_pixel", lambda x, w, b: F.conv2d(x, w, b),
              lambda x, w, b: composed_conv2d(x, w, b, (1, 1), (0, 0), (1, 1)),
              [(1, 2, 1, 1), (3, 2, 1, 1), (3,)]),
    FusedCase("conv2d_without_bias", lambda x, w: F.conv2d(x, w, padding=1),
              lambda x, w: composed_conv2d(x, w, dp.zeros(w.shape[0], dtype=x.dtype), (1, 1),
                                           (1, 1), (1, 1)),
              [(2, 2, 4, 5), (3, 2, 3, 3)]),
    FusedCase("relu", F.relu, composed_relu, [(3, 5)]),
    FusedCase("max_pool2d", lambda x: F.max_pool2d(x, 3, stride=2, padding=1),
              lambda x: composed_max_pool2d(x, (3, 3), (2, 2), (1, 1)), [(2, 3, 7, 6)],
              ["distinct"]),
    FusedCase("max_pool2d_one_window", lambda x: F.max_pool2d(x, (2, 3)),
              lambda x: composed_max_pool2d(x, (2, 3), (2, 3), (0, 0)), [(1, 1, 2, 3)],
              ["distinct"]),
    FusedCase("avg_pool2d", lambda x: F.avg_pool2d(x, (2, 3), stride=1, padding=1),
              lambda x: composed_avg_pool2d(x, (2, 3), (1, 1), (1, 1)), [(2, 2, 5, 4)]),
]


def _inputs(case, rng, backend_name, dtype=np.float64, noncontiguous=False):
    tensors = []
    for i, a in enumerate(case.arrays(rng, noncontiguous)):
        if np.issubdtype(a.dtype, np.floating):
            a = a.astype(dtype)
        tensors.append(to_tensor(a, requires_grad=i not in case.constants
                                 and np.issubdtype(a.dtype, np.floating)))
    return tensors


@pytest.mark.parametrize("noncontiguous", [False, True], ids=["contiguous", "strided"])
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_value_and_gradients_equal_the_composition(case, noncontiguous, backend, kernels, rng):
    inputs = _inputs(case, rng, backend.name, noncontiguous=noncontiguous)
    fused, composed = case.fused(*inputs), case.composed(*inputs)
    assert fused.shape == composed.shape
    np.testing.assert_allclose(fused.numpy(), composed.numpy(), rtol=1e-12, atol=1e-12)
    assert_same_gradients(fused, composed, inputs, rng)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_gradcheck(case, backend, kernels, rng):
    check_gradients(case.fused, _inputs(case, rng, backend.name))


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_float32_stays_float32(case, backend, kernels, rng):
    inputs = _inputs(case, rng, backend.name, dtype=np.float32)
    out = case.fused(*inputs)
    assert out.dtype == dp.float32
    reference = case.composed(*inputs)
    np.testing.assert_allclose(out.numpy(), reference.numpy(), rtol=2e-5, atol=2e-6)
    grads = out.sum().backward()
    for t in inputs:
        if t.is_variable:
            assert grads[t].dtype == dp.float32 and grads[t].shape == t.shape


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_nan_and_inf_propagate_as_in_the_composition(case, backend, kernels, rng):
    arrays = case.arrays(rng)
    first = arrays[0].copy()
    flat = first.reshape(-1)
    flat[0], flat[-1] = np.nan, np.inf
    arrays[0] = first
    inputs = [to_tensor(a, requires_grad=i not in case.constants
                        and np.issubdtype(a.dtype, np.floating)) for i, a in enumerate(arrays)]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        fused, composed = case.fused(*inputs), case.composed(*inputs)
        np.testing.assert_array_equal(np.isnan(fused.numpy()), np.isnan(composed.numpy()))
        np.testing.assert_array_equal(np.isinf(fused.numpy()), np.isinf(composed.numpy()))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_at_huge_and_non_finite_inputs(dtype, backend, kernels):
    """Where ``exp(-x^2 / 2)`` underflows the derivative is the cdf (1 or 0) for finite ``x``,
    and NaN at +-inf (inf * 0) and NaN, as the formula gives in floating point."""
    x = np.array([1e10, -1e10, 3e38, np.inf, -np.inf, np.nan, 40.0, -40.0, 0.0], dtype)
    t = to_tensor(x, requires_grad=True)
    with np.errstate(invalid="ignore", over="ignore"):
        y = F.gelu(t)
        grad = y.sum().backward()[t].numpy()
        expected = x * (x > 0)  # NaN where x is NaN or -inf (-inf * 0)
    np.testing.assert_array_equal(y.numpy(), expected)
    np.testing.assert_array_equal(grad, [1, 0, 1, np.nan, np.nan, np.nan, 1, 0, 0.5])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [9, 40_000])  # below and above the serial-loop threshold
def test_relu_is_maximum_with_zero_bit_for_bit(dtype, size, backend, kernels):
    """NaN stays NaN, -0.0 becomes +0.0 and the smallest subnormal stays, as ``maximum(x, 0)``
    gives them; the gradient is 0 at and below 0 and passes elsewhere -- at NaN too, as in
    PyTorch."""
    special = np.array([np.nan, -0.0, 0.0, -1.0, 2.0, np.inf, -np.inf,
                        np.finfo(dtype).smallest_subnormal, -np.finfo(dtype).smallest_subnormal],
                       dtype)
    x = np.resize(special, size)
    t = to_tensor(x, requires_grad=True)
    y = F.relu(t).numpy()
    expected = np.maximum(x, 0)
    np.testing.assert_array_equal(y, expected)
    np.testing.assert_array_equal(np.signbit(y), np.signbit(expected))
    grad = F.relu(t).backward(to_tensor(np.full(size, 3.0, dtype)))[t].numpy()
    np.testing.assert_array_equal(grad, np.where(x <= 0, 0.0, 3.0).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_keeps_its_output_and_frees_its_input(dtype, kernels, rng):
    """As PyTorch: backward's mask comes from the output, which the next op keeps anyway, so
    the input (here an intermediate no one else holds) is freed after forward."""
    w = dp.tensor(rng.standard_normal((40, 30)).astype(dtype), requires_grad=True)
    hidden = w * 2.0
    hidden_array = weakref.ref(hidden.data)
    out = F.relu(hidden)
    del hidden
    gc.collect()
    assert hidden_array() is None
    grad = out.backward(dp.tensor(np.full((40, 30), 3.0, dtype)))[w].numpy()
    np.testing.assert_array_equal(grad, np.where(w.numpy() > 0, 6.0, 0.0).astype(dtype))


def test_gelu_matches_the_error_function(backend, kernels, rng):
    for approximate in ("none", "tanh"):
        x = to_tensor(rng.standard_normal((5, 7)) * 3, requires_grad=True)
        gradcheck(lambda t, a=approximate: F.gelu(t, approximate=a), [x])
    x = to_tensor(rng.standard_normal((3, 4)) * 3, requires_grad=True)
    np.testing.assert_allclose(F.gelu(x).numpy(), composed_gelu(x).numpy(), rtol=1e-13)
    grads = F.gelu(x).sum().backward()
    np.testing.assert_allclose(grads[x].numpy(), composed_gelu(x).sum().backward()[x].numpy(),
                               rtol=1e-12)


def test_dropout_node_equals_masking_with_the_same_stream(backend, kernels, rng):
    x = to_tensor(rng.standard_normal((40, 30)), requires_grad=True)
    with dp.fork_rng(5):
        out = F.dropout(x, 0.3)
    with dp.fork_rng(5):
        keep = dp.Tensor(dp.random.generator(x.backend).bernoulli((40, 30), 0.7), x.backend)
    expected = dp.where(keep, x * (1.0 / 0.7), 0.0)
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    g = out.sum().backward()[x]
    np.testing.assert_allclose(g.numpy(), np.where(keep.numpy(), 1 / 0.7, 0.0), rtol=1e-15)
    assert 0.6 < keep.numpy().mean() < 0.8
