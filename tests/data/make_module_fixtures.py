"""PyTorch's references for modules' habits, tied weights and shared modules:
``module.safetensors``.

    ../torch-venv/bin/python tests/data/make_module_fixtures.py   # any environment with torch

A small language model whose output projection is its token embedding (``lm_head.weight is
wte.weight``, as GPT-2 and nanoGPT tie them) and whose block uses one module twice
(``blocks.0`` and ``blocks.2`` are ``shared``, a linear layer with a buffer). PyTorch lists such
tensors once in ``named_parameters()`` and under every name in ``state_dict()``, and its strict
``load_state_dict`` wants every name.

The file holds ``state.<key>`` for every key of PyTorch's state dict (each tensor a copy:
safetensors stores no shared memory), ``input.idx``, ``output.logits``, ``cotangent`` and
``grad.<name>`` for each parameter that ``named_parameters()`` lists, the gradient of
``sum(logits * cotangent)`` (a tied weight's sums both uses). The metadata ``names`` (JSON) gives
PyTorch's ``state_dict()`` keys, ``named_parameters()`` names with and without
``remove_duplicate``, and ``named_buffers()`` names. The metadata ``inplace`` lists the layers of
``torch.nn`` and the functions of ``torch.nn.functional`` that take ``inplace``. Made with
PyTorch 2.13.0 (CPU), float64.
"""

from __future__ import annotations

import inspect
import json
import pathlib

import torch
from safetensors.torch import save_file

nn = torch.nn
HERE = pathlib.Path(__file__).parent
VOCAB, BLOCK, MODEL, BATCH = 11, 5, 6, 3


class Gate(nn.Module):
    """A linear layer whose output is scaled by a buffer."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(MODEL, MODEL)
        self.register_buffer("scale", torch.rand(MODEL) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x) * self.scale


class TiedLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.wte = nn.Embedding(VOCAB, MODEL)
        self.wpe = nn.Embedding(BLOCK, MODEL)
        self.shared = Gate()
        self.blocks = nn.Sequential(self.shared, nn.Tanh(), self.shared)
        self.ln_f = nn.LayerNorm(MODEL)
        self.lm_head = nn.Linear(MODEL, VOCAB, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        return self.lm_head(self.ln_f(self.blocks(x)))


def takes_inplace() -> dict[str, list[str]]:
    """The names of ``torch.nn``'s layers and ``torch.nn.functional``'s functions that take
    ``inplace``."""
    layers = [name for name in dir(nn) if isinstance(getattr(nn, name), type)
              and issubclass(getattr(nn, name), nn.Module)
              and "inplace" in inspect.signature(getattr(nn, name).__init__).parameters]
    functions = []
    for name in dir(nn.functional):
        function = getattr(nn.functional, name)
        if name.startswith("_") or not callable(function):
            continue
        try:
            parameters = inspect.signature(function).parameters
        except (TypeError, ValueError):  # builtins without a signature
            continue
        if "inplace" in parameters:
            functions.append(name)
    return {"layers": sorted(layers), "functions": sorted(functions)}


def main() -> pathlib.Path:
    torch.manual_seed(0)
    model = TiedLM().double()
    with torch.no_grad():
        for p in model.parameters():  # away from the default ones and zeros
            p.copy_(torch.randn(p.shape, dtype=p.dtype) * 0.5)
    idx = torch.randint(0, VOCAB, (BATCH, BLOCK))
    logits = model(idx)
    cotangent = torch.randn(logits.shape, dtype=logits.dtype)
    named = dict(model.named_parameters())
    grads = torch.autograd.grad((logits * cotangent).sum(), list(named.values()))
    tensors = {f"state.{key}": value.detach().clone()
               for key, value in model.state_dict().items()}
    tensors.update({"input.idx": idx, "output.logits": logits.detach(), "cotangent": cotangent})
    tensors.update({f"grad.{name}": g for name, g in zip(named, grads, strict=True)})
    names = {"state_dict": list(model.state_dict()),
             "named_parameters": list(named),
             "named_parameters_all": [n for n, _ in model.named_parameters(
                 remove_duplicate=False)],
             "named_buffers": [n for n, _ in model.named_buffers()]}
    path = HERE / "module.safetensors"
    save_file({k: v.contiguous() for k, v in tensors.items()}, path,
              metadata={"names": json.dumps(names), "inplace": json.dumps(takes_inplace()),
                        "torch": torch.__version__})
    return path


if __name__ == "__main__":
    print(main())
