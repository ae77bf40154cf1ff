"""Adadelta: steps scaled by the ratio of running root-mean-squares of updates and gradients."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from dparray.optim._shared import OptionCheck, non_negative, unit_interval
from dparray.optim.optimizer import Optimizer


class Adadelta(Optimizer):
    """Adadelta (Zeiler), as PyTorch computes it: ``g += weight_decay * p``; ``square_avg =
    rho * square_avg + (1 - rho) * g * g``; ``delta = sqrt(acc_delta + eps) / sqrt(square_avg
    + eps) * g``; ``acc_delta = rho * acc_delta + (1 - rho) * delta * delta``; ``p -= lr *
    delta``. ``lr`` scales the step (PyTorch's default 1.0 is Zeiler's method itself).

    The state holds PyTorch's entries ``step``, ``square_avg`` and ``acc_delta``.

    Examples:
        >>> import dparray as dp
        >>> w = dp.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = Adadelta([w])
        >>> opt.step((w * w).sum().backward())
        >>> [round(v, 4) for v in w.tolist()]
        [0.9968, -1.9968]
    """

    state_arrays = ("square_avg", "acc_delta")
    state_counts = ("step",)

    option_checks: ClassVar[Mapping[str, OptionCheck]] = {
        **Optimizer.option_checks,
        "rho": unit_interval,
        "eps": non_negative,
    }

    def __init__(self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0.0) -> None:
        super().__init__(params, {"lr": lr, "rho": rho, "eps": eps,
                                  "weight_decay": weight_decay})

    def update(self, xp: Any, param: Any, grad: Any, state: dict[str, Any],
               group: dict[str, Any]) -> Any:
        lr, rho, eps = group["lr"], group["rho"], group["eps"]
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        square_avg = state.get("square_avg")
        acc_delta = state.get("acc_delta")
        if square_avg is None or acc_delta is None:
            square_avg = acc_delta = xp.zeros_like(param)
        square_avg = rho * square_avg + (1.0 - rho) * grad * grad
        delta = xp.sqrt(acc_delta + eps) / xp.sqrt(square_avg + eps) * grad
        acc_delta = rho * acc_delta + (1.0 - rho) * delta * delta
        state.update(step=state.get("step", 0) + 1, square_avg=square_avg, acc_delta=acc_delta)
        return param - lr * delta
