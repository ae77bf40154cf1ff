"""Losses, as functions (PyTorch's names and arguments) and as modules.

Cross-entropy and NLL are single fused graph nodes (``dparray.ops.cross_entropy``), so a
masked logit of ``-inf`` costs nothing and their backward is one closed form; the others are
built from differentiable ops (the logistic loss from the overflow-free ``softplus``), except
binary cross-entropy on probabilities and the KL divergence, one node each so that their
gradients at 0 and 1 are PyTorch's.
``reduction`` is ``"mean"`` (default), ``"sum"`` or ``"none"``. Class weights are buffers of
the loss modules, as in PyTorch, so they appear in state dicts under PyTorch's names.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from dparray import ops
from dparray._checks import check_bool, check_choice, check_int, check_number, check_tensor
from dparray.autograd import Function
from dparray.kernels import resolve
from dparray.nn.module import Module
from dparray.ops._autocast import autocast_op
from dparray.ops._util import broadcast_shapes
from dparray.ops.binary_cross_entropy import BinaryCrossEntropy, BinaryCrossEntropyWithLogits
from dparray.ops.cross_entropy import NLL, CrossEntropy, SoftCrossEntropy
from dparray.ops.huber import Huber
from dparray.ops.squared_error import SquaredError
from dparray.tensor import Tensor

_REDUCTIONS = ("mean", "sum", "none")


@autocast_op("mse_loss")
def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean squared error; ``input`` and ``target`` must have one shape. One graph node for
    floating inputs."""
    _check_reduction(reduction)
    _check_same_shape("mse_loss", input, target)
    if input.dtype.is_floating and target.dtype.is_floating:
        return resolve(input.backend, SquaredError)(reduction)(input, target)
    difference = input - target  # integers: as the arithmetic promotes them
    return _reduce(difference * difference, reduction)


@autocast_op("l1_loss")
def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean absolute error; ``input`` and ``target`` must have one shape."""
    _check_reduction(reduction)
    _check_same_shape("l1_loss", input, target)
    return _reduce((input - target).abs(), reduction)


@autocast_op("nll_loss")
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, *,
             ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices ``target`` under log-probabilities ``input``
    of shape ``(C,)``, ``(N, C)`` or ``(N, C, d1, ...)``; one graph node.

    ``weight`` (``(C,)``) weighs each class; targets equal to ``ignore_index`` count for
    nothing (nor in the mean's denominator, which is the sum of the kept rows' weights).
    """
    _check_reduction(reduction)
    rows, indices, weights, shape = _class_rows("nll_loss", input, target, weight, ignore_index)
    op = resolve(input.backend, NLL)(ignore_index, reduction)
    return _unrows(op(rows, indices, weights), shape, reduction)


