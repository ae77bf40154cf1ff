"""Reduce the learning rate when a metric stops improving."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dparray._checks import check_choice, check_int, check_number, describe
from dparray.optim._schedule_args import check_optimizer, check_state, per_group
from dparray.optim.optimizer import Optimizer
from dparray.tensor import Tensor


class ReduceLROnPlateau:
    """PyTorch's ``ReduceLROnPlateau``: ``step(metric)`` once per epoch; after more than
    ``patience`` epochs in a row without a better metric, every group's rate becomes
    ``max(lr * factor, min_lr)`` (a change smaller than ``eps`` is skipped), and then
    ``cooldown`` epochs pass before bad epochs count again.

    Better means below ``best * (1 - threshold)`` in ``mode="min"`` (``threshold_mode="rel"``)
    or below ``best - threshold`` (``"abs"``); above ``best * (1 + threshold)`` or ``best +
    threshold`` in ``mode="max"``. A NaN metric is never better, as in PyTorch.

    It is not an epoch schedule (it has no closed form; ``SequentialLR`` refuses it): its
    state dict holds ``best``, ``num_bad_epochs``, ``cooldown_counter`` and ``last_epoch``,
    and the rates themselves live in the optimizer's state dict.

    Examples:
        >>> import dparray as dp
        >>> from dparray import optim
        >>> opt = optim.SGD([dp.ones(1, requires_grad=True)], lr=1.0)
        >>> schedule = ReduceLROnPlateau(opt, factor=0.5, patience=1)
        >>> for loss in [3.0, 2.0, 2.5, 2.1, 2.2]:
        ...     schedule.step(loss)
        >>> schedule.get_last_lr()
        [0.5]
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float | list[float] = 0.0,
                 eps: float = 1e-8) -> None:
        where = "ReduceLROnPlateau"
        self.optimizer = check_optimizer(optimizer, where)
        self.mode = check_choice(mode, "mode", where, ("min", "max"))
        self.factor = check_number(factor, "factor", where, minimum=0.0, below=1.0)
        self.patience = check_int(patience, "patience", where, minimum=0)
        self.threshold = check_number(threshold, "threshold", where, minimum=0.0)
        self.threshold_mode = check_choice(threshold_mode, "threshold_mode", where,
                                           ("rel", "abs"))
        self.cooldown = check_int(cooldown, "cooldown", where, minimum=0)
        self.min_lrs = per_group(min_lr, "min_lr", where, optimizer, minimum=0.0)
        self.eps = check_number(eps, "eps", where, minimum=0.0)
        self.best = math.inf if self.mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        self.last_epoch = 0

    def is_better(self, metric: float) -> bool:
        """Whether ``metric`` improves on ``best`` by more than the threshold."""
        if self.mode == "min":
            if self.threshold_mode == "rel":
                return metric < self.best * (1.0 - self.threshold)
            return metric < self.best - self.threshold
        if self.threshold_mode == "rel":
            return metric > self.best * (self.threshold + 1.0)
        return metric > self.best + self.threshold

    def step(self, metric: Any) -> None:
        """Record one epoch's ``metric`` (a number or a one-element Tensor) and lower the
        rates if it has not improved for long enough."""
        current = _metric_value(metric)
        self.last_epoch += 1
        if self.is_better(current):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in the cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce()
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0

    def _reduce(self) -> None:
        for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs, strict=True):
            old = group["lr"]
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:
                group["lr"] = new

    def get_last_lr(self) -> list[float]:
        """The groups' current learning rates."""
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """The progress, under PyTorch's names; the arguments are not saved, so rebuild the
        schedule with the same ones before loading."""
        return {"best": self.best, "num_bad_epochs": self.num_bad_epochs,
                "cooldown_counter": self.cooldown_counter, "last_epoch": self.last_epoch}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what ``state_dict`` returned; checked in full before anything changes."""
        where = "ReduceLROnPlateau.load_state_dict"
        state = check_state(state, ("best", "num_bad_epochs", "cooldown_counter",
                                    "last_epoch"), where)
        best = check_number(state["best"], "best", where, finite=False)
        counts = [check_int(state[key], key, where, minimum=0)
                  for key in ("num_bad_epochs", "cooldown_counter", "last_epoch")]
        self.best = best
        self.num_bad_epochs, self.cooldown_counter, self.last_epoch = counts


def _metric_value(metric: Any) -> float:
    """A metric as a float: a Python or NumPy number, or a Tensor of one element."""
    where = "ReduceLROnPlateau.step"
    if isinstance(metric, Tensor):
        if metric.elem_count() != 1:
            raise ValueError(f"{where}: metric must be a number or a one-element Tensor, got "
                             f"a Tensor of shape {metric.shape}")
        return float(metric.item())
    if isinstance(metric, (bool, str)) or not hasattr(metric, "__float__"):
        raise TypeError(f"{where}: metric must be a number or a one-element Tensor, got "
                        f"{describe(metric)}")
    return float(metric)
