"""Scaled dot-product attention as one graph node.

``softmax(q @ k^T * scale + mask) @ v`` over the last two axes of ``q`` ``(..., L, E)``, ``k``
``(..., S, E)`` and ``v`` ``(..., S, Ev)`` (leading axes broadcast). The mask is a bool array
(True: the position takes part, PyTorch's meaning) or a float array added to the scores;
``is_causal`` lets query ``i`` see keys ``0 .. i`` (the top-left triangle, as PyTorch).

A row whose mask excludes every key (every score ``-inf``) has no softmax; it gives zeros, and
passes no gradient, as PyTorch's ``scaled_dot_product_attention`` does since 2.5 (its "safe
softmax"): padding a whole sequence gives zeros, not NaN. NaN and ``+inf`` scores propagate as
in the plain composition.

``ScaledDotProductAttention`` saves ``q``, ``k``, ``v``, the probabilities ``P`` and, with
dropout, the keep mask -- no other array of the scores' size -- and its backward is the closed
form, with ``D = keep / (1 - p)`` (1 without dropout)::

    dV = (P * D)^T dO;  dP = (dO V^T) * D;  dS = P * (dP - sum(dP * P));
    dQ = dS K * scale;  dK = dS^T Q * scale;  d(float mask) = dS

(the probabilities after dropout are ``P * D``; they are rebuilt in backward from ``P`` and
the keep mask, because ``dS`` needs ``P`` where dropout zeroed it too). ``AttentionWeights``
is the same node without the product with ``v``: the probabilities themselves, for
``MultiheadAttention(need_weights=True)``.
"""

from __future__ import annotations

import math
from typing import Any

from dparray import random as _random
from dparray._checks import check_bool, check_number, check_probability, check_tensor
from dparray.autograd import Function
from dparray.kernels import reference, resolve
from dparray.ops._autocast import autocast_op
from dparray.ops._util import broadcast_shapes
from dparray.ops.linalg import array_matmul, wide_matmul
from dparray.ops.shape import repeat_interleave
from dparray.tensor import Tensor

_WHERE = "scaled_dot_product_attention"


