"""Functional forms of the layers, with PyTorch's names and argument names (``dim``, not
``axis``, where PyTorch says ``dim``). Losses are in ``dparray.nn.loss`` and re-exported
here."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dparray import _checks, ops
from dparray._checks import check_bool, check_int, check_tensor
from dparray.nn._geometry import (
    adaptive_output_size,
    check_conv_fits,
    check_conv_input,
    check_conv_padding,
    check_pool_input,
    check_transposed_input,
    conv_geometry,
    conv_padding,
    pool_geometry,
    resize,
    transposed_geometry,
    transposed_output_padding,
    unpool_size,
)
from dparray.nn.activation_functions import glu as glu
from dparray.nn.activation_functions import gumbel_softmax as gumbel_softmax
from dparray.nn.activation_functions import hardshrink as hardshrink
from dparray.nn.activation_functions import local_response_norm as local_response_norm
from dparray.nn.activation_functions import rrelu as rrelu
from dparray.nn.activation_functions import softshrink as softshrink
from dparray.nn.activation_functions import tanhshrink as tanhshrink
from dparray.nn.activation_functions import threshold as threshold
from dparray.nn.adaptive_pooling import adaptive_avg_pool1d as adaptive_avg_pool1d
from dparray.nn.adaptive_pooling import adaptive_avg_pool3d as adaptive_avg_pool3d
from dparray.nn.adaptive_pooling import adaptive_max_pool1d as adaptive_max_pool1d
from dparray.nn.adaptive_pooling import adaptive_max_pool3d as adaptive_max_pool3d
from dparray.nn.adaptive_pooling import adaptive_pool
from dparray.nn.bilinear import bilinear as bilinear
from dparray.nn.channel_dropout import alpha_dropout as alpha_dropout
from dparray.nn.channel_dropout import dropout1d as dropout1d
from dparray.nn.channel_dropout import dropout2d as dropout2d
from dparray.nn.channel_dropout import dropout3d as dropout3d
from dparray.nn.channel_dropout import feature_alpha_dropout as feature_alpha_dropout
from dparray.nn.distance import cosine_similarity as cosine_similarity
from dparray.nn.distance import pairwise_distance as pairwise_distance
from dparray.nn.distance import pdist as pdist
from dparray.nn.embedding_bag import embedding_bag as embedding_bag
from dparray.nn.fold import fold as fold
from dparray.nn.fold import unfold as unfold
from dparray.nn.loss import binary_cross_entropy as binary_cross_entropy
from dparray.nn.loss import binary_cross_entropy_with_logits as binary_cross_entropy_with_logits
from dparray.nn.loss import cosine_embedding_loss as cosine_embedding_loss
from dparray.nn.loss import cross_entropy as cross_entropy
from dparray.nn.loss import huber_loss as huber_loss
from dparray.nn.loss import kl_div as kl_div
from dparray.nn.loss import l1_loss as l1_loss
from dparray.nn.loss import margin_ranking_loss as margin_ranking_loss
from dparray.nn.loss import mse_loss as mse_loss
from dparray.nn.loss import nll_loss as nll_loss
from dparray.nn.loss import smooth_l1_loss as smooth_l1_loss
from dparray.nn.loss_more import gaussian_nll_loss as gaussian_nll_loss
from dparray.nn.loss_more import hinge_embedding_loss as hinge_embedding_loss
from dparray.nn.loss_more import multi_margin_loss as multi_margin_loss
from dparray.nn.loss_more import multilabel_soft_margin_loss as multilabel_soft_margin_loss
from dparray.nn.loss_more import poisson_nll_loss as poisson_nll_loss
from dparray.nn.loss_more import soft_margin_loss as soft_margin_loss
from dparray.nn.loss_more import triplet_margin_loss as triplet_margin_loss
from dparray.nn.lp_pooling import lp_pool1d as lp_pool1d
from dparray.nn.lp_pooling import lp_pool2d as lp_pool2d
from dparray.nn.lp_pooling import lp_pool3d as lp_pool3d
from dparray.nn.shuffle import channel_shuffle as channel_shuffle
from dparray.nn.shuffle import pixel_shuffle as pixel_shuffle
from dparray.nn.shuffle import pixel_unshuffle as pixel_unshuffle
from dparray.nn.unbatched import as_batch_of_one
from dparray.nn.upsample import resample
from dparray.ops import activations as _activations
from dparray.ops import conv3d as _conv3d
from dparray.ops import dropout as _dropout
from dparray.ops import embedding as _embedding
from dparray.ops import normalization as _normalization
from dparray.ops import pool3d as _pool3d
from dparray.ops import unpool as _unpool
from dparray.ops.attention import scaled_dot_product_attention as scaled_dot_product_attention
from dparray.ops.construct import one_hot as one_hot
from dparray.ops.nn import linear as linear
from dparray.ops.normalization import LOCAL, Statistics
from dparray.ops.pad import pad as pad
from dparray.tensor import Tensor

__all__ = [
    "adaptive_avg_pool2d", "adaptive_max_pool2d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits", "celu", "conv1d",
    "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "cosine_embedding_loss", "cross_entropy", "dropout",
    "elu", "embedding", "gelu", "group_norm", "hardsigmoid", "hardswish", "hardtanh", "huber_loss",
    "instance_norm", "interpolate", "kl_div", "l1_loss", "layer_norm", "leaky_relu", "linear",
    "log_softmax", "logsigmoid", "margin_ranking_loss", "max_pool1d", "max_pool2d", "max_pool3d",
    "max_unpool2d", "mish",
    "mse_loss", "nll_loss", "normalize", "one_hot", "pad", "prelu", "relu", "relu6", "rms_norm",
    "scaled_dot_product_attention", "selu", "sigmoid", "silu", "smooth_l1_loss", "softmax",
    "softmin", "softplus", "softsign", "tanh",
    "alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout",
    "channel_shuffle", "fold", "pixel_shuffle", "pixel_unshuffle", "unfold",
    "cosine_similarity", "pairwise_distance", "pdist",
    "glu", "gumbel_softmax", "hardshrink", "local_response_norm", "rrelu", "softshrink",
    "tanhshrink", "threshold",
    "gaussian_nll_loss", "hinge_embedding_loss", "multi_margin_loss",
    "multilabel_soft_margin_loss", "poisson_nll_loss", "soft_margin_loss", "triplet_margin_loss",
    "adaptive_avg_pool1d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d", "bilinear",
    "embedding_bag",
]

def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)``; ``inplace`` is accepted and changes nothing (the result is new)."""
    check_bool(inplace, "inplace", "relu")
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


