"""Pieces several optimizers share: the check of a ``betas`` pair, and PyTorch's ``lerp``."""

from __future__ import annotations

from typing import Any

from dparray._checks import check_number, describe


def check_betas(value: Any, where: str) -> tuple[float, float]:
    """``betas`` as a tuple of two floats, each in ``[0, 1)``; a TypeError unless it is a pair
    of numbers, a ValueError for a wrong length or a value out of range."""
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{where}: betas must be a pair of numbers, got {describe(value)}")
    if len(value) != 2:
        raise ValueError(f"{where}: betas must be a pair of numbers, got {value!r}")
    beta1, beta2 = (check_number(b, f"betas[{i}]", where, minimum=0.0, below=1.0)
                    for i, b in enumerate(value))
    return beta1, beta2


def lerp(start: Any, end: Any, weight: float) -> Any:
    """``start + weight * (end - start)`` computed as ``torch.lerp`` computes it, from the
    nearer end (``end - (end - start) * (1 - weight)`` once ``weight`` reaches 0.5), so moving
    averages round as PyTorch's do."""
    if abs(weight) < 0.5:
        return start + weight * (end - start)
    return end - (end - start) * (1.0 - weight)
