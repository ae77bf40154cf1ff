"""More of PyTorch's losses, as functions (re-exported by ``dparray.nn.functional``) and
modules: the triplet margin, hinge embedding, soft margin, multi-label soft margin and
multi-class margin losses, and the Gaussian and Poisson negative log-likelihoods.

Each is composed of differentiable ops (so derivatives of any order come from the engine) and
takes ``reduction`` -- ``"mean"`` (default), ``"sum"`` or ``"none"`` -- as PyTorch's. PyTorch's
deprecated ``size_average`` and ``reduce`` are not taken; the options PyTorch lists after them
are keyword-only here, so no positional argument lands in another's place. Class weights are
constants (no gradient) and buffers of the modules, under PyTorch's names. As elsewhere in
dparray (``docs/decisions.md``), an elementwise loss needs ``input`` and ``target`` of one
shape, where PyTorch broadcasts them.
"""

from __future__ import annotations

import math
from typing import Any

from dparray import creation, ops
from dparray._checks import check_bool, check_choice, check_number, check_tensor, describe
from dparray.nn.distance import pairwise_distance
from dparray.nn.loss import _REDUCTIONS, _elementwise_weight, _Loss, _optional_tensor, _reduce
from dparray.ops._autocast import autocast_op
from dparray.ops._util import broadcast_shapes
from dparray.ops.distance import check_p
from dparray.tensor import Tensor, from_op

__all__ = [
    "GaussianNLLLoss", "HingeEmbeddingLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
    "PoissonNLLLoss", "SoftMarginLoss", "TripletMarginLoss",
    "gaussian_nll_loss", "hinge_embedding_loss", "multi_margin_loss",
    "multilabel_soft_margin_loss", "poisson_nll_loss", "soft_margin_loss",
    "triplet_margin_loss",
]

_HALF_LOG_TWO_PI = 0.5 * math.log(2.0 * math.pi)


