"""Depthwise convolution (``groups`` equal to the input channels): NumPy's direct loops
(``backends/_depthwise_conv.py``) against an independent computation and the reference.

The loops sum each output's ``kh * kw`` products in the arrays' type, at stride 1 over the
flattened padded plane, otherwise a row at a time; the weight's and bias's gradients sum in
float64. Checked against a sum over taps written here (float64, to 1e-12), against the
reference in float32, at stride 1 and 2, with padding, dilation, non-square kernels, channel
multipliers 1-3, with and without bias, through ``nn.Conv2d``, under ``create_graph`` and
inside DataParallel; an ordinary grouped convolution still takes the general kernel.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import (
    assert_mixed_second_derivatives_are_the_references,
    assert_model_under_data_parallel,
    to_tensor,
)

import dparray as dp
from dparray.kernels import reference_only
from dparray.nn import functional as F
from dparray.testing import gradcheck

GEOMETRIES = {  # (N, C, H, W), multiplier, (kh, kw), conv2d's keywords
    "3x3 same": ((2, 3, 7, 9), 1, (3, 3), dict(padding=1)),
    "stride 2, dilation 2": ((3, 4, 10, 8), 2, (3, 3), dict(stride=2, padding=2, dilation=2)),
    "2x3, stride (1, 2)": ((1, 5, 6, 6), 3, (2, 3), dict(stride=(1, 2), padding=(0, 1))),
    "5x5 same": ((2, 8, 5, 5), 1, (5, 5), dict(padding=2)),
    "dilated, no padding": ((2, 3, 9, 7), 2, (3, 2), dict(dilation=(2, 1))),
    "1x1": ((2, 4, 3, 5), 1, (1, 1), {}),
}


def pair(value):
    return value if isinstance(value, tuple) else (value, value)


def by_taps(x, weight, bias, grad, stride=1, padding=0, dilation=1):
    """The convolution and its three gradients as sums over the taps, in float64."""
    (sh, sw), (ph, pw), (dh, dw) = pair(stride), pair(padding), pair(dilation)
    _, c, h, w = x.shape
    planes, _, kh, kw = weight.shape
    multiplier = planes // c
    oh, ow = grad.shape[2:]
    padded = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    out = np.zeros(grad.shape) + bias.reshape(1, -1, 1, 1)
    grad_padded = np.zeros_like(padded)
    grad_weight = np.zeros(weight.shape)
    for oc in range(planes):
        c_in = oc // multiplier
        for i in range(kh):
            for j in range(kw):
                rows = slice(i * dh, i * dh + (oh - 1) * sh + 1, sh)
                cols = slice(j * dw, j * dw + (ow - 1) * sw + 1, sw)
                patch = padded[:, c_in, rows, cols]
                out[:, oc] += weight[oc, 0, i, j] * patch
                grad_padded[:, c_in, rows, cols] += weight[oc, 0, i, j] * grad[:, oc]
                grad_weight[oc, 0, i, j] = np.sum(grad[:, oc] * patch)
    grad_x = grad_padded[:, :, ph:ph + h, pw:pw + w]
    return out, grad_x, grad_weight, grad.sum(axis=(0, 2, 3))


def run(x, weight, bias, grad_of, options):
    """The convolution's value and gradients (input, weight, bias when given) as arrays."""
    tensors = [to_tensor(a, requires_grad=True) for a in (x, weight)]
    if bias is not None:
        tensors.append(to_tensor(bias, requires_grad=True))
    out = F.conv2d(*tensors, groups=x.shape[1], **options)
    grads = out.backward(to_tensor(grad_of(out.shape).astype(x.dtype)))
    return [out.numpy()] + [grads[t].numpy() for t in tensors]


def inputs(geometry, dtype, rng):
    shape, multiplier, (kh, kw), options = GEOMETRIES[geometry]
    x = rng.standard_normal(shape).astype(dtype)
    weight = rng.standard_normal((shape[1] * multiplier, 1, kh, kw)).astype(dtype)
    bias = rng.standard_normal(shape[1] * multiplier).astype(dtype)
    return x, weight, bias, options