# Activations of dparray.ops.activations, with PyTorch's signatures. ``inplace`` is accepted for
# PyTorch's code and changes nothing: dparray never writes into an array.
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``input`` where positive, else ``negative_slope * input``."""
    check_bool(inplace, "inplace", "leaky_relu")
    return _activations.leaky_relu(input, negative_slope)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """Leaky ReLU with the slopes ``weight``: one, or one per channel (axis 1)."""
    return _activations.prelu(input, weight)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` where positive, else ``alpha * (exp(input) - 1)``."""
    check_bool(inplace, "inplace", "elu")
    return _activations.elu(input, alpha)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """The self-normalising ELU, with PyTorch's constants."""
    check_bool(inplace, "inplace", "selu")
    return _activations.selu(input)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` where positive, else ``alpha * (exp(input / alpha) - 1)``."""
    check_bool(inplace, "inplace", "celu")
    return _activations.celu(input, alpha)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * sigmoid(input)``."""
    check_bool(inplace, "inplace", "silu")
    return _activations.silu(input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * tanh(softplus(input))``."""
    check_bool(inplace, "inplace", "mish")
    return _activations.mish(input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * relu6(input + 3) / 6``."""
    check_bool(inplace, "inplace", "hardswish")
    return _activations.hardswish(input)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(input + 3) / 6``."""
    check_bool(inplace, "inplace", "hardsigmoid")
    return _activations.hardsigmoid(input)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """``input`` limited to ``[min_val, max_val]``; no gradient at or beyond the bounds."""
    check_bool(inplace, "inplace", "hardtanh")
    return _activations.hardtanh(input, min_val, max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(input, 0), 6)``."""
    check_bool(inplace, "inplace", "relu6")
    return _activations.relu6(input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * input)) / beta``, and ``input`` where ``beta * input > threshold``,
    as PyTorch's ``F.softplus``."""
    return _activations.softplus(input, beta, threshold)


def softsign(input: Tensor) -> Tensor:
    """``input / (1 + |input|)``."""
    return _activations.softsign(input)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(input))``, finite for every finite input."""
    return _activations.logsigmoid(input)


def softmin(input: Tensor, dim: int = -1) -> Tensor:
    """``softmax(-input)`` along ``dim``."""
    check_int(dim, "dim", "softmin")
    return ops.softmax(-check_tensor(input, "input", "softmin"), axis=dim)


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``; one
    graph node. The mask comes from the current random stream, so a seed makes it repeat.
    ``inplace`` is accepted and changes nothing (the result is always a new tensor)."""
    p = check_probability(p, "dropout")
    check_bool(inplace, "inplace", "dropout")
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
    if count == 1:
        raise ValueError(f"{where}: needs more than one value per channel of each sample, got "
                         f"input of shape {input.shape}")
    updating = running_mean is not None and momentum > 0.0
    if updating and input.elem_count() == 0:
        raise ValueError(f"{where}: an empty input cannot update the running statistics, got "
                         f"shape {input.shape}")
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
    supported (a ValueError unless None). One graph node (``dparray.ops.embedding``) for a 2-D
    ``weight``."""
    refuse_max_norm(max_norm, "embedding")
    check_tensor(weight, "weight", "embedding")
    rows = weight.shape[0] if weight.ndim else 0
    row = None if padding_idx is None else check_int(
        padding_idx, "padding_idx", "embedding", minimum=-rows, maximum=rows - 1) % rows
    if weight.ndim == 2 and isinstance(input, Tensor):
        return _embedding.embedding(weight, input, row)
    out = ops.take(weight, input, axis=0)
    if row is None:
        return out
    padded = ops.unsqueeze(input == row, -1)
    return ops.where(padded, out.detach(), out)  # the same values, no gradient to that row


def refuse_max_norm(max_norm: Any, where: str) -> None:
    """Embedding's ``max_norm``, which dparray does not support: a ValueError unless None."""
    if max_norm is not None:
        raise ValueError(f"{where}: max_norm is not supported (PyTorch renormalises the looked-up "
                         f"rows in place; dparray never writes into a tensor), got {max_norm!r}")


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-D cross-correlation of ``(N, C, L)`` input with ``(OC, C / groups, k)`` weight, as
    PyTorch's ``F.conv1d`` (``padding`` may be ``"valid"`` or ``"same"``); one graph node."""
    return _convolve("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D cross-correlation of ``(N, C, H, W)`` input with ``(OC, C / groups, kh, kw)``
    weight, as PyTorch's ``F.conv2d``; one graph node (im2col and a product per group).
    ``padding="same"`` with an odd total puts the extra entry at the end, through a padding
    node before the convolution, as PyTorch does."""
    return _convolve("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-D cross-correlation of ``(N, C, D, H, W)`` input with ``(OC, C / groups, kd, kh, kw)``
    weight, as PyTorch's ``F.conv3d`` (``padding`` may be ``"valid"`` or ``"same"``); one
    graph node."""
    return _convolve("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _convolve(where: str, dims: int, input: Tensor, weight: Tensor, bias: Tensor | None,
              stride: Any, padding: Any, dilation: Any, groups: Any) -> Tensor:
    strides, dilations, groups = conv_geometry(where, stride, dilation, groups, dims)
    check_conv_input(where, input, weight, bias, groups, dims)
    kernel = tuple(weight.shape[2:])
    plan = conv_padding(where, check_conv_padding(where, padding, dims), kernel, strides,
                        dilations)
    check_conv_fits(where, input, kernel, dilations, plan)
    return as_batch_of_one(where, input, dims, lambda batch: _conv3d.convolve(
        plan.apply(batch), weight, bias, strides, plan.node, dilations, groups))


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """1-D transposed convolution of ``(N, C, L)`` input with ``(C, OC / groups, k)`` weight,
    as PyTorch's ``F.conv_transpose1d`` (note its order: ``groups`` before ``dilation``)."""
    return _convolve_transposed("conv_transpose1d", 1, input, weight, bias, stride, padding,
                                output_padding, groups, dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """2-D transposed convolution of ``(N, C, H, W)`` input with ``(C, OC / groups, kh, kw)``
    weight, as PyTorch's ``F.conv_transpose2d``: the gradient of a convolution with respect to
    its input; one graph node."""
    return _convolve_transposed("conv_transpose2d", 2, input, weight, bias, stride, padding,
                                output_padding, groups, dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """3-D transposed convolution of ``(N, C, D, H, W)`` input with
    ``(C, OC / groups, kd, kh, kw)`` weight, as PyTorch's ``F.conv_transpose3d``; one graph
    node."""
    return _convolve_transposed("conv_transpose3d", 3, input, weight, bias, stride, padding,
                                output_padding, groups, dilation)


def _convolve_transposed(where: str, dims: int, input: Tensor, weight: Tensor,
                         bias: Tensor | None, stride: Any, padding: Any, output_padding: Any,
                         groups: Any, dilation: Any) -> Tensor:
    strides, pads, extras, dilations, groups = transposed_geometry(
        where, stride, padding, output_padding, dilation, groups, dims)
    check_transposed_input(where, input, weight, bias, groups, dims)
    extras = transposed_output_padding(where, input, tuple(weight.shape[2:]), strides, pads,
                                       extras, dilations, None)
    return as_batch_of_one(where, input, dims, lambda batch: _conv3d.conv_transpose(
        batch, weight, bias, strides, pads, extras, dilations, groups))


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The maximum of each window of ``(N, C, L)`` input, as PyTorch's ``F.max_pool1d``."""
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The maximum of each window, as PyTorch's ``F.max_pool2d``: one winner per window (the
    first maximum) takes the gradient; ``return_indices`` also returns each winner's flat
    position in its input plane."""
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The maximum of each window of ``(N, C, D, H, W)`` input, as PyTorch's ``F.max_pool3d``;
    ``return_indices`` also returns each winner's flat position in its input volume."""
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def _max_pool(where: str, dims: int, input: Tensor, kernel_size: Any, stride: Any,
              padding: Any, dilation: Any, ceil_mode: Any, return_indices: Any) -> Any:
    windows = pool_geometry(where, kernel_size, stride, padding, dilation, ceil_mode, dims)
    check_bool(return_indices, "return_indices", where)
    check_pool_input(where, input, windows, dims)
    return as_batch_of_one(where, input, dims, lambda batch: _pool3d.max_pool(
        batch, windows, return_indices, dims))


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """The mean of each window of ``(N, C, L)`` input, as PyTorch's ``F.avg_pool1d``."""
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, None)


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window, as PyTorch's ``F.avg_pool2d`` (its divisor rules for padding
    and ``ceil_mode``)."""
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window of ``(N, C, D, H, W)`` input, as PyTorch's ``F.avg_pool3d``."""
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def _avg_pool(where: str, dims: int, input: Tensor, kernel_size: Any, stride: Any,
              padding: Any, ceil_mode: Any, count_include_pad: Any,
              divisor_override: Any) -> Tensor:
    windows = pool_geometry(where, kernel_size, stride, padding, 1, ceil_mode, dims)
    check_bool(count_include_pad, "count_include_pad", where)
    if divisor_override is not None:
        check_int(divisor_override, "divisor_override", where, minimum=1)
    check_pool_input(where, input, windows, dims)
    return as_batch_of_one(where, input, dims, lambda batch: _pool3d.avg_pool(
        batch, windows, count_include_pad, divisor_override, dims))


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """The inverse of ``max_pool2d``, as PyTorch's ``F.max_unpool2d``: each value of
    ``(N, C, H, W)`` input placed at the flat position ``indices`` gives in its output plane
    (``max_pool2d(..., return_indices=True)``'s), zeros elsewhere. The output's size is
    ``(H - 1) * stride - 2 * padding + kernel_size`` unless ``output_size`` (the spatial sizes,
    or the whole shape) picks another within one stride of it; one graph node, whose gradient
    reads the output's at the indices.

    Examples:
        >>> import dparray as dp
        >>> pooled, where = dp.nn.functional.max_pool2d(dp.arange(16.0).reshape(1, 1, 4, 4), 2,
        ...                                             return_indices=True)
        >>> dp.nn.functional.max_unpool2d(pooled, where, 2)[0, 0].tolist()[1]
        [0.0, 5.0, 0.0, 7.0]
    """
    size = unpool_size("max_unpool2d", input, indices, kernel_size, stride, padding,
                       output_size)
    return _unpool.max_unpool2d(input, indices, size)


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """The mean over PyTorch's adaptive windows of ``(N, C, H, W)`` (or unbatched
    ``(C, H, W)``) input to ``output_size`` (an int or a pair; None keeps the input's size),
    as ``F.adaptive_avg_pool2d``; one graph node."""
    sizes = adaptive_output_size("adaptive_avg_pool2d", output_size)
    return adaptive_pool("adaptive_avg_pool2d", input, sizes, average=True)


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """The maximum over PyTorch's adaptive windows of ``(N, C, H, W)`` (or ``(C, H, W)``)
    input, as ``F.adaptive_max_pool2d``; ``return_indices`` also returns each winner's flat
    position in its input plane."""
    sizes = adaptive_output_size("adaptive_max_pool2d", output_size)
    check_bool(return_indices, "return_indices", "adaptive_max_pool2d")
    return adaptive_pool("adaptive_max_pool2d", input, sizes, average=False,
                         return_indices=return_indices)


# PyTorch's ``*_with_indices`` forms: the max pools that always return ``(output, indices)``;
# ``return_indices`` is taken and ignored, as in PyTorch.
def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool1d(..., return_indices=True)``: the maxima and their positions along ``L``."""
    return _max_pool("max_pool1d_with_indices", 1, input, kernel_size, stride, padding,
                     dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool2d(..., return_indices=True)``: the maxima and their flat positions in each
    input plane.

    Examples:
        >>> import dparray as dp
        >>> x = dp.arange(16.0).reshape(1, 1, 4, 4)
        >>> dp.nn.functional.max_pool2d_with_indices(x, 2)[1].tolist()
        [[[[5, 7], [13, 15]]]]
    """
    return _max_pool("max_pool2d_with_indices", 2, input, kernel_size, stride, padding,
                     dilation, ceil_mode, True)


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool3d(..., return_indices=True)``: the maxima and their flat positions in each
    input volume."""
    return _max_pool("max_pool3d_with_indices", 3, input, kernel_size, stride, padding,
                     dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool1d(..., return_indices=True)``: the maxima and their positions."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool2d(..., return_indices=True)``: the maxima and their flat positions
    in each input plane."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool3d(..., return_indices=True)``: the maxima and their flat positions
    in each input volume."""
    return adaptive_max_pool3d(input, output_size, True)


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """``(N, C, L)``, ``(N, C, H, W)`` or ``(N, C, D, H, W)`` input resampled to ``size`` or
    by ``scale_factor``, as PyTorch's ``F.interpolate`` with ``mode`` ``"nearest"``,
    ``"nearest-exact"``, ``"linear"``, ``"bilinear"``, ``"bicubic"`` or ``"trilinear"`` (see
    ``nn.Upsample``); one graph node. ``antialias`` is not supported.

    Examples:
        >>> import dparray as dp
        >>> x = dp.tensor([[[[0.0, 1.0]]]])
        >>> dp.nn.functional.interpolate(x, size=(1, 4), mode="bilinear").tolist()
        [[[[0.0, 0.25, 0.75, 1.0]]]]
    """
    if check_bool(antialias, "antialias", "interpolate"):
        raise ValueError("interpolate: antialias=True is not supported")
    spec = resize("interpolate", size, scale_factor, mode, align_corners,
                  recompute_scale_factor)
    return resample("interpolate", input, spec)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """``input`` divided by its ``p``-norm along ``dim``, the norm kept at least ``eps``, as
    PyTorch's ``F.normalize``: ``input / max(||input||_p, eps)`` (``p`` positive, or ``inf``
    for the largest magnitude). Where the norm is below ``eps`` the norm is a constant, so a
    zero vector gets zeros and a gradient of ``1 / eps``, as in PyTorch, not NaN.

    Examples:
        >>> import dparray as dp
        >>> x = dp.tensor([[3.0, 4.0], [0.0, 0.0]], dtype="float64")
        >>> dp.nn.functional.normalize(x).tolist()
        [[0.6, 0.8], [0.0, 0.0]]
    """
    check_tensor(input, "input", "normalize")
    _check_floating(input, "normalize")
    p = _checks.check_number(p, "p", "normalize", above=0.0, finite=False)
    eps = _checks.check_number(eps, "eps", "normalize", minimum=0.0)
    axis = _checks.normalize_axis(check_int(dim, "dim", "normalize"), input.ndim or 1,
                                  "normalize")
    magnitude = ops.abs(input)
    if math.isinf(p):
        norm = ops.maximum(ops.max(magnitude, axis=axis, keepdims=True), eps)
    else:
        total = ops.sum(magnitude**p, axis=axis, keepdims=True)
        floor = eps**p  # clamped before the root, whose gradient at 0 is infinite
        norm = ops.maximum(total, floor) ** (1.0 / p) if floor > 0 else ops.maximum(
            total ** (1.0 / p), eps)
    return input / norm


def check_probability(p: float, where: str) -> float:
    """A dropout probability: a number in [0, 1)."""
    return _checks.check_probability(p, "p", where)
