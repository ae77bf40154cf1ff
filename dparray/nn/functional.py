"""Functional forms of the layers, with PyTorch's names and argument names (``dim``, not
``axis``, where PyTorch says ``dim``). Losses are in ``dparray.nn.loss`` and re-exported
here."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dparray import _checks, ops
from dparray._checks import check_bool, check_int, check_tensor
from dparray.nn._geometry import check_conv_input, check_image, conv_geometry, pool_geometry
from dparray.nn.loss import binary_cross_entropy_with_logits as binary_cross_entropy_with_logits
from dparray.nn.loss import cross_entropy as cross_entropy
from dparray.nn.loss import l1_loss as l1_loss
from dparray.nn.loss import mse_loss as mse_loss
from dparray.nn.loss import nll_loss as nll_loss
from dparray.ops import conv as _conv
from dparray.ops import dropout as _dropout
from dparray.ops import normalization as _normalization
from dparray.ops import pooling as _pooling
from dparray.ops.attention import scaled_dot_product_attention as scaled_dot_product_attention
from dparray.ops.nn import linear as linear
from dparray.ops.normalization import LOCAL, Statistics
from dparray.ops.pad import pad as pad
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
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``; one
    graph node. The mask comes from the current random stream, so a seed makes it repeat."""
    p = check_probability(p, "dropout")
    check_tensor(input, "input", "dropout")
    if not training or p == 0.0:
        return input
    return _dropout.dropout(input, p)


