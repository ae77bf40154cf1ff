"""Learning-rate schedules: each ``step()`` sets the ``"lr"`` of every parameter group."""

from __future__ import annotations

import math
from typing import Any

from dparray.optim.optimizer import Optimizer


class LRScheduler:
    """Base class: ``lr_at(epoch, base_lr)`` gives the rate after ``epoch`` calls of ``step()``
    (closed forms, so resuming from a state dict lands on the same rates)."""

    def __init__(self, optimizer: Optimizer) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(self).__name__} needs an Optimizer, got "
                            f"{type(optimizer).__name__}")
        self.optimizer = optimizer
        self.base_lrs = [group["lr"] for group in optimizer.param_groups]
        self.last_epoch = 0

    def lr_at(self, epoch: int, base_lr: float) -> float:
        raise NotImplementedError

    def step(self) -> None:
        """Advance one epoch and set the groups' learning rates."""
        self.last_epoch += 1
        for group, base in zip(self.optimizer.param_groups, self.base_lrs, strict=True):
            group["lr"] = self.lr_at(self.last_epoch, base)

    def get_last_lr(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        return {"base_lrs": list(self.base_lrs), "last_epoch": self.last_epoch}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.base_lrs, self.last_epoch = list(state["base_lrs"]), int(state["last_epoch"])


class StepLR(LRScheduler):
    """``lr = base * gamma ** (epoch // step_size)``."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1) -> None:
        if step_size < 1:
            raise ValueError(f"StepLR: step_size must be >= 1, got {step_size}")
        super().__init__(optimizer)
        self.step_size, self.gamma = step_size, gamma

    def lr_at(self, epoch: int, base_lr: float) -> float:
        return base_lr * self.gamma ** (epoch // self.step_size)


class CosineAnnealingLR(LRScheduler):
    """``lr = eta_min + (base - eta_min) * (1 + cos(pi * epoch / T_max)) / 2``."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0) -> None:
        if T_max < 1:
            raise ValueError(f"CosineAnnealingLR: T_max must be >= 1, got {T_max}")
        super().__init__(optimizer)
        self.T_max, self.eta_min = T_max, eta_min

    def lr_at(self, epoch: int, base_lr: float) -> float:
        cosine = (1.0 + math.cos(math.pi * epoch / self.T_max)) / 2.0
        return self.eta_min + (base_lr - self.eta_min) * cosine
