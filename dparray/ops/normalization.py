"""Normalisation as one graph node: layer, batch (also synchronised), group, instance and RMS
norm.

All but RMS norm compute ``(x - mean) / sqrt(var + eps) * weight + bias``; they differ only in
which elements share a mean and variance, and in where those statistics come from:

* ``layout="rows"`` (layer norm): ``x`` is viewed as ``(M, D)``, each row has its own
  statistics, ``weight`` and ``bias`` hold ``D`` values;
* ``layout="channels"`` (batch norm): ``x`` is viewed as ``(N, C, L)``, each channel has its
  own statistics over ``N`` and ``L``, ``weight`` and ``bias`` hold ``C`` values;
* ``layout="groups"`` (group norm; instance norm is one group per channel): ``x`` is viewed as
  ``(N, G, C / G, L)``, each (sample, group) has its own statistics over the group's channels
  and ``L``, ``weight`` and ``bias`` hold ``C`` values;
* the statistics are the batch's (``Statistics``), the batch's gathered over all chunks of a
  DataParallel call (``SyncBatchNorm``'s statistics), or given (evaluation with running
  statistics).

``Normalization`` saves ``x``, the per-statistic mean and ``1 / sqrt(var + eps)`` and the
weight -- no array of ``x``'s size beyond ``x`` itself -- and its backward is the closed form
``dx = rstd * (g - mean(g) - xhat * mean(g * xhat))`` with ``g = dy * weight``, whose two means
go through the same statistics object (an all-reduce, for the synchronised form).

RMS norm (``RMSNormalization``) skips the mean: ``x / sqrt(mean(x * x) + eps) * weight`` over
each row, with the same closed form less its ``mean(g)`` term. It is a class of its own, not a
mode of ``Normalization``, so a backend kernel written for layer norm can never be handed it.
"""

from __future__ import annotations

import math
from typing import Any

from dparray._checks import check_int
from dparray.autograd import Function
from dparray.kernels import reference, resolve
from dparray.ops._autocast import autocast_op
from dparray.tensor import Tensor

STAT_AXES = {"rows": (1,), "channels": (0, 2), "groups": (2, 3)}
AFFINE_SUM_AXES = {"rows": (0,), "channels": (0, 2), "groups": (0, 3)}  # parameters' gradients


class Statistics:
    """Per-statistic mean and (biased) variance of a normalisation's elements, and sums of
    per-element values over the same elements: computed locally. ``SyncBatchNorm`` replaces it
    with one that combines every chunk's."""

    def moments(self, xp: Any, x: Any, axes: tuple[int, ...]) -> tuple[Any, Any, int]:
        """``(mean, var, count)`` over ``axes`` (kept as size 1), two-pass for accuracy."""
        count = math.prod(x.shape[a] for a in axes)
        mean = xp.mean(x, axis=axes, keepdims=True)
        centred = x - mean
        var = xp.mean(centred * centred, axis=axes, keepdims=True)
        return mean, var, count

    def sums(self, xp: Any, values: list[Any], axes: tuple[int, ...]) -> list[Any]:
        """Each of ``values`` summed over ``axes`` (kept as size 1)."""
        return [xp.sum(v, axis=axes, keepdims=True) for v in values]


LOCAL = Statistics()


