"""Functional forms of the layers, with PyTorch's names and argument names (``dim``, not
``axis``, where PyTorch says ``dim``). Losses are in ``dparray.nn.loss`` and re-exported
here."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dparray import ops
from dparray import random as _random
from dparray.autograd import no_grad
from dparray.nn.loss import binary_cross_entropy_with_logits as binary_cross_entropy_with_logits
from dparray.nn.loss import cross_entropy as cross_entropy
from dparray.nn.loss import l1_loss as l1_loss
from dparray.nn.loss import mse_loss as mse_loss
from dparray.nn.loss import nll_loss as nll_loss
from dparray.ops.nn import linear as linear
from dparray.ops.nn import unfold as _unfold
from dparray.tensor import Tensor


def relu(input: Tensor) -> Tensor:
    return ops.relu(input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    return ops.gelu(input, approximate=approximate)


def tanh(input: Tensor) -> Tensor:
    return ops.tanh(input)


def sigmoid(input: Tensor) -> Tensor:
    return ops.sigmoid(input)


def softmax(input: Tensor, dim: int = -1) -> Tensor:
    return ops.softmax(input, axis=dim)


def log_softmax(input: Tensor, dim: int = -1) -> Tensor:
    return ops.log_softmax(input, axis=dim)


def dropout(input: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``; the
    mask comes from the current random stream, so a seed makes it repeat."""
    check_probability(p, "dropout")
    if not training or p == 0.0:
        return input
    keep = _random.generator(input.backend).bernoulli(input.shape, 1.0 - p)
    return ops.where(Tensor(keep, input.backend), input * (1.0 / (1.0 - p)), 0.0)


def layer_norm(input: Tensor, normalized_shape: Sequence[int],
               weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` axes, then scale and shift."""
    normalized_shape = tuple(normalized_shape)
    if input.shape[input.ndim - len(normalized_shape):] != normalized_shape:
        raise ValueError(
            f"layer_norm: input of shape {input.shape} does not end in {normalized_shape}"
        )
    axes = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    mean = input.mean(axis=axes, keepdims=True)
    centred = input - mean
    variance = (centred * centred).mean(axis=axes, keepdims=True)
    out = centred / (variance + eps).sqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (axis 1) of ``(N, C)`` or ``(N, C, L)`` input.

    In training the batch's statistics are used and the running ones, when given, move towards
    them by ``momentum`` (the running variance is the unbiased one, as in PyTorch); otherwise
    the running statistics are used.
    """
    if input.ndim not in (2, 3):
        raise ValueError(f"batch_norm: expected (N, C) or (N, C, L) input, got shape {input.shape}")
    axes = (0,) if input.ndim == 2 else (0, 2)
    shape = (1, input.shape[1]) + ((1,) if input.ndim == 3 else ())
    if training:
        count = input.elem_count() // input.shape[1]
        if count < 2:
            raise ValueError(
                f"batch_norm: training needs more than one value per channel, got input of "
                f"shape {input.shape}"
            )
        mean = input.mean(axis=axes, keepdims=True)
        variance = ((input - mean) ** 2).mean(axis=axes, keepdims=True)
        if running_mean is not None and running_var is not None:
            with no_grad():
                unbiased = variance.reshape(-1) * (count / (count - 1))
                running_mean.data = ((1.0 - momentum) * running_mean
                                     + momentum * mean.reshape(-1)).data
                running_var.data = ((1.0 - momentum) * running_var + momentum * unbiased).data
    else:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: evaluation needs running statistics")
        mean, variance = running_mean.reshape(shape), running_var.reshape(shape)
    out = (input - mean) / (variance + eps).sqrt()
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def embedding(input: Tensor, weight: Tensor) -> Tensor:
    """Rows of ``weight`` at the integer positions ``input`` (any shape)."""
    return ops.take(weight, input, axis=0)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D cross-correlation of ``(N, C, H, W)`` input with ``(OC, C, KH, KW)`` weight, as
    PyTorch's ``F.conv2d`` (``groups=1`` only): im2col with ``unfold``, then one matmul."""
    if groups != 1:
        raise ValueError(f"conv2d: only groups=1 is supported, got groups={groups}")
    if input.ndim != 4 or weight.ndim != 4 or input.shape[1] != weight.shape[1]:
        raise ValueError(
            f"conv2d: input of shape {input.shape} does not fit weight of shape {weight.shape} "
            "(needs (N, C, H, W) input and (out_channels, C, kh, kw) weight)"
        )
    n = input.shape[0]
    out_channels, channels, kh, kw = weight.shape
    windows = _unfold(input, (kh, kw), _pair(stride), _pair(padding, 0),
                      _pair(dilation))
    oh, ow = windows.shape[3:]
    columns = windows.reshape(n, channels * kh * kw, oh * ow)
    out = weight.reshape(out_channels, channels * kh * kw) @ columns
    if bias is not None:
        out = out + bias.reshape(1, out_channels, 1)
    return out.reshape(n, out_channels, oh, ow)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None,
               padding: Any = 0) -> Tensor:
    """Maximum over each window; tied maxima share the gradient equally."""
    kernel = _pair(kernel_size)
    windows = _unfold(_as_4d(input, "max_pool2d"), kernel, _pair(stride or kernel),
                      _pair(padding, 0), (1, 1), pad_value=-math.inf)
    return windows.max(axis=2)


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None,
               padding: Any = 0) -> Tensor:
    """Mean over each window (padding counts as zeros, PyTorch's ``count_include_pad``)."""
    kernel = _pair(kernel_size)
    windows = _unfold(_as_4d(input, "avg_pool2d"), kernel, _pair(stride or kernel),
                      _pair(padding, 0), (1, 1))
    return windows.mean(axis=2)


def check_probability(p: float, where: str) -> None:
    """A dropout probability must lie in [0, 1)."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p < 1.0:
        raise ValueError(f"{where}: p must be in [0, 1), got {p!r}")


def _pair(value: Any, minimum: int = 1) -> tuple[int, int]:
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) != 2 or not all(isinstance(v, int) and v >= minimum for v in pair):
        raise ValueError(f"expected an int or a pair of ints >= {minimum}, got {value!r}")
    return pair


def _as_4d(input: Tensor, name: str) -> Tensor:
    if input.ndim != 4:
        raise ValueError(f"{name}: expected an (N, C, H, W) input, got shape {input.shape}")
    return input