class _Attention(Function):
    """What both attention nodes share: the masked scores, the softmax (zeros for a row that
    sees no key), dropout, and the backward from the probabilities' gradient to ``q``, ``k``
    and a float mask."""

    def __init__(self, scale: float, dropout_p: float = 0.0, is_causal: bool = False) -> None:
        self.scale, self.dropout_p, self.is_causal = scale, dropout_p, is_causal
        self.float_mask = False

    def probabilities(self, query: Any, key: Any, mask: Any) -> tuple[Any, Any, Any]:
        """``(P, keep, P after dropout)``; ``keep`` is None without dropout."""
        xp = self.xp
        # wide: bfloat16/float16 scores stay float32, and so do the softmax and probabilities
        scores = wide_matmul(self.backend)(query * self.scale, xp.matrix_transpose(key))
        if self.is_causal and mask is None:
            probs = self.causal_softmax(scores)
        else:
            if self.is_causal:
                scores = _causal(xp, scores)
            if mask is not None:
                if mask.dtype == xp.bool:
                    scores = xp.where(mask, scores, -math.inf)
                else:
                    self.float_mask = True
                    scores = scores + xp.astype(mask, scores.dtype)
            probs = self.softmax(scores)
        if not self.dropout_p:
            return probs, None, probs
        keep = getattr(self, "replayed_keep", None)  # a replay under create_graph: no new draw
        if keep is None:
            keep = _random.generator(self.backend).bernoulli(tuple(probs.shape),
                                                             1.0 - self.dropout_p)
        return probs, keep, self._dropped(probs, keep)

    def prepare_replay(self, original: Function) -> None:
        """Replay ``original``'s forward with its dropout mask (its last saved array)."""
        if self.dropout_p:
            self.replayed_keep = original.saved[-1]

    def softmax(self, scores: Any) -> Any:
        """Softmax over the last axis, zeros for a row that sees no key (every score
        ``-inf``); a backend's kernel may replace this step alone."""
        return _safe_softmax(self.xp, scores)

    def causal_softmax(self, scores: Any) -> Any:
        """The softmax of the scores with query ``i`` seeing keys ``0 .. i`` only (zeros
        beyond); a backend's kernel may apply the mask inside its softmax."""
        return self.softmax(_causal(self.xp, scores))

    def softmax_backward(self, grad_probs: Any, probs: Any) -> Any:
        """The scores' gradient from the probabilities' (a row of zeros passes none)."""
        xp = self.xp
        return probs * (grad_probs - xp.sum(grad_probs * probs, axis=-1, keepdims=True))

    def _dropped(self, probs: Any, keep: Any) -> Any:
        if keep is None:
            return probs
        return self.xp.where(keep, probs * (1.0 / (1.0 - self.dropout_p)), 0.0)

    def score_gradients(self, grad_dropped: Any, query: Any, key: Any, probs: Any,
                        keep: Any) -> tuple[Any, Any, Any]:
        """The gradients of ``q``, ``k`` and a float mask from that of ``P`` after dropout."""
        xp = self.xp
        wants_mask = self.float_mask and self.needs_grad(len(self.parents or ()) - 1)
        if not (self.needs_grad(0) or self.needs_grad(1) or wants_mask):
            return None, None, None
        grad_probs = self._dropped(grad_dropped, keep)  # dropout's backward is the same map
        grad_scores = self.softmax_backward(grad_probs, probs)
        wide_scores = grad_scores
        if grad_scores.dtype != query.dtype:  # float32 scores of low-precision inputs
            grad_scores = xp.astype(grad_scores, query.dtype)
        grad_query = grad_key = None
        product = array_matmul(self.backend)
        if self.needs_grad(0):
            grad_query = product(grad_scores, key) * self.scale
        if self.needs_grad(1):
            grad_key = product(xp.matrix_transpose(grad_scores), query * self.scale)
        return grad_query, grad_key, wide_scores if wants_mask else None


@reference("scaled_dot_product_attention")
class ScaledDotProductAttention(_Attention):
    """``softmax(q k^T * scale + mask) v`` (with dropout on the probabilities) for ``q``,
    ``k``, ``v`` and an optional bool or float ``mask``."""

    def forward(self, query: Any, key: Any, value: Any, mask: Any = None) -> Any:
        probs, keep, dropped = self.probabilities(query, key, mask)
        self.save(query, key, value, probs, keep)
        return array_matmul(self.backend)(_like(self.xp, dropped, value), value)

    def backward(self, grad: Any) -> tuple[Any, Any, Any, Any]:
        xp = self.xp
        query, key, value, probs, keep = self.saved
        grad_value = None
        product = array_matmul(self.backend)
        if self.needs_grad(2):
            dropped = _like(xp, self._dropped(probs, keep), grad)
            grad_value = product(xp.matrix_transpose(dropped), grad)
        grad_dropped = wide_matmul(self.backend)(grad, xp.matrix_transpose(value))
        grad_query, grad_key, grad_mask = self.score_gradients(grad_dropped, query, key, probs,
                                                               keep)
        return grad_query, grad_key, grad_value, grad_mask


@reference("attention_weights")
class AttentionWeights(_Attention):
    """``softmax(q k^T * scale + mask)`` (with dropout) for ``q``, ``k`` and an optional bool
    or float ``mask``: the attention probabilities that ``ScaledDotProductAttention``
    multiplies with ``v``."""

    def forward(self, query: Any, key: Any, mask: Any = None) -> Any:
        probs, keep, dropped = self.probabilities(query, key, mask)
        self.save(query, key, probs, keep)
        return _like(self.xp, dropped, query)

    def backward(self, grad: Any) -> tuple[Any, Any, Any]:
        query, key, probs, keep = self.saved
        return self.score_gradients(_like(self.xp, grad, probs), query, key, probs, keep)


