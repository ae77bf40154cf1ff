"""Losses, as functions (PyTorch's names and arguments) and as modules.

All are built from differentiable ops, so their gradients need no code of their own; the
log-probabilities come from ``log_softmax`` (max-shifted), and the logistic loss from the
overflow-free ``softplus``. ``reduction`` is ``"mean"`` (default), ``"sum"`` or ``"none"``.
"""

from __future__ import annotations

from typing import Any

from dparray import ops
from dparray.nn.module import Module
from dparray.tensor import Tensor

_REDUCTIONS = ("mean", "sum", "none")


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean squared error; ``input`` and ``target`` must have one shape."""
    _check_reduction(reduction)
    _check_same_shape("mse_loss", input, target)
    difference = input - target
    return _reduce(difference * difference, reduction)


def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean absolute error; ``input`` and ``target`` must have one shape."""
    _check_reduction(reduction)
    _check_same_shape("l1_loss", input, target)
    return _reduce((input - target).abs(), reduction)


def nll_loss(input: Tensor, target: Tensor, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices ``target`` under log-probabilities ``input``
    of shape ``(N, C)`` or ``(N, C, d1, ...)``; targets equal to ``ignore_index`` count for
    nothing (and not in the mean's denominator)."""
    _check_reduction(reduction)
    log_probs, classes, keep = _class_layout("nll_loss", input, target, ignore_index)
    return _reduce_kept(-_picked(log_probs, classes), keep, reduction)


def cross_entropy(input: Tensor, target: Tensor, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross-entropy between logits ``input`` (``(N, C)`` or ``(N, C, d1, ...)``) and either
    class indices (an integer ``target`` without the class axis) or class probabilities (a
    floating ``target`` of ``input``'s shape). ``label_smoothing`` mixes the target with the
    uniform distribution, as PyTorch does."""
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    if input.ndim < 1:
        raise ValueError("cross_entropy: input needs a class axis, got a 0-d tensor")
    class_axis = 1 if input.ndim > 1 else 0
    log_probs = ops.log_softmax(input, axis=class_axis)
    if target.dtype.is_floating:
        if target.shape != input.shape:
            raise ValueError(
                f"cross_entropy: probability targets need the input's shape {input.shape}, got "
                f"{target.shape}"
            )
        classes = input.shape[class_axis]
        smoothed = target * (1.0 - label_smoothing) + label_smoothing / classes
        return _reduce(-(log_probs * smoothed).sum(axis=class_axis), reduction)
    log_probs, indices, keep = _class_layout("cross_entropy", log_probs, target, ignore_index)
    loss = -_picked(log_probs, indices) * (1.0 - label_smoothing)
    if label_smoothing:
        loss = loss - log_probs.mean(axis=-1) * label_smoothing
    return _reduce_kept(loss, keep, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Logistic loss on logits: ``-(pw * t * log sigmoid(x) + (1 - t) * log(1 - sigmoid(x)))``,
    computed with ``softplus`` so that no logit overflows."""
    _check_reduction(reduction)
    _check_same_shape("binary_cross_entropy_with_logits", input, target)
    if pos_weight is None:
        loss = ops.softplus(input) - input * target
    else:
        loss = (1.0 - target) * ops.softplus(input) + pos_weight * target * ops.softplus(-input)
    return _reduce(loss, reduction)


def _class_layout(name: str, scores: Tensor, target: Tensor,
                  ignore_index: int) -> tuple[Tensor, Any, Tensor | None]:
    """Scores as ``(M, C)`` rows (class axis last), the targets as ``M`` indices with ignored
    ones replaced by 0, and the mask of kept rows (None when nothing is ignored)."""
    if target.dtype.is_floating or target.dtype.kind == "bool":
        raise TypeError(f"{name}: class-index targets must be integers, got {target.dtype.name}")
    expected = (scores.shape[0], *scores.shape[2:]) if scores.ndim > 1 else ()
    if target.shape != expected:
        raise ValueError(
            f"{name}: input of shape {scores.shape} needs targets of shape {expected}, got "
            f"{target.shape}"
        )
    classes = scores.shape[1] if scores.ndim > 1 else scores.shape[0]
    ignored = target == ignore_index
    valid = ops.where(ignored, 0, target)
    if valid.elem_count():  # one look at the values on the host: a clear error beats garbage
        low, high = int(valid.min().item()), int(valid.max().item())
        if low < 0 or high >= classes:
            bad = low if low < 0 else high
            raise ValueError(f"{name}: class index {bad} is out of range for {classes} classes")
    if scores.ndim > 2:
        axes = (0, *range(2, scores.ndim), 1)
        scores = scores.permute(*axes)
    rows = scores.reshape(-1, classes)
    keep = (target != ignore_index).reshape(-1) if ignored.any().item() else None
    return rows, valid.reshape(-1), keep


def _picked(log_probs: Tensor, indices: Tensor) -> Tensor:
    """Each row's log-probability of its class: ``log_probs[i, indices[i]]``, as a
    differentiable product with a one-hot mask (the standard has no take_along_axis)."""
    xp = log_probs.backend.xp
    positions = xp.arange(log_probs.shape[-1], dtype=indices.data.dtype)
    mask = xp.astype(indices.data[:, None] == positions[None, :], log_probs.data.dtype)
    return (log_probs * Tensor(mask, log_probs.backend)).sum(axis=-1)


def _reduce_kept(loss: Tensor, keep: Tensor | None, reduction: str) -> Tensor:
    if keep is not None:
        loss = ops.where(keep, loss, 0.0)
    if reduction == "mean":
        count = loss.elem_count() if keep is None else keep.astype(loss.dtype).sum()
        return loss.sum() / count
    return _reduce(loss, reduction)


def _check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of {_REDUCTIONS}, got {reduction!r}")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"reduction must be one of {_REDUCTIONS}, got {reduction!r}")


def _check_same_shape(name: str, input: Tensor, target: Tensor) -> None:
    if input.shape != target.shape:
        raise ValueError(f"{name}: input shape {input.shape} != target shape {target.shape}")


class _Loss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        _check_reduction(reduction)
        self.reduction = reduction

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


class MSELoss(_Loss):
    """Module form of ``mse_loss``."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    """Module form of ``l1_loss``."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return l1_loss(input, target, self.reduction)


class NLLLoss(_Loss):
    """Module form of ``nll_loss``."""

    def __init__(self, ignore_index: int = -100, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return nll_loss(input, target, self.ignore_index, self.reduction)


class CrossEntropyLoss(_Loss):
    """Module form of ``cross_entropy``."""

    def __init__(self, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return cross_entropy(input, target, self.ignore_index, self.reduction,
                             self.label_smoothing)


class BCEWithLogitsLoss(_Loss):
    """Module form of ``binary_cross_entropy_with_logits``."""

    def __init__(self, reduction: str = "mean", pos_weight: Tensor | None = None) -> None:
        super().__init__(reduction)
        self.pos_weight = pos_weight

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return binary_cross_entropy_with_logits(input, target, self.reduction, self.pos_weight)
