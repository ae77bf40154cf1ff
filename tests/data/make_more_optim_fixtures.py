"""PyTorch references for Adadelta, Rprop, ASGD and LBFGS: ``optim_more.safetensors``.

    ../torch-venv/bin/python tests/data/make_more_optim_fixtures.py   # any environment with torch

Made with PyTorch 2.13.0 (CPU) in float64, with float64 as PyTorch's default dtype too.

Adadelta, Rprop and ASGD (metadata ``optimizers``) follow ``make_optim_fixtures.py``'s layout
exactly (three parameters in two groups, ``STEPS`` steps, a skipped gradient, the final state),
so the tests of ``optim.safetensors`` read both files alike.

LBFGS (metadata ``lbfgs``, JSON) minimises one of two losses, written alike in PyTorch here
and in dparray in the test: ``"logistic"`` (cross-entropy of ``x @ w.T + b`` against ``y``
plus ``0.05 * sum(w ** 2)``; data ``<case>/data.x``, ``<case>/data.y``) and
``"rosenbrock"`` (Rosenbrock's function of ``x`` plus ``sum((w @ v - target) ** 2) + 0.1 *
sum(w ** 4)``; data ``<case>/data.v``, ``<case>/data.target``). The parameters start at
``<case>/param.<i>``; each of ``steps`` calls of ``step(closure)`` returns ``<case>/loss.<s>``
and leaves them at ``<case>/after.<s>.<i>``. The final state's vectors are
``<case>/state.d``, ``<case>/state.prev_flat_grad``, ``<case>/state.old_dirs.<j>`` and
``<case>/state.old_stps.<j>``; the JSON gives the keyword arguments, the state's keys in
PyTorch's order, its numbers (``ro`` and ``al`` as lists, ``None`` kept), and the groups.
"""

from __future__ import annotations

import json
import math
import pathlib
from collections.abc import Callable
from typing import Any

import torch
from make_optim_fixtures import optimizer_case
from safetensors.torch import save_file

HERE = pathlib.Path(__file__).parent

OPTIMIZERS: list[tuple[str, str, dict[str, Any], list[dict[str, Any]]]] = [
    ("adadelta_defaults", "Adadelta", {}, [{}, {"lr": 0.5}]),
    ("adadelta_decay", "Adadelta", {"lr": 0.3, "rho": 0.8, "eps": 1e-4, "weight_decay": 0.1},
     [{"rho": 0.95}, {}]),
    ("rprop_defaults", "Rprop", {}, [{}, {"lr": 0.05}]),
    ("rprop_etas_step_sizes", "Rprop",
     {"lr": 0.1, "etas": (0.3, 1.5), "step_sizes": (0.01, 0.2)}, [{"etas": (0.6, 1.1)}, {}]),
    ("asgd_defaults", "ASGD", {}, [{}, {"lr": 0.05}]),
    ("asgd_averaging", "ASGD",
     {"lr": 0.05, "lambd": 0.01, "alpha": 0.6, "t0": 3, "weight_decay": 0.1}, [{"t0": 0}, {}]),
]

LBFGS_CASES: list[tuple[str, str, dict[str, Any], int]] = [
    ("lbfgs_defaults_logistic", "logistic", {}, 3),
    ("lbfgs_wolfe_logistic", "logistic", {"line_search_fn": "strong_wolfe"}, 3),
    ("lbfgs_converged", "logistic",
     {"line_search_fn": "strong_wolfe", "max_iter": 50, "tolerance_grad": 1e-5}, 3),
    ("lbfgs_short_history_rosenbrock", "rosenbrock",
     {"lr": 0.5, "max_iter": 7, "history_size": 3}, 4),
    ("lbfgs_wolfe_rosenbrock", "rosenbrock",
     {"line_search_fn": "strong_wolfe", "max_iter": 4, "history_size": 2}, 4),
    ("lbfgs_max_eval_rosenbrock", "rosenbrock",
     {"line_search_fn": "strong_wolfe", "max_iter": 10, "max_eval": 6}, 2),
]


