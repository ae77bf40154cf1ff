"""Pieces several optimizers share: the checks of their options, and PyTorch's ``lerp``.

An optimizer declares how each of its options is checked in ``option_checks``, a mapping from
the option's name to one of the checks below (``check(value, name, where)`` returns the checked,
normalised value: numbers as Python floats, so NEP 50 never promotes a parameter).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dparray._checks import check_bool, check_number, describe

OptionCheck = Callable[[Any, str, str], Any]


def non_negative(value: Any, name: str, where: str) -> float:
    """A finite number at least 0 (a learning rate, ``eps``, a decay, a momentum)."""
    return check_number(value, name, where, minimum=0.0)


def unit_interval(value: Any, name: str, where: str) -> float:
    """A number in ``[0, 1]`` (RMSprop's ``alpha``)."""
    return check_number(value, name, where, minimum=0.0, maximum=1.0)


def flag(value: Any, name: str, where: str) -> bool:
    """A bool (``nesterov``, ``centered``, ...)."""
    return check_bool(value, name, where)


def betas(value: Any, name: str, where: str) -> tuple[float, float]:
    """A ``betas`` pair (``check_betas``)."""
    return check_betas(value, where)


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
