"""Transposed convolution: NumPy's kernel (the convolution's compiled im2col and col2im and
BLAS products, in the other order) against its definition and the reference.

Checked against a scatter written here from the definition (float64, to 1e-12), against the
reference in float32, with stride, padding, output padding, dilation, groups and 1-d input,
with and without bias, under ``create_graph`` and inside DataParallel.
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
from dparray.kernels import reference_only, resolve
from dparray.nn import functional as F
from dparray.testing import gradcheck

CASES = {  # x's shape, weight's shape, keywords
    "stride 2, output padding": ((2, 4, 5, 6), (4, 3, 3, 3),
                                 dict(stride=2, padding=1, output_padding=1)),
    "groups 2": ((2, 4, 5, 6), (4, 2, 4, 4), dict(stride=2, padding=1, groups=2)),
    "dilated": ((3, 2, 4, 4), (2, 5, 2, 3), dict(dilation=(2, 1), padding=(1, 0))),
    "1-d": ((2, 3, 7), (3, 4, 3), dict(stride=3, output_padding=2)),
}


def pair(value, length):
    return tuple(value) if isinstance(value, tuple) else (value,) * length


def by_definition(x, weight, bias, stride=1, padding=0, output_padding=0, dilation=1,
                  groups=1):
    """Each input element times the kernel, added into the output at ``i * stride + k *
    dilation - padding``, in float64 (1-d as height one)."""
    if x.ndim == 3:
        out = by_definition(x[:, :, None], weight[:, :, None], bias, (1, stride), (0, padding),
                            (0, output_padding), (1, dilation), groups)
        return out[:, :, 0]
    (sh, sw), (ph, pw) = pair(stride, 2), pair(padding, 2)
    (oph, opw), (dh, dw) = pair(output_padding, 2), pair(dilation, 2)
    n, c, h, w = x.shape
    _, per_group, kh, kw = weight.shape
    oh = (h - 1) * sh - 2 * ph + dh * (kh - 1) + oph + 1
    ow = (w - 1) * sw - 2 * pw + dw * (kw - 1) + opw + 1
    full = np.zeros((n, per_group * groups, oh + 2 * ph + sh * h, ow + 2 * pw + sw * w))
    inputs_per_group = c // groups
    for ci in range(c):
        group = ci // inputs_per_group
        for o in range(per_group):
            for i in range(kh):
                for j in range(kw):
                    full[:, group * per_group + o, i * dh:i * dh + h * sh:sh,
                         j * dw:j * dw + w * sw:sw] += weight[ci, o, i, j] * x[:, ci]
    out = full[:, :, ph:ph + oh, pw:pw + ow]
    return out + (0 if bias is None else bias.reshape(1, -1, 1, 1))


def run(x, weight, bias, grad, options):
    tensors = [to_tensor(a, requires_grad=True) for a in (x, weight)]
    if bias is not None:
        tensors.append(to_tensor(bias, requires_grad=True))
    function = F.conv_transpose2d if x.ndim == 4 else F.conv_transpose1d
    out = function(*tensors, **options)
    grads = out.backward(to_tensor(grad(out.shape).astype(x.dtype)))
    return [out.numpy()] + [grads[t].numpy() for t in tensors]


def inputs(case, dtype, rng):
    x_shape, w_shape, options = CASES[case]
    bias = rng.standard_normal(w_shape[1] * options.get("groups", 1)).astype(dtype)
    return (rng.standard_normal(x_shape).astype(dtype),
            rng.standard_normal(w_shape).astype(dtype), bias, options)


@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("case", CASES)
def test_float64_against_the_definition(case, with_bias, rng):
    x, weight, bias, options = inputs(case, np.float64, rng)
    bias = bias if with_bias else None
    cotangent = {}

    def grad(shape):
        cotangent["value"] = rng.standard_normal(shape)
        return cotangent["value"]

    got = run(x, weight, bias, grad, options)
    np.testing.assert_allclose(got[0], by_definition(x, weight, bias, **options), rtol=1e-12,
                               atol=1e-12)
    # the gradients by x and weight from the definition's linearity: <dy, y(x, w)>
    dy = cotangent["value"]
    grad_x = np.array([np.sum(dy * by_definition(unit, weight, None, **options))
                       for unit in np.eye(x.size).reshape(-1, *x.shape)]).reshape(x.shape)
    grad_w = np.array([np.sum(dy * by_definition(x, unit, None, **options))
                       for unit in np.eye(weight.size).reshape(-1, *weight.shape)])
    np.testing.assert_allclose(got[1], grad_x, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[2], grad_w.reshape(weight.shape), rtol=1e-12, atol=1e-12)
    if with_bias:
        np.testing.assert_allclose(got[3], dy.sum(axis=(0, *range(2, dy.ndim))), rtol=1e-12)


@pytest.mark.parametrize("case", CASES)
def test_float32_agrees_with_the_reference(case, rng):
    x, weight, bias, options = inputs(case, np.float32, rng)
    cotangent = rng.standard_normal(64 ** 3)

    def grad(shape):
        return cotangent[:np.prod(shape)].reshape(shape)

    kernel = run(x, weight, bias, grad, options)
    with reference_only():
        reference = run(x, weight, bias, grad, options)
    for got, want in zip(kernel, reference, strict=True):
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_the_numpy_backend_runs_the_kernels():
    from dparray.ops import conv_transpose

    numpy = dp.get_backend("numpy")
    assert resolve(numpy, conv_transpose.ConvTranspose2d).__name__ == "ConvTransposeKernel"
    assert resolve(numpy, conv_transpose.ConvTranspose1d).__name__ == "ConvTranspose1dKernel"


def test_a_gradient_of_another_dtype_takes_the_references_backward(rng):
    from dparray.ops import conv_transpose

    x = rng.standard_normal((2, 4, 5, 6)).astype(np.float32)
    weight = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    reference = conv_transpose.ConvTranspose2d((2, 2), (1, 1), (0, 0), (1, 1), 1)
    kernel = resolve(dp.get_backend("numpy"), conv_transpose.ConvTranspose2d)(
        (2, 2), (1, 1), (0, 0), (1, 1), 1)
    for node in (kernel, reference):
        node(to_tensor(x, requires_grad=True), to_tensor(weight, requires_grad=True))
    grad = rng.standard_normal((2, 3, 9, 11))  # float64 into a float32 node
    for got, want in zip(kernel.backward(grad), reference.backward(grad), strict=True):
        np.testing.assert_array_equal(got, want)


def test_gradcheck_in_float64(backend, kernels, rng):
    x = to_tensor(rng.standard_normal((2, 4, 3, 3)), requires_grad=True, backend=backend)
    weight = to_tensor(rng.standard_normal((4, 2, 3, 2)), requires_grad=True, backend=backend)
    bias = to_tensor(rng.standard_normal(4), requires_grad=True, backend=backend)
    gradcheck(lambda a, w, b: F.conv_transpose2d(a, w, b, stride=2, padding=1,
                                                 output_padding=1, groups=2), [x, weight, bias])


def test_second_derivatives_are_the_references(rng):
    assert_mixed_second_derivatives_are_the_references(
        lambda x, w: F.conv_transpose2d(x, w, stride=2),
        rng.standard_normal((2, 3, 4, 4)), rng.standard_normal((3, 2, 3, 3)), 1e-12)


@pytest.mark.parametrize("workers", [2, 3])
def test_under_data_parallel_the_same_as_unwrapped(workers, rng):
    model = dp.nn.Sequential(
        dp.nn.ConvTranspose2d(4, 6, 4, stride=2, padding=1, dtype=dp.float64), dp.nn.ReLU(),
        dp.nn.ConvTranspose2d(6, 2, 3, dtype=dp.float64))
    assert_model_under_data_parallel(model, rng.standard_normal((6, 4, 5, 5)), workers)
