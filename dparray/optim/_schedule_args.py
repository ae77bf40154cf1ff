"""Argument and state checks the learning-rate schedules share."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dparray._checks import check_number
from dparray.optim.optimizer import Optimizer


def check_optimizer(optimizer: Any, where: str) -> Optimizer:
    """``optimizer`` when it is a dparray ``Optimizer``, else a TypeError."""
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{where} needs an Optimizer, got {type(optimizer).__name__}")
    return optimizer


def per_group(value: Any, name: str, where: str, optimizer: Optimizer,
              **bounds: Any) -> list[float]:
    """A number, or a list with one number per parameter group, as a list of floats."""
    count = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != count:
            raise ValueError(f"{where}: {name} must be a number or {count} numbers (one per "
                             f"parameter group), got {len(value)}")
        return [check_number(v, f"{name}[{i}]", where, **bounds) for i, v in enumerate(value)]
    return [check_number(value, name, where, **bounds)] * count


def check_state(state: Any, keys: Sequence[str], where: str) -> Mapping[str, Any]:
    """``state`` when it is a mapping holding ``keys`` (other keys, such as those of a
    PyTorch scheduler's state dict, are ignored)."""
    if not isinstance(state, Mapping):
        raise TypeError(f"{where} needs a mapping, got {type(state).__name__}")
    missing = [key for key in keys if key not in state]
    if missing:
        raise ValueError(f"{where}: the state dict has no {' or '.join(map(repr, missing))}")
    return state
