"""Elementwise activations and the losses built on them, forward and backward over 4096 x
512 float32 values, dparray against PyTorch.

    python -m bench.activations        # medians (ms) of alternated processes, one library each

Each library runs in a process of its own, the processes alternate ``PROCESSES`` times
(``alternated.py``), and each reports the median of 20 timed calls after 3 untimed ones; the
table gives the median of those. Every activation here, and both losses, has a NumPy kernel.
"""

from __future__ import annotations

from typing import Any

from .alternated import compare, median_ms

SHAPE = (4096, 512)
PROCESSES = 3
ACTIVATIONS = ("relu", "leaky_relu", "relu6", "hardswish", "gelu", "sigmoid", "silu", "tanh",
               "softplus", "logsigmoid", "elu", "selu", "mish")


def measure(library: str) -> dict[str, float]:
    """Median milliseconds of each activation and loss, forward and backward, here."""
    import numpy as np

    rng = np.random.default_rng(0)
    values = rng.standard_normal(SHAPE).astype(np.float32)
    cotangent = rng.standard_normal(SHAPE).astype(np.float32)
    labels = (rng.random(SHAPE) < 0.5).astype(np.float32)
    probabilities = rng.uniform(0.01, 0.99, SHAPE).astype(np.float32)
    if library == "torch":
        import torch

        F: Any = torch.nn.functional
        functions = {name: getattr(F, name, None) or getattr(torch, name) for name in ACTIVATIONS}
        tensor = torch.from_numpy
    else:
        import dparray as dp
        from dparray.nn import functional as F

        functions = {name: getattr(F, name) for name in ACTIVATIONS}
        tensor = dp.tensor
    x, grad, t = tensor(values).requires_grad_(), tensor(cotangent), tensor(labels)
    p = tensor(probabilities).requires_grad_()

    def activation(function: Any) -> Any:
        return lambda: function(x).backward(grad)

    timings = {name: median_ms(activation(function)) for name, function in functions.items()}
    timings["binary_cross_entropy"] = median_ms(
        lambda: F.binary_cross_entropy(p, t).backward())
    timings["bce_with_logits"] = median_ms(
        lambda: F.binary_cross_entropy_with_logits(x, t).backward())
    return timings


def main() -> None:
    compare(__spec__.name, measure, PROCESSES,
            f"{SHAPE[0]} x {SHAPE[1]} float32, forward and backward")


if __name__ == "__main__":
    main()
