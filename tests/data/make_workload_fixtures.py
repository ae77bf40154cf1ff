"""PyTorch references for the real-program benchmark models (W7-W12): ``workloads.safetensors``.

    .venv/bin/python tests/data/make_workload_fixtures.py   # any environment with torch

Each model is the benchmark's architecture (``dparray/cli/torch_models.py``, the twin of
``dparray/cli/models.py``) at small sizes, so the file stays small: a GPT with tied
embeddings, ResNet-18 with a base width of 2 (in training: batch statistics), the LSTM and
Transformer language models and the MNIST network in evaluation (their dropout is random), and
the VAE with its noise given. Every parameter is drawn from ``N(0, 0.5^2)`` (ResNet's from
``N(0, 1)`` through its batch norms), in float64; the file holds, per case, the state dict
(``state.<key>``), the inputs (``input.<i>``), the model's outputs (``output.<i>``), the
workload's loss (``loss``), the loss's gradient for every parameter (``grad.<name>``, by
``named_parameters``: a tied parameter once) and the buffers after the call
(``after.<key>``). Made with PyTorch 2.13.0 (CPU).
"""

from __future__ import annotations

import json
import pathlib
import sys
from collections.abc import Callable
from typing import Any

import torch
from safetensors.torch import save_file

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE.parents[1]))  # the repository, for dparray.cli.torch_models

from dparray.cli import torch_models as twins  # noqa: E402  (after the path above)

F = torch.nn.functional


def _language(model: Any, tokens: Any, targets: Any) -> tuple[Any, Any]:
    logits = model(tokens)
    return logits, F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def _log_probability(model: Any, tokens: Any, targets: Any) -> tuple[Any, Any]:
    log_probs = model(tokens)
    return log_probs, F.nll_loss(log_probs.reshape(-1, log_probs.shape[-1]), targets.reshape(-1))


def _classes(model: Any, x: Any, y: Any) -> tuple[Any, Any]:
    logits = model(x)
    return logits, F.cross_entropy(logits, y)


def _nll(model: Any, x: Any, y: Any) -> tuple[Any, Any]:
    log_probs = model(x)
    return log_probs, F.nll_loss(log_probs, y)


def _vae(model: Any, x: Any, noise: Any) -> tuple[Any, Any]:
    reconstruction, mean, log_variance = model(x, noise)
    return (reconstruction, mean, log_variance), twins.vae_loss(torch, reconstruction, x, mean,
                                                                log_variance)


# name: (model in dparray.cli.models, twin builder, sizes, objective, training, inputs)
CASES: dict[str, tuple[str, Callable[..., Any], dict[str, Any], Any, bool,
                       Callable[[], list[Any]]]] = {
    "gpt": ("GPT", twins.gpt, {"vocabulary": 29, "block": 16, "layers": 2, "heads": 4,
                               "width": 32}, _language, True,
            lambda: [torch.randint(0, 29, (3, 12)), torch.randint(0, 29, (3, 12))]),
    "resnet18": ("ResNet18", twins.resnet18, {"classes": 7, "base": 2}, _classes, True,
                 lambda: [torch.randn(2, 3, 40, 40), torch.randint(0, 7, (2,))]),
    "lstm_language_model": ("LSTMLanguageModel", twins.lstm_language_model,
                            {"vocabulary": 50, "width": 12, "layers": 2, "dropout": 0.2},
                            _language, False,
                            lambda: [torch.randint(0, 50, (3, 7)), torch.randint(0, 50, (3, 7))]),
    "transformer_language_model": (
        "TransformerLanguageModel", twins.transformer_language_model,
        {"vocabulary": 50, "width": 16, "heads": 2, "hidden": 24, "layers": 2, "dropout": 0.2,
         "length": 9}, _log_probability, False,
        lambda: [torch.randint(0, 50, (3, 7)), torch.randint(0, 50, (3, 7))]),
    "mnist_net": ("MnistNet", twins.mnist_net, {"channels": [4, 6], "hidden": 10, "image": 12},
                  _nll, False, lambda: [torch.randn(5, 1, 12, 12), torch.randint(0, 10, (5,))]),
    "vae": ("VAE", twins.vae, {"pixels": 30, "hidden": 16, "latent": 5}, _vae, True,
            lambda: [torch.rand(6, 30), torch.randn(6, 5)]),
}


def record(builder: Callable[..., Any], sizes: dict[str, Any], objective: Any, training: bool,
           inputs: list[Any], scale: float) -> dict[str, torch.Tensor]:
    model = builder(torch, **{k: tuple(v) if isinstance(v, list) else v
                              for k, v in sizes.items()})
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape) * scale)
    model.train(training)
    tensors = {f"state.{k}": v.detach().clone() for k, v in model.state_dict().items()}
    tensors.update({f"input.{i}": x for i, x in enumerate(inputs)})
    outputs, loss = objective(model, *inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    tensors.update({f"output.{i}": out.detach() for i, out in enumerate(outputs)})
    tensors["loss"] = loss.detach().reshape(1)
    named = dict(model.named_parameters())  # a tied parameter once, under its first name
    for name, grad in zip(named, torch.autograd.grad(loss, list(named.values())), strict=True):
        tensors[f"grad.{name}"] = grad
    for name, buffer in model.named_buffers():
        tensors[f"after.{name}"] = buffer.detach().clone()
    return tensors


def main() -> None:
    torch.manual_seed(0)
    torch.set_default_dtype(torch.float64)
    tensors: dict[str, torch.Tensor] = {}
    described = {}
    for case, (model, builder, sizes, objective, training, make_inputs) in CASES.items():
        scale = 1.0 if case == "resnet18" else 0.5
        for key, value in record(builder, sizes, objective, training, make_inputs(),
                                 scale).items():
            tensors[f"{case}/{key}"] = value.detach().clone().contiguous()
        described[case] = {"model": model, "sizes": sizes, "training": training}
    path = HERE / "workloads.safetensors"
    save_file(tensors, path, metadata={"workload_cases": json.dumps(described),
                                       "torch": torch.__version__})
    print(f"wrote {path} ({path.stat().st_size} bytes, {len(described)} cases)")


if __name__ == "__main__":
    main()
