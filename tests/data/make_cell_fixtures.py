"""PyTorch references for the recurrent cells and the dropout variants:
``cells_and_dropout.safetensors``.

    .venv/bin/python tests/data/make_cell_fixtures.py   # any environment with torch

Cells (metadata ``cells``, ``torch_fixture_writer``'s layout for each case: inputs, state
dict, outputs, cotangents, and the gradients of the inputs -- states included -- and of every
parameter): ``RNNCell`` (tanh and ReLU), ``LSTMCell`` and ``GRUCell``, batched and unbatched,
with and without initial states, without bias, and a loop of ``STEPS`` steps over a sequence
(cases ending in ``_loop``: the cell applied to each ``input.0[t]`` in turn from the given
states, the outputs being the stacked hidden states and, for LSTM, the last cell state). Sizes
differ on purpose (batch 3, input 4, hidden 5), so a transposed axis shows.

Dropout (metadata ``dropout``, JSON: case -> function of ``torch.nn.functional`` and its
arguments; arrays ``<case>/input`` and ``<case>/output``): one call in training
of ``dropout1d/2d/3d``, ``alpha_dropout`` and ``feature_alpha_dropout``. PyTorch's masks cannot
be drawn here; the test compares the values where both libraries kept an element, and the
value both give a dropped one.

Parameter containers (metadata ``containers``, JSON: case -> the names PyTorch gives, in its
order; arrays ``containers/<key>``: the state dict of ``Holder``): the keys of a
``ParameterDict`` made from a plain dict (PyTorch sorts them), an ``OrderedDict`` and pairs, after
``update`` and ``|``, and the parameter names and state dict keys of a module holding a
``ParameterList`` and a ``ParameterDict``. Made with PyTorch 2.13.0 (CPU), float64.
"""

from __future__ import annotations

import json
from collections import OrderedDict

import torch
from safetensors.torch import save_file
from torch_fixture_writer import HERE, TorchCase, recorded

nn = torch.nn
F = torch.nn.functional

BATCH, INPUT, HIDDEN, STEPS = 3, 4, 5, 4


class LSTMCellTakingStates(nn.LSTMCell):
    """``nn.LSTMCell`` called as ``cell(x, h, c)``: the fixture writer passes inputs
    positionally, while the cell takes its states as one tuple. Same parameters and names."""

    def forward(self, input, h=None, c=None):  # type: ignore[override]
        return super().forward(input, None if h is None else (h, c))


class RNNCellLoop(nn.RNNCell):
    def forward(self, inputs, h):  # type: ignore[override]
        hs = []
        for x in inputs:
            h = super().forward(x, h)
            hs.append(h)
        return torch.stack(hs)


class GRUCellLoop(nn.GRUCell):
    def forward(self, inputs, h):  # type: ignore[override]
        hs = []
        for x in inputs:
            h = super().forward(x, h)
            hs.append(h)
        return torch.stack(hs)


class LSTMCellLoop(nn.LSTMCell):
    def forward(self, inputs, h, c):  # type: ignore[override]
        hs = []
        for x in inputs:
            h, c = super().forward(x, (h, c))
            hs.append(h)
        return torch.stack(hs), c


TORCH_CLASSES = {"RNNCell": nn.RNNCell, "LSTMCell": LSTMCellTakingStates, "GRUCell": nn.GRUCell}
LOOP_CLASSES = {"RNNCell": RNNCellLoop, "LSTMCell": LSTMCellLoop, "GRUCell": GRUCellLoop}

# name: (constructor arguments besides the sizes, unbatched?, with initial states?)
CONFIGURATIONS = {
    "batched_hx": ({}, False, True),
    "batched": ({}, False, False),
    "unbatched_hx": ({}, True, True),
    "unbatched": ({}, True, False),
    "no_bias_hx": ({"bias": False}, False, True),
}


def _states(layer: str, shape: tuple[int, ...]) -> list[torch.Tensor]:
    return [torch.randn(shape) for _ in range(2 if layer == "LSTMCell" else 1)]


