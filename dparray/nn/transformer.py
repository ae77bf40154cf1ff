"""Transformer blocks with PyTorch's arguments, sub-module names and results:
``TransformerEncoderLayer``, ``TransformerEncoder``, ``TransformerDecoderLayer`` and
``TransformerDecoder``.

Each layer is attention (``MultiheadAttention``) and a feed-forward block
``linear2(dropout(activation(linear1(x))))``, each wrapped in a residual connection and a
``LayerNorm`` -- after the sum (``norm_first=False``, the original Transformer) or before the
block (``norm_first=True``, "pre-norm"). The sub-modules carry PyTorch's names
(``self_attn``, ``multihead_attn``, ``linear1``, ``linear2``, ``norm1`` ..., and ``layers.0``
... in the stacks), so state dicts move between the two libraries.

Under ``DataParallel``, construct the layers with ``batch_first=True`` and pass masks as in
``dparray.nn.attention``: key padding masks ``(N, S)`` are split with the batch, ``(L, S)``
masks go whole to every chunk.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from dparray._checks import check_bool, check_choice, check_int, check_probability, describe
from dparray.nn import functional as F
from dparray.nn.attention import MultiheadAttention
from dparray.nn.containers import ModuleList
from dparray.nn.layers import Dropout, Linear
from dparray.nn.module import Module
from dparray.nn.normalization import LayerNorm
from dparray.tensor import Tensor

ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {"relu": F.relu, "gelu": F.gelu}


class _Layer(Module):
    """What the encoder and decoder layers share: arguments, the feed-forward block and the
    residual connections."""

    activation: Callable[[Tensor], Tensor]
    norm_first: bool

    def _setup(self, d_model: int, nhead: int, dim_feedforward: int, dropout: float,
               activation: str | Callable[[Tensor], Tensor], layer_norm_eps: float,
               batch_first: bool, norm_first: bool, bias: bool) -> Callable[[Tensor], Tensor]:
        """Check the arguments; return the activation as a callable."""
        where = type(self).__name__
        self.d_model = check_int(d_model, "d_model", where, minimum=1)
        self.nhead = check_int(nhead, "nhead", where, minimum=1)
        check_int(dim_feedforward, "dim_feedforward", where, minimum=1)
        check_probability(dropout, "dropout", where)
        check_bool(batch_first, "batch_first", where)
        self.norm_first = check_bool(norm_first, "norm_first", where)
        check_bool(bias, "bias", where)
        if isinstance(activation, str):
            return ACTIVATIONS[check_choice(activation, "activation", where, tuple(ACTIVATIONS))]
        if not callable(activation):
            raise TypeError(f"{where}: activation must be 'relu', 'gelu' or a callable, got "
                            f"{describe(activation)}")
        return activation

    def _feed_forward_modules(self, d_model: int, dim_feedforward: int, dropout: float,
                              bias: bool, dtype: Any) -> None:
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)

    def _feed_forward(self, x: Tensor, dropout: Dropout) -> Tensor:
        return dropout(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def _residual(self, x: Tensor, norm: LayerNorm, block: Callable[[Tensor], Tensor]) -> Tensor:
        """``x + block(norm(x))`` (pre-norm), or ``norm(x + block(x))``."""
        if self.norm_first:
            return x + block(norm(x))
        return norm(x + block(x))

    def _self_attention(self, x: Tensor, mask: Tensor | None, padding: Tensor | None,
                        is_causal: bool, attention: MultiheadAttention,
                        dropout: Dropout) -> Tensor:
        out, _ = attention(x, x, x, attn_mask=mask, key_padding_mask=padding,
                           need_weights=False, is_causal=is_causal)
        return dropout(out)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, nhead={self.nhead}, norm_first={self.norm_first}"


class TransformerEncoderLayer(_Layer):
    """Self-attention and a feed-forward block, each in a residual connection with a
    ``LayerNorm``, as PyTorch's ``nn.TransformerEncoderLayer``.

    Called as ``layer(src, src_mask=None, src_key_padding_mask=None, is_causal=False)``:
    ``src`` is ``(L, N, d_model)`` (``(N, L, d_model)`` with ``batch_first=True``) or
    unbatched ``(L, d_model)``; the masks are ``MultiheadAttention``'s ``attn_mask`` and
    ``key_padding_mask``. ``activation`` is ``"relu"``, ``"gelu"`` (exact) or a callable
    (a module given here is a sub-module). Dropout (``dropout``) acts after the attention,
    inside the feed-forward block and after it, in training.

    Examples:
        >>> import dparray as dp
        >>> layer = dp.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True,
        ...                                       norm_first=True, activation="gelu")
        >>> layer(dp.randn(3, 5, 8)).shape
        (3, 5, 8)
        >>> [name for name, _ in layer.named_parameters()][:3]
        ['self_attn.in_proj_weight', 'self_attn.in_proj_bias', 'self_attn.out_proj.weight']
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Tensor], Tensor] = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, dtype: Any = None) -> None:
        super().__init__()
        function = self._setup(d_model, nhead, dim_feedforward, dropout, activation,
                               layer_norm_eps, batch_first, norm_first, bias)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self._feed_forward_modules(d_model, dim_feedforward, dropout, bias, dtype)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = function  # last, as in PyTorch: a module given here comes last

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        x = self._residual(src, self.norm1, lambda y: self._self_attention(
            y, src_mask, src_key_padding_mask, is_causal, self.self_attn, self.dropout1))
        return self._residual(x, self.norm2, lambda y: self._feed_forward(y, self.dropout2))