def layer_norm(input: Tensor, normalized_shape: Sequence[int],
               weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` axes, then scale and shift by
    ``weight`` and ``bias`` (of shape ``normalized_shape``); one graph node."""
    normalized_shape = tuple(normalized_shape)
    check_tensor(input, "input", "layer_norm")
    if not normalized_shape or input.shape[input.ndim - len(normalized_shape):] != \
            normalized_shape or input.ndim < len(normalized_shape):
        raise ValueError(
            f"layer_norm: input of shape {input.shape} does not end in {normalized_shape}"
        )
    for name, value in (("weight", weight), ("bias", bias)):
        if value is not None and value.shape != normalized_shape:
            raise ValueError(f"layer_norm: {name} of shape {value.shape} does not match "
                             f"normalized_shape {normalized_shape}")
    return _normalization.layer_norm(input, normalized_shape, weight, bias, eps)


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5, *,
               _statistics: Statistics = LOCAL) -> Tensor:
    """Normalise each channel (axis 1) of ``(N, C, ...)`` input; one graph node.

    In training the batch's statistics are used and the running ones, when given, move towards
    them by ``momentum`` (the running variance is the unbiased one, as in PyTorch); otherwise
    the running statistics are used.
    """
    check_tensor(input, "input", "batch_norm")
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected (N, C, ...) input, got shape {input.shape}")
    channels = (input.shape[1],)
    for name, value in (("running_mean", running_mean), ("running_var", running_var),
                        ("weight", weight), ("bias", bias)):
        if value is not None and value.shape != channels:
            raise ValueError(f"batch_norm: {name} of shape {value.shape} does not fit input "
                             f"of shape {input.shape} (needs {channels})")
    if not training:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: evaluation needs running statistics")
        out, _ = _normalization.batch_norm(input, weight, bias, eps, running_mean=running_mean,
                                           running_var=running_var, statistics=None)
        return out
    if _statistics is LOCAL and input.elem_count() // input.shape[1] < 2:
        raise ValueError(f"batch_norm: training needs more than one value per channel, got "
                         f"input of shape {input.shape}")
    out, node = _normalization.batch_norm(input, weight, bias, eps, statistics=_statistics)
    if running_mean is not None and running_var is not None and momentum:
        count = node.batch_count
        if count < 2:
            raise ValueError("batch_norm: training needs more than one value per channel")
        xp = input.backend.xp
        unbiased = node.batch_var * (count / (count - 1))
        running_mean.data = xp.astype((1.0 - momentum) * running_mean.data
                                      + momentum * node.batch_mean, running_mean.data.dtype)
        running_var.data = xp.astype((1.0 - momentum) * running_var.data + momentum * unbiased,
                                     running_var.data.dtype)
    return out


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise the channels (axis 1) of ``(N, C, ...)`` input in ``num_groups`` groups of
    consecutive channels, each (sample, group) by its own mean and variance, then scale and
    shift each channel by ``weight`` and ``bias`` (``C`` values each); one graph node.

    Examples:
        >>> import dparray as dp
        >>> x = dp.tensor([[1.0, 3.0, 10.0, 50.0]])
        >>> [round(v, 3) for v in dp.nn.functional.group_norm(x, 2).tolist()[0]]
        [-1.0, 1.0, -1.0, 1.0]
    """
    where = "group_norm"
    _check_floating(input, where)
    groups = check_int(num_groups, "num_groups", where, minimum=1)
    eps = _checks.check_number(eps, "eps", where, above=0.0)
    if input.ndim < 2:
        raise ValueError(f"{where}: expected (N, C, ...) input, got shape {input.shape}")
    if input.shape[1] % groups:
        raise ValueError(f"{where}: num_groups must divide the input's {input.shape[1]} "
                         f"channels, got {groups}")
    _check_per_channel(where, input, weight=weight, bias=bias)
    return _normalization.group_norm(input, groups, weight, bias, eps)


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample of ``(N, C, L, ...)`` input by its own mean and
    variance (with ``use_input_stats=False``: by ``running_mean``/``running_var``), then scale
    and shift each channel by ``weight`` and ``bias``; one graph node.

    With ``use_input_stats`` and running statistics given, these move by ``momentum`` towards
    the batch's mean of the per-sample means and of the per-sample unbiased variances, as in
    PyTorch.
    """
    where = "instance_norm"
    _check_floating(input, where)
    check_bool(use_input_stats, "use_input_stats", where)
    momentum = _checks.check_number(momentum, "momentum", where, minimum=0.0, maximum=1.0)
    eps = _checks.check_number(eps, "eps", where, above=0.0)
    if input.ndim < 3:
        raise ValueError(f"{where}: expected (N, C, L, ...) input, got shape {input.shape}")
    _check_per_channel(where, input, running_mean=running_mean, running_var=running_var,
                       weight=weight, bias=bias)
    if (running_mean is None) != (running_var is None):
        raise ValueError(f"{where}: running_mean and running_var must be given together")
    if not use_input_stats:
        if running_mean is None:
            raise ValueError(f"{where}: use_input_stats=False needs running_mean and "
                             "running_var")
        out, _ = _normalization.instance_norm(input, weight, bias, eps,
                                              running_mean=running_mean,
                                              running_var=running_var)
        return out
    count = math.prod(input.shape[2:])  # values per channel of each sample
    if count < 2:
        raise ValueError(f"{where}: needs more than one value per channel of each sample, got "
                         f"input of shape {input.shape}")
    updating = running_mean is not None and momentum > 0.0
    if updating and input.shape[0] == 0:
        raise ValueError(f"{where}: an empty batch cannot update the running statistics")
    out, node = _normalization.instance_norm(input, weight, bias, eps)
    if updating and running_mean is not None and running_var is not None:
        xp = input.backend.xp
        per_sample = (input.shape[0], input.shape[1])
        mean = xp.mean(xp.reshape(node.batch_mean, per_sample), axis=0)
        var = xp.mean(xp.reshape(node.batch_var, per_sample), axis=0) * (count / (count - 1))
        running_mean.data = xp.astype((1.0 - momentum) * running_mean.data + momentum * mean,
                                      running_mean.data.dtype)
        running_var.data = xp.astype((1.0 - momentum) * running_var.data + momentum * var,
                                     running_var.data.dtype)
    return out


def rms_norm(input: Tensor, normalized_shape: int | Sequence[int],
             weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """Divide by the root mean square over the last ``len(normalized_shape)`` axes,
    ``x / sqrt(mean(x * x) + eps)``, then scale by ``weight`` (of shape ``normalized_shape``);
    one graph node. ``eps=None`` is the machine epsilon of the input's dtype, as in PyTorch.

    Examples:
        >>> import dparray as dp
        >>> x = dp.tensor([[3.0, 4.0]])
        >>> [round(v, 4) for v in dp.nn.functional.rms_norm(x, 2).tolist()[0]]
        [0.8485, 1.1314]
    """
    where = "rms_norm"
    _check_floating(input, where)
    shape = _normalization.normalized_shape_of(normalized_shape, where)
    if input.ndim < len(shape) or input.shape[input.ndim - len(shape):] != shape:
        raise ValueError(f"{where}: input of shape {input.shape} does not end in {shape}")
    if weight is not None:
        check_tensor(weight, "weight", where)
        if weight.shape != shape:
            raise ValueError(f"{where}: weight of shape {weight.shape} does not match "
                             f"normalized_shape {shape}")
    if eps is None:
        eps = float(input.backend.xp.finfo(input.data.dtype).eps)
    else:
        eps = _checks.check_number(eps, "eps", where, above=0.0)
    return _normalization.rms_norm(input, shape, weight, eps)


def _check_floating(input: Any, where: str) -> None:
    check_tensor(input, "input", where)
    if not input.dtype.is_floating:
        raise TypeError(f"{where}: input must be a floating-point tensor, got "
                        f"{input.dtype.name}")


def _check_per_channel(where: str, input: Tensor, **tensors: Tensor | None) -> None:
    """Each of ``tensors`` that is given is a tensor of one value per channel of ``input``."""
    channels = (input.shape[1],)
    for name, value in tensors.items():
        if value is None:
            continue
        check_tensor(value, name, where)
        if value.shape != channels:
            raise ValueError(f"{where}: {name} of shape {value.shape} does not fit input of "
                             f"shape {input.shape} (needs {channels})")


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None) -> Tensor:
    """Rows of ``weight`` at the integer positions ``input`` (any shape); the row
    ``padding_idx`` (negative counts from the end) passes no gradient. ``max_norm`` is not
    supported (a ValueError unless None)."""
    refuse_max_norm(max_norm, "embedding")
    out = ops.take(weight, input, axis=0)
    if padding_idx is None:
        return out
    rows = check_tensor(weight, "weight", "embedding").shape[0]
    row = check_int(padding_idx, "padding_idx", "embedding", minimum=-rows, maximum=rows - 1)
    padded = ops.unsqueeze(input == row % rows, -1)
    return ops.where(padded, out.detach(), out)  # the same values, no gradient to that row


def refuse_max_norm(max_norm: Any, where: str) -> None:
    """Embedding's ``max_norm``, which dparray does not support: a ValueError unless None."""
    if max_norm is not None:
        raise ValueError(f"{where}: max_norm is not supported (PyTorch renormalises the looked-up "
                         f"rows in place; dparray never writes into a tensor), got {max_norm!r}")


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D cross-correlation of ``(N, C, H, W)`` input with ``(OC, C / groups, kh, kw)``
    weight, as PyTorch's ``F.conv2d``; one graph node (im2col and a product per group)."""
    geometry = conv_geometry("conv2d", stride, padding, dilation, groups)
    check_conv_input("conv2d", input, weight, bias, geometry[3])
    return _conv.conv2d(input, weight, bias, *geometry)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The maximum of each window, as PyTorch's ``F.max_pool2d``: one winner per window (the
    first maximum) takes the gradient; ``return_indices`` also returns each winner's flat
    position in its input plane."""
    windows = pool_geometry("max_pool2d", kernel_size, stride, padding, dilation, ceil_mode)
    check_bool(return_indices, "return_indices", "max_pool2d")
    return _pooling.max_pool2d(check_image("max_pool2d", input), windows, return_indices)


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window, as PyTorch's ``F.avg_pool2d`` (its divisor rules for padding
    and ``ceil_mode``)."""
    windows = pool_geometry("avg_pool2d", kernel_size, stride, padding, 1, ceil_mode)
    check_bool(count_include_pad, "count_include_pad", "avg_pool2d")
    if divisor_override is not None:
        check_int(divisor_override, "divisor_override", "avg_pool2d", minimum=1)
    return _pooling.avg_pool2d(check_image("avg_pool2d", input), windows, count_include_pad,
                               divisor_override)


def check_probability(p: float, where: str) -> float:
    """A dropout probability: a number in [0, 1)."""
    return _checks.check_probability(p, "p", where)
