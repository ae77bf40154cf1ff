"""Adamax: Adam with the infinity norm in place of the second moment."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from dparray.kernels import reference
from dparray.optim._shared import OptionCheck, betas, lerp, non_negative
from dparray.optim.optimizer import Optimizer


class Adamax(Optimizer):
    """Adamax (Kingma & Ba), as PyTorch computes it: ``g += weight_decay * p``; ``exp_avg``
    is Adam's first moment, ``exp_inf = max(beta2 * exp_inf, |g| + eps)``; then ``p -= lr /
    (1 - beta1 ** step) * exp_avg / exp_inf``. The state holds PyTorch's ``step``,
    ``exp_avg`` and ``exp_inf``.

    Examples:
        >>> import dparray as dp
        >>> w = dp.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = Adamax([w], lr=0.1)
        >>> opt.step((w * w).sum().backward())
        >>> [round(v, 4) for v in w.tolist()]
        [0.9, -1.9]
    """

    state_arrays = ("exp_avg", "exp_inf")
    state_counts = ("step",)

    option_checks: ClassVar[Mapping[str, OptionCheck]] = {
        **Optimizer.option_checks,
        "betas": betas,
        "eps": non_negative,
    }

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0) -> None:
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay})

    @reference("adamax_update")
    def update(self, xp: Any, param: Any, grad: Any, state: dict[str, Any],
               group: dict[str, Any]) -> Any:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        step = state.get("step", 0) + 1
        exp_avg = state.get("exp_avg")
        exp_inf = state.get("exp_inf")
        if exp_avg is None or exp_inf is None:
            exp_avg = exp_inf = xp.zeros_like(param)
        exp_avg = lerp(exp_avg, grad, 1.0 - beta1)
        exp_inf = xp.maximum(beta2 * exp_inf, xp.abs(grad) + eps)
        state.update(step=step, exp_avg=exp_avg, exp_inf=exp_inf)
        step_size = lr / (1.0 - beta1**step)
        return param - (step_size * exp_avg) / exp_inf
