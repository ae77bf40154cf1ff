"""PyTorch references for the optimizers and learning-rate schedules: ``optim.safetensors``.

    ../torch-venv/bin/python tests/data/make_optim_fixtures.py   # any environment with torch

Made with PyTorch 2.13.0 (CPU) in float64, with float64 as PyTorch's default dtype too, so that
it keeps ``step`` and NAdam's ``mu_product`` in double precision, as dparray does.

Optimizer cases (metadata ``optimizers``, JSON): three parameters in two groups (``[0]`` and
``[1, 2]``) start at ``<case>/param.<i>`` and take ``STEPS`` steps, step ``s`` with the
gradients ``<case>/grad.<s>.<i>`` (parameter 2 has none at step 2: PyTorch skips it, so its
step count lags), ending at ``<case>/after.<s>.<i>``. ``<case>/state.<i>.<key>`` holds the
final state's tensors; the JSON gives the optimizer, its keyword arguments, each group's own
options, and the rest of the final state dict: each parameter's state keys in PyTorch's
order, its 0-d entries as numbers, and the groups' options.

Schedule cases (metadata ``schedules``): an optimizer (SGD with momentum, or Adam) with two
groups at ``LRS``, the schedule ``spec`` (a name and keyword arguments, where a function is
``{"lambda": source}`` and a nested schedule is another spec), the number of steps and, for
ReduceLROnPlateau, the metric of each step. ``<case>/lr`` holds every group's rate after
construction and after each step (``steps + 1`` rows); ``<case>/momentum`` the momentum (or
first beta) the same way, which OneCycleLR cycles. A OneCycleLR case takes ``total_steps - 1``
steps, the rates of its ``total_steps`` batches: at the step after the last batch PyTorch
extrapolates past the cycle, where dparray keeps the final rate.
"""

from __future__ import annotations

import json
import math
import pathlib
import warnings
from typing import Any

import torch
from safetensors.torch import save_file

HERE = pathlib.Path(__file__).parent
STEPS = 8
SHAPES = [(3, 4), (5,), (2, 1, 3)]
SKIPPED = (2, 2)  # (step, parameter): no gradient for parameter 2 at step 2
LRS = [0.1, 0.02]

OPTIMIZERS: list[tuple[str, str, dict[str, Any], list[dict[str, Any]]]] = [
    ("rmsprop_defaults", "RMSprop", {}, [{}, {"lr": 0.02}]),
    ("rmsprop_decay_momentum", "RMSprop",
     {"lr": 0.005, "alpha": 0.9, "eps": 1e-6, "weight_decay": 0.1, "momentum": 0.5},
     [{}, {"momentum": 0.0}]),
    ("rmsprop_centered_momentum", "RMSprop", {"centered": True, "momentum": 0.9},
     [{"centered": False}, {"lr": 0.001}]),
    ("rmsprop_centered_small_alpha", "RMSprop",
     {"alpha": 0.3, "centered": True, "weight_decay": 0.01}, [{}, {"alpha": 0.7}]),
    ("adagrad_defaults", "Adagrad", {}, [{}, {"lr": 0.1}]),
    ("adagrad_decay_accumulator", "Adagrad",
     {"lr": 0.05, "lr_decay": 0.1, "weight_decay": 0.2, "initial_accumulator_value": 0.5,
      "eps": 1e-6}, [{"lr_decay": 0.0}, {}]),
    ("nadam_defaults", "NAdam", {}, [{}, {"lr": 0.01}]),
    ("nadam_l2", "NAdam",
     {"lr": 0.01, "betas": (0.8, 0.95), "eps": 1e-6, "weight_decay": 0.1,
      "momentum_decay": 0.01}, [{}, {"betas": (0.3, 0.9)}]),
    ("nadam_decoupled", "NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
     [{}, {"weight_decay": 0.0}]),
    ("adamax_defaults", "Adamax", {}, [{}, {"lr": 0.01}]),
    ("adamax_decay", "Adamax", {"lr": 0.01, "betas": (0.7, 0.9), "eps": 1e-6, "weight_decay": 0.05},
     [{"betas": (0.4, 0.99)}, {}]),
]


def _schedule(name: str, **kwargs: Any) -> dict[str, Any]:
    return {"schedule": name, "kwargs": kwargs}


def _lambda(source: str) -> dict[str, str]:
    return {"lambda": source}


