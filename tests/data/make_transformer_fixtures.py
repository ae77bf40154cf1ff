"""PyTorch references for ``nn.Transformer``: ``transformer.safetensors``.

    ../torch-venv/bin/python tests/data/make_transformer_fixtures.py   # any env with torch

The whole encoder-decoder model, sequence first and batch first, post- and pre-norm, with
every kind of mask (PyTorch's ``generate_square_subsequent_mask`` as ``tgt_mask``, padding
masks, a bool ``src_mask``), without bias, unbatched, and with a custom encoder. Written
through ``torch_fixture_writer.py`` (see there for the layout), in evaluation mode, float64;
sizes as in ``make_attention_fixtures.py`` (batch 3, target 4, source 5, model 6, two heads),
with two encoder layers and one decoder layer. Made with PyTorch 2.13.0 (CPU).
"""

from __future__ import annotations

from typing import Any

import torch
from make_attention_fixtures import (
    FEEDFORWARD,
    HEADS,
    MODEL,
    SOURCE,
    TARGET,
    _causal,
    _padding,
    _sequence,
    half_scale,
)
from torch_fixture_writer import TorchCase, write

nn = torch.nn
SQUARE = nn.Transformer.generate_square_subsequent_mask


def _arguments(**kwargs: Any) -> dict[str, Any]:
    return {"d_model": MODEL, "nhead": HEADS, "num_encoder_layers": 2, "num_decoder_layers": 1,
            "dim_feedforward": FEEDFORWARD, **kwargs}


def _case(name: str, kwargs: dict[str, Any], inputs: list[torch.Tensor],
          masks: dict[str, torch.Tensor] | None = None, torch_kwargs: Any = None,
          **plain: Any) -> TorchCase:
    arguments = _arguments(**kwargs)
    module = half_scale(nn.Transformer(**{**arguments, **(torch_kwargs or {})}))
    return TorchCase(name, "Transformer", arguments, module, inputs, tensor_kwargs=masks or {},
                     plain_kwargs=plain)


def transformer_cases() -> list[TorchCase]:
    src, tgt = _sequence(SOURCE), _sequence(TARGET)
    first_src = _sequence(SOURCE, batch_first=True)
    first_tgt = _sequence(TARGET, batch_first=True)
    encoder_layer = {"d_model": MODEL, "nhead": HEADS, "dim_feedforward": FEEDFORWARD}
    custom = nn.TransformerEncoder(nn.TransformerEncoderLayer(**encoder_layer), 1)
    return [
        _case("transformer", {}, [src, tgt], {"tgt_mask": SQUARE(TARGET)}),
        _case("transformer_padding_masks", {"layer_norm_eps": 1e-3}, [src, tgt],
              {"tgt_mask": SQUARE(TARGET), "src_key_padding_mask": _padding(),
               "tgt_key_padding_mask": _padding(TARGET),
               "memory_key_padding_mask": _padding()}),
        _case("transformer_batch_first_pre_norm_gelu",
              {"batch_first": True, "norm_first": True, "activation": "gelu"},
              [first_src, first_tgt],
              {"src_mask": _causal(SOURCE), "tgt_mask": SQUARE(TARGET),
               "memory_mask": _causal(TARGET, SOURCE)},
              tgt_is_causal=True),
        _case("transformer_no_bias", {"bias": False, "num_decoder_layers": 2}, [src, tgt]),
        _case("transformer_unbatched", {}, [torch.randn(SOURCE, MODEL),
                                            torch.randn(TARGET, MODEL)],
              {"tgt_mask": SQUARE(TARGET)}),
        _case("transformer_custom_encoder",
              {"custom_encoder": {"layer": "TransformerEncoder", "kwargs": {
                  "encoder_layer": {"layer": "TransformerEncoderLayer",
                                    "kwargs": encoder_layer},
                  "num_layers": 1}}},
              [src, tgt], {"tgt_mask": SQUARE(TARGET)},
              torch_kwargs={"custom_encoder": custom}),
    ]


if __name__ == "__main__":
    torch.manual_seed(0)
    write("transformer", transformer_cases())
