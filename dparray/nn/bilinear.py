"""The bilinear layer, PyTorch's ``nn.Bilinear`` and ``F.bilinear``: ``y = x1^T A x2 + b``, one
``(in1, in2)`` matrix ``A`` per output feature; the functional form is re-exported by
``dparray.nn.functional``.

Computed by ``einsum`` (two matrix products: ``x1`` with the weight, then the result with
``x2`` in a batch), so its gradients -- and derivatives of them -- come from those products.
"""

from __future__ import annotations

from typing import Any

from dparray._checks import check_bool, check_int, check_tensor
from dparray.nn import init
from dparray.nn.module import Module
from dparray.ops.arithmetic import add
from dparray.ops.einsum import einsum
from dparray.tensor import Tensor

__all__ = ["Bilinear", "bilinear"]


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``, as
    ``F.bilinear``: ``input1`` ``(*, in1)`` and ``input2`` ``(*, in2)`` with the same leading
    axes (any number, none included), ``weight`` ``(out, in1, in2)``, ``bias`` ``(out,)``.

    Examples:
        >>> import dparray as dp
        >>> weight = dp.tensor([[[1.0, 0.0], [0.0, 2.0]]])  # x1[0] * x2[0] + 2 * x1[1] * x2[1]
        >>> dp.nn.functional.bilinear(dp.tensor([[1.0, 2.0]]), dp.tensor([[3.0, 4.0]]),
        ...                           weight).tolist()
        [[19.0]]
    """
    where = "bilinear"
    for name, value in (("input1", input1), ("input2", input2), ("weight", weight)):
        check_tensor(value, name, where)
    if weight.ndim != 3:
        raise ValueError(f"{where}: weight must be (out_features, in1_features, in2_features), "
                         f"got shape {weight.shape}")
    out, in1, in2 = weight.shape
    if input1.ndim < 1 or input1.shape[-1] != in1 or input2.ndim < 1 or \
            input2.shape[-1] != in2:
        raise ValueError(f"{where}: expected inputs (*, {in1}) and (*, {in2}) for weight of "
                         f"shape {weight.shape}, got shapes {input1.shape} and {input2.shape}")
    if input1.shape[:-1] != input2.shape[:-1]:
        raise ValueError(f"{where}: input1 and input2 must have the same shape but for the "
                         f"last axis, got {input1.shape} and {input2.shape}")
    if bias is not None:
        check_tensor(bias, "bias", where)
        if bias.shape != (out,):
            raise ValueError(f"{where}: bias of shape {bias.shape} does not fit weight of "
                             f"shape {weight.shape} (needs ({out},))")
    y = einsum("...i,oij,...j->...o", input1, weight, input2)
    return y if bias is None else add(y, bias)


class Bilinear(Module):
    """``y = x1^T A x2 + b`` for each of ``out_features`` matrices ``A``: ``weight`` of shape
    ``(out_features, in1_features, in2_features)`` and ``bias`` ``(out_features,)``, both from
    ``U(-1/sqrt(in1_features), 1/sqrt(in1_features))`` as in PyTorch. ``forward(input1,
    input2)`` takes ``(*, in1_features)`` and ``(*, in2_features)`` with the same leading axes.

    Examples:
        >>> import dparray as dp
        >>> layer = dp.nn.Bilinear(3, 4, 2)
        >>> layer(dp.ones(5, 3), dp.ones(5, 4)).shape, layer.weight.shape
        ((5, 2), (2, 3, 4))
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, *, dtype: Any = None) -> None:
        super().__init__()
        where = "Bilinear"
        self.in1_features = check_int(in1_features, "in1_features", where, minimum=1)
        self.in2_features = check_int(in2_features, "in2_features", where, minimum=1)
        self.out_features = check_int(out_features, "out_features", where, minimum=1)
        check_bool(bias, "bias", where)
        shape = (self.out_features, self.in1_features, self.in2_features)
        self.weight = init.fan_in_uniform(shape, self.in1_features, dtype)
        self.bias = init.fan_in_uniform((self.out_features,), self.in1_features, dtype) \
            if bias else None

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
