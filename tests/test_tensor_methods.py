"""PyTorch's Tensor methods: their results are checked against PyTorch in ``test_porting.py``;
here their gradients and their errors."""

from __future__ import annotations

import pytest

import dparray as dp
from dparray.testing import gradcheck


def test_the_shape_methods_are_differentiable(backend):
    x = dp.tensor([[0.5, 1.5, -2.0], [3.0, -1.0, 0.25]], dtype="float64", requires_grad=True)
    other = dp.zeros(3, 2, dtype="float64")
    gradcheck(lambda t: t.narrow(1, 1, 2) * t.t()[:2].t(), [x])
    gradcheck(lambda t: t.view_as(other) * t.reshape_as(other), [x])
    gradcheck(lambda t: t[:, :1].expand_as(t).pow(2) + t.add(t, alpha=3).sub(t).mul(t).div(2),
              [x])
    gradcheck(lambda t: t.neg().type_as(t).double(), [x])


def test_casts_return_the_tensor_itself_when_nothing_changes(backend):
    x = dp.zeros(2)
    assert x.float() is x and x.contiguous() is x and x.type(dp.float32) is x
    assert x.long().dtype == dp.int64 and x.int().dtype == dp.int32
    assert x.short().dtype == dp.int16 and x.byte().dtype == dp.uint8 and x.bool().dtype == dp.bool
    assert x.is_contiguous() and x.is_floating_point() and not x.long().is_floating_point()


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda x: x.narrow(1, 2, 3), ValueError,
     r"^narrow: start \(2\) \+ length \(3\) exceeds the size 4 of axis 1"),
    (lambda x: x.narrow(2, 0, 1), ValueError, r"^narrow: axis 2 is out of range"),
    (lambda x: x.narrow(0, 0, -1), ValueError, r"^narrow: length must be at least 0"),
    (lambda x: x.narrow(0, 4, 1), ValueError, r"^narrow: start must be at most 3"),
    (lambda x: x.reshape(3, 4, 1).t(), ValueError,
     r"^t\(\) expects a tensor of at most 2 dimensions, got 3"),
    (lambda x: x.type("torch.Complex"), TypeError,
     r"^Tensor.type: unknown dtype or type name 'torch.Complex'"),
    (lambda x: format(x, ".2f"), TypeError,
     r"^unsupported format string '.2f' for a tensor of shape \(3, 4\): only 0-d tensors"),
])
def test_bad_arguments_are_refused(call, error, message, backend):
    with pytest.raises(error, match=message):
        call(dp.zeros(3, 4))


def test_a_tensor_formats_without_a_spec_as_its_str(backend):
    x = dp.tensor([1.0, 2.0])
    assert f"{x}" == str(x)


def test_new_tensors_take_the_dtype_and_device_of_their_model(backend):
    x = dp.zeros(2, dtype=dp.float64)
    assert x.new_zeros(2, 3).shape == (2, 3) and x.new_zeros((2, 3)).dtype == dp.float64
    assert x.new_empty(4).tolist() == [0.0] * 4
    assert x.new_full((2,), 7, dtype=dp.int32).tolist() == [7, 7]
    made = x.new_tensor([1, 2], requires_grad=True)
    assert made.dtype == dp.float64 and made.is_variable and made.device == x.device
