"""Adam and AdamW (decoupled weight decay)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from dparray.kernels import reference
from dparray.optim._shared import OptionCheck, betas, non_negative
from dparray.optim.optimizer import Optimizer


class Adam(Optimizer):
    """Adam (Kingma & Ba), as PyTorch computes it: ``weight_decay`` is an L2 term added to
    the gradient; the step is ``lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)``.

    Examples:
        >>> import dparray as dp
        >>> w = dp.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = Adam([w], lr=0.1)
        >>> opt.step((w * w).sum().backward())
        >>> [round(v, 4) for v in w.tolist()]
        [0.9, -1.9]
    """

    decoupled = False
    state_arrays = ("exp_avg", "exp_avg_sq")
    state_counts = ("step",)

    option_checks: ClassVar[Mapping[str, OptionCheck]] = {
        **Optimizer.option_checks,
        "eps": non_negative,
        "betas": betas,
    }

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0) -> None:
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay})

    @reference("adam_update")
    def update(self, xp: Any, param: Any, grad: Any, state: dict[str, Any],
               group: dict[str, Any]) -> Any:
        lr, (beta1, beta2) = group["lr"], group["betas"]
        eps, decay = group["eps"], group["weight_decay"]
        if decay and self.decoupled:
            param = param * (1.0 - lr * decay)
        elif decay:
            grad = grad + decay * param
        step = state.get("step", 0) + 1
        m = state.get("exp_avg")
        v = state.get("exp_avg_sq")
        m = (1.0 - beta1) * grad if m is None else beta1 * m + (1.0 - beta1) * grad
        v = (1.0 - beta2) * grad * grad if v is None else beta2 * v + (1.0 - beta2) * grad * grad
        state.update(step=step, exp_avg=m, exp_avg_sq=v)
        step_size = lr / (1.0 - beta1**step)
        denominator = xp.sqrt(v) * (1.0 / math.sqrt(1.0 - beta2**step)) + eps
        return param - step_size * (m / denominator)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): ``p *= 1 - lr * weight_decay``
    before the Adam step; ``weight_decay`` defaults to 0.01 as in PyTorch."""

    decoupled = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2) -> None:
        super().__init__(params, lr, betas, eps, weight_decay)
