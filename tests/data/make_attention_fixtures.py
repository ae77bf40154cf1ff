"""PyTorch references for attention and the Transformer layers: ``attention.safetensors``.

    ../torch-venv/bin/python tests/data/make_attention_fixtures.py   # any environment with torch

``MultiheadAttention`` runs with masks of both kinds (bool and float, ``attn_mask`` as
``(L, S)`` and per head, ``key_padding_mask``), causal, batch-first, unbatched, ``kdim`` and
``vdim``, without bias, and with the weights averaged, per head, or not returned; the encoder
and decoder layers and stacks post- and pre-norm, with ReLU, GELU and a module activation.
Everything runs in evaluation mode (training-mode dropout is random, so it is tested without
PyTorch). Sizes differ from each other on purpose (batch 3, target 4, source 5, model 6, two
heads), so a transposed axis cannot go unnoticed. Made with PyTorch 2.13.0 (CPU), float64.
"""

from __future__ import annotations

from typing import Any

import torch
from torch_fixture_writer import TorchCase, randomized, write

nn = torch.nn

BATCH, TARGET, SOURCE, MODEL, HEADS, FEEDFORWARD = 3, 4, 5, 6, 2, 7


def half_scale(module: nn.Module) -> nn.Module:
    return randomized(module, 0.5)


def _sequence(length: int, features: int = MODEL, batch_first: bool = False) -> torch.Tensor:
    return torch.randn(BATCH, length, features) if batch_first else \
        torch.randn(length, BATCH, features)


def _padding(source: int = SOURCE) -> torch.Tensor:
    """A key padding mask (True: padded) with a different number of padded keys per row."""
    mask = torch.zeros(BATCH, source, dtype=torch.bool)
    for row in range(BATCH):
        mask[row, source - row:] = True
    return mask


def _causal(length: int, source: int | None = None) -> torch.Tensor:
    """PyTorch's bool causal attn_mask: True above the diagonal (the key is kept out)."""
    return torch.ones(length, source or length, dtype=torch.bool).triu(1)


def _float_mask(shape: tuple[int, ...]) -> torch.Tensor:
    mask = torch.randn(shape)
    mask[..., 0, 1] = float("-inf")  # one key kept out of one query
    return mask


def _mha(name: str, kwargs: dict[str, Any], query: torch.Tensor, key: torch.Tensor,
         value: torch.Tensor, masks: dict[str, torch.Tensor] | None = None,
         **plain: Any) -> TorchCase:
    arguments = {"embed_dim": MODEL, "num_heads": HEADS, **kwargs}
    module = half_scale(nn.MultiheadAttention(**arguments))
    return TorchCase(name, "MultiheadAttention", arguments, module, [query, key, value],
                     tensor_kwargs=masks or {}, plain_kwargs=plain)


def attention_cases() -> list[TorchCase]:
    q, kv = _sequence(TARGET), _sequence(SOURCE)
    first_q, first_kv = _sequence(TARGET, batch_first=True), _sequence(SOURCE, batch_first=True)
    fully_padded = _padding()
    fully_padded[1] = True  # the second sequence has no key at all: zeros, as PyTorch's SDPA
    return [
        _mha("mha_self", {}, q, q.clone(), q.clone()),
        _mha("mha_cross", {}, q, kv, kv.clone()),
        _mha("mha_cross_batch_first", {"batch_first": True}, first_q, first_kv,
             first_kv.clone()),
        _mha("mha_kdim_vdim", {"kdim": 5, "vdim": 3}, q, _sequence(SOURCE, 5),
             _sequence(SOURCE, 3)),
        _mha("mha_no_bias", {"bias": False}, q, kv, kv.clone()),
        _mha("mha_bool_masks", {}, q, kv, kv.clone(),
             {"attn_mask": _causal(TARGET, SOURCE), "key_padding_mask": _padding()}),
        _mha("mha_float_masks", {"batch_first": True}, first_q, first_kv, first_kv.clone(),
             {"attn_mask": _float_mask((TARGET, SOURCE)),
              "key_padding_mask": torch.randn(BATCH, SOURCE)}),
        _mha("mha_bool_and_float_masks", {}, q, kv, kv.clone(),
             {"attn_mask": _float_mask((TARGET, SOURCE)), "key_padding_mask": _padding()}),
        _mha("mha_per_head_mask", {}, q, kv, kv.clone(),
             {"attn_mask": torch.rand(BATCH * HEADS, TARGET, SOURCE) > 0.7}),
        _mha("mha_weights_per_head", {"kdim": 5, "vdim": 3}, q, _sequence(SOURCE, 5),
             _sequence(SOURCE, 3), {"key_padding_mask": _padding()},
             average_attn_weights=False),
        _mha("mha_no_weights_fully_padded", {"batch_first": True}, first_q, first_kv,
             first_kv.clone(), {"key_padding_mask": fully_padded}, need_weights=False),
        _mha("mha_causal", {"batch_first": True}, first_q, first_q.clone(), first_q.clone(),
             {"attn_mask": _causal(TARGET)}, need_weights=False, is_causal=True),
        _mha("mha_unbatched", {}, torch.randn(TARGET, MODEL), torch.randn(SOURCE, MODEL),
             torch.randn(SOURCE, MODEL), {"key_padding_mask": _padding()[2]},
             average_attn_weights=False),
        _mha("mha_unbatched_per_head_mask", {"kdim": 5, "vdim": 3}, torch.randn(TARGET, MODEL),
             torch.randn(SOURCE, 5), torch.randn(SOURCE, 3),
             {"attn_mask": torch.randn(HEADS, TARGET, SOURCE)}),
    ]