def _like(xp: Any, probs: Any, other: Any) -> Any:
    """``probs`` in ``other``'s dtype: float32 probabilities of low-precision inputs are
    rounded for their product with ``v``."""
    return probs if probs.dtype == other.dtype else xp.astype(probs, other.dtype)


def _causal(xp: Any, scores: Any) -> Any:
    """``scores`` with ``-inf`` where key ``j`` comes after query ``i`` (the top-left
    triangle kept, as PyTorch's ``is_causal``)."""
    rows, cols = scores.shape[-2], scores.shape[-1]
    seen = xp.reshape(xp.arange(cols), (1, cols)) <= xp.reshape(xp.arange(rows), (rows, 1))
    return xp.where(seen, scores, -math.inf)


def _safe_softmax(xp: Any, scores: Any) -> Any:
    """Softmax over the last axis, zeros for a row whose scores are all ``-inf`` (or that has
    no scores at all)."""
    if scores.shape[-1] == 0:
        return scores
    peak = xp.max(scores, axis=-1, keepdims=True)
    empty = peak == -math.inf
    e = xp.exp(scores - xp.where(empty, 0.0, peak))  # an empty row: exp(-inf) = 0 everywhere
    total = xp.sum(e, axis=-1, keepdims=True)
    return e / xp.where(empty, 1.0, total)


@autocast_op("scaled_dot_product_attention")
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """Attention of ``query`` ``(..., L, E)`` over ``key`` ``(..., S, E)`` and ``value``
    ``(..., S, Ev)``: ``softmax(query @ key^T * scale + mask) @ value``, as PyTorch's
    ``F.scaled_dot_product_attention``; one graph node.

    ``attn_mask`` broadcasts to ``(..., L, S)``: bool (True: the key takes part) or floating
    (added to the scores; it receives a gradient). ``is_causal`` lets query ``i`` see keys
    ``0 .. i`` (not together with ``attn_mask``). ``dropout_p`` zeroes probabilities with a
    mask from the current random stream whenever it is above 0 (pass 0 in evaluation).
    ``scale`` defaults to ``1 / sqrt(E)``. A query that sees no key gets zeros. With
    ``enable_gqa`` (grouped-query attention), ``key`` and ``value`` may have fewer heads (axis
    -3) than ``query``, a divisor of its count: each serves that many query heads in turn, as
    in PyTorch.

    Examples:
        >>> import dparray as dp
        >>> q, k, v = dp.randn(2, 3, 4), dp.randn(2, 5, 4), dp.randn(2, 5, 6)
        >>> dp.nn.functional.scaled_dot_product_attention(q, k, v).shape
        (2, 3, 6)
        >>> mask = dp.tensor([[True, False], [False, False]])  # the second query sees nothing
        >>> out = dp.nn.functional.scaled_dot_product_attention(
        ...     dp.ones(2, 1), dp.ones(2, 1), dp.tensor([[1.0], [2.0]]), attn_mask=mask)
        >>> out.tolist()
        [[1.0], [0.0]]
    """
    if check_bool(enable_gqa, "enable_gqa", _WHERE):
        key, value = _grouped(query, key, "key"), _grouped(query, value, "value")
    shape = _check_inputs(query, key, value)
    dropout_p = check_probability(dropout_p, "dropout_p", _WHERE)
    check_bool(is_causal, "is_causal", _WHERE)
    if attn_mask is not None:
        _check_mask(attn_mask, shape, "attn_mask")
        if is_causal:
            raise ValueError(f"{_WHERE}: attn_mask and is_causal cannot both be given (build "
                             "the causal mask into attn_mask)")
    return attend(query, key, value, attn_mask, dropout_p, is_causal, _scale(query, scale))


