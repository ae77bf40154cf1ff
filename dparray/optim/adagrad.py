"""Adagrad: per-coordinate steps shrinking with the sum of the squared gradients."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from dparray.kernels import reference
from dparray.optim._shared import OptionCheck, non_negative
from dparray.optim.optimizer import Optimizer


class Adagrad(Optimizer):
    """Adagrad (Duchi et al.), as PyTorch computes it: ``g += weight_decay * p``; ``sum +=
    g * g``; ``p -= lr / (1 + (step - 1) * lr_decay) * g / (sqrt(sum) + eps)``.

    As in PyTorch, every parameter's state (``step`` 0, ``sum`` filled with
    ``initial_accumulator_value``) exists from construction on, so the state dict has an
    entry per parameter before the first step. Unlike PyTorch, which reads the constructor's
    ``initial_accumulator_value`` for every group, a group's own value is used.

    Examples:
        >>> import dparray as dp
        >>> w = dp.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = Adagrad([w], lr=0.1)
        >>> opt.step((w * w).sum().backward())
        >>> [round(v, 4) for v in w.tolist()]
        [0.9, -1.9]
    """

    state_arrays = ("sum",)
    state_counts = ("step",)

    option_checks: ClassVar[Mapping[str, OptionCheck]] = {
        **Optimizer.option_checks,
        "lr_decay": non_negative,
        "initial_accumulator_value": non_negative,
        "eps": non_negative,
    }

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10) -> None:
        super().__init__(params, {"lr": lr, "lr_decay": lr_decay, "weight_decay": weight_decay,
                                  "initial_accumulator_value": initial_accumulator_value,
                                  "eps": eps})
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p] = {"step": 0, "sum": self._initial_sum(p.backend.xp, p.data,
                                                                     group)}

    @staticmethod
    def _initial_sum(xp: Any, param: Any, group: Mapping[str, Any]) -> Any:
        return xp.full_like(param, group["initial_accumulator_value"])

    @reference("adagrad_update")
    def update(self, xp: Any, param: Any, grad: Any, state: dict[str, Any],
               group: dict[str, Any]) -> Any:
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        step = state.get("step", 0) + 1
        total = state.get("sum")
        if total is None:  # a state dict without this parameter's entry was loaded
            total = self._initial_sum(xp, param, group)
        total = total + grad * grad
        state.update(step=step, sum=total)
        step_size = group["lr"] / (1.0 + (step - 1) * group["lr_decay"])
        return param - (step_size * grad) / (xp.sqrt(total) + group["eps"])