def cell_cases() -> list[TorchCase]:
    torch.manual_seed(0)
    found = []
    layers = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("LSTMCell", {}),
              ("GRUCell", {})]
    for layer, extra in layers:
        label = layer.lower() + ("_relu" if extra else "")
        for name, (arguments, unbatched, with_states) in CONFIGURATIONS.items():
            kwargs = {"input_size": INPUT, "hidden_size": HIDDEN, **extra, **arguments}
            x = torch.randn(INPUT) if unbatched else torch.randn(BATCH, INPUT)
            shape = (HIDDEN,) if unbatched else (BATCH, HIDDEN)
            inputs = [x, *(_states(layer, shape) if with_states else [])]
            found.append(TorchCase(f"{label}_{name}", layer, kwargs,
                                   TORCH_CLASSES[layer](**kwargs), inputs))
        kwargs = {"input_size": INPUT, "hidden_size": HIDDEN, **extra}
        inputs = [torch.randn(STEPS, BATCH, INPUT), *_states(layer, (BATCH, HIDDEN))]
        found.append(TorchCase(f"{label}_loop", layer, kwargs, LOOP_CLASSES[layer](**kwargs),
                               inputs))
    return found


# name: (function, p, input shape)
DROPOUT = {
    "dropout1d": ("dropout1d", 0.4, (6, 40, 3)),
    "dropout1d_unbatched": ("dropout1d", 0.4, (40, 3)),
    "dropout2d": ("dropout2d", 0.3, (6, 40, 2, 3)),
    "dropout3d": ("dropout3d", 0.5, (6, 40, 2, 2, 2)),
    "dropout3d_unbatched": ("dropout3d", 0.5, (40, 2, 2, 2)),
    "alpha_dropout": ("alpha_dropout", 0.2, (50, 40)),
    "alpha_dropout_half": ("alpha_dropout", 0.5, (50, 40)),
    "feature_alpha_dropout": ("feature_alpha_dropout", 0.3, (6, 40, 2, 3)),
}


def dropout_cases() -> tuple[dict[str, torch.Tensor], dict[str, dict[str, object]]]:
    torch.manual_seed(1)
    tensors, described = {}, {}
    for name, (function, p, shape) in DROPOUT.items():
        x = torch.rand(shape, dtype=torch.float64) + 0.5  # away from 0: a kept value shows
        tensors[f"{name}/input"] = x
        tensors[f"{name}/output"] = getattr(F, function)(x, p=p, training=True)
        described[name] = {"function": function, "p": p}
    return tensors, described


class Holder(nn.Module):
    """A ``Linear``, a ``ParameterList`` of two and a ``ParameterDict`` of two."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.scales = nn.ParameterList([nn.Parameter(torch.randn(2)), torch.randn(3, 2)])
        self.extra = nn.ParameterDict({"shift": torch.randn(2), "gain": torch.randn(1)})


def container_cases() -> tuple[dict[str, torch.Tensor], dict[str, list[str]]]:
    torch.manual_seed(2)
    tensor = torch.zeros(1)
    plain = nn.ParameterDict({"b": tensor, "a": tensor, "c": tensor})
    ordered = nn.ParameterDict(OrderedDict([("b", tensor), ("a", tensor), ("c", tensor)]))
    pairs = nn.ParameterDict([("b", tensor), ("a", tensor), ("c", tensor)])
    updated = nn.ParameterDict([("m", tensor)])
    updated.update({"z": tensor, "b": tensor})
    merged = ordered | {"y": tensor, "x": tensor}
    holder = Holder().double()
    names = {
        "dict_plain": list(plain.keys()), "dict_ordered": list(ordered.keys()),
        "dict_pairs": list(pairs.keys()), "dict_updated": list(updated.keys()),
        "dict_merged": list(merged.keys()),
        "holder_parameters": [name for name, _ in holder.named_parameters()],
        "holder_state_dict": list(holder.state_dict()),
        "holder_trainable": [name for name, p in holder.named_parameters() if p.requires_grad],
    }
    tensors = {f"containers/{k}": v.detach().clone() for k, v in holder.state_dict().items()}
    return tensors, names


def main() -> None:
    generator = torch.Generator().manual_seed(0)
    tensors, cells = recorded(cell_cases(), generator)
    dropout_tensors, dropout = dropout_cases()
    tensors.update({k: v.contiguous() for k, v in dropout_tensors.items()})
    container_tensors, containers = container_cases()
    tensors.update({k: v.contiguous() for k, v in container_tensors.items()})
    save_file(tensors, HERE / "cells_and_dropout.safetensors",
              metadata={"cells": json.dumps(cells), "dropout": json.dumps(dropout),
                        "containers": json.dumps(containers), "torch": torch.__version__})


if __name__ == "__main__":
    main()
