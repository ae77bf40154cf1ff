"""ASGD: stochastic gradient descent that also keeps a running average of the parameters."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from dparray.optim._shared import OptionCheck, non_negative
from dparray.optim.optimizer import Optimizer


class ASGD(Optimizer):
    """Averaged SGD (Polyak & Juditsky), as PyTorch computes it. With the step size ``eta``
    (``lr`` at the first step): ``g += weight_decay * p``; ``p = p * (1 - lambd * eta) - eta *
    g``; the average ``ax`` follows ``p`` exactly while ``mu == 1`` and moves towards it by
    ``mu`` afterwards; then ``eta = lr / (1 + lambd * lr * step) ** alpha`` and ``mu = 1 /
    max(1, step - t0)``. The average is in the state (``ax``), not in the parameters, as in
    PyTorch.

    The state holds PyTorch's entries ``step``, ``eta``, ``mu`` (Python floats, so double
    precision) and ``ax``.

    Examples:
        >>> import dparray as dp
        >>> w = dp.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = ASGD([w], lr=0.1)
        >>> opt.step((w * w).sum().backward())
        >>> [round(v, 4) for v in w.tolist()]
        [0.8, -1.6]
    """

    state_arrays = ("ax",)
    state_counts = ("step",)
    state_scalars = ("eta", "mu")

    option_checks: ClassVar[Mapping[str, OptionCheck]] = {
        **Optimizer.option_checks,
        "lambd": non_negative,
        "alpha": non_negative,
        "t0": non_negative,
    }

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0.0) -> None:
        super().__init__(params, {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                                  "weight_decay": weight_decay})

    def update(self, xp: Any, param: Any, grad: Any, state: dict[str, Any],
               group: dict[str, Any]) -> Any:
        lr, lambd = group["lr"], group["lambd"]
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        step = state.get("step", 0) + 1
        eta, mu = state.get("eta", lr), state.get("mu", 1.0)
        ax = state.get("ax")
        param = param * (1.0 - lambd * eta) - eta * grad
        ax = param if mu == 1 or ax is None else ax + (param - ax) * mu
        state.update(step=step, ax=ax, eta=lr / (1.0 + lambd * lr * step) ** group["alpha"],
                     mu=1.0 / max(1.0, step - group["t0"]))
        return param
