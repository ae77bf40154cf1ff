"""Learning-rate schedules: each ``step()`` sets the ``"lr"`` of every parameter group.

As in PyTorch, constructing a schedule sets every group's ``"initial_lr"`` (unless a schedule
already did), takes those as ``base_lrs`` and sets the rates for epoch 0; each ``step()``
then moves one epoch on. The rates are closed forms of the epoch, so a schedule rebuilt with
the same arguments and given a ``state_dict()`` lands on the same rates. ``OneCycleLR`` is in
``one_cycle.py`` and ``ReduceLROnPlateau``, which follows a metric, in ``plateau.py``.
"""

from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from dparray._checks import check_int, check_number, describe
from dparray.optim._schedule_args import check_optimizer, check_state
from dparray.optim.optimizer import Optimizer


class LRScheduler:
    """Base class: a subclass checks its arguments, stores them, calls ``__init__`` and
    implements ``lr_at(epoch, base_lr)``, the rate after ``epoch`` calls of ``step()`` (or
    ``rates_at(epoch)`` when the rate needs more than the group's base rate)."""

    def __init__(self, optimizer: Optimizer) -> None:
        name = type(self).__name__
        self.optimizer = check_optimizer(optimizer, name)
        self.base_lrs = [
            check_number(group.get("initial_lr", group["lr"]),
                         "initial_lr" if "initial_lr" in group else "lr",
                         f"{name}: parameter group {i}", minimum=0.0)
            for i, group in enumerate(optimizer.param_groups)
        ]
        self.last_epoch = 0
        rates = self.rates_at(0)  # before any change: a user's lr_lambda may raise
        for group, base in zip(optimizer.param_groups, self.base_lrs, strict=True):
            group.setdefault("initial_lr", base)
        self._apply(0, rates)

    def lr_at(self, epoch: int, base_lr: float) -> float:
        """The rate of a group whose base rate is ``base_lr`` after ``epoch`` steps."""
        raise NotImplementedError

    def rates_at(self, epoch: int) -> list[float]:
        """Every group's rate after ``epoch`` steps."""
        return [self.lr_at(epoch, base) for base in self.base_lrs]

    def step(self) -> None:
        """Advance one epoch and set the groups' learning rates."""
        epoch = self.last_epoch + 1
        self._apply(epoch, self.rates_at(epoch))
        self.last_epoch = epoch

    def _apply(self, epoch: int, rates: list[float]) -> None:
        for group, rate in zip(self.optimizer.param_groups, rates, strict=True):
            group["lr"] = rate

    def get_last_lr(self) -> list[float]:
        """The groups' current learning rates."""
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """The schedule's progress (``base_lrs``, ``last_epoch``: PyTorch's names); its
        arguments are not saved, so rebuild it with the same ones before loading."""
        return {"base_lrs": list(self.base_lrs), "last_epoch": self.last_epoch}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what ``state_dict`` returned; checked in full before anything changes.
        Like PyTorch's, it leaves the optimizer's rates alone (its own state dict has them)."""
        self._restore(self._checked(state, f"{type(self).__name__}.load_state_dict"))

    def _checked(self, state: Any, where: str) -> dict[str, Any]:
        """The parts of a state dict this schedule restores, checked and converted."""
        state = check_state(state, ("base_lrs", "last_epoch"), where)
        base_lrs = state["base_lrs"]
        if not isinstance(base_lrs, (list, tuple)):
            raise TypeError(f"{where}: base_lrs must be a list, got {type(base_lrs).__name__}")
        if len(base_lrs) != len(self.optimizer.param_groups):
            raise ValueError(f"{where}: {len(base_lrs)} base_lrs for "
                             f"{len(self.optimizer.param_groups)} parameter groups")
        return {"base_lrs": [check_number(lr, "each of base_lrs", where, minimum=0.0)
                             for lr in base_lrs],
                "last_epoch": check_int(state["last_epoch"], "last_epoch", where, minimum=0)}

    def _restore(self, checked: dict[str, Any]) -> None:
        self.base_lrs, self.last_epoch = checked["base_lrs"], checked["last_epoch"]


class StepLR(LRScheduler):
    """``lr = base * gamma ** (epoch // step_size)``."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1) -> None:
        self.step_size = check_int(step_size, "step_size", "StepLR", minimum=1)
        self.gamma = check_number(gamma, "gamma", "StepLR", minimum=0.0)
        super().__init__(optimizer)

    def lr_at(self, epoch: int, base_lr: float) -> float:
        return base_lr * self.gamma ** (epoch // self.step_size)


class CosineAnnealingLR(LRScheduler):
    """``lr = eta_min + (base - eta_min) * (1 + cos(pi * epoch / T_max)) / 2``."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0) -> None:
        self.T_max = check_int(T_max, "T_max", "CosineAnnealingLR", minimum=1)
        self.eta_min = check_number(eta_min, "eta_min", "CosineAnnealingLR", minimum=0.0)
        super().__init__(optimizer)

    def lr_at(self, epoch: int, base_lr: float) -> float:
        cosine = (1.0 + math.cos(math.pi * epoch / self.T_max)) / 2.0
        return self.eta_min + (base_lr - self.eta_min) * cosine


class ExponentialLR(LRScheduler):
    """``lr = base * gamma ** epoch``.

    Examples:
        >>> import dparray as dp
        >>> from dparray import optim
        >>> opt = optim.SGD([dp.ones(1, requires_grad=True)], lr=1.0)
        >>> schedule = ExponentialLR(opt, gamma=0.5)
        >>> schedule.step(); schedule.step()
        >>> schedule.get_last_lr()
        [0.25]
    """

    def __init__(self, optimizer: Optimizer, gamma: float) -> None:
        self.gamma = check_number(gamma, "gamma", "ExponentialLR", minimum=0.0)
        super().__init__(optimizer)

    def lr_at(self, epoch: int, base_lr: float) -> float:
        return base_lr * self.gamma**epoch


class MultiStepLR(LRScheduler):
    """``lr = base * gamma ** (number of milestones <= epoch)``: a milestone given twice
    multiplies by ``gamma`` twice, and their order does not matter (as in PyTorch).

    Examples:
        >>> import dparray as dp
        >>> from dparray import optim
        >>> opt = optim.SGD([dp.ones(1, requires_grad=True)], lr=1.0)
        >>> schedule = MultiStepLR(opt, milestones=[2, 4], gamma=0.5)
        >>> rates = []
        >>> for _ in range(5):
        ...     schedule.step()
        ...     rates.append(schedule.get_last_lr()[0])
        >>> rates
        [1.0, 0.5, 0.5, 0.25, 0.25]
    """

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int],
                 gamma: float = 0.1) -> None:
        where = "MultiStepLR"
        if isinstance(milestones, (str, Mapping)) or not isinstance(milestones, Iterable):
            raise TypeError(f"{where}: milestones must be a list of ints, got "
                            f"{describe(milestones)}")
        self.milestones = sorted(check_int(m, "each milestone", where, minimum=0)
                                 for m in milestones)
        self.gamma = check_number(gamma, "gamma", where, minimum=0.0)
        super().__init__(optimizer)

    def lr_at(self, epoch: int, base_lr: float) -> float:
        return base_lr * self.gamma ** bisect_right(self.milestones, epoch)


class LinearLR(LRScheduler):
    """The rate moves linearly from ``base * start_factor`` to ``base * end_factor`` over
    ``total_iters`` epochs, then stays: ``lr = base * (start + (end - start) * min(epoch,
    total_iters) / total_iters)``. A warm-up, with the defaults.

    Examples:
        >>> import dparray as dp
        >>> from dparray import optim
        >>> opt = optim.SGD([dp.ones(1, requires_grad=True)], lr=1.0)
        >>> schedule = LinearLR(opt, start_factor=0.25, total_iters=3)
        >>> rates = [schedule.get_last_lr()[0]]
        >>> for _ in range(4):
        ...     schedule.step()
        ...     rates.append(schedule.get_last_lr()[0])
        >>> rates
        [0.25, 0.5, 0.75, 1.0, 1.0]
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5) -> None:
        where = "LinearLR"
        self.start_factor = check_number(start_factor, "start_factor", where, above=0.0,
                                         maximum=1.0)
        self.end_factor = check_number(end_factor, "end_factor", where, minimum=0.0,
                                       maximum=1.0)
        self.total_iters = check_int(total_iters, "total_iters", where, minimum=1)
        super().__init__(optimizer)

    def lr_at(self, epoch: int, base_lr: float) -> float:
        progress = min(self.total_iters, epoch) / self.total_iters
        return base_lr * (self.start_factor + (self.end_factor - self.start_factor) * progress)


class LambdaLR(LRScheduler):
    """``lr = base * lr_lambda(epoch)``; ``lr_lambda`` is one function for every group or a
    list with one per group. Like PyTorch's, the state dict saves no functions, only the
    attributes of callable objects that are not plain functions.

    Examples:
        >>> import dparray as dp
        >>> from dparray import optim
        >>> opt = optim.SGD([dp.ones(1, requires_grad=True)], lr=0.5)
        >>> schedule = LambdaLR(opt, lambda epoch: 1.0 / (1 + epoch))
        >>> schedule.step()
        >>> schedule.get_last_lr()
        [0.25]
    """

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]]) -> None:
        where = "LambdaLR"
        count = len(check_optimizer(optimizer, where).param_groups)
        functions: list[Any] = (list(lr_lambda) if isinstance(lr_lambda, (list, tuple))
                                else [lr_lambda] * count)
        if len(functions) != count:
            raise ValueError(f"{where}: lr_lambda must be a function or {count} functions "
                             f"(one per parameter group), got {len(functions)}")
        for function in functions:
            if not callable(function):
                raise TypeError(f"{where}: lr_lambda must be callable, got {describe(function)}")
        self.lr_lambdas = functions
        super().__init__(optimizer)

    def rates_at(self, epoch: int) -> list[float]:
        rates = []
        for function, base in zip(self.lr_lambdas, self.base_lrs, strict=True):
            factor = check_number(function(epoch), f"lr_lambda({epoch})", "LambdaLR",
                                  minimum=0.0)
            rates.append(base * factor)
        return rates

    def state_dict(self) -> dict[str, Any]:
        """The base's, and ``lr_lambdas``: None for a function, a copy of the attributes of
        a callable object (as PyTorch saves them)."""
        saved = [None if isinstance(f, types.FunctionType) else dict(vars(f))
                 for f in self.lr_lambdas]
        return {**super().state_dict(), "lr_lambdas": saved}

    def _checked(self, state: Any, where: str) -> dict[str, Any]:
        checked = super()._checked(state, where)
        saved = state.get("lr_lambdas", [None] * len(self.lr_lambdas))
        if not isinstance(saved, (list, tuple)) or len(saved) != len(self.lr_lambdas):
            raise ValueError(f"{where}: lr_lambdas must be a list of {len(self.lr_lambdas)} "
                             f"entries, got {describe(saved)}")
        for i, (entry, function) in enumerate(zip(saved, self.lr_lambdas, strict=True)):
            if entry is None:
                continue
            if not isinstance(entry, Mapping):
                raise TypeError(f"{where}: each of lr_lambdas must be None or the attributes "
                                f"of a callable object, got {describe(entry)}")
            if isinstance(function, types.FunctionType) or not hasattr(function, "__dict__"):
                raise ValueError(f"{where}: lr_lambdas[{i}] holds attributes, but this "
                                 "schedule's function has no saved state")
        return {**checked, "lr_lambdas": list(saved)}

    def _restore(self, checked: dict[str, Any]) -> None:
        super()._restore(checked)
        for entry, function in zip(checked["lr_lambdas"], self.lr_lambdas, strict=True):
            if entry is not None:
                vars(function).update(entry)


