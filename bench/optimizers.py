"""One optimizer step over 21.5M float32 parameters (a ResNet's worth, in 17 tensors), each
optimizer with its common options, dparray against PyTorch.

    python -m bench.optimizers     # medians (ms) of alternated processes, one library each

Each library runs in a process of its own, the processes alternate ``PROCESSES`` times
(``alternated.py``), and each reports the median of 20 timed steps after 3 untimed ones; the
table gives the median of those.
"""

from __future__ import annotations

from typing import Any

from .alternated import compare, median_ms

PROCESSES = 3
SHAPES = [(512, 512, 3, 3)] * 8 + [(1000, 512)] + [(256, 256, 3, 3)] * 8
OPTIMIZERS: dict[str, tuple[str, dict[str, Any]]] = {
    "SGD, momentum, weight decay": ("SGD", {"lr": 0.01, "momentum": 0.9,
                                            "weight_decay": 1e-4}),
    "Adam": ("Adam", {"lr": 1e-3}),
    "AdamW": ("AdamW", {"lr": 1e-3, "weight_decay": 0.01}),
    "RMSprop": ("RMSprop", {"lr": 1e-3}),
    "RMSprop centered, momentum": ("RMSprop", {"lr": 1e-3, "centered": True, "momentum": 0.9}),
    "Adagrad": ("Adagrad", {"lr": 1e-2}),
    "Adadelta": ("Adadelta", {}),
    "Adamax": ("Adamax", {}),
    "NAdam": ("NAdam", {}),
}


def measure(library: str) -> dict[str, float]:
    """Median milliseconds of one step of each optimizer, here."""
    import numpy as np

    rng = np.random.default_rng(0)
    values = [rng.standard_normal(shape).astype(np.float32) for shape in SHAPES]
    gradients = [rng.standard_normal(shape).astype(np.float32) for shape in SHAPES]
    if library == "torch":
        import torch

        params = [torch.nn.Parameter(torch.from_numpy(v)) for v in values]
        for p, g in zip(params, gradients, strict=True):
            p.grad = torch.from_numpy(g)
        namespace: Any = torch.optim

        def stepper(optimizer: Any) -> Any:
            return optimizer.step
    else:
        import dparray as dp

        params = [dp.nn.Parameter(dp.tensor(v)) for v in values]
        grads = dp.Gradients({p: dp.tensor(g) for p, g in zip(params, gradients, strict=True)})
        namespace = dp.optim

        def stepper(optimizer: Any) -> Any:
            return lambda: optimizer.step(grads)
    return {label: median_ms(stepper(getattr(namespace, name)(params, **options)))
            for label, (name, options) in OPTIMIZERS.items()}


def main() -> None:
    compare(__spec__.name, measure, PROCESSES, "21.5M float32 parameters, one step")


if __name__ == "__main__":
    main()