def logistic(params: list[torch.Tensor], data: dict[str, torch.Tensor]) -> torch.Tensor:
    w, b = params
    logits = data["x"] @ w.T + b
    return torch.nn.functional.cross_entropy(logits, data["y"]) + 0.05 * (w**2).sum()


def rosenbrock(params: list[torch.Tensor], data: dict[str, torch.Tensor]) -> torch.Tensor:
    x, w = params
    valley = (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
    return valley + ((w @ data["v"] - data["target"]) ** 2).sum() + 0.1 * (w**4).sum()


LOSSES: dict[str, Callable[[list[torch.Tensor], dict[str, torch.Tensor]], torch.Tensor]] = {
    "logistic": logistic, "rosenbrock": rosenbrock}


def problem(kind: str, generator: torch.Generator) -> tuple[list[torch.Tensor],
                                                            dict[str, torch.Tensor]]:
    """Starting parameters and data of a loss."""
    if kind == "logistic":
        x = torch.randn(20, 4, generator=generator)
        y = torch.randint(0, 3, (20,), generator=generator)
        params = [torch.randn(3, 4, generator=generator), torch.randn(3, generator=generator)]
        return params, {"x": x, "y": y}
    v, target = torch.randn(3, generator=generator), torch.randn(2, generator=generator)
    params = [torch.randn(6, generator=generator), torch.randn(2, 3, generator=generator)]
    return params, {"v": v, "target": target}


def _number(value: Any) -> Any:
    return value.item() if isinstance(value, torch.Tensor) else value


def lbfgs_case(kind: str, kwargs: dict[str, Any], steps: int, generator: torch.Generator
               ) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    start, data = problem(kind, generator)
    params = [p.clone().requires_grad_() for p in start]
    tensors = {f"param.{i}": p for i, p in enumerate(start)}
    tensors.update({f"data.{key}": value for key, value in data.items()})
    opt = torch.optim.LBFGS(params, **kwargs)

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = LOSSES[kind](params, data)
        loss.backward()
        return loss

    for step in range(steps):
        tensors[f"loss.{step}"] = opt.step(closure).detach().clone()
        for i, p in enumerate(params):
            tensors[f"after.{step}.{i}"] = p.detach().clone()
    saved = opt.state_dict()
    (entry,) = saved["state"].values()
    numbers: dict[str, Any] = {}
    for key, value in entry.items():
        if key in ("d", "prev_flat_grad"):
            tensors[f"state.{key}"] = value.clone()
        elif key in ("old_dirs", "old_stps"):
            for j, vector in enumerate(value):
                tensors[f"state.{key}.{j}"] = vector.clone()
            numbers[f"{key}_count"] = len(value)
        elif key in ("ro", "al"):
            numbers[key] = [None if v is None else _number(v) for v in value]
        else:
            numbers[key] = _number(value)
    described = {"loss": kind, "kwargs": kwargs, "steps": steps, "state_keys": list(entry),
                 "state_numbers": numbers, "param_groups": saved["param_groups"]}
    return tensors, described


def main() -> pathlib.Path:
    torch.set_default_dtype(torch.float64)
    generator = torch.Generator().manual_seed(0)
    tensors: dict[str, torch.Tensor] = {}
    optimizers, lbfgs = {}, {}
    for name, kind, kwargs, groups in OPTIMIZERS:
        arrays, optimizers[name] = optimizer_case(name, kind, kwargs, groups, generator)
        tensors.update({f"{name}/{key}": value for key, value in arrays.items()})
    for name, loss, kwargs, steps in LBFGS_CASES:
        arrays, lbfgs[name] = lbfgs_case(loss, kwargs, steps, generator)
        tensors.update({f"{name}/{key}": value for key, value in arrays.items()})
    if any(not math.isfinite(v) for t in tensors.values() for v in t.flatten().tolist()):
        raise AssertionError("a reference is not finite")
    path = HERE / "optim_more.safetensors"
    save_file({k: v.contiguous() for k, v in tensors.items()}, path,
              metadata={"optimizers": json.dumps(optimizers), "lbfgs": json.dumps(lbfgs),
                        "torch": torch.__version__})
    return path


if __name__ == "__main__":
    print(main())