class SequentialLR(LRScheduler):
    """Runs ``schedulers[0]`` until epoch ``milestones[0]``, then ``schedulers[1]`` from its
    own epoch 0, and so on: a warm-up, then the main schedule.

    Examples:
        >>> import dparray as dp
        >>> from dparray import optim
        >>> opt = optim.SGD([dp.ones(1, requires_grad=True)], lr=1.0)
        >>> warmup = LinearLR(opt, start_factor=0.5, total_iters=2)
        >>> decay = ExponentialLR(opt, gamma=0.5)
        >>> schedule = SequentialLR(opt, [warmup, decay], milestones=[2])
        >>> rates = [schedule.get_last_lr()[0]]
        >>> for _ in range(4):
        ...     schedule.step()
        ...     rates.append(schedule.get_last_lr()[0])
        >>> rates
        [0.5, 0.75, 1.0, 0.5, 0.25]
    """

    def __init__(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler],
                 milestones: Sequence[int]) -> None:
        where = "SequentialLR"
        check_optimizer(optimizer, where)
        if not isinstance(schedulers, (list, tuple)):
            raise TypeError(f"{where}: schedulers must be a list of schedules, got "
                            f"{describe(schedulers)}")
        if not schedulers:
            raise ValueError(f"{where}: schedulers must hold at least one schedule")
        for i, scheduler in enumerate(schedulers):
            if not isinstance(scheduler, LRScheduler):
                raise TypeError(f"{where}: schedulers[{i}] must be an epoch schedule (not "
                                f"ReduceLROnPlateau, which needs a metric), got "
                                f"{type(scheduler).__name__}")
            if scheduler.optimizer is not optimizer:
                raise ValueError(f"{where}: schedulers[{i}] schedules another optimizer")
        if not isinstance(milestones, (list, tuple)):
            raise TypeError(f"{where}: milestones must be a list of ints, got "
                            f"{describe(milestones)}")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"{where}: {len(schedulers)} schedulers need "
                             f"{len(schedulers) - 1} milestones, got {len(milestones)}")
        checked = [check_int(m, "each milestone", where, minimum=0) for m in milestones]
        if checked != sorted(checked):
            raise ValueError(f"{where}: milestones must not decrease, got {list(milestones)}")
        self.schedulers, self.milestones = list(schedulers), checked
        super().__init__(optimizer)

    def _active(self, epoch: int) -> tuple[LRScheduler, int]:
        """The schedule that runs at ``epoch``, and its own epoch then."""
        index = bisect_right(self.milestones, epoch)
        start = self.milestones[index - 1] if index else 0
        return self.schedulers[index], epoch - start

    def rates_at(self, epoch: int) -> list[float]:
        scheduler, own_epoch = self._active(epoch)
        return scheduler.rates_at(own_epoch)

    def _apply(self, epoch: int, rates: list[float]) -> None:
        scheduler, own_epoch = self._active(epoch)
        scheduler._apply(own_epoch, rates)
        scheduler.last_epoch = own_epoch

    def state_dict(self) -> dict[str, Any]:
        """The base's, and ``_schedulers``: each schedule's state dict (PyTorch's name)."""
        return {**super().state_dict(),
                "_schedulers": [scheduler.state_dict() for scheduler in self.schedulers]}

    def _checked(self, state: Any, where: str) -> dict[str, Any]:
        checked = super()._checked(check_state(state, ("_schedulers",), where), where)
        saved = state["_schedulers"]
        if not isinstance(saved, (list, tuple)) or len(saved) != len(self.schedulers):
            raise ValueError(f"{where}: _schedulers must be a list of {len(self.schedulers)} "
                             f"state dicts, got {describe(saved)}")
        parts = [scheduler._checked(entry, f"{where}: _schedulers[{i}]")
                 for i, (scheduler, entry) in enumerate(zip(self.schedulers, saved,
                                                            strict=True))]
        return {**checked, "_schedulers": parts}

    def _restore(self, checked: dict[str, Any]) -> None:
        super()._restore(checked)
        for scheduler, part in zip(self.schedulers, checked["_schedulers"], strict=True):
            scheduler._restore(part)
