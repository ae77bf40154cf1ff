"""The ops added for PyTorch's op tests refuse bad arguments with a clear error, by type and
message, before computing anything; and the behaviours a fixture cannot show (``empty``'s
shape, the warning of a variance without degrees of freedom)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dparray as dp

F = dp.nn.functional


def _x():
    return dp.ones(2, 3)


ERRORS = [
    (lambda: dp.scatter_reduce(_x(), 0, dp.tensor([[0, 1, 0]]), dp.ones(1, 3), "max"),
     ValueError, r"scatter_reduce: reduce must be one of 'sum', 'prod', 'mean', 'amax', 'amin'"),
    (lambda: dp.scatter_reduce(_x(), 0, dp.tensor([[0, 1, 0]]), dp.ones(1, 3), "sum",
                               include_self=1),
     TypeError, r"scatter_reduce: include_self must be a bool"),
    (lambda: dp.scatter_reduce(_x(), 0, dp.tensor([[0, 1, 0]]), dp.ones(1, 3, dtype="float64"),
                               "sum"),
     TypeError, r"scatter_reduce: src must have the tensor's dtype float32, got float64"),
    (lambda: dp.scatter_reduce(_x(), 0, dp.tensor([[0, 2, 0]]), dp.ones(1, 3), "sum"),
     IndexError, r"scatter_reduce: index 2 is out of range for axis 0 of size 2"),
    (lambda: dp.scatter_reduce(dp.ones(2, dtype="bool"), 0, dp.tensor([0]), dp.ones(1,
                                                                                  dtype="bool"),
                               "sum"),
     TypeError, r"scatter_reduce: needs a tensor of numbers, got bool"),
    (lambda: _x().scatter(0, dp.tensor([[0, 1, 0]]), 1.0, reduce="sum"),
     ValueError, r"scatter: reduce must be one of 'add', 'multiply', got 'sum'"),
    (lambda: dp.div(_x(), 2, rounding_mode="round"),
     ValueError, r"div: rounding_mode must be one of 'trunc', 'floor', got 'round'"),
    (lambda: dp.div(dp.tensor([1, 2]), 0, rounding_mode="trunc"),
     ZeroDivisionError, r"div: integer division by zero"),
    (lambda: dp.fmod(3.0, _x()), TypeError, r"fmod: a must be a Tensor"),
    (lambda: dp.fmod(dp.tensor([1, 2]), dp.tensor([1, 0])),
     ZeroDivisionError, r"fmod: integer division by zero"),
    (lambda: dp.copysign([1.0], _x()), TypeError, r"copysign: a must be a Tensor"),
    (lambda: dp.nonzero([1, 0]), TypeError, r"nonzero: x must be a Tensor"),
    (lambda: dp.nonzero(_x(), as_tuple=1), TypeError, r"nonzero: as_tuple must be a bool"),
    (lambda: dp.masked_select(_x(), dp.ones(3)), TypeError,
     r"masked_select: mask must be a bool tensor, got float32"),
    (lambda: dp.masked_select(_x(), dp.tensor([True, False])), ValueError,
     r"masked_select: shapes \(2, 3\) and \(2,\) cannot be broadcast together"),
    (lambda: _x().unfold(1, 4, 1), ValueError, r"unfold: size 4 is larger than axis 1 of size 3"),
    (lambda: _x().unfold(1, 2, 0), ValueError, r"unfold: step must be at least 1, got 0"),
    (lambda: _x().unfold(2, 1, 1), ValueError, r"unfold: axis 2 is out of range"),
    (lambda: _x().unflatten(1, (2, -1)), ValueError,
     r"unflatten: sizes \(2, -1\) do not split axis 1 of size 3"),
    (lambda: _x().unflatten(1, 3), TypeError, r"unflatten: sizes must be a non-empty sequence"),
    (lambda: _x().roll(1, shifts=1), TypeError,
     r"^Tensor\.roll\(\) got both shift= and its alias shifts=; pass one"),
    (lambda: _x().roll(), TypeError, r"roll: missing the shift"),
    (lambda: _x().var(correction=1, unbiased=True), TypeError,
     r"var: give correction or unbiased, not both"),
    (lambda: _x().std(unbiased=1), TypeError, r"std: unbiased must be a bool"),
    (lambda: dp.var_mean(_x(), correction=-1), ValueError,
     r"var: correction must be at least 0"),
    (lambda: _x().sum(dtype="complex64"), TypeError, r"unknown dtype 'complex64'"),
    (lambda: F.normalize(_x(), p=0), ValueError, r"normalize: p must be greater than 0"),
    (lambda: F.normalize(dp.ones(2, 3, dtype="int64")), TypeError,
     r"normalize: input must be a floating-point tensor"),
    (lambda: F.normalize(_x(), dim=2), ValueError, r"normalize: axis 2 is out of range"),
    (lambda: F.scaled_dot_product_attention(dp.ones(1, 3, 2, 4), dp.ones(1, 2, 2, 4),
                                            dp.ones(1, 2, 2, 4), enable_gqa=True),
     ValueError, r"enable_gqa needs the query's 3 heads to be a multiple of the key's 2"),
    (lambda: F.scaled_dot_product_attention(dp.ones(3, 4), dp.ones(2, 4), dp.ones(2, 4),
                                            enable_gqa=True),
     ValueError, r"enable_gqa needs heads \(\.\.\., heads, length, features\)"),
    (lambda: F.conv3d(dp.ones(1, 2, 3, 3), dp.ones(1, 2, 1, 1, 1)), ValueError,
     r"conv3d: expected \(N, 2, D, H, W\) or unbatched \(2, D, H, W\) input"),
    (lambda: F.conv3d(dp.ones(1, 2, 2, 2, 2), dp.ones(1, 2, 3, 3, 3)), ValueError,
     r"conv3d: a kernel of size \(3, 3, 3\)"),
    (lambda: F.conv_transpose3d(dp.ones(1, 2, 2, 2, 2), dp.ones(2, 1, 2, 2, 2),
                                output_padding=2),
     ValueError, r"conv_transpose3d: output_padding must be smaller than either stride"),
    (lambda: F.max_pool3d(dp.ones(1, 4, 4), 2), ValueError,
     r"max_pool3d: expected an \(N, C, D, H, W\) or unbatched \(C, D, H, W\) input, got "
     r"shape \(1, 4, 4\)"),
    (lambda: F.avg_pool3d(dp.ones(1, 1, 4, 4, 4), 2, padding=2), ValueError,
     r"avg_pool3d: padding 2 must be at most half of kernel_size 2"),
    (lambda: dp.nn.MaxPool3d((2, 2)), ValueError, r"MaxPool3d: kernel_size must be an int or 3"),
    (lambda: F.max_unpool2d(dp.ones(1, 1, 2, 2), dp.ones(1, 1, 2, 2), 2), TypeError,
     r"max_unpool2d: indices must be an integer tensor, got float32"),
    (lambda: F.max_unpool2d(dp.ones(1, 1, 2, 2), dp.zeros(1, 1, 2, 1, dtype="int64"), 2),
     ValueError, r"max_unpool2d: indices of shape \(1, 1, 2, 1\) must have the input's shape"),
    (lambda: F.max_unpool2d(dp.ones(1, 1, 2, 2), dp.zeros(1, 1, 2, 2, dtype="int64"), 2,
                            output_size=(6, 6)),
     ValueError, r"max_unpool2d: output_size \(6, 6\) must lie strictly within one stride"),
    (lambda: F.max_unpool2d(dp.ones(1, 1, 2, 2), dp.full((1, 1, 2, 2), 16), 2), IndexError,
     r"max_unpool2d: index 16 is out of range for an output plane of 4x4"),
    (lambda: F.interpolate(dp.ones(1, 1, 4), size=(2, 3)), ValueError,
     r"interpolate: size \(2, 3\) has 2 entries for an input of 1 spatial axes"),
    (lambda: F.interpolate(dp.ones(1, 1, 4, 4), scale_factor=2, mode="trilinear"), ValueError,
     r"interpolate: mode 'trilinear' needs an \(N, C, D, H, W\) input"),
    (lambda: F.interpolate(dp.ones(1, 1, 4, dtype="int64"), scale_factor=2, mode="linear"),
     TypeError, r"interpolate: input must be a floating-point tensor, got int64"),
    (lambda: F.interpolate(dp.ones(1, 1, 4), scale_factor=2, mode="nearest-exact",
                           align_corners=False),
     ValueError, r"interpolate: align_corners can only be set with the interpolating modes"),
    (lambda: dp.tensor([1, 2]) ** -1, ValueError, r"pow: integers to negative integer powers"),
    (lambda: dp.tensor([1], dtype="int32") | 2**64, OverflowError,
     r"the integer 18446744073709551616 does not fit 64 bits"),
    (lambda: dp.empty(2, -1), ValueError, r"empty: each size in shape \(2, -1\) must be at least"),
]


@pytest.mark.parametrize("call, error, message", ERRORS, ids=[e[2][:50] for e in ERRORS])
def test_bad_arguments_are_refused(call, error, message, backend):
    with pytest.raises(error, match=message):
        call()


def test_empty_has_the_shape_and_dtype_asked_for(backend):
    assert dp.empty(2, 3).shape == (2, 3) and dp.empty(2, 3).dtype == dp.get_default_dtype()
    assert dp.empty((4,), dtype="int64").dtype == dp.int64
    assert dp.empty(0, requires_grad=True).is_variable


def test_a_variance_without_degrees_of_freedom_warns_once_as_pytorch_does(backend):
    x = dp.ones(3, 1)
    with pytest.warns(UserWarning, match=r"var: 1 element\(s\) per result with correction 1"):
        assert np.isnan(x.var(1).numpy()).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.var(1, correction=0).tolist() == [0.0, 0.0, 0.0]


def test_the_promoted_operand_keeps_the_gradient_of_the_floating_one(backend):
    # an integer tensor is never a variable, so only the floating operand gets a gradient,
    # in its own dtype (PyTorch's promotion does not change it)
    floats = dp.tensor([0.5, 1.5], dtype="float32", requires_grad=True)
    ints = dp.tensor([2, 3], dtype="int64")
    grads = (ints * floats + ints / floats).sum().backward()
    assert grads[floats].dtype == dp.float32 and ints not in grads
    np.testing.assert_allclose(grads[floats].numpy(), [2 - 2 / 0.25, 3 - 3 / 2.25], rtol=1e-6)
