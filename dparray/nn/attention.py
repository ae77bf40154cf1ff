"""Multi-head attention with PyTorch's arguments, parameters, masks and results.

``MultiheadAttention`` projects the query, key and value, splits the ``embed_dim`` features
into ``num_heads`` heads, attends in each head with one ``ScaledDotProductAttention`` node
(``dparray.ops.attention``), joins the heads and projects the result. Its parameters are
PyTorch's: ``in_proj_weight`` ``(3 * embed_dim, embed_dim)`` (or ``q_proj_weight``,
``k_proj_weight`` and ``v_proj_weight`` when ``kdim`` or ``vdim`` differ), ``in_proj_bias``,
``out_proj.weight`` and ``out_proj.bias``, so state dicts move between the two libraries.

Masks follow PyTorch's ``nn.MultiheadAttention``, whose bool masks mean the opposite of
``scaled_dot_product_attention``'s: a True in ``attn_mask`` or ``key_padding_mask`` keeps that
key *out*; a float mask is added to the scores.

Under ``DataParallel``, which splits the arguments and joins the outputs along axis 0,
construct the layer with ``batch_first=True`` (axis 0 of time-major input is the sequence) and
pass ``attn_mask`` as ``(L, S)``: a ``key_padding_mask`` ``(N, S)`` is split with the batch,
an ``(L, S)`` mask goes whole to every chunk (name it in ``DataParallel(replicate=...)`` when
``L`` happens to equal the batch size), and PyTorch's ``(N * num_heads, L, S)`` form cannot be
split by rows of the batch.
"""

from __future__ import annotations

import math
from typing import Any

from dparray import creation, ops
from dparray._checks import check_bool, check_int, check_probability, check_tensor
from dparray.nn import functional as F
from dparray.nn import init
from dparray.nn.chunks import check_batch_first
from dparray.nn.layers import Linear
from dparray.nn.module import Module
from dparray.ops.attention import attend, attention_weights
from dparray.tensor import Tensor

_WHERE = "MultiheadAttention"


