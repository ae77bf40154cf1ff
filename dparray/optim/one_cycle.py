"""The one-cycle policy (Smith & Topin): up to a peak rate, then down far below the start."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from dparray._checks import check_bool, check_choice, check_int, check_number
from dparray.optim._schedule_args import check_optimizer, per_group
from dparray.optim.lr_scheduler import LRScheduler
from dparray.optim.optimizer import Optimizer


class _Phase(NamedTuple):
    """One stretch of the cycle: it ends at step ``end`` (a float, as PyTorch computes it)
    and anneals between two of the named per-group values."""

    end: float
    start_lr: str
    end_lr: str
    start_momentum: str
    end_momentum: str


class OneCycleLR(LRScheduler):
    """PyTorch's ``OneCycleLR``, stepped once per batch for ``total_steps`` batches (or
    ``epochs * steps_per_epoch``). The rate rises from ``max_lr / div_factor`` to ``max_lr``
    over the first ``pct_start`` of the steps, then falls to ``max_lr / div_factor /
    final_div_factor``; ``anneal_strategy`` is ``"cos"`` or ``"linear"``; ``three_phase``
    comes back down to the initial rate symmetrically before the final fall.

    With ``cycle_momentum`` (the default), the momentum moves the opposite way between
    ``max_momentum`` and ``base_momentum``: the group's ``"momentum"`` (SGD, RMSprop) or the
    first of its ``"betas"`` (Adam and its family), as in PyTorch.

    The rates for the ``total_steps`` batches are PyTorch's. The ``step()`` after the last
    batch keeps the final rate, where PyTorch extrapolates past the end of the cycle (to a
    negative rate with ``"linear"``); a step beyond that is a ValueError.

    Examples:
        >>> import dparray as dp
        >>> from dparray import optim
        >>> opt = optim.SGD([dp.ones(1, requires_grad=True)], lr=0.1, momentum=0.9)
        >>> schedule = OneCycleLR(opt, max_lr=1.0, total_steps=10, anneal_strategy="linear")
        >>> for _ in range(2):
        ...     schedule.step()
        >>> round(schedule.get_last_lr()[0], 4), round(opt.param_groups[0]["momentum"], 4)
        (1.0, 0.85)
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float | list[float] = 0.85,
                 max_momentum: float | list[float] = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False) -> None:
        where = "OneCycleLR"
        check_optimizer(optimizer, where)
        if total_steps is not None:
            self.total_steps = check_int(total_steps, "total_steps", where, minimum=1)
        elif epochs is not None and steps_per_epoch is not None:
            self.total_steps = (check_int(epochs, "epochs", where, minimum=1)
                                * check_int(steps_per_epoch, "steps_per_epoch", where,
                                            minimum=1))
        else:
            raise ValueError(f"{where}: give total_steps, or epochs and steps_per_epoch")
        pct_start = check_number(pct_start, "pct_start", where, minimum=0.0, maximum=1.0)
        self.anneal_strategy = check_choice(anneal_strategy, "anneal_strategy", where,
                                            ("cos", "linear"))
        self.cycle_momentum = check_bool(cycle_momentum, "cycle_momentum", where)
        div_factor = check_number(div_factor, "div_factor", where, above=0.0)
        final_div_factor = check_number(final_div_factor, "final_div_factor", where,
                                        above=0.0)
        check_bool(three_phase, "three_phase", where)
        max_lrs = per_group(max_lr, "max_lr", where, optimizer, minimum=0.0)
        self.values: dict[str, list[float]] = {"max_lr": max_lrs}
        self.values["initial_lr"] = [lr / div_factor for lr in max_lrs]
        self.values["min_lr"] = [lr / final_div_factor for lr in self.values["initial_lr"]]
        self.use_beta1 = False
        if self.cycle_momentum:
            self._check_momentum(optimizer, base_momentum, max_momentum, where)
        peak = float(pct_start * self.total_steps)
        last = float(self.total_steps - 1)
        if three_phase:
            self.phases = [
                _Phase(peak - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _Phase(2 * peak - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                _Phase(last, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self.phases = [
                _Phase(peak - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _Phase(last, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        for group, initial in zip(optimizer.param_groups, self.values["initial_lr"],
                                  strict=True):
            group["initial_lr"] = initial  # PyTorch overwrites it too: the cycle sets the base
        super().__init__(optimizer)

    def _check_momentum(self, optimizer: Optimizer, base_momentum: Any, max_momentum: Any,
                        where: str) -> None:
        """Store the momentum bounds once the optimizer is known to take each of them."""
        if "betas" in optimizer.defaults:
            self.use_beta1 = True
        elif "momentum" not in optimizer.defaults:
            raise ValueError(f"{where}: cycle_momentum needs an optimizer with momentum or "
                             f"betas; {type(optimizer).__name__} has neither (pass "
                             "cycle_momentum=False)")
        for name, value in (("base_momentum", base_momentum), ("max_momentum", max_momentum)):
            self.values[name] = per_group(value, name, where, optimizer, minimum=0.0)
            for i, group in enumerate(optimizer.param_groups):
                option = self._momentum_option(group, self.values[name][i])
                optimizer.check_options({**group, **option},
                                        f"{where}: {name} for parameter group {i}")

    def _momentum_option(self, group: dict[str, Any], momentum: float) -> dict[str, Any]:
        """The option that carries ``momentum`` in ``group``: its own or the first beta."""
        if self.use_beta1:
            return {"betas": (momentum, *group["betas"][1:])}
        return {"momentum": momentum}

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def _position(self, step: int) -> tuple[_Phase, float]:
        """The phase ``step`` falls in, and how far through it (0 to 1)."""
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR.step: tried to step {step} times; total_steps is "
                             f"{self.total_steps}")
        start = 0.0
        for i, phase in enumerate(self.phases):
            if step <= phase.end or i == len(self.phases) - 1:
                # a phase of no length (pct_start * total_steps == 1) is already at its end,
                # where PyTorch divides by zero; the step after the last batch stays there too
                length = phase.end - start
                return phase, min(1.0, (step - start) / length) if length else 1.0
            start = phase.end
        raise AssertionError("unreachable: the last phase takes every step")

    def rates_at(self, epoch: int) -> list[float]:
        phase, pct = self._position(epoch)
        return [self._anneal(self.values[phase.start_lr][i], self.values[phase.end_lr][i], pct)
                for i in range(len(self.base_lrs))]

    def _apply(self, epoch: int, rates: list[float]) -> None:
        super()._apply(epoch, rates)
        if self.cycle_momentum:
            phase, pct = self._position(epoch)
            for i, group in enumerate(self.optimizer.param_groups):
                momentum = self._anneal(self.values[phase.start_momentum][i],
                                        self.values[phase.end_momentum][i], pct)
                group.update(self._momentum_option(group, momentum))