@autocast_op("scaled_dot_product_attention")
def attend(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None,
           dropout_p: float, is_causal: bool, scale: float) -> Tensor:
    """The ``ScaledDotProductAttention`` node (or the backend's kernel for it), for callers
    that have checked the arguments as ``scaled_dot_product_attention`` does."""
    op = resolve(query.backend, ScaledDotProductAttention)
    return op(scale, dropout_p, is_causal)(query, key, value, attn_mask)


@autocast_op("attention_weights")
def attention_weights(query: Tensor, key: Tensor, attn_mask: Tensor | None, dropout_p: float,
                      is_causal: bool, scale: float) -> Tensor:
    """The attention probabilities ``softmax(query @ key^T * scale + mask)`` (after dropout)
    as one node, for callers that need them (``MultiheadAttention(need_weights=True)``); the
    caller checks the arguments as ``scaled_dot_product_attention`` does."""
    op = resolve(query.backend, AttentionWeights)
    return op(scale, dropout_p, is_causal)(query, key, attn_mask)


def _grouped(query: Any, other: Any, name: str) -> Any:
    """``other`` (key or value) with each of its heads repeated for the query heads it serves
    (PyTorch's ``repeat_interleave`` along axis -3)."""
    check_tensor(query, "query", _WHERE)
    check_tensor(other, name, _WHERE)
    if query.ndim < 3 or other.ndim < 3:
        raise ValueError(f"{_WHERE}: enable_gqa needs heads (..., heads, length, features), "
                         f"got query {query.shape} and {name} {other.shape}")
    heads, groups = query.shape[-3], other.shape[-3]
    if heads % groups if groups else heads:  # zero heads serve zero query heads
        raise ValueError(f"{_WHERE}: enable_gqa needs the query's {heads} heads to be a "
                         f"multiple of the {name}'s {groups}")
    return other if heads == groups else repeat_interleave(other, heads // groups, axis=-3)


def _check_inputs(query: Any, key: Any, value: Any) -> tuple[int, ...]:
    """The scores' shape ``(..., L, S)``, once ``query``, ``key`` and ``value`` fit."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        check_tensor(t, name, _WHERE)
        if not t.dtype.is_floating:
            raise TypeError(f"{_WHERE}: {name} must be a floating-point tensor, got "
                            f"{t.dtype.name}")
        if t.ndim < 2:
            raise ValueError(f"{_WHERE}: {name} must have at least 2 axes (..., length, "
                             f"features), got shape {t.shape}")
    if not query.dtype == key.dtype == value.dtype:
        raise TypeError(f"{_WHERE}: query, key and value must have one dtype, got "
                        f"{query.dtype.name}, {key.dtype.name} and {value.dtype.name}")
    shapes = f"query {query.shape}, key {key.shape} and value {value.shape}"
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise ValueError(f"{_WHERE}: {shapes} do not fit (..., L, E), (..., S, E), "
                         "(..., S, Ev)")
    if query.shape[-1] == 0:
        raise ValueError(f"{_WHERE}: query and key need at least one feature, got {shapes}")
    try:
        batch = broadcast_shapes(_WHERE, query.shape[:-2], key.shape[:-2], value.shape[:-2])
    except ValueError:
        raise ValueError(f"{_WHERE}: the leading axes of {shapes} cannot be broadcast "
                         "together") from None
    return (*batch, query.shape[-2], key.shape[-2])


def _check_mask(mask: Any, scores: tuple[int, ...], name: str) -> None:
    check_tensor(mask, name, _WHERE)
    if mask.dtype.kind != "bool" and not mask.dtype.is_floating:
        raise TypeError(f"{_WHERE}: {name} must be a bool or floating-point tensor, got "
                        f"{mask.dtype.name}")
    try:
        fits = broadcast_shapes(_WHERE, mask.shape, scores) == scores
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{_WHERE}: {name} of shape {mask.shape} does not broadcast to the "
                         f"scores' shape {scores} (..., L, S)")


def _scale(query: Tensor, scale: float | None) -> float:
    if scale is None:
        return 1.0 / math.sqrt(query.shape[-1])
    return check_number(scale, "scale", _WHERE)
