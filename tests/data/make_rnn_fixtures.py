"""PyTorch references for the recurrent layers RNN, LSTM and GRU: ``rnn.safetensors``.

    ../torch-venv/bin/python tests/data/make_rnn_fixtures.py   # any environment with torch

Every layer runs through the same set of configurations: one and two layers, bidirectional,
batch-first, no bias, explicit initial states, unbatched input, a single time step, and
between-layer dropout in evaluation mode (training-mode dropout is random, so it is tested
without PyTorch). Sizes differ from each other on purpose (sequence 5, batch 3, input 4,
hidden 6, two layers times two directions = 4 states), so a transposed axis cannot go
unnoticed. Made with PyTorch 2.13.0 (CPU), float64.
"""

from __future__ import annotations

from typing import Any

import torch
from torch_fixture_writer import TorchCase, write

nn = torch.nn

SEQUENCE, BATCH, INPUT, HIDDEN = 5, 3, 4, 6


class LSTMTakingStates(nn.LSTM):
    """``nn.LSTM`` called as ``lstm(x, h0, c0)``: the fixture writer passes inputs
    positionally, while the LSTM takes its states as one tuple. Same parameters and names."""

    def forward(self, input, h0=None, c0=None):  # type: ignore[override]
        return super().forward(input, None if h0 is None else (h0, c0))


# name: (constructor arguments, batch-first shape?, unbatched?, with initial states?, steps)
CONFIGURATIONS: dict[str, tuple[dict[str, Any], bool, bool, bool, int]] = {
    "one_layer": ({}, False, False, False, SEQUENCE),
    "two_layers": ({"num_layers": 2}, False, False, False, SEQUENCE),
    "bidirectional": ({"bidirectional": True}, False, False, False, SEQUENCE),
    "two_layers_bidirectional_batch_first_h0": (
        {"num_layers": 2, "bidirectional": True, "batch_first": True}, True, False, True,
        SEQUENCE),
    "no_bias": ({"num_layers": 2, "bias": False}, False, False, False, SEQUENCE),
    "h0": ({"num_layers": 2, "bidirectional": True}, False, False, True, SEQUENCE),
    "unbatched": ({"num_layers": 2}, False, True, False, SEQUENCE),
    "unbatched_bidirectional_h0": ({"num_layers": 2, "bidirectional": True}, False, True, True,
                                   SEQUENCE),
    "one_step": ({"bidirectional": True}, False, False, True, 1),
    "dropout_eval": ({"num_layers": 2, "dropout": 0.5}, False, False, False, SEQUENCE),
}

RELU_CONFIGURATIONS = ["one_layer", "two_layers_bidirectional_batch_first_h0", "h0",
                       "unbatched"]


def _case(layer: str, name: str, extra: dict[str, Any]) -> TorchCase:
    arguments, batch_first, unbatched, with_states, steps = CONFIGURATIONS[name]
    kwargs = {"input_size": INPUT, "hidden_size": HIDDEN, **extra, **arguments}
    torch_class = LSTMTakingStates if layer == "LSTM" else getattr(nn, layer)
    module = torch_class(**kwargs)
    if unbatched:
        x = torch.randn(steps, INPUT)
    elif batch_first:
        x = torch.randn(BATCH, steps, INPUT)
    else:
        x = torch.randn(steps, BATCH, INPUT)
    inputs = [x]
    if with_states:
        count = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
        state_shape = (count, HIDDEN) if unbatched else (count, BATCH, HIDDEN)
        inputs.extend(torch.randn(state_shape) for _ in range(2 if layer == "LSTM" else 1))
    label = layer.lower() + ("_" + extra["nonlinearity"] if "nonlinearity" in extra else "")
    return TorchCase(f"{label}_{name}", layer, kwargs, module, inputs)


def cases() -> list[TorchCase]:
    torch.manual_seed(0)
    found = []
    for name in CONFIGURATIONS:
        found.append(_case("RNN", name, {}))
    for name in RELU_CONFIGURATIONS:
        found.append(_case("RNN", name, {"nonlinearity": "relu"}))
    for layer in ("LSTM", "GRU"):
        for name in CONFIGURATIONS:
            found.append(_case(layer, name, {}))
    return found


if __name__ == "__main__":
    write("rnn", cases())