SCHEDULES: list[tuple[str, str, dict[str, Any], int]] = [
    ("lambda_one", "SGD", _schedule("LambdaLR", lr_lambda=_lambda("lambda epoch: 0.95 ** epoch")),
     30),
    ("lambda_per_group", "SGD", _schedule("LambdaLR", lr_lambda=[
        _lambda("lambda epoch: 1.0 / (1 + epoch)"),
        _lambda("lambda epoch: min(1.0, (epoch + 1) / 10)")]), 30),
    ("exponential", "SGD", _schedule("ExponentialLR", gamma=0.9), 40),
    ("multistep_repeated_unsorted", "SGD",
     _schedule("MultiStepLR", milestones=[12, 3, 7, 7], gamma=0.5), 20),
    ("multistep_at_zero", "SGD", _schedule("MultiStepLR", milestones=[0, 5], gamma=0.3), 10),
    ("linear_defaults", "SGD", _schedule("LinearLR"), 10),
    ("linear_window", "SGD",
     _schedule("LinearLR", start_factor=0.25, end_factor=0.75, total_iters=10), 15),
    ("linear_to_zero", "SGD",
     _schedule("LinearLR", start_factor=1.0, end_factor=0.0, total_iters=20), 25),
    ("step", "SGD", _schedule("StepLR", step_size=3, gamma=0.5), 12),
    ("cosine_past_t_max", "SGD", _schedule("CosineAnnealingLR", T_max=10, eta_min=0.001), 25),
    ("one_cycle_cos", "SGD", _schedule("OneCycleLR", max_lr=1.0, total_steps=40), 39),
    ("one_cycle_linear_three_phase", "SGD", _schedule(
        "OneCycleLR", max_lr=[1.0, 0.5], epochs=4, steps_per_epoch=10, pct_start=0.25,
        anneal_strategy="linear", three_phase=True, div_factor=10.0, final_div_factor=100.0,
        base_momentum=0.8, max_momentum=[0.9, 0.95]), 39),
    ("one_cycle_three_phase_cos", "SGD", _schedule(
        "OneCycleLR", max_lr=0.5, total_steps=25, pct_start=0.35, three_phase=True), 24),
    ("one_cycle_adam_betas", "Adam",
     _schedule("OneCycleLR", max_lr=0.01, total_steps=30, pct_start=0.4), 29),
    ("one_cycle_no_momentum", "SGD",
     _schedule("OneCycleLR", max_lr=[0.3, 0.6], total_steps=20, cycle_momentum=False), 19),
    ("sequential_warmup_cosine", "SGD", _schedule(
        "SequentialLR", schedulers=[
            _schedule("LinearLR", start_factor=0.1, total_iters=5),
            _schedule("CosineAnnealingLR", T_max=20)], milestones=[5]), 30),
    ("sequential_three", "SGD", _schedule(
        "SequentialLR", schedulers=[
            _schedule("ExponentialLR", gamma=0.8),
            _schedule("StepLR", step_size=2, gamma=0.5),
            _schedule("LinearLR", start_factor=0.5, end_factor=1.0, total_iters=4)],
        milestones=[4, 10]), 20),
    ("plateau_min_rel", "SGD", _schedule("ReduceLROnPlateau", factor=0.5, patience=2), 40),
    ("plateau_max_abs_cooldown", "SGD", _schedule(
        "ReduceLROnPlateau", mode="max", threshold_mode="abs", threshold=0.05, cooldown=2,
        factor=0.3, patience=1, min_lr=[0.01, 0.005]), 40),
    ("plateau_min_abs_eps", "SGD", _schedule(
        "ReduceLROnPlateau", threshold_mode="abs", threshold=0.01, factor=0.5, patience=0,
        eps=0.004), 30),
    ("plateau_max_rel", "SGD", _schedule(
        "ReduceLROnPlateau", mode="max", threshold=0.02, patience=3, min_lr=0.004), 40),
]