class Normalization(Function):
    """``(x - mean) * rstd * weight + bias`` for ``x``, ``weight``, ``bias`` (either may be
    None) and, when the statistics are given, ``mean`` and ``var`` arrays of the statistic's
    size (running statistics; no gradient flows to them).

    After the call ``batch_mean``, ``batch_var`` (biased) and ``batch_count`` hold the batch's
    statistics (flat arrays and an int), for running averages; None when given.
    """

    def __init__(self, layout: str, eps: float, statistics: Statistics | None = LOCAL,
                 trailing: int = 1, groups: int = 1) -> None:
        self.layout, self.eps, self.statistics = layout, eps, statistics
        self.trailing = trailing  # rows: how many trailing axes form a row
        self.groups = groups  # groups: how many groups share out the channels
        self.batch_mean: Any = None
        self.batch_var: Any = None
        self.batch_count = 0

    def forward(self, x: Any, weight: Any = None, bias: Any = None, mean: Any = None,
                var: Any = None) -> Any:
        xp = self.xp
        self.input_shape = tuple(x.shape)
        view = xp.reshape(x, self.view_shape(self.input_shape))
        axes = self.stat_axes()
        if self.statistics is None:
            mean = xp.reshape(mean, self.stat_shape(view.shape))
            rstd = 1.0 / xp.sqrt(xp.reshape(var, self.stat_shape(view.shape)) + self.eps)
        else:
            mean, var, count = self.statistics.moments(xp, view, axes)
            self.batch_mean = xp.reshape(mean, (-1,))
            self.batch_var = xp.reshape(var, (-1,))
            self.batch_count = count
            rstd = 1.0 / xp.sqrt(var + self.eps)
        out = (view - mean) * rstd
        if weight is not None:
            out = out * xp.reshape(weight, self.affine_shape(view.shape))
        if bias is not None:
            out = out + xp.reshape(bias, self.affine_shape(view.shape))
        self.has_bias = bias is not None
        self.bias_shape = tuple(bias.shape) if bias is not None else ()
        self.save(x, mean, rstd, weight)
        return xp.reshape(out, self.input_shape)

    def backward(self, grad: Any) -> tuple[Any, ...]:
        xp = self.xp
        x, mean, rstd, weight = self.saved
        view = xp.reshape(x, self.view_shape(self.input_shape))
        dy = xp.reshape(grad, view.shape)
        xhat = (view - mean) * rstd
        affine = self.affine_shape(view.shape)
        outside = self.affine_sum_axes()
        grad_weight = grad_bias = None
        if weight is not None and self.needs_grad(1):
            grad_weight = xp.reshape(xp.sum(dy * xhat, axis=outside), weight.shape)
        if self.has_bias and self.needs_grad(2):
            grad_bias = xp.reshape(xp.sum(dy, axis=outside), self.bias_shape)
        grad_x = None
        if self.needs_grad(0):
            g = dy if weight is None else dy * xp.reshape(weight, affine)
            if self.statistics is None:
                grad_x = xp.reshape(g * rstd, self.input_shape)
            else:
                axes = self.stat_axes()
                count = self.batch_count
                sum_g, sum_gx = self.statistics.sums(xp, [g, g * xhat], axes)
                dx = rstd * (g - sum_g / count - xhat * (sum_gx / count))
                grad_x = xp.reshape(dx, self.input_shape)
        return (grad_x, grad_weight, grad_bias, None, None)[:len(self.parents or ())]

    # ------------------------------------------------------------------ layouts
    def view_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """``x``'s shape as ``(M, D)`` (rows), ``(N, C, L)`` (channels) or
        ``(N, G, C / G, L)`` (groups)."""
        if self.layout == "rows":
            return rows_view(shape, self.trailing)
        if self.layout == "channels":
            return (shape[0], shape[1], math.prod(shape[2:]))
        return (shape[0], self.groups, shape[1] // self.groups, math.prod(shape[2:]))

    def stat_axes(self) -> tuple[int, ...]:
        return STAT_AXES[self.layout]

    def affine_sum_axes(self) -> tuple[int, ...]:
        """The axes a parameter's gradient is summed over."""
        return AFFINE_SUM_AXES[self.layout]

    def stat_shape(self, view: tuple[int, ...]) -> tuple[int, ...]:
        """The shape given statistics take in the view (running statistics: one per channel,
        or per group)."""
        if self.layout == "rows":
            return (view[0], 1)
        return (1, view[1], 1) if self.layout == "channels" else (1, view[1], 1, 1)

    def affine_shape(self, view: tuple[int, ...]) -> tuple[int, ...]:
        if self.layout == "rows":
            return (1, view[1])
        return (1, view[1], 1) if self.layout == "channels" else (1, view[1], view[2], 1)


@reference("layer_norm")
class LayerNorm(Normalization):
    """Layer norm (``layout="rows"``): each row of the trailing axes by its own statistics."""


@reference("batch_norm")
class BatchNorm(Normalization):
    """Batch norm (``layout="channels"``) by the chunk's statistics, or by given ones."""


@reference("sync_batch_norm")
class SyncBatchNorm(Normalization):
    """Batch norm by statistics combined over every chunk of a DataParallel call."""


@reference("group_norm")
class GroupNorm(Normalization):
    """Group norm (``layout="groups"``): each (sample, group) by its own statistics."""


@reference("instance_norm")
class InstanceNorm(Normalization):
    """Instance norm: group norm with one group per channel, or given statistics."""


@reference("rms_norm")
class RMSNormalization(Function):
    """``x / sqrt(mean(x * x) + eps) * weight`` over each row of ``x`` viewed as ``(M, D)`` (its
    last ``trailing`` axes form a row); ``weight`` (``D`` values) may be None. Saves ``x``,
    ``1 / rms`` per row and the weight."""

    def __init__(self, eps: float, trailing: int) -> None:
        self.eps, self.trailing = eps, trailing

    def forward(self, x: Any, weight: Any = None) -> Any:
        xp = self.xp
        self.input_shape = tuple(x.shape)
        view = xp.reshape(x, rows_view(self.input_shape, self.trailing))
        rstd = 1.0 / xp.sqrt(xp.mean(view * view, axis=1, keepdims=True) + self.eps)
        out = view * rstd
        if weight is not None:
            out = out * xp.reshape(weight, (1, -1))
        self.save(x, rstd, weight)
        return xp.reshape(out, self.input_shape)

    def backward(self, grad: Any) -> tuple[Any, ...]:
        xp = self.xp
        x, rstd, weight = self.saved
        view = xp.reshape(x, rows_view(self.input_shape, self.trailing))
        dy = xp.reshape(grad, view.shape)
        xhat = view * rstd
        grad_weight = grad_x = None
        if weight is not None and self.needs_grad(1):
            grad_weight = xp.reshape(xp.sum(dy * xhat, axis=0), weight.shape)
        if self.needs_grad(0):
            g = dy if weight is None else dy * xp.reshape(weight, (1, -1))
            dx = rstd * (g - xhat * xp.mean(g * xhat, axis=1, keepdims=True))
            grad_x = xp.reshape(dx, self.input_shape)
        return (grad_x, grad_weight)[:len(self.parents or ())]


def rows_view(shape: tuple[int, ...], trailing: int) -> tuple[int, int]:
    """``shape`` as ``(M, D)``: its last ``trailing`` axes form a row of ``D`` elements."""
    split = len(shape) - trailing
    return (math.prod(shape[:split]), math.prod(shape[split:]))


@autocast_op("layer_norm")
def layer_norm(x: Tensor, normalized_shape: tuple[int, ...], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` axes, then scale and shift.

    The caller checks that ``x`` ends in ``normalized_shape`` and that ``weight`` and ``bias``
    have that shape (``dparray.nn.functional.layer_norm`` does).
    """
    op = resolve(x.backend, LayerNorm)("rows", eps, LOCAL, len(normalized_shape))
    return op(x, weight, bias)


@autocast_op("batch_norm")
def batch_norm(x: Tensor, weight: Tensor | None, bias: Tensor | None, eps: float, *,
               running_mean: Tensor | None = None, running_var: Tensor | None = None,
               statistics: Statistics | None = LOCAL) -> tuple[Tensor, Normalization]:
    """Normalise each channel (axis 1) of ``(N, C, ...)`` input; with ``statistics=None`` by
    the given ``running_mean``/``running_var``. Returns the output and the node, whose
    ``batch_mean``/``batch_var``/``batch_count`` feed running averages."""
    synchronized = statistics is not LOCAL and statistics is not None
    op = resolve(x.backend, SyncBatchNorm if synchronized else BatchNorm)("channels", eps,
                                                                          statistics)
    if statistics is None:
        return op(x, weight, bias, running_mean, running_var), op
    return op(x, weight, bias), op


@autocast_op("group_norm")
def group_norm(x: Tensor, num_groups: int, weight: Tensor | None, bias: Tensor | None,
               eps: float) -> Tensor:
    """Normalise each (sample, group) of ``(N, C, ...)`` input, the ``C`` channels split into
    ``num_groups`` consecutive groups; then scale and shift each channel.

    The caller checks that ``num_groups`` divides ``C`` and that ``weight`` and ``bias`` hold
    ``C`` values (``dparray.nn.functional.group_norm`` does).
    """
    op = resolve(x.backend, GroupNorm)("groups", eps, LOCAL, groups=num_groups)
    return op(x, weight, bias)


@autocast_op("instance_norm")
def instance_norm(x: Tensor, weight: Tensor | None, bias: Tensor | None, eps: float, *,
                  running_mean: Tensor | None = None,
                  running_var: Tensor | None = None) -> tuple[Tensor, Normalization]:
    """Normalise each (sample, channel) of ``(N, C, ...)`` input by its own statistics, or, when
    ``running_mean`` and ``running_var`` are given, by those. Returns the output and the node,
    whose ``batch_mean``/``batch_var`` (``N * C`` values) feed running averages."""
    given = running_mean is not None
    groups = max(x.shape[1], 1)  # one group per channel; no channels: one empty group
    op = resolve(x.backend, InstanceNorm)(
        "groups", eps, None if given else LOCAL, groups=groups)
    if given:
        return op(x, weight, bias, running_mean, running_var), op
    return op(x, weight, bias), op


@autocast_op("rms_norm")
def rms_norm(x: Tensor, normalized_shape: tuple[int, ...], weight: Tensor | None,
             eps: float) -> Tensor:
    """Divide by the root mean square over the last ``len(normalized_shape)`` axes, then scale.

    The caller checks the shapes and resolves ``eps`` (``dparray.nn.functional.rms_norm``).
    """
    op = resolve(x.backend, RMSNormalization)(eps, len(normalized_shape))
    return op(x, weight)


def normalized_shape_of(value: Any, where: str) -> tuple[int, ...]:
    """A ``normalized_shape`` argument (an int, or a non-empty sequence of positive ints) as a
    tuple, checked: TypeError for a wrong type, ValueError for a wrong value."""
    if isinstance(value, (list, tuple)):
        if not value:
            raise ValueError(f"{where}: normalized_shape must not be empty, got {value!r}")
        return tuple(check_int(n, "normalized_shape", where, minimum=1) for n in value)
    return (check_int(value, "normalized_shape", where, minimum=1),)