# ------------------------------------------------------------------ functions
@autocast_op("triplet_margin_loss")
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2.0, eps: float = 1e-6, swap: bool = False, *,
                        reduction: str = "mean") -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` for each triplet of rows, ``d`` the
    ``pairwise_distance`` (``p``, ``eps``), as PyTorch's ``F.triplet_margin_loss``: the
    anchor is asked to be nearer the positive than the negative by ``margin`` (positive).
    With ``swap``, ``d(a, n)`` is the smaller of it and ``d(p, n)``. The three tensors have
    one number of dimensions and broadcast together.

    Examples:
        >>> import dparray as dp
        >>> a, p, n = dp.tensor([[0.0, 0.0]]), dp.tensor([[3.0, 4.0]]), dp.tensor([[0.0, 5.5]])
        >>> round(dp.nn.functional.triplet_margin_loss(a, p, n, eps=0.0).item(), 4)
        0.5
    """
    where = "triplet_margin_loss"
    margin = check_number(margin, "margin", where, above=0.0)
    p = check_p(p, where)
    eps = check_number(eps, "eps", where)
    check_bool(swap, "swap", where)
    check_choice(reduction, "reduction", where, _REDUCTIONS)
    for name, value in (("anchor", anchor), ("positive", positive), ("negative", negative)):
        check_tensor(value, name, where)
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise ValueError(f"{where}: anchor, positive and negative must have one number of "
                         f"dimensions, got shapes {anchor.shape}, {positive.shape} and "
                         f"{negative.shape}")
    near = pairwise_distance(anchor, positive, p, eps)
    far = pairwise_distance(anchor, negative, p, eps)
    if swap:
        far = ops.minimum(far, pairwise_distance(positive, negative, p, eps))
    return _reduce(ops.clip(margin + near - far, min=0.0), reduction)


@autocast_op("hinge_embedding_loss")
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, *,
                         reduction: str = "mean") -> Tensor:
    """``input`` where ``target`` is 1 and ``max(0, margin - input)`` where it is -1, as
    PyTorch's ``F.hinge_embedding_loss`` (for a target that is neither, both terms, as
    PyTorch adds them): ``input`` is a distance, small for similar pairs (1) and at least
    ``margin`` for dissimilar ones (-1).

    Examples:
        >>> import dparray as dp
        >>> loss = dp.nn.functional.hinge_embedding_loss
        >>> loss(dp.tensor([0.5, 0.25, 2.0]), dp.tensor([1, -1, -1]), reduction="none").tolist()
        [0.5, 0.75, 0.0]
    """
    where = "hinge_embedding_loss"
    margin = check_number(margin, "margin", where)
    check_choice(reduction, "reduction", where, _REDUCTIONS)
    _check_input_and_target(where, input, target)
    dissimilar = ops.where(target != 1, ops.clip(margin - input, min=0.0), 0.0)
    return _reduce(dissimilar + ops.where(target != -1, input, 0.0), reduction)


@autocast_op("soft_margin_loss")
def soft_margin_loss(input: Tensor, target: Tensor, *, reduction: str = "mean") -> Tensor:
    """The two-class logistic loss ``log(1 + exp(-target * input))`` for targets 1 and -1, as
    PyTorch's ``F.soft_margin_loss``; computed as ``softplus(-target * input)``, finite where
    PyTorch's formula overflows (``-target * input`` above 88 in float32).

    Examples:
        >>> import dparray as dp
        >>> loss = dp.nn.functional.soft_margin_loss
        >>> [round(v, 4) for v in loss(dp.tensor([0.0, 2.0]), dp.tensor([1.0, -1.0]),
        ...                            reduction="none").tolist()]
        [0.6931, 2.1269]
    """
    where = "soft_margin_loss"
    check_choice(reduction, "reduction", where, _REDUCTIONS)
    target = _check_input_and_target(where, input, target)
    return _reduce(ops.softplus(-target * input), reduction)


@autocast_op("multilabel_soft_margin_loss")
def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, *,
                                reduction: str = "mean") -> Tensor:
    """The logistic loss of each of ``C`` independent labels, averaged over the labels (the
    last axis) of each sample, as PyTorch's ``F.multilabel_soft_margin_loss``: ``-(t * log
    sigmoid(x) + (1 - t) * log sigmoid(-x))``, times ``weight`` (broadcast to the input's
    shape: one per class, say) where given. ``reduction="none"`` gives one loss per sample.

    Examples:
        >>> import dparray as dp
        >>> loss = dp.nn.functional.multilabel_soft_margin_loss
        >>> round(loss(dp.tensor([[0.0, 0.0]]), dp.tensor([[1.0, 0.0]])).item(), 4)
        0.6931
    """
    where = "multilabel_soft_margin_loss"
    check_choice(reduction, "reduction", where, _REDUCTIONS)
    target = _check_input_and_target(where, input, target)
    if input.ndim == 0:
        raise ValueError(f"{where}: input needs a class axis (the last), got a 0-d tensor")
    weight = _elementwise_weight(where, "weight", weight, input)
    loss = -(target * ops.logsigmoid(input) + (1.0 - target) * ops.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    return _reduce(ops.sum(loss, axis=-1) / input.shape[-1], reduction)


@autocast_op("multi_margin_loss")
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, *, reduction: str = "mean") -> Tensor:
    """The multi-class hinge loss, as PyTorch's ``F.multi_margin_loss``: for scores ``x`` of
    ``C`` classes and the target class ``y``, ``sum over i != y of max(0, margin - x[y] +
    x[i]) ** p / C``, times ``weight[y]`` where given (``C`` class weights). ``input`` is
    ``(N, C)`` with targets ``(N,)``, or ``(C,)`` with one target; ``p`` is 1 or 2.

    With no samples the mean is NaN and the sum 0 (PyTorch returns whatever its buffer held).

    Examples:
        >>> import dparray as dp
        >>> loss = dp.nn.functional.multi_margin_loss
        >>> scores = dp.tensor([[0.0, 1.0, 0.5, -2.0]])  # within the margin of class 1: class 2
        >>> loss(scores, dp.tensor([1]), reduction="none").tolist()  # (1 - 1 + 0.5) / 4
        [0.125]
    """
    where = "multi_margin_loss"
    power = check_number(p, "p", where)
    if power not in (1.0, 2.0):
        raise ValueError(f"{where}: p must be 1 or 2, got {describe(p)}")
    margin = check_number(margin, "margin", where)
    check_choice(reduction, "reduction", where, _REDUCTIONS)
    check_tensor(input, "input", where)
    check_tensor(target, "target", where)
    if input.ndim > 2 or (input.ndim and input.shape[-1] == 0):
        raise ValueError(f"{where}: input must be (N, C) or (C,) with C at least 1, got shape "
                         f"{input.shape}")
    if not input.dtype.is_floating:
        raise TypeError(f"{where}: input must be floating, got {input.dtype.name}")
    scores = input.reshape(-1, input.shape[-1] if input.ndim else 1)
    samples, classes = scores.shape
    if target.dtype.is_floating or target.dtype.kind == "bool":
        raise TypeError(f"{where}: target must hold integer class indices, got "
                        f"{target.dtype.name}")
    if target.ndim > 1 or target.elem_count() != samples or (input.ndim == 2
                                                             and target.ndim != 1):
        expected = f"({samples},)" if input.ndim == 2 else "() or (1,)"
        raise ValueError(f"{where}: input of shape {input.shape} needs a target of shape "
                         f"{expected}, got {target.shape}")
    class_weight = _class_weight(where, weight, classes)
    if samples:  # one look at the targets on the host: a clear error beats garbage
        low, high = int(target.min().item()), int(target.max().item())
        if low < 0 or high >= classes:
            raise ValueError(f"{where}: class index {low if low < 0 else high} is out of range "
                             f"for {classes} classes")
    picks = target.reshape(samples, 1)
    gaps = margin - ops.gather(scores, 1, picks) + scores  # (N, C)
    hinge = ops.where(gaps > 0, gaps, 0.0)  # no gradient at 0, as PyTorch's
    if power == 2.0:
        hinge = hinge * hinge
    xp = input.backend.xp
    columns = from_op(xp.reshape(xp.arange(classes), (1, classes)), input.backend, None)
    loss = ops.sum(ops.where(columns == picks, 0.0, hinge), axis=1) / classes
    if class_weight is not None:
        loss = loss * ops.take(class_weight, target.reshape(samples), axis=0)
    if reduction == "none":
        return loss.reshape(target.shape if target.ndim else ())
    return _reduce(loss, reduction)


@autocast_op("gaussian_nll_loss")
def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of ``target`` under normal distributions of mean ``input``
    and variance ``var``, as PyTorch's ``F.gaussian_nll_loss``: ``0.5 * (log(v) + (input -
    target) ** 2 / v)``, plus ``0.5 * log(2 * pi)`` with ``full``, ``v`` the variance kept at
    least ``eps``.

    ``var`` has the input's shape (one variance per value), or the input's shape without its
    last axis or with one axis of size 1 (one shared along that axis), or is a number at
    least 0; a negative variance is a ValueError (one look at ``var`` on the host). ``target``
    broadcasts to the input's shape. As in PyTorch the floor ``eps`` changes the value only:
    the variance's gradient passes as if unclamped, so a variance driven below ``eps`` still
    learns.

    Examples:
        >>> import dparray as dp
        >>> mean, sample, var = dp.tensor([0.0, 1.0]), dp.tensor([1.0, 1.0]), dp.tensor([1.0, 4.0])
        >>> round(dp.nn.functional.gaussian_nll_loss(mean, sample, var).item(), 4)
        0.5966
    """
    where = "gaussian_nll_loss"
    check_bool(full, "full", where)
    eps = check_number(eps, "eps", where, minimum=0.0)
    check_choice(reduction, "reduction", where, _REDUCTIONS)
    check_tensor(input, "input", where)
    check_tensor(target, "target", where)
    if not input.dtype.is_floating:
        raise TypeError(f"{where}: input must be floating, got {input.dtype.name}")
    if _broadcast(where, "target", target, input) is None:
        raise ValueError(f"{where}: target of shape {target.shape} does not broadcast to the "
                         f"input's shape {input.shape}")
    if isinstance(var, Tensor):
        var = _fitted_variance(where, var, input)
        if var.elem_count() and bool(ops.any(var < 0).item()):
            raise ValueError(f"{where}: var has negative entries")
    else:
        value = check_number(var, "var", where, minimum=0.0)
        var = creation.full_like(input, value)
    # PyTorch clamps a copy outside autograd: the value is eps, the gradient passes unchanged
    var = ops.where(var < eps, var - var.detach() + eps, var)
    difference = input - target
    loss = 0.5 * (ops.log(var) + difference * difference / var)
    if full:
        loss = loss + _HALF_LOG_TWO_PI
    return _reduce(loss, reduction)


@autocast_op("poisson_nll_loss")
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     *, eps: float = 1e-8, reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of counts ``target`` under Poisson distributions, as
    PyTorch's ``F.poisson_nll_loss``, dropping ``log(target!)``: ``exp(input) - target *
    input`` for log-rates (``log_input``), else ``input - target * log(input + eps)`` for
    rates. ``full`` adds Stirling's approximation of ``log(target!)``, ``t * log(t) - t +
    0.5 * log(2 * pi * t)``, where ``t > 1`` (0 elsewhere). Its gradient with respect to the
    target is 0 where ``t <= 1`` (PyTorch's is NaN at ``t = 0``).

    Examples:
        >>> import dparray as dp
        >>> loss = dp.nn.functional.poisson_nll_loss
        >>> loss(dp.tensor([0.0, 0.0]), dp.tensor([1.0, 3.0]), reduction="none").tolist()
        [1.0, 1.0]
    """
    where = "poisson_nll_loss"
    check_bool(log_input, "log_input", where)
    check_bool(full, "full", where)
    eps = check_number(eps, "eps", where)
    check_choice(reduction, "reduction", where, _REDUCTIONS)
    target = _check_input_and_target(where, input, target)
    rates = ops.exp(input) if log_input else input
    loss = rates - target * (input if log_input else ops.log(input + eps))
    if full:
        counted = target > 1
        t = ops.where(counted, target, 1.0)  # no log(0) where the term is dropped
        stirling = t * ops.log(t) - t + 0.5 * ops.log(2.0 * math.pi * t)
        loss = loss + ops.where(counted, stirling, 0.0)
    return _reduce(loss, reduction)


# ------------------------------------------------------------------ checks
def _check_input_and_target(where: str, input: Tensor, target: Tensor) -> Tensor:
    """A floating ``input`` and a ``target`` of its shape; an integer or bool target (1 and
    -1 written as integers) comes back in the input's dtype."""
    check_tensor(input, "input", where)
    check_tensor(target, "target", where)
    if not input.dtype.is_floating:
        raise TypeError(f"{where}: input must be floating, got {input.dtype.name}")
    if input.shape != target.shape:
        raise ValueError(f"{where}: input shape {input.shape} != target shape {target.shape}")
    return target if target.dtype.is_floating else target.astype(input.dtype)


def _class_weight(where: str, weight: Tensor | None, classes: int) -> Tensor | None:
    """``C`` floating class weights, as a constant."""
    if weight is None:
        return None
    check_tensor(weight, "weight", where)
    if weight.shape != (classes,) or not weight.dtype.is_floating:
        raise ValueError(f"{where}: weight must be a floating tensor of shape ({classes},), got "
                         f"{weight.dtype.name} of shape {weight.shape}")
    return weight.detach()


def _broadcast(where: str, name: str, value: Tensor, input: Tensor) -> tuple[int, ...] | None:
    """The broadcast shape of ``value`` and ``input`` when it is the input's, else None."""
    try:
        shape = broadcast_shapes(where, value.shape, input.shape)
    except ValueError:
        return None
    return shape if shape == input.shape else None


def _fitted_variance(where: str, var: Tensor, input: Tensor) -> Tensor:
    """``var`` shaped to broadcast against ``input`` by PyTorch's rules: the input's shape;
    its shape without the last axis (which gets a size-1 axis); or its number of axes with
    one of them of size 1 where the input's differs."""
    if not var.dtype.is_floating:
        raise TypeError(f"{where}: var must be floating, got {var.dtype.name}")
    if var.shape == input.shape:
        return var
    if input.ndim and var.shape == input.shape[:-1]:
        return ops.unsqueeze(var, -1)
    if var.ndim == input.ndim and sum(v for i, v in zip(input.shape, var.shape, strict=True)
                                      if i != v) == 1:
        return var
    raise ValueError(f"{where}: var of shape {var.shape} does not fit input of shape "
                     f"{input.shape}: it must be the input's shape, that shape without its "
                     "last axis, or that shape with one axis of size 1")


# ------------------------------------------------------------------ modules
class TripletMarginLoss(_Loss):
    """Module form of ``triplet_margin_loss``; ``margin`` must be positive."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, *, reduction: str = "mean") -> None:
        super().__init__(reduction)
        where = "TripletMarginLoss"
        self.margin = check_number(margin, "margin", where, above=0.0)
        self.p = check_p(p, where)
        self.eps = check_number(eps, "eps", where)
        self.swap = check_bool(swap, "swap", where)

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps,
                                   self.swap, reduction=self.reduction)

    def extra_repr(self) -> str:
        return (f"margin={self.margin}, p={self.p}, eps={self.eps}, swap={self.swap}, "
                f"{super().extra_repr()}")


class HingeEmbeddingLoss(_Loss):
    """Module form of ``hinge_embedding_loss``."""

    def __init__(self, margin: float = 1.0, *, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.margin = check_number(margin, "margin", "HingeEmbeddingLoss")

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)

    def extra_repr(self) -> str:
        return f"margin={self.margin}, {super().extra_repr()}"


class SoftMarginLoss(_Loss):
    """Module form of ``soft_margin_loss``."""

    def __init__(self, *, reduction: str = "mean") -> None:
        super().__init__(reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """Module form of ``multilabel_soft_margin_loss``; ``weight`` is a buffer, as in PyTorch.

    Examples:
        >>> import dparray as dp
        >>> loss = dp.nn.MultiLabelSoftMarginLoss(weight=dp.tensor([1.0, 3.0]))
        >>> sorted(loss.state_dict())
        ['weight']
    """

    def __init__(self, weight: Tensor | None = None, *, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", _optional_tensor(weight, "weight",
                                                        "MultiLabelSoftMarginLoss"))

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return multilabel_soft_margin_loss(input, target, self.weight, reduction=self.reduction)


class MultiMarginLoss(_Loss):
    """Module form of ``multi_margin_loss``; ``p`` is 1 or 2, and ``weight`` (``C`` class
    weights) is a buffer, as in PyTorch."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None, *,
                 reduction: str = "mean") -> None:
        super().__init__(reduction)
        where = "MultiMarginLoss"
        power = check_number(p, "p", where)
        if power not in (1.0, 2.0):
            raise ValueError(f"{where}: p must be 1 or 2, got {describe(p)}")
        self.p = int(power)
        self.margin = check_number(margin, "margin", where)
        weight = _optional_tensor(weight, "weight", where)
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"{where}: weight must be 1-D (one per class), got shape "
                             f"{weight.shape}")
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return multi_margin_loss(input, target, self.p, self.margin, self.weight,
                                 reduction=self.reduction)

    def extra_repr(self) -> str:
        return f"p={self.p}, margin={self.margin}, {super().extra_repr()}"


class GaussianNLLLoss(_Loss):
    """Module form of ``gaussian_nll_loss``, called as ``loss(input, target, var)``; its
    options are keyword-only, as in PyTorch."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6,
                 reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.full = check_bool(full, "full", "GaussianNLLLoss")
        self.eps = check_number(eps, "eps", "GaussianNLLLoss", minimum=0.0)

    def forward(self, input: Tensor, target: Tensor, var: Any) -> Tensor:
        return gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)

    def extra_repr(self) -> str:
        return f"full={self.full}, eps={self.eps}, {super().extra_repr()}"


class PoissonNLLLoss(_Loss):
    """Module form of ``poisson_nll_loss``."""

    def __init__(self, log_input: bool = True, full: bool = False, *, eps: float = 1e-8,
                 reduction: str = "mean") -> None:
        super().__init__(reduction)
        where = "PoissonNLLLoss"
        self.log_input = check_bool(log_input, "log_input", where)
        self.full = check_bool(full, "full", where)
        self.eps = check_number(eps, "eps", where)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return poisson_nll_loss(input, target, self.log_input, self.full, eps=self.eps,
                                reduction=self.reduction)

    def extra_repr(self) -> str:
        return (f"log_input={self.log_input}, full={self.full}, eps={self.eps}, "
                f"{super().extra_repr()}")
