"""Cross-entropy and negative log-likelihood as single graph nodes.

``CrossEntropy`` fuses log-softmax and the pick of the target class: forward makes one
log-softmax of the logits and keeps it; backward is the closed form ``softmax - target``,
scaled by class weights and the upstream gradient. ``NLL`` picks from log-probabilities the
caller already has. Both pick with ``take_along_axis``, never a product with a one-hot mask, so
a masked logit of ``-inf`` in another class costs nothing (``-inf * 0`` would be NaN).

Both work on rows: the caller (``dparray.nn.loss``) moves the class axis last and flattens the
rest, so the ops see ``(M, C)`` scores and ``M`` targets; ``reduction="none"`` returns ``M``
losses for the caller to reshape. With class ``weight``, PyTorch's rules hold: row ``i``
counts ``weight[target[i]]``, and the mean divides by the sum of those weights (over the rows
not ignored); label smoothing spreads ``label_smoothing`` of the target's mass over all classes,
each weighted by its class weight.
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function
from dparray.kernels import reference


class _RowLoss(Function):
    """Shared set-up of the two losses: targets, ignored rows, class weights, reduction."""

    def __init__(self, ignore_index: int, reduction: str, label_smoothing: float = 0.0) -> None:
        self.ignore_index, self.reduction = ignore_index, reduction
        self.label_smoothing = label_smoothing

    def pick_setup(self, scores: Any, target: Any, weight: Any) -> tuple[Any, Any, Any]:
        """Targets with ignored rows set to class 0, 1.0 for each kept row (0.0 if ignored),
        and each row's weight (0 if ignored)."""
        xp = self.xp
        ignored = target == self.ignore_index
        safe = xp.where(ignored, xp.zeros_like(target), target)
        kept = xp.where(ignored, 0.0, xp.ones(target.shape, dtype=scores.dtype))
        row_weight = kept if weight is None else kept * xp.take(weight, safe, axis=0)
        return safe, kept, row_weight

    def reduce(self, losses: Any, row_weight: Any) -> Any:
        xp = self.xp
        if self.reduction == "none":
            self.scale = None
            return losses
        total = xp.sum(losses)
        if self.reduction == "sum":
            self.scale = 1.0
            return total
        denominator = xp.sum(row_weight)
        # every row ignored: the loss is NaN (0 / 0, without a warning) and its gradient 0, as
        # in PyTorch, so an optimizer step on such a batch changes nothing rather than making
        # every weight NaN; the scale is the gradient's, the forward puts the NaN in itself
        empty = denominator == 0.0
        self.scale = xp.where(empty, 0.0, 1.0 / xp.where(empty, 1.0, denominator))
        return xp.where(empty, xp.nan, total * self.scale)

    def row_share(self, grad: Any, kept: Any) -> Any:
        """Each row's share of the upstream gradient, 0 for ignored rows, as ``(M, 1)``."""
        share = grad if self.scale is None else grad * self.scale
        return self.xp.reshape(share * kept, (-1, 1))


@reference("cross_entropy")
class CrossEntropy(_RowLoss):
    """Cross-entropy of ``(M, C)`` logits with ``M`` integer class targets; ``weight`` is
    an optional ``(C,)`` array of class weights (no gradient)."""

    def forward(self, logits: Any, target: Any, weight: Any = None) -> Any:
        xp = self.xp
        safe, kept, row_weight = self.pick_setup(logits, target, weight)
        shifted = logits - xp.max(logits, axis=1, keepdims=True)
        log_probs = shifted - xp.log(xp.sum(xp.exp(shifted), axis=1, keepdims=True))
        picked = xp.take_along_axis(log_probs, xp.reshape(safe, (-1, 1)), axis=1)
        # where: an ignored row counts nothing, even if its class-0 logit is -inf
        losses = xp.where(kept == 0.0, 0.0, -xp.reshape(picked, (-1,)) * row_weight)
        smoothing = self.label_smoothing
        if smoothing:
            spread = log_probs if weight is None else log_probs * weight
            uniform = -xp.sum(spread, axis=1) * (smoothing / logits.shape[1])
            losses = losses * (1.0 - smoothing) + xp.where(kept == 0.0, 0.0, uniform)
        self.save(log_probs, safe, kept, row_weight, weight)
        return self.reduce(losses, row_weight)

    def backward(self, grad: Any) -> tuple[Any, None, None]:
        # d loss_i / d z_ij = p_ij * ((1-e) w_t + e/C * sum(w)) - ((1-e) w_t [j = t] + e/C w_j)
        xp = self.xp
        log_probs, safe, kept, row_weight, weight = self.saved
        classes = log_probs.shape[1]
        onehot = xp.reshape(safe, (-1, 1)) == xp.arange(classes, dtype=safe.dtype)
        w_t = xp.reshape(row_weight, (-1, 1))
        smoothing = self.label_smoothing
        if smoothing:
            total_w = float(classes) if weight is None else xp.sum(weight)
            class_w = 1.0 if weight is None else xp.reshape(weight, (1, classes))
            coefficient = (1.0 - smoothing) * w_t + (smoothing / classes) * total_w
            mass = xp.where(onehot, (1.0 - smoothing) * w_t, 0.0) + (smoothing / classes) * class_w
        else:
            coefficient, mass = w_t, xp.where(onehot, w_t, 0.0)
        grad_logits = (xp.exp(log_probs) * coefficient - mass) * self.row_share(grad, kept)
        return grad_logits, None, None