@autocast_op("cross_entropy")
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
        soft = resolve(input.backend, SoftCrossEntropy)(reduction,
                                                                             smoothing)
        return _unrows(soft(rows, targets, weights), shape, reduction)
    rows, indices, weights, shape = _class_rows(where, input, target, weight, ignore_index)
    op = resolve(input.backend, CrossEntropy)(ignore_index, reduction,
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


@autocast_op("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, *,
                                     reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Logistic loss on logits: ``-w * (pw * t * log sigmoid(x) + (1 - t) * log(1 -
    sigmoid(x)))``, computed with ``softplus`` so that no logit overflows.

    ``weight`` (``w``) weighs each element and ``pos_weight`` (``pw``) the positive term, for
    example one weight per class as a ``(C,)`` tensor beside ``(N, C)`` logits; both broadcast
    to the input's shape and are constants (no gradient), as in PyTorch.

    Examples:
        >>> import dparray as dp
        >>> loss = dp.nn.functional.binary_cross_entropy_with_logits
        >>> round(loss(dp.tensor([0.0]), dp.tensor([1.0]), pos_weight=dp.tensor([2.0])).item(), 4)
        1.3863
    """
    where = "binary_cross_entropy_with_logits"
    check_choice(reduction, "reduction", where, _REDUCTIONS)
    _check_pair(where, input, target)
    weight = _elementwise_weight(where, "weight", weight, input)
    pos_weight = _elementwise_weight(where, "pos_weight", pos_weight, input)
    if pos_weight is None:
        loss = resolve(input.backend, BinaryCrossEntropyWithLogits)()(input, target)
    else:
        loss = (1.0 - target) * ops.softplus(input) + pos_weight * target * ops.softplus(-input)
    return _reduce(loss if weight is None else loss * weight, reduction)


@autocast_op("binary_cross_entropy")
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, *,
                         reduction: str = "mean") -> Tensor:
    """Binary cross-entropy between probabilities ``input`` (each in ``[0, 1]``) and
    ``target`` of the same shape: ``-w * (t * log(x) + (1 - t) * log(1 - x))``; one graph
    node.

    As in PyTorch, each logarithm is clamped to at least -100, so a probability of exactly 0
    or 1 gives a finite loss and gradient; an input outside ``[0, 1]`` (or NaN) is a
    ValueError. ``weight`` (``w``) broadcasts to the input's shape and is a constant. Prefer
    ``binary_cross_entropy_with_logits`` on logits: it is exact where ``sigmoid`` rounds to
    0 or 1.

    Examples:
        >>> import dparray as dp
        >>> loss = dp.nn.functional.binary_cross_entropy
        >>> round(loss(dp.tensor([0.8, 0.1]), dp.tensor([1.0, 0.0])).item(), 4)
        0.1643
    """
    where = "binary_cross_entropy"
    check_choice(reduction, "reduction", where, _REDUCTIONS)
    _check_pair(where, input, target)
    weight = _elementwise_weight(where, "weight", weight, input)
    loss = resolve(input.backend, BinaryCrossEntropy)()(input, target)
    return _reduce(loss if weight is None else loss * weight, reduction)


@autocast_op("huber_loss")
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",
               delta: float = 1.0) -> Tensor:
    """``0.5 * d ** 2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``, for the
    difference ``d = input - target``: quadratic near 0, linear (robust to outliers) beyond.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.functional.huber_loss(dp.tensor([0.5, 3.0]), dp.zeros(2), "none").tolist()
        [0.125, 2.5]
    """
    where = "huber_loss"
    check_choice(reduction, "reduction", where, _REDUCTIONS)
    delta = check_number(delta, "delta", where, above=0.0)
    _check_pair(where, input, target)
    return _reduce(Huber(delta, smooth=False)(input, target), reduction)


@autocast_op("smooth_l1_loss")
def smooth_l1_loss(input: Tensor, target: Tensor, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """``0.5 * d ** 2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta``: the Huber loss
    divided by ``beta``; ``beta=0`` is the L1 loss, as in PyTorch."""
    where = "smooth_l1_loss"
    check_choice(reduction, "reduction", where, _REDUCTIONS)
    beta = check_number(beta, "beta", where, minimum=0.0)
    _check_pair(where, input, target)
    if beta == 0.0:
        return _reduce((input - target).abs(), reduction)
    return _reduce(Huber(beta, smooth=True)(input, target), reduction)


_KL_REDUCTIONS = ("mean", "batchmean", "sum", "none")


@autocast_op("kl_div")
def kl_div(input: Tensor, target: Tensor, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """The Kullback-Leibler divergence of ``input`` (log-probabilities) from ``target``
    (probabilities, or log-probabilities with ``log_target=True``), pointwise
    ``t * (log t - input)`` (0 where ``t == 0``); one graph node before the reduction.

    ``reduction="batchmean"`` divides the sum by the batch size (axis 0): the divergence per
    sample. ``"mean"``, the default as in PyTorch, divides by the number of elements and warns
    that this is not the divergence, as PyTorch does.

    Examples:
        >>> import dparray as dp
        >>> p = dp.tensor([[0.5, 0.5]], dtype="float64")
        >>> q = dp.tensor([[0.25, 0.75]], dtype="float64")
        >>> round(dp.nn.functional.kl_div(q.log(), p, reduction="batchmean").item(), 4)
        0.1438
    """
    where = "kl_div"
    check_choice(reduction, "reduction", where, _KL_REDUCTIONS)
    check_bool(log_target, "log_target", where)
    _check_pair(where, input, target)
    loss = KLDivergence(log_target)(input, target)
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.ndim > 0 else total
    if reduction == "mean":
        warnings.warn("kl_div: reduction='mean' divides the sum by the number of elements, which "
                      "is not the KL divergence; reduction='batchmean' (the sum divided by the "
                      "batch size) is", UserWarning, stacklevel=2)
    return _reduce(loss, reduction)


@autocast_op("cosine_embedding_loss")
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: str = "mean") -> Tensor:
    """For each pair of rows (``(N, D)`` inputs, or one pair of ``(D,)`` vectors) and its
    ``target`` of 1 or -1: ``1 - cos(x1, x2)`` where the target is 1, ``max(0, cos(x1, x2) -
    margin)`` where it is -1 (and 0 for any other target), as in PyTorch.

    The cosine is ``x1 . x2 / sqrt((|x1|^2 + eps) * (|x2|^2 + eps))`` with PyTorch's
    ``eps = 1e-12``, so a zero vector has cosine 0 and a finite gradient.

    Examples:
        >>> import dparray as dp
        >>> a, b = dp.tensor([[1.0, 0.0], [1.0, 1.0]]), dp.tensor([[0.0, 1.0], [1.0, 1.0]])
        >>> loss = dp.nn.functional.cosine_embedding_loss
        >>> [round(v, 4) for v in loss(a, b, dp.tensor([1, -1]), reduction="none").tolist()]
        [1.0, 1.0]
    """
    where = "cosine_embedding_loss"
    margin = check_number(margin, "margin", where)
    check_choice(reduction, "reduction", where, _REDUCTIONS)
    check_tensor(input1, "input1", where)
    check_tensor(input2, "input2", where)
    check_tensor(target, "target", where)
    if input1.shape != input2.shape or input1.ndim not in (1, 2):
        raise ValueError(f"{where}: input1 and input2 must have one shape, (N, D) or (D,), got "
                         f"{input1.shape} and {input2.shape}")
    expected = input1.shape[:1] if input1.ndim == 2 else ()
    if target.shape != expected:
        raise ValueError(f"{where}: inputs of shape {input1.shape} need a target of shape "
                         f"{expected}, got {target.shape}")
    dot = (input1 * input2).sum(axis=-1)
    squares = ((input1 * input1).sum(axis=-1) + _EPSILON) * \
        ((input2 * input2).sum(axis=-1) + _EPSILON)
    cosine = dot / squares.sqrt()
    loss = ops.where(target == 1, 1.0 - cosine, 0.0) + \
        ops.where(target == -1, ops.clip(cosine - margin, min=0.0), 0.0)
    return _reduce(loss, reduction)


@autocast_op("margin_ranking_loss")
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``: a target of 1 asks ``input1`` to
    rank above ``input2`` by ``margin``, -1 the reverse. The three tensors have one number of
    dimensions and broadcast together, as in PyTorch.

    Examples:
        >>> import dparray as dp
        >>> loss = dp.nn.functional.margin_ranking_loss
        >>> loss(dp.tensor([1.0, 0.25]), dp.tensor([0.5, 0.5]), dp.tensor([1.0, 1.0]),
        ...      margin=0.25, reduction="none").tolist()
        [0.0, 0.5]
    """
    where = "margin_ranking_loss"
    margin = check_number(margin, "margin", where)
    check_choice(reduction, "reduction", where, _REDUCTIONS)
    check_tensor(input1, "input1", where)
    check_tensor(input2, "input2", where)
    check_tensor(target, "target", where)
    if not input1.ndim == input2.ndim == target.ndim:
        raise ValueError(f"{where}: input1, input2 and target must have one number of "
                         f"dimensions, got shapes {input1.shape}, {input2.shape} and "
                         f"{target.shape}")
    broadcast_shapes(where, input1.shape, input2.shape, target.shape)
    if not target.dtype.is_floating:  # targets of 1 and -1 written as integers
        target = target.astype(input1.dtype)
    loss = ops.clip(-target * (input1 - input2) + margin, min=0.0)
    return _reduce(loss, reduction)


def _check_pair(where: str, input: Tensor, target: Tensor) -> None:
    """``input`` and ``target`` are tensors of one shape, ``target`` floating as ``input``."""
    check_tensor(input, "input", where)
    check_tensor(target, "target", where)
    _check_same_shape(where, input, target)
    if not input.dtype.is_floating or not target.dtype.is_floating:
        raise TypeError(f"{where}: input and target must be floating, got {input.dtype.name} "
                        f"and {target.dtype.name}")


def _elementwise_weight(where: str, name: str, weight: Tensor | None,
                        input: Tensor) -> Tensor | None:
    """A floating ``weight`` that broadcasts to ``input``'s shape, as a constant."""
    if weight is None:
        return None
    check_tensor(weight, name, where)
    if not weight.dtype.is_floating:
        raise TypeError(f"{where}: {name} must be floating, got {weight.dtype.name}")
    try:
        fits = broadcast_shapes(where, weight.shape, input.shape) == input.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{where}: {name} of shape {weight.shape} does not broadcast to the "
                         f"input's shape {input.shape}")
    return weight.detach()  # weights are constants, as in PyTorch


_EPSILON = 1e-12  # PyTorch's guard in cosine_embedding_loss
class KLDivergence(Function):
    """Pointwise ``t * (log t - input)`` (0 where ``t == 0``), or ``exp(t) * (t - input)`` for
    log-probability targets; the target's gradient is PyTorch's (NaN where ``t == 0``)."""

    def __init__(self, log_target: bool) -> None:
        self.log_target = log_target

    def forward(self, input: Any, target: Any) -> Any:
        xp = self.xp
        if self.log_target:
            probability = xp.exp(target)
            self.save(input, target, probability)
            return probability * (target - input)
        self.save(input, target)
        return target * (_log_or_zero(xp, target) - input)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        xp = self.xp
        grad_input = grad_target = None
        if self.log_target:
            input, target, probability = self.saved
            if self.needs_grad(0):
                grad_input = -probability * grad
            if self.needs_grad(1):
                grad_target = grad * probability * (target - input + 1.0)
            return grad_input, grad_target
        input, target = self.saved
        if self.needs_grad(0):
            grad_input = -target * grad
        if self.needs_grad(1):
            slope = xp.where(target == 0.0, math.nan, _log_or_zero(xp, target) + 1.0 - input)
            grad_target = grad * slope
        return grad_input, grad_target


def _log_or_zero(xp: Any, t: Any) -> Any:
    """``log(t)``, with 0 in place of ``log(0)`` (where it is multiplied by ``t == 0``)."""
    return xp.log(xp.where(t == 0.0, 1.0, t))


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
    """Module form of ``binary_cross_entropy_with_logits``; ``weight`` and ``pos_weight`` are
    buffers, as in PyTorch."""

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(reduction)
        self.register_buffer("weight", _optional_tensor(weight, "weight", "BCEWithLogitsLoss"))
        self.register_buffer("pos_weight",
                             _optional_tensor(pos_weight, "pos_weight", "BCEWithLogitsLoss"))

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return binary_cross_entropy_with_logits(input, target, self.weight,
                                                reduction=self.reduction,
                                                pos_weight=self.pos_weight)


class BCELoss(_Loss):
    """Module form of ``binary_cross_entropy`` (on probabilities); ``weight`` is a buffer."""

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", _optional_tensor(weight, "weight", "BCELoss"))

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


def _optional_tensor(value: Tensor | None, name: str, where: str) -> Tensor | None:
    return None if value is None else check_tensor(value, name, where)


class HuberLoss(_Loss):
    """Module form of ``huber_loss``."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        self.delta = check_number(delta, "delta", "HuberLoss", above=0.0)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return huber_loss(input, target, self.reduction, self.delta)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, delta={self.delta}"


class SmoothL1Loss(_Loss):
    """Module form of ``smooth_l1_loss``."""

    def __init__(self, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction)
        self.beta = check_number(beta, "beta", "SmoothL1Loss", minimum=0.0)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return smooth_l1_loss(input, target, self.reduction, self.beta)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, beta={self.beta}"


class KLDivLoss(Module):
    """Module form of ``kl_div`` (``reduction`` may also be ``"batchmean"``)."""

    def __init__(self, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__()
        where = "KLDivLoss"
        self.reduction = check_choice(reduction, "reduction", where, _KL_REDUCTIONS)
        self.log_target = check_bool(log_target, "log_target", where)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return kl_div(input, target, self.reduction, self.log_target)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}, log_target={self.log_target}"


class CosineEmbeddingLoss(_Loss):
    """Module form of ``cosine_embedding_loss``."""

    def __init__(self, margin: float = 0.0, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.margin = check_number(margin, "margin", "CosineEmbeddingLoss")

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return cosine_embedding_loss(input1, input2, target, self.margin, self.reduction)

    def extra_repr(self) -> str:
        return f"margin={self.margin}, {super().extra_repr()}"


class MarginRankingLoss(_Loss):
    """Module form of ``margin_ranking_loss``."""

    def __init__(self, margin: float = 0.0, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.margin = check_number(margin, "margin", "MarginRankingLoss")

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return margin_ranking_loss(input1, input2, target, self.margin, self.reduction)

    def extra_repr(self) -> str:
        return f"margin={self.margin}, {super().extra_repr()}"
