"""Write PyTorch reference fixtures for layers: one safetensors file per family of layers.

A generator script (``tests/data/make_<family>_fixtures.py``) builds PyTorch modules in
float64, calls ``write(family, cases)``, and commits the file it makes; the test suite reads
it with ``tests/torch_reference.py`` and needs no PyTorch. For each case the file holds:

* ``<case>/input.<i>``: the positional inputs; ``<case>/kwarg.<name>``: tensor keyword inputs;
* ``<case>/state.<key>``: the module's state dict (PyTorch's names and layouts), and
  ``<case>/after.<key>``: its buffers after the call (running statistics);
* ``<case>/output.<i>``: the outputs, flattened in order (tuples and nested tuples unrolled);
* ``<case>/cotangent.<i>``: a random weight per floating output; the gradients below are those
  of ``sum(output_i * cotangent_i)``;
* ``<case>/grad.input.<i>`` and ``<case>/grad.state.<key>``: gradients of the floating inputs
  and of the parameters.

The header's metadata ``cases`` is JSON: for each case the layer's name in ``dparray.nn``, its
constructor arguments, non-tensor keyword inputs, and whether it runs in training mode. A
tensor constructor argument (a loss's class weights) is stored as ``<case>/arg.<name>`` and
written in the JSON as ``{"tensor": "arg.<name>"}``. A layer constructor argument (a
Transformer's encoder layer) is given in ``kwargs`` as ``{"layer": name, "kwargs": {...}}``,
which the reader builds as it builds the case's own layer.

    ../torch-venv/bin/python tests/data/make_<family>_fixtures.py    # any env with torch
"""

from __future__ import annotations

import json
import pathlib
from dataclasses import dataclass, field
from typing import Any

import torch
from safetensors.torch import save_file

HERE = pathlib.Path(__file__).parent


@dataclass
class TorchCase:
    """One module call to record; ``layer`` and ``kwargs`` must build the same module in
    ``dparray.nn`` (``getattr(dparray.nn, layer)(**kwargs, dtype="float64")``)."""

    name: str
    layer: str
    kwargs: dict[str, Any]
    module: torch.nn.Module
    inputs: list[torch.Tensor]
    tensor_kwargs: dict[str, torch.Tensor] = field(default_factory=dict)
    plain_kwargs: dict[str, Any] = field(default_factory=dict)
    training: bool = False


def randomized(module: torch.nn.Module, scale: float = 1.0) -> torch.nn.Module:
    """``module`` with every parameter drawn from ``N(0, scale^2)``: away from PyTorch's ones
    and zeros, so that every gradient shows (a padding row too: its value must survive)."""
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape) * scale)
    return module


def with_statistics(module: torch.nn.Module) -> torch.nn.Module:
    """A randomised batch or instance norm with running statistics away from 0 and 1."""
    module = randomized(module)
    module.running_mean.copy_(torch.randn(module.num_features))
    module.running_var.copy_(torch.rand(module.num_features) + 0.5)
    module.num_batches_tracked.fill_(7)
    return module


def flatten(value: Any) -> list[torch.Tensor]:
    """Tensors of a nested tuple/list output, depth first, ``None`` left out."""
    if value is None:
        return []
    if isinstance(value, torch.Tensor):
        return [value]
    return [t for item in value for t in flatten(item)]


def record(case: TorchCase, generator: torch.Generator) -> dict[str, torch.Tensor]:
    module = case.module.double()
    module.train(case.training)
    originals = [x.double() if x.is_floating_point() else x for x in case.inputs]
    inputs = [x.detach().clone().requires_grad_(x.is_floating_point()) for x in originals]
    tensor_kwargs = {k: v.double() if v.is_floating_point() else v
                     for k, v in case.tensor_kwargs.items()}
    state = {k: v.detach().clone() for k, v in module.state_dict().items()}
    outputs = flatten(module(*inputs, **tensor_kwargs, **case.plain_kwargs))
    tensors: dict[str, torch.Tensor] = {}
    for i, x in enumerate(originals):
        tensors[f"input.{i}"] = x
    for key, value in tensor_kwargs.items():
        tensors[f"kwarg.{key}"] = value
    for key, value in state.items():
        tensors[f"state.{key}"] = value
    for key, value in module.state_dict().items():
        if key not in dict(module.named_parameters()):  # buffers, as the call left them
            tensors[f"after.{key}"] = value.detach().clone()
    total = 0
    for i, out in enumerate(outputs):
        tensors[f"output.{i}"] = out.detach()
        if out.is_floating_point() and out.requires_grad:
            cotangent = torch.randn(out.shape, generator=generator, dtype=out.dtype)
            tensors[f"cotangent.{i}"] = cotangent
            total = total + (out * cotangent).sum()
    named = dict(module.named_parameters())
    wanted = [x for x in inputs if x.requires_grad] + list(named.values())
    if isinstance(total, torch.Tensor) and wanted:
        grads = torch.autograd.grad(total, wanted, allow_unused=True)
        floating = [i for i, x in enumerate(inputs) if x.requires_grad]
        for i, g in zip(floating, grads[:len(floating)], strict=True):
            if g is not None:
                tensors[f"grad.input.{i}"] = g
        for key, g in zip(named, grads[len(floating):], strict=True):
            if g is not None:
                tensors[f"grad.state.{key}"] = g
    return tensors


def recorded(cases: list[TorchCase], generator: torch.Generator, with_repr: bool = False
             ) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Every case recorded, its arrays under ``<name>/``, and described as the tests read it
    (``torch_reference.ReferenceCase``), with PyTorch's repr of its module if ``with_repr``."""
    tensors: dict[str, torch.Tensor] = {}
    described: dict[str, Any] = {}
    for case in cases:
        if "/" in case.name:
            raise ValueError(f"case names cannot contain '/': {case.name!r}")
        for key, value in record(case, generator).items():
            tensors[f"{case.name}/{key}"] = value.detach().clone().contiguous()
        kwargs = {}
        for key, value in case.kwargs.items():  # tensor arguments (class weights) as tensors
            if isinstance(value, torch.Tensor):
                tensors[f"{case.name}/arg.{key}"] = value.double().contiguous()
                value = {"tensor": f"arg.{key}"}
            kwargs[key] = value
        described[case.name] = {"layer": case.layer, "kwargs": kwargs,
                                "plain_kwargs": case.plain_kwargs, "training": case.training}
        if with_repr:
            described[case.name]["repr"] = repr(case.module)
    return tensors, described


def write(family: str, cases: list[TorchCase], seed: int = 0) -> pathlib.Path:
    """Record every case and write ``tests/data/<family>.safetensors``."""
    tensors, described = recorded(cases, torch.Generator().manual_seed(seed))
    path = HERE / f"{family}.safetensors"
    save_file(tensors, path, metadata={"cases": json.dumps(described),
                                       "torch": torch.__version__})
    return path