class MultiheadAttention(Module):
    """Attention of a query sequence over a key/value sequence, in ``num_heads`` heads of
    ``embed_dim // num_heads`` features each, as PyTorch's ``nn.MultiheadAttention``.

    Called as ``mha(query, key, value, key_padding_mask=None, need_weights=True,
    attn_mask=None, average_attn_weights=True, is_causal=False)`` it returns
    ``(output, weights)``: ``query`` is ``(L, N, embed_dim)`` (``(N, L, embed_dim)`` with
    ``batch_first=True``) or unbatched ``(L, embed_dim)``, ``key`` and ``value`` have ``S``
    positions and ``kdim``/``vdim`` features; ``output`` has ``query``'s shape. ``weights``
    (None unless ``need_weights``) are the attention probabilities after dropout,
    ``(N, L, S)`` averaged over the heads or ``(N, num_heads, L, S)``, whatever
    ``batch_first`` says.

    ``key_padding_mask`` is ``(N, S)`` and ``attn_mask`` ``(L, S)`` or
    ``(N * num_heads, L, S)``: bool (True keeps the key out) or float (added to the scores).
    ``is_causal=True`` without ``attn_mask`` lets query ``i`` see keys ``0 .. i``; with one,
    it is PyTorch's hint that ``attn_mask`` is that mask, and ``attn_mask`` is used. A query
    that sees no key at all gets zeros. ``dropout`` applies to the probabilities in training.

    ``in_proj_weight`` starts from Glorot's uniform (``xavier_uniform``), the biases from
    zeros, ``out_proj.weight`` as any ``Linear``'s, as in PyTorch. ``add_bias_kv`` and
    ``add_zero_attn`` are not supported (they must be False).

    Examples:
        >>> import dparray as dp
        >>> mha = dp.nn.MultiheadAttention(8, 2, batch_first=True)
        >>> x = dp.randn(3, 5, 8)
        >>> output, weights = mha(x, x, x)
        >>> output.shape, weights.shape
        ((3, 5, 8), (3, 5, 5))
        >>> [name for name, _ in mha.named_parameters()]
        ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']
    """

    in_proj_weight: Tensor | None
    q_proj_weight: Tensor | None
    k_proj_weight: Tensor | None
    v_proj_weight: Tensor | None
    in_proj_bias: Tensor | None

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, dtype: Any = None) -> None:
        super().__init__()
        self.embed_dim = check_int(embed_dim, "embed_dim", _WHERE, minimum=1)
        self.num_heads = check_int(num_heads, "num_heads", _WHERE, minimum=1)
        if embed_dim % num_heads:
            raise ValueError(f"{_WHERE}: embed_dim must be divisible by num_heads, got "
                             f"{embed_dim} and {num_heads}")
        self.dropout = check_probability(dropout, "dropout", _WHERE)
        check_bool(bias, "bias", _WHERE)
        for name, value in (("add_bias_kv", add_bias_kv), ("add_zero_attn", add_zero_attn)):
            if check_bool(value, name, _WHERE):
                raise ValueError(f"{_WHERE}: {name}=True is not supported (it must be False)")
        self.kdim = embed_dim if kdim is None else check_int(kdim, "kdim", _WHERE, minimum=1)
        self.vdim = embed_dim if vdim is None else check_int(vdim, "vdim", _WHERE, minimum=1)
        self.batch_first = check_bool(batch_first, "batch_first", _WHERE)
        self.head_dim = embed_dim // num_heads
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight = init.xavier_uniform((3 * embed_dim, embed_dim), dtype)
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.in_proj_weight = None
            self.q_proj_weight = init.xavier_uniform((embed_dim, embed_dim), dtype)
            self.k_proj_weight = init.xavier_uniform((embed_dim, self.kdim), dtype)
            self.v_proj_weight = init.xavier_uniform((embed_dim, self.vdim), dtype)
        self.in_proj_bias = init.constant((3 * embed_dim,), 0.0, dtype) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        if bias:
            self.out_proj.bias = init.constant((embed_dim,), 0.0, dtype)

    def couples_rows(self) -> bool:
        # Time-major input would be split along the sequence: running the chunks always makes
        # the refusal in forward hold for every batch size; dropout masks follow the chunks.
        return not self.batch_first or (self.is_training() and self.dropout > 0)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        batched = self._check_inputs(query, key, value)
        check_bool(need_weights, "need_weights", _WHERE)
        check_bool(average_attn_weights, "average_attn_weights", _WHERE)
        check_bool(is_causal, "is_causal", _WHERE)
        masks = self._masks(query, key, key_padding_mask, attn_mask, is_causal, batched)
        mask = _merged(masks, query.dtype) if masks else None
        first = self.batch_first or not batched  # axis 0 is the batch
        shared = query is key, key is value  # self-attention projects once
        if not batched:
            query, key, value = (ops.unsqueeze(t, 0) for t in (query, key, value))
        projected = self._project(query, key, value, *shared)
        q, k, v = (self._heads(t, first) for t in projected)
        causal = is_causal and not masks  # the causal mask alone: the node builds it
        p = self.dropout if self.is_training() else 0.0
        scale = 1.0 / math.sqrt(self.head_dim)
        weights: Tensor | None = None
        if need_weights:
            weights = attention_weights(q, k, mask, p, causal, scale)
            heads = weights @ v
        else:
            heads = attend(q, k, v, mask, p, causal, scale)
        output = self.out_proj(self._joined(heads, first))
        if weights is not None and average_attn_weights:
            weights = ops.mean(weights, axis=1)
        if not batched:
            output = ops.squeeze(output, 0)
            weights = None if weights is None else ops.squeeze(weights, 0)
        return output, weights

    # ------------------------------------------------------------------ steps
    def _project(self, query: Tensor, key: Tensor, value: Tensor, query_is_key: bool,
                 key_is_value: bool) -> tuple[Tensor, ...]:
        """The query, key and value after the input projections (one product for the three
        in self-attention, one for key and value when they are one tensor)."""
        e = self.embed_dim
        bias = self.in_proj_bias
        biases = (None,) * 3 if bias is None else (bias[:e], bias[e:2 * e], bias[2 * e:])
        w = self.in_proj_weight
        if w is None:  # kdim or vdim differ: three weights
            q_w, k_w, v_w = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
            assert q_w is not None and k_w is not None and v_w is not None
            return (F.linear(query, q_w, biases[0]), F.linear(key, k_w, biases[1]),
                    F.linear(value, v_w, biases[2]))
        if query_is_key and key_is_value:
            return ops.split(F.linear(query, w, bias), e, axis=-1)
        q = F.linear(query, w[:e], biases[0])
        if key_is_value:
            kv_bias = None if bias is None else bias[e:]
            return (q, *ops.split(F.linear(key, w[e:], kv_bias), e, axis=-1))
        return q, F.linear(key, w[e:2 * e], biases[1]), F.linear(value, w[2 * e:], biases[2])

    def _heads(self, x: Tensor, batch_first: bool) -> Tensor:
        """``(N, L, E)`` or ``(L, N, E)`` as ``(N, heads, L, head_dim)``."""
        shape = (*x.shape[:2], self.num_heads, self.head_dim)
        return ops.permute(ops.reshape(x, shape), (0, 2, 1, 3) if batch_first else (1, 2, 0, 3))

    def _joined(self, heads: Tensor, batch_first: bool) -> Tensor:
        """``(N, heads, L, head_dim)`` as ``(N, L, E)`` or ``(L, N, E)``."""
        x = ops.permute(heads, (0, 2, 1, 3) if batch_first else (2, 0, 1, 3))
        return ops.reshape(x, (*x.shape[:2], self.embed_dim))

    def _masks(self, query: Tensor, key: Tensor, key_padding_mask: Any, attn_mask: Any,
               is_causal: bool, batched: bool) -> list[Tensor]:
        """The masks that apply, checked, each broadcastable to ``(N, heads, L, S)``: bool
        (True keeps a key out) or float (added)."""
        if not batched:
            batch, length, source = 1, query.shape[0], key.shape[0]
        elif self.batch_first:
            (batch, length), source = query.shape[:2], key.shape[1]
        else:
            (length, batch), source = query.shape[:2], key.shape[0]
        masks = []
        if key_padding_mask is not None:
            _check_mask(key_padding_mask, "key_padding_mask",
                        [(batch, source) if batched else (source,)])
            masks.append(ops.reshape(key_padding_mask, (batch, 1, 1, source)))
        if attn_mask is not None:
            per_head = (batch * self.num_heads, length, source)
            _check_mask(attn_mask, "attn_mask", [(length, source), per_head])
            if attn_mask.ndim == 3:
                attn_mask = ops.reshape(attn_mask, (batch, self.num_heads, length, source))
            masks.append(attn_mask)
        elif is_causal and masks:
            positions = creation.arange(source, backend=query.backend)
            rows = creation.arange(length, backend=query.backend)
            masks.append(ops.reshape(positions, (1, source)) > ops.reshape(rows, (length, 1)))
        return masks

    def _check_inputs(self, query: Any, key: Any, value: Any) -> bool:
        """Whether the inputs are batched, once they are known to fit the layer."""
        for name, t in (("query", query), ("key", key), ("value", value)):
            check_tensor(t, name, _WHERE)
            if not t.dtype.is_floating:
                raise TypeError(f"{_WHERE}: {name} must be a floating-point tensor, got "
                                f"{t.dtype.name}")
        layout = "(N, L, {0})" if self.batch_first else "(L, N, {0})"
        shapes = f"query {query.shape}, key {key.shape} and value {value.shape}"
        fits = (query.ndim in (2, 3) and query.ndim == key.ndim == value.ndim
                and query.shape[-1] == self.embed_dim and key.shape[-1] == self.kdim
                and value.shape[-1] == self.vdim and key.shape[:-1] == value.shape[:-1])
        if fits and query.ndim == 3:
            axis = 0 if self.batch_first else 1
            fits = query.shape[axis] == key.shape[axis]
        if not fits:
            raise ValueError(
                f"{_WHERE}: expected query {layout.format(self.embed_dim)}, key "
                f"{layout.format(self.kdim).replace('L', 'S')} and value "
                f"{layout.format(self.vdim).replace('L', 'S')} (or unbatched, without N), got "
                f"{shapes}")
        batched = query.ndim == 3
        check_batch_first(_WHERE, "the sequence", query.shape, batched, self.batch_first)
        return batched

    def extra_repr(self) -> str:
        text = f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"
        if self.dropout:
            text += f", dropout={self.dropout}"
        if not self._qkv_same_embed_dim:
            text += f", kdim={self.kdim}, vdim={self.vdim}"
        if self.batch_first:
            text += ", batch_first=True"
        return text