class TransformerDecoderLayer(_Layer):
    """Self-attention over the target, attention over the encoder's output (``memory``) and a
    feed-forward block, each in a residual connection with a ``LayerNorm``, as PyTorch's
    ``nn.TransformerDecoderLayer``.

    Called as ``layer(tgt, memory, tgt_mask=None, memory_mask=None,
    tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=False,
    memory_is_causal=False)``: ``tgt`` is ``(T, N, d_model)`` and ``memory``
    ``(S, N, d_model)`` (batch first with ``batch_first=True``), or both unbatched;
    ``tgt_mask`` ``(T, T)`` and ``memory_mask`` ``(T, S)`` are ``MultiheadAttention``'s
    ``attn_mask``. Other arguments as ``TransformerEncoderLayer``.

    Examples:
        >>> import dparray as dp
        >>> layer = dp.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, batch_first=True)
        >>> layer(dp.randn(3, 4, 8), dp.randn(3, 6, 8), tgt_is_causal=True).shape
        (3, 4, 8)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Tensor], Tensor] = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, dtype: Any = None) -> None:
        super().__init__()
        function = self._setup(d_model, nhead, dim_feedforward, dropout, activation,
                               layer_norm_eps, batch_first, norm_first, bias)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, dtype=dtype)
        self._feed_forward_modules(d_model, dim_feedforward, dropout, bias, dtype)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = function  # last, as in PyTorch: a module given here comes last

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        x = self._residual(tgt, self.norm1, lambda y: self._self_attention(
            y, tgt_mask, tgt_key_padding_mask, tgt_is_causal, self.self_attn, self.dropout1))
        x = self._residual(x, self.norm2, lambda y: self._cross_attention(
            y, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
        return self._residual(x, self.norm3, lambda y: self._feed_forward(y, self.dropout3))

    def _cross_attention(self, x: Tensor, memory: Tensor, mask: Tensor | None,
                         padding: Tensor | None, is_causal: bool) -> Tensor:
        out, _ = self.multihead_attn(x, memory, memory, attn_mask=mask,
                                     key_padding_mask=padding, need_weights=False,
                                     is_causal=is_causal)
        return self.dropout2(out)


class _Stack(Module):
    """``num_layers`` deep copies of one layer, applied in turn, then an optional ``norm``."""

    def __init__(self, layer: Module, num_layers: int, norm: Module | None,
                 layer_kind: type[Module]) -> None:
        super().__init__()
        where = type(self).__name__
        if not isinstance(layer, layer_kind):
            raise TypeError(f"{where}: the layer must be a {layer_kind.__name__}, got "
                            f"{describe(layer)}")
        check_int(num_layers, "num_layers", where, minimum=1)
        if norm is not None and not isinstance(norm, Module):
            raise TypeError(f"{where}: norm must be a Module or None, got {describe(norm)}")
        self.layers = ModuleList(copy.deepcopy(layer) for _ in range(num_layers))
        self.num_layers = num_layers
        self.norm = norm

    def _finish(self, x: Tensor) -> Tensor:
        return x if self.norm is None else self.norm(x)


class TransformerEncoder(_Stack):
    """``num_layers`` copies of ``encoder_layer`` (a ``TransformerEncoderLayer``) in turn,
    then ``norm`` when given, as PyTorch's ``nn.TransformerEncoder``; parameters are named
    ``layers.0.self_attn.in_proj_weight`` ... ``norm.weight``.

    Called as ``encoder(src, mask=None, src_key_padding_mask=None, is_causal=None)``; every
    layer gets the same masks. ``enable_nested_tensor`` and ``mask_check`` (PyTorch's fast
    path for padded batches in evaluation) are accepted and change nothing: dparray computes
    every position, and a padded one gives what the layers compute for it.

    Examples:
        >>> import dparray as dp
        >>> layer = dp.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
        >>> encoder = dp.nn.TransformerEncoder(layer, num_layers=2, norm=dp.nn.LayerNorm(8))
        >>> encoder(dp.randn(3, 5, 8)).shape
        (3, 5, 8)
        >>> [name for name, _ in encoder.named_parameters()][-3:]
        ['layers.1.norm2.bias', 'norm.weight', 'norm.bias']
    """

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int,
                 norm: Module | None = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True) -> None:
        super().__init__(encoder_layer, num_layers, norm, TransformerEncoderLayer)
        check_bool(enable_nested_tensor, "enable_nested_tensor", "TransformerEncoder")
        check_bool(mask_check, "mask_check", "TransformerEncoder")

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))
        return self._finish(x)


class TransformerDecoder(_Stack):
    """``num_layers`` copies of ``decoder_layer`` (a ``TransformerDecoderLayer``) in turn,
    then ``norm`` when given, as PyTorch's ``nn.TransformerDecoder``.

    Called as ``decoder(tgt, memory, tgt_mask=None, memory_mask=None,
    tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=None,
    memory_is_causal=False)``; every layer gets the same memory and masks.

    Examples:
        >>> import dparray as dp
        >>> layer = dp.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, batch_first=True)
        >>> decoder = dp.nn.TransformerDecoder(layer, num_layers=2)
        >>> decoder(dp.randn(3, 4, 8), dp.randn(3, 6, 8)).shape
        (3, 4, 8)
    """

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__(decoder_layer, num_layers, norm, TransformerDecoderLayer)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return self._finish(x)
