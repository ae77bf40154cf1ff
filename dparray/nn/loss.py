"""Losses, as functions (PyTorch's names and arguments) and as modules.

Cross-entropy and NLL are single fused graph nodes (``dparray.ops.cross_entropy``), so a
masked logit of ``-inf`` costs nothing and their backward is one closed form; the others are
built from differentiable ops (the logistic loss from the overflow-free ``softplus``).
``reduction`` is ``"mean"`` (default), ``"sum"`` or ``"none"``. Class weights are buffers of
the loss modules, as in PyTorch, so they appear in state dicts under PyTorch's names.
"""

from __future__ import annotations

from dparray import ops
from dparray._checks import check_int, check_number, check_tensor
from dparray.kernels import resolve
from dparray.nn.module import Module
from dparray.ops.cross_entropy import NLL, CrossEntropy, SoftCrossEntropy
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


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, *,
             ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices ``target`` under log-probabilities ``input``
    of shape ``(C,)``, ``(N, C)`` or ``(N, C, d1, ...)``; one graph node.

    ``weight`` (``(C,)``) weighs each class; targets equal to ``ignore_index`` count for
    nothing (nor in the mean's denominator, which is the sum of the kept rows' weights).
    """
    _check_reduction(reduction)
    rows, indices, weights, shape = _class_rows("nll_loss", input, target, weight, ignore_index)
    op = resolve(input.backend, "nll_loss", NLL)(ignore_index, reduction)
    return _unrows(op(rows, indices, weights), shape, reduction)


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, *,
                  ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross-entropy between logits ``input`` (``(C,)``, ``(N, C)`` or ``(N, C, d1, ...)``)
    and either class indices (an integer ``target`` without the class axis) or class
    probabilities (a floating ``target`` of ``input``'s shape); one graph node that fuses
    log-softmax with the pick of the target.

    ``weight`` (``(C,)``) weighs each class; ``ignore_index`` drops rows with that target;
    ``label_smoothing`` mixes the target with the uniform distribution -- all as in PyTorch.

    Examples:
        >>> import dparray as dp
        >>> logits = dp.tensor([[0.0, float("-inf"), 1.0]])
        >>> round(dp.nn.functional.cross_entropy(logits, dp.tensor([0])).item(), 4)
        1.3133
    """
    where = "cross_entropy"
    _check_reduction(reduction)
    smoothing = check_number(label_smoothing, "label_smoothing", where, minimum=0.0,
                             maximum=1.0)
    check_tensor(input, "input", where)
    check_tensor(target, "target", where)
    if target.dtype.is_floating:
        if target.shape != input.shape:
            raise ValueError(f"{where}: probability targets need the input's shape "
                             f"{input.shape}, got {target.shape}")
        rows, shape = _rows(where, input)
        targets, _ = _rows(where, target)
        weights = _class_weight(where, weight, input)
        soft = resolve(input.backend, "soft_cross_entropy", SoftCrossEntropy)(reduction,
                                                                             smoothing)
        return _unrows(soft(rows, targets, weights), shape, reduction)
    rows, indices, weights, shape = _class_rows(where, input, target, weight, ignore_index)
    op = resolve(input.backend, "cross_entropy", CrossEntropy)(ignore_index, reduction,
                                                               smoothing)
    return _unrows(op(rows, indices, weights), shape, reduction)


def _rows(where: str, scores: Tensor) -> tuple[Tensor, tuple[int, ...]]:
    """``scores`` as ``(M, C)`` rows, class axis last, and the shape of one loss per row."""
    if scores.ndim < 1:
        raise ValueError(f"{where}: input needs a class axis, got a 0-d tensor")
    if scores.ndim == 1:
        return scores.reshape(1, -1), ()
    shape = (scores.shape[0], *scores.shape[2:])
    if scores.ndim > 2:
        scores = scores.permute(0, *range(2, scores.ndim), 1)
    return scores.reshape(-1, scores.shape[-1]), shape


def _unrows(loss: Tensor, shape: tuple[int, ...], reduction: str) -> Tensor:
    return loss.reshape(shape) if reduction == "none" else loss


def _class_weight(where: str, weight: Tensor | None, scores: Tensor) -> Tensor | None:
    if weight is None:
        return None
    check_tensor(weight, "weight", where)
    classes = scores.shape[1] if scores.ndim > 1 else scores.shape[0]
    if weight.shape != (classes,) or not weight.dtype.is_floating:
        raise ValueError(f"{where}: weight must be a floating tensor of shape ({classes},), got "
                         f"{weight.dtype.name} of shape {weight.shape}")
    return weight.detach()  # class weights are constants, as in PyTorch


def _class_rows(where: str, scores: Tensor, target: Tensor, weight: Tensor | None,
                ignore_index: int) -> tuple[Tensor, Tensor, Tensor | None, tuple[int, ...]]:
    """Scores as ``(M, C)`` rows (class axis last), the ``M`` targets, the class weights, and
    the shape of one loss per row; every target checked to name a class or ``ignore_index``."""
    check_tensor(scores, "input", where)
    check_tensor(target, "target", where)
    check_int(ignore_index, "ignore_index", where)
    if target.dtype.is_floating or target.dtype.kind == "bool":
        raise TypeError(f"{where}: class-index targets must be integers, got {target.dtype.name}")
    expected = (scores.shape[0], *scores.shape[2:]) if scores.ndim > 1 else ()
    if target.shape != expected:
        raise ValueError(
            f"{where}: input of shape {scores.shape} needs targets of shape {expected}, got "
            f"{target.shape}"
        )
    weights = _class_weight(where, weight, scores)
    rows, shape = _rows(where, scores)
    classes = rows.shape[1]
    valid = ops.where(target == ignore_index, 0, target)
    if valid.elem_count():  # one look at the values on the host: a clear error beats garbage
        low, high = int(valid.min().item()), int(valid.max().item())
        if low < 0 or high >= classes:
            bad = low if low < 0 else high
            raise ValueError(f"{where}: class index {bad} is out of range for {classes} classes")
    return rows, target.reshape(-1), weights, shape


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
    weight: Tensor | None  # class weights of the losses that have them (buffers)
    pos_weight: Tensor | None

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

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100,
                 reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)  # a buffer, as in PyTorch's state dicts
        self.ignore_index = check_int(ignore_index, "ignore_index", "NLLLoss")

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return nll_loss(input, target, self.weight, ignore_index=self.ignore_index,
                        reduction=self.reduction)


class CrossEntropyLoss(_Loss):
    """Module form of ``cross_entropy``."""

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(reduction)
        where = "CrossEntropyLoss"
        self.register_buffer("weight", weight)  # a buffer, as in PyTorch's state dicts
        self.ignore_index = check_int(ignore_index, "ignore_index", where)
        self.label_smoothing = check_number(label_smoothing, "label_smoothing", where,
                                            minimum=0.0, maximum=1.0)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                             reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCEWithLogitsLoss(_Loss):
    """Module form of ``binary_cross_entropy_with_logits``."""

    def __init__(self, reduction: str = "mean", pos_weight: Tensor | None = None) -> None:
        super().__init__(reduction)
        self.register_buffer("pos_weight", pos_weight)  # a buffer, as in PyTorch

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return binary_cross_entropy_with_logits(input, target, self.reduction, self.pos_weight)