@reference("soft_cross_entropy")
class SoftCrossEntropy(Function):
    """Cross-entropy of ``(M, C)`` logits with ``(M, C)`` class probabilities as targets
    (differentiable in both), optional class ``weight``, ``label_smoothing`` and reduction
    (the mean divides by ``M``, as in PyTorch)."""

    def __init__(self, reduction: str, label_smoothing: float = 0.0) -> None:
        self.reduction, self.label_smoothing = reduction, label_smoothing

    def forward(self, logits: Any, target: Any, weight: Any = None) -> Any:
        xp = self.xp
        shifted = logits - xp.max(logits, axis=1, keepdims=True)
        log_probs = shifted - xp.log(xp.sum(xp.exp(shifted), axis=1, keepdims=True))
        smoothing, classes = self.label_smoothing, logits.shape[1]
        mass = target * (1.0 - smoothing) + smoothing / classes if smoothing else target
        if weight is not None:
            mass = mass * weight
        # where: a class with no mass adds nothing, even where its log-probability is -inf
        losses = -xp.sum(xp.where(mass == 0.0, 0.0, log_probs * mass), axis=1)
        self.save(log_probs, mass, weight)
        if self.reduction == "none":
            return losses
        total = xp.sum(losses)
        return total / logits.shape[0] if self.reduction == "mean" else total

    def backward(self, grad: Any) -> tuple[Any, Any, None]:
        xp = self.xp
        log_probs, mass, weight = self.saved
        share = grad / log_probs.shape[0] if self.reduction == "mean" else grad
        share = xp.reshape(share, (-1, 1)) if self.reduction == "none" else share
        grad_logits = grad_target = None
        if self.needs_grad(0):
            grad_logits = (xp.exp(log_probs) * xp.sum(mass, axis=1, keepdims=True) - mass) * share
        if self.needs_grad(1):
            scale = (1.0 - self.label_smoothing)
            weighted = log_probs if weight is None else log_probs * weight
            grad_target = -weighted * scale * share
        return grad_logits, grad_target, None


@reference("nll_loss")
class NLL(_RowLoss):
    """Negative log-likelihood of ``M`` integer targets under ``(M, C)`` log-probabilities;
    ``weight`` is an optional ``(C,)`` array of class weights (no gradient)."""

    def forward(self, log_probs: Any, target: Any, weight: Any = None) -> Any:
        xp = self.xp
        safe, kept, row_weight = self.pick_setup(log_probs, target, weight)
        picked = xp.reshape(xp.take_along_axis(log_probs, xp.reshape(safe, (-1, 1)), axis=1),
                            (-1,))
        # where: an ignored row picks nothing, even if its class-0 entry is -inf
        losses = xp.where(kept == 0.0, 0.0, -picked * row_weight)
        self.classes = log_probs.shape[1]
        self.save(safe, kept, row_weight)
        return self.reduce(losses, row_weight)

    def backward(self, grad: Any) -> tuple[Any, None, None]:
        xp = self.xp
        safe, kept, row_weight = self.saved
        onehot = xp.reshape(safe, (-1, 1)) == xp.arange(self.classes, dtype=safe.dtype)
        share = self.row_share(grad, kept) * xp.reshape(row_weight, (-1, 1))
        return xp.where(onehot, -share, 0.0), None, None