def _check_mask(mask: Any, name: str, shapes: list[tuple[int, ...]]) -> None:
    """``mask`` is a bool or floating tensor of one of ``shapes``."""
    check_tensor(mask, name, _WHERE)
    if mask.dtype.kind != "bool" and not mask.dtype.is_floating:
        raise TypeError(f"{_WHERE}: {name} must be a bool or floating-point tensor, got "
                        f"{mask.dtype.name}")
    if mask.shape not in shapes:
        expected = " or ".join(str(s) for s in shapes)
        raise ValueError(f"{_WHERE}: {name} must have shape {expected}, got shape {mask.shape}")


def _merged(masks: list[Tensor], dtype: Any) -> Tensor:
    """One mask for the attention node: bool (True: the key takes part) when every mask is
    bool, else the sum of the float masks and ``-inf`` where a bool one keeps a key out."""
    if all(m.dtype.kind == "bool" for m in masks):
        excluded = masks[0]
        for m in masks[1:]:
            excluded = ops.logical_or(excluded, m)
        return ops.logical_not(excluded)
    total: Tensor | None = None
    for m in masks:
        if m.dtype.kind == "bool":
            m = ops.masked_fill(creation.zeros(m.shape, dtype=dtype, backend=m.backend), m,
                                -math.inf)
        total = m if total is None else total + m
    assert total is not None  # masks is not empty
    return total