@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_float64_against_sums_over_the_taps(geometry, with_bias, rng):
    x, weight, bias, options = inputs(geometry, np.float64, rng)
    grad = {}

    def grad_of(shape):
        grad["value"] = rng.standard_normal(shape)
        return grad["value"]

    got = run(x, weight, bias if with_bias else None, grad_of, options)
    expected = by_taps(x, weight, bias if with_bias else np.zeros_like(bias), grad["value"],
                       **options)
    assert len(got) == (4 if with_bias else 3)
    for value, want in zip(got, expected, strict=False):
        assert value.dtype == np.float64
        np.testing.assert_allclose(value, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_float32_agrees_with_the_reference(geometry, rng):
    x, weight, bias, options = inputs(geometry, np.float32, rng)
    grad = rng.standard_normal((64,) * 4)  # cut to the output's shape

    def grad_of(shape):
        return grad[tuple(slice(0, s) for s in shape)]

    kernel = run(x, weight, bias, grad_of, options)
    with reference_only():
        reference = run(x, weight, bias, grad_of, options)
    for got, want in zip(kernel, reference, strict=True):
        assert got.dtype == np.float32
        scale = np.abs(want).max()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * scale)


def test_the_module_and_a_large_batch(rng):
    """``nn.Conv2d(groups=C)``, with enough planes that each core takes several."""
    conv = dp.nn.Conv2d(16, 32, 3, padding=1, groups=16, dtype=dp.float64)
    x = rng.standard_normal((9, 16, 12, 10))
    out = conv(to_tensor(x))
    weight, bias = conv.weight.numpy(), conv.bias.numpy()
    expected = by_taps(x, weight, bias, np.zeros(out.shape), padding=1)[0]
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_a_grouped_convolution_with_several_channels_per_group(rng):
    """Two input channels per group: the general kernel, as before."""
    x = rng.standard_normal((2, 4, 6, 6))
    weight = rng.standard_normal((4, 2, 3, 3))
    out = F.conv2d(to_tensor(x), to_tensor(weight), groups=2, padding=1)
    with reference_only():
        reference = F.conv2d(to_tensor(x), to_tensor(weight), groups=2, padding=1)
    np.testing.assert_allclose(out.numpy(), reference.numpy(), rtol=1e-12, atol=1e-12)


def test_gradcheck_in_float64(backend, kernels, rng):
    x = to_tensor(rng.standard_normal((2, 3, 5, 4)), requires_grad=True, backend=backend)
    weight = to_tensor(rng.standard_normal((6, 1, 3, 2)), requires_grad=True, backend=backend)
    bias = to_tensor(rng.standard_normal(6), requires_grad=True, backend=backend)
    gradcheck(lambda a, b, c: F.conv2d(a, b, c, padding=1, groups=3), [x, weight, bias])
    gradcheck(lambda a, b, c: F.conv2d(a, b, c, stride=2, dilation=(1, 2), groups=3),
              [x, weight, bias])


def test_second_derivatives_are_the_references(rng):
    assert_mixed_second_derivatives_are_the_references(
        lambda x, w: F.conv2d(x, w, padding=1, groups=3),
        rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((3, 1, 3, 3)), 1e-12)


@pytest.mark.parametrize("workers", [2, 3])
def test_under_data_parallel_the_same_as_unwrapped(workers, rng):
    model = dp.nn.Sequential(dp.nn.Conv2d(8, 8, 3, padding=1, groups=8, dtype=dp.float64),
                             dp.nn.ReLU(),
                             dp.nn.Conv2d(8, 16, 3, stride=2, groups=8, dtype=dp.float64))
    assert_model_under_data_parallel(model, rng.standard_normal((6, 8, 9, 9)), workers, 1e-12)