def _layer_arguments(**kwargs: Any) -> dict[str, Any]:
    return {"d_model": MODEL, "nhead": HEADS, "dim_feedforward": FEEDFORWARD, **kwargs}


def _encoder_layer(name: str, kwargs: dict[str, Any], inputs: list[torch.Tensor],
                   masks: dict[str, torch.Tensor] | None = None, torch_kwargs: Any = None,
                   **plain: Any) -> TorchCase:
    arguments = _layer_arguments(**kwargs)
    module = half_scale(nn.TransformerEncoderLayer(**{**arguments, **(torch_kwargs or {})}))
    return TorchCase(name, "TransformerEncoderLayer", arguments, module, inputs,
                     tensor_kwargs=masks or {}, plain_kwargs=plain)


def _decoder_layer(name: str, kwargs: dict[str, Any], inputs: list[torch.Tensor],
                   masks: dict[str, torch.Tensor] | None = None, **plain: Any) -> TorchCase:
    arguments = _layer_arguments(**kwargs)
    module = half_scale(nn.TransformerDecoderLayer(**arguments))
    return TorchCase(name, "TransformerDecoderLayer", arguments, module, inputs,
                     tensor_kwargs=masks or {}, plain_kwargs=plain)


def transformer_cases() -> list[TorchCase]:
    src, tgt = _sequence(SOURCE), _sequence(TARGET)
    first_src = _sequence(SOURCE, batch_first=True)
    first_tgt = _sequence(TARGET, batch_first=True)
    square = nn.Transformer.generate_square_subsequent_mask
    gelu_tanh = {"layer": "GELU", "kwargs": {"approximate": "tanh"}}
    encoder_layer = _layer_arguments(batch_first=True, norm_first=True, activation="gelu")
    decoder_layer = _layer_arguments(batch_first=True)
    cases = [
        _encoder_layer("encoder_layer", {}, [src]),
        _encoder_layer("encoder_layer_pre_norm_gelu_batch_first",
                       {"norm_first": True, "activation": "gelu", "batch_first": True},
                       [first_src], {"src_key_padding_mask": _padding()}),
        _encoder_layer("encoder_layer_masks", {"layer_norm_eps": 1e-3},
                       [src], {"src_mask": _float_mask((SOURCE, SOURCE)),
                               "src_key_padding_mask": _padding()}),
        _encoder_layer("encoder_layer_causal_no_bias", {"bias": False, "batch_first": True},
                       [first_src], {"src_mask": square(SOURCE)}, is_causal=True),
        _encoder_layer("encoder_layer_module_activation", {"activation": gelu_tanh}, [src],
                       torch_kwargs={"activation": nn.GELU(approximate="tanh")}),
        _encoder_layer("encoder_layer_unbatched", {"norm_first": True},
                       [torch.randn(SOURCE, MODEL)], {"src_mask": _causal(SOURCE)}),
        _decoder_layer("decoder_layer", {}, [tgt, src]),
        _decoder_layer("decoder_layer_pre_norm_masks",
                       {"norm_first": True, "batch_first": True, "activation": "gelu"},
                       [first_tgt, first_src],
                       {"tgt_mask": square(TARGET), "memory_mask": _float_mask((TARGET, SOURCE)),
                        "tgt_key_padding_mask": _padding(TARGET),
                        "memory_key_padding_mask": _padding()}, tgt_is_causal=True),
        _decoder_layer("decoder_layer_causal_memory", {"batch_first": True},
                       [first_tgt, first_src], {"memory_mask": _causal(TARGET, SOURCE)},
                       memory_is_causal=True),
    ]
    torch_encoder_layer = nn.TransformerEncoderLayer(**encoder_layer)
    encoder = nn.TransformerEncoder(torch_encoder_layer, 2, norm=nn.LayerNorm(MODEL),
                                    enable_nested_tensor=False)
    cases.append(TorchCase(
        "encoder", "TransformerEncoder",
        {"encoder_layer": {"layer": "TransformerEncoderLayer", "kwargs": encoder_layer},
         "num_layers": 2, "norm": {"layer": "LayerNorm", "kwargs": {"normalized_shape": MODEL}},
         "enable_nested_tensor": False},
        half_scale(encoder), [first_src],
        tensor_kwargs={"mask": square(SOURCE), "src_key_padding_mask": _padding()}))
    decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(**decoder_layer), 2)
    cases.append(TorchCase(
        "decoder", "TransformerDecoder",
        {"decoder_layer": {"layer": "TransformerDecoderLayer", "kwargs": decoder_layer},
         "num_layers": 2},
        half_scale(decoder), [first_tgt, first_src],
        tensor_kwargs={"tgt_mask": _causal(TARGET), "memory_key_padding_mask": _padding()},
        plain_kwargs={"tgt_is_causal": True}))
    return cases


if __name__ == "__main__":
    torch.manual_seed(0)
    write("attention", attention_cases() + transformer_cases())
