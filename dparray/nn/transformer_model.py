"""``nn.Transformer``: the encoder-decoder model of "Attention Is All You Need", with PyTorch's
arguments, sub-module names and results, built from the layers and stacks of
``dparray.nn.transformer``.

Its parameters are named as PyTorch's (``encoder.layers.0.self_attn.in_proj_weight`` ...
``encoder.norm.weight``, ``decoder.layers.0.multihead_attn.out_proj.bias`` ...), so state
dicts move between the two libraries; ``generate_square_subsequent_mask`` makes PyTorch's
causal float mask.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dparray import creation, ops
from dparray import dtypes as _dtypes
from dparray._checks import check_int, check_tensor, describe
from dparray.nn import init
from dparray.nn.module import Module
from dparray.nn.normalization import LayerNorm
from dparray.nn.transformer import (
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from dparray.tensor import Tensor


class Transformer(Module):
    """An encoder (``num_encoder_layers`` copies of a ``TransformerEncoderLayer`` and a final
    ``LayerNorm``) and a decoder (``num_decoder_layers`` copies of a ``TransformerDecoderLayer``
    and a final ``LayerNorm``), as PyTorch's ``nn.Transformer``; ``custom_encoder`` and
    ``custom_decoder`` replace either. The other arguments go to every layer (see
    ``TransformerEncoderLayer``). As in PyTorch, every parameter of two or more dimensions
    starts from ``xavier_uniform_``.

    Called as ``model(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
    src_key_padding_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
    src_is_causal=None, tgt_is_causal=None, memory_is_causal=False)``: ``src`` is ``(S, N,
    d_model)`` and ``tgt`` ``(T, N, d_model)`` (batch first with ``batch_first=True``), or
    both unbatched; the encoder reads ``src`` with ``src_mask`` and ``src_key_padding_mask``,
    the decoder ``tgt`` and the encoder's output with the other masks. Returns the decoder's
    output, of ``tgt``'s shape.

    Examples:
        >>> import dparray as dp
        >>> model = dp.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1,
        ...                           num_decoder_layers=1, dim_feedforward=16,
        ...                           batch_first=True)
        >>> mask = dp.nn.Transformer.generate_square_subsequent_mask(4)
        >>> model(dp.randn(3, 5, 8), dp.randn(3, 4, 8), tgt_mask=mask).shape
        (3, 4, 8)
        >>> [name for name, _ in model.named_parameters()][-2:]
        ['decoder.norm.weight', 'decoder.norm.bias']
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Tensor], Tensor] = "relu",
                 custom_encoder: Module | None = None, custom_decoder: Module | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, dtype: Any = None) -> None:
        super().__init__()
        where = "Transformer"
        layer_arguments = {"d_model": d_model, "nhead": nhead,
                           "dim_feedforward": dim_feedforward, "dropout": dropout,
                           "activation": activation, "layer_norm_eps": layer_norm_eps,
                           "batch_first": batch_first, "norm_first": norm_first, "bias": bias,
                           "dtype": dtype}
        for name, custom in (("custom_encoder", custom_encoder),
                             ("custom_decoder", custom_decoder)):
            if custom is not None and not isinstance(custom, Module):
                raise TypeError(f"{where}: {name} must be a Module or None, got "
                                f"{describe(custom)}")
        def final_norm() -> LayerNorm:
            return LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)

        self.encoder: Module = custom_encoder if custom_encoder is not None else \
            TransformerEncoder(TransformerEncoderLayer(**layer_arguments), check_int(
                num_encoder_layers, "num_encoder_layers", where, minimum=1), final_norm())
        self.decoder: Module = custom_decoder if custom_decoder is not None else \
            TransformerDecoder(TransformerDecoderLayer(**layer_arguments), check_int(
                num_decoder_layers, "num_decoder_layers", where, minimum=1), final_norm())
        for p in self.parameters():  # PyTorch's _reset_parameters, in its order
            if p.ndim > 1:
                init.xavier_uniform_(p)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        where = "Transformer"
        check_tensor(src, "src", where)
        check_tensor(tgt, "tgt", where)
        batch_axis = 0 if self.batch_first else 1
        if src.ndim == 3 and (tgt.ndim != 3 or src.shape[batch_axis] != tgt.shape[batch_axis]):
            raise ValueError(f"{where}: src and tgt must have one batch size (axis "
                             f"{batch_axis}), got shapes {src.shape} and {tgt.shape}")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ValueError(f"{where}: src and tgt must have d_model={self.d_model} features "
                             f"in their last axis, got shapes {src.shape} and {tgt.shape}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        result: Tensor = self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                                      tgt_key_padding_mask=tgt_key_padding_mask,
                                      memory_key_padding_mask=memory_key_padding_mask,
                                      tgt_is_causal=tgt_is_causal,
                                      memory_is_causal=memory_is_causal)
        return result

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """PyTorch's causal mask for a sequence of ``sz``: a float ``(sz, sz)`` tensor (the
        default float dtype unless ``dtype`` is given) of ``-inf`` above the diagonal, where a
        position would see a later one, and 0 elsewhere; moved with ``Tensor.to(device)``
        when ``device`` is given.

        Examples:
            >>> import dparray as dp
            >>> dp.nn.Transformer.generate_square_subsequent_mask(3).tolist()
            [[0.0, -inf, -inf], [0.0, 0.0, -inf], [0.0, 0.0, 0.0]]
        """
        where = "generate_square_subsequent_mask"
        size = check_int(sz, "sz", where, minimum=0)
        if dtype is not None and not _dtypes.to_dtype(dtype).is_floating:
            raise TypeError(f"{where}: dtype must be floating, got {describe(dtype)}")
        mask = ops.triu(creation.full((size, size), float("-inf"), dtype=dtype), 1)
        return mask if device is None else mask.to(device)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, nhead={self.nhead}, batch_first={self.batch_first}"