def optimizer_case(name: str, kind: str, kwargs: dict[str, Any], groups: list[dict[str, Any]],
                   generator: torch.Generator) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    params = [torch.randn(shape, generator=generator).requires_grad_() for shape in SHAPES]
    tensors = {f"param.{i}": p.detach().clone() for i, p in enumerate(params)}
    members = [[params[0]], params[1:]]
    opt = getattr(torch.optim, kind)(
        [{"params": ps, **options} for ps, options in zip(members, groups, strict=True)],
        **kwargs)
    for step in range(STEPS):
        for i, p in enumerate(params):
            if (step, i) == SKIPPED:
                p.grad = None
                continue
            p.grad = torch.randn(p.shape, generator=generator)
            tensors[f"grad.{step}.{i}"] = p.grad.clone()
        opt.step()
        for i, p in enumerate(params):
            tensors[f"after.{step}.{i}"] = p.detach().clone()
    saved = opt.state_dict()
    keys, scalars = {}, {}
    for index, entry in saved["state"].items():
        keys[index] = list(entry)
        scalars[index] = {}
        for key, value in entry.items():
            if value.ndim:
                tensors[f"state.{index}.{key}"] = value.clone()
            else:
                scalars[index][key] = value.item()
    described = {"optimizer": kind, "kwargs": kwargs, "groups": groups,
                 "state_keys": keys, "state_scalars": scalars,
                 "param_groups": saved["param_groups"]}
    return tensors, described


def build_schedule(spec: dict[str, Any], opt: torch.optim.Optimizer) -> Any:
    """The schedule a spec describes (the test builds dparray's the same way)."""
    kwargs = {}
    for key, value in spec["kwargs"].items():
        if key == "schedulers":
            value = [build_schedule(part, opt) for part in value]
        elif key == "lr_lambda":
            value = ([eval(f["lambda"]) for f in value] if isinstance(value, list)
                     else eval(value["lambda"]))
        kwargs[key] = value
    return getattr(torch.optim.lr_scheduler, spec["schedule"])(opt, **kwargs)


def metrics_for(steps: int, generator: torch.Generator) -> list[float]:
    """A loss that falls, then flattens out with noise: plateaus for the schedule to find."""
    noise = torch.randn(steps, generator=generator)
    return [1.0 / (1.0 + 0.3 * t) + 0.4 + 0.03 * noise[t].item() for t in range(steps)]


def momentum_of(group: dict[str, Any]) -> float:
    return group["betas"][0] if "betas" in group else group["momentum"]


def schedule_case(kind: str, spec: dict[str, Any], steps: int,
                  generator: torch.Generator) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    groups = [{"params": [torch.zeros(1, requires_grad=True)], "lr": lr} for lr in LRS]
    opt = (torch.optim.SGD(groups, momentum=0.9) if kind == "SGD"
           else torch.optim.Adam(groups))
    schedule = build_schedule(spec, opt)
    metrics = metrics_for(steps, generator) if spec["schedule"] == "ReduceLROnPlateau" else None
    if metrics is not None and spec["kwargs"].get("mode") == "max":
        metrics = [2.0 - m for m in metrics]  # an accuracy that rises and levels off
    rates, momenta = [], []
    for step in range(steps + 1):
        if step:
            opt.step()  # no gradients: it changes nothing, but PyTorch wants it first
            if metrics is None:
                schedule.step()
            else:
                schedule.step(metrics[step - 1])
        rates.append([group["lr"] for group in opt.param_groups])
        momenta.append([momentum_of(group) for group in opt.param_groups])
    tensors = {"lr": torch.tensor(rates)}
    if spec["schedule"] == "OneCycleLR":
        tensors["momentum"] = torch.tensor(momenta)
    described: dict[str, Any] = {"optimizer": kind, "spec": spec, "steps": steps}
    if metrics is not None:
        described["metrics"] = metrics
    return tensors, described


def main() -> pathlib.Path:
    torch.set_default_dtype(torch.float64)
    generator = torch.Generator().manual_seed(0)
    tensors: dict[str, torch.Tensor] = {}
    optimizers, schedules = {}, {}
    for name, kind, kwargs, groups in OPTIMIZERS:
        arrays, optimizers[name] = optimizer_case(name, kind, kwargs, groups, generator)
        tensors.update({f"{name}/{key}": value for key, value in arrays.items()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's notes on stepping without gradients
        for name, kind, spec, steps in SCHEDULES:
            arrays, schedules[name] = schedule_case(kind, spec, steps, generator)
            tensors.update({f"{name}/{key}": value for key, value in arrays.items()})
    if any(not math.isfinite(v) for t in tensors.values() for v in t.flatten().tolist()):
        raise AssertionError("a reference is not finite")
    path = HERE / "optim.safetensors"
    save_file({k: v.contiguous() for k, v in tensors.items()}, path,
              metadata={"optimizers": json.dumps(optimizers), "schedules": json.dumps(schedules),
                        "torch": torch.__version__})
    return path


if __name__ == "__main__":
    print(main())
