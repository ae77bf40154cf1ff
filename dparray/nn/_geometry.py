"""Argument checks for convolution and pooling, shared by the layers and their functional
forms: a layer checks its arguments once when it is made, a functional call once per call,
and both check the input with the same function."""

from __future__ import annotations

from typing import Any

from dparray._checks import check_bool, check_int, check_int_tuple, check_tensor
from dparray.ops._windows import Windows
from dparray.tensor import Tensor


def conv_geometry(where: str, stride: Any, padding: Any, dilation: Any,
                  groups: Any) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int], int]:
    """``(stride, padding, dilation, groups)`` as pairs and an int, checked."""
    return (_pair(stride, "stride", where, 1), _pair(padding, "padding", where, 0),
            _pair(dilation, "dilation", where, 1), check_int(groups, "groups", where, minimum=1))


def check_conv_input(where: str, x: Any, weight: Tensor, bias: Tensor | None,
                     groups: int) -> None:
    """``x`` must be ``(N, C, H, W)`` with ``C = weight.shape[1] * groups``; ``weight``
    ``(OC, C / groups, kh, kw)`` with ``OC`` divisible by ``groups``; ``bias`` ``(OC,)``."""
    check_tensor(x, "input", where)
    if weight.ndim != 4 or weight.shape[0] % groups:
        raise ValueError(f"{where}: weight of shape {weight.shape} must be (out_channels, "
                         f"in_channels / groups, kh, kw) with out_channels divisible by groups "
                         f"({groups})")
    channels = weight.shape[1] * groups
    if x.ndim != 4 or x.shape[1] != channels:
        raise ValueError(f"{where}: expected (N, {channels}, H, W) input for weight of shape "
                         f"{weight.shape} and groups={groups}, got shape {x.shape}")
    if bias is not None and bias.shape != (weight.shape[0],):
        raise ValueError(f"{where}: bias of shape {bias.shape} does not fit weight of shape "
                         f"{weight.shape}")


def pool_geometry(where: str, kernel_size: Any, stride: Any, padding: Any, dilation: Any = 1,
                  ceil_mode: Any = False) -> Windows:
    """The windows of a pooling layer, checked as PyTorch does: the padding at most half the
    (dilated) kernel, so that no window lies entirely in the padding."""
    kernel = _pair(kernel_size, "kernel_size", where, 1)
    strides = kernel if stride is None or stride == [] else _pair(stride, "stride", where, 1)
    pads = _pair(padding, "padding", where, 0)
    dilations = _pair(dilation, "dilation", where, 1)
    for k, p, d in zip(kernel, pads, dilations, strict=True):
        if p > (d * (k - 1) + 1) // 2:
            raise ValueError(f"{where}: padding {padding!r} must be at most half of the "
                             f"(dilated) kernel size {kernel_size!r}")
    return Windows(kernel, strides, pads, dilations, check_bool(ceil_mode, "ceil_mode", where))


def check_image(where: str, x: Any) -> Tensor:
    """``x`` must be an ``(N, C, H, W)`` tensor."""
    check_tensor(x, "input", where)
    if x.ndim != 4:
        raise ValueError(f"{where}: expected an (N, C, H, W) input, got shape {x.shape}")
    return x


def _pair(value: Any, name: str, where: str, minimum: int) -> tuple[int, int]:
    first, second = check_int_tuple(value, name, where, 2, minimum=minimum)
    return first, second
