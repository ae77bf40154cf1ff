"""NAdam: Adam with Nesterov momentum and a warming-up momentum schedule."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from dparray.kernels import reference
from dparray.optim._shared import OptionCheck, betas, flag, lerp, non_negative
from dparray.optim.optimizer import Optimizer


class NAdam(Optimizer):
    """NAdam (Dozat), as PyTorch computes it. At step ``t`` the momentum is ``mu_t = beta1 *
    (1 - 0.5 * 0.96 ** (t * momentum_decay))``, ``mu_product`` the product of ``mu_1..mu_t``;
    with ``m`` and ``v`` Adam's moving averages and ``d = sqrt(v / (1 - beta2 ** t)) + eps``,
    ``p -= lr * (1 - mu_t) / (1 - mu_product) * g / d + lr * mu_{t+1} / (1 - mu_product *
    mu_{t+1}) * m / d``. ``weight_decay`` is an L2 term added to ``g``, or with
    ``decoupled_weight_decay`` a factor ``1 - lr * weight_decay`` on ``p`` (as AdamW).

    The state holds PyTorch's entries ``step``, ``mu_product`` (a Python float, so it is kept
    in double precision whatever the parameter's dtype), ``exp_avg`` and ``exp_avg_sq``.

    Examples:
        >>> import dparray as dp
        >>> w = dp.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = NAdam([w], lr=0.1)
        >>> opt.step((w * w).sum().backward())
        >>> [round(v, 4) for v in w.tolist()]
        [0.8944, -1.8944]
    """

    state_arrays = ("exp_avg", "exp_avg_sq")
    state_counts = ("step",)
    state_scalars = ("mu_product",)

    option_checks: ClassVar[Mapping[str, OptionCheck]] = {
        **Optimizer.option_checks,
        "betas": betas,
        "eps": non_negative,
        "momentum_decay": non_negative,
        "decoupled_weight_decay": flag,
    }

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False) -> None:
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay, "momentum_decay": momentum_decay,
                                  "decoupled_weight_decay": decoupled_weight_decay})

    @staticmethod
    def step_weights(state: Mapping[str, Any],
                     group: Mapping[str, Any]) -> tuple[int, float, float, float]:
        """This step's count, ``mu_product`` and the weights of the gradient and of the first
        moment in the update (Python floats; the fused kernels take them from here too)."""
        lr, beta1 = group["lr"], group["betas"][0]
        momentum_decay = group["momentum_decay"]
        step = state.get("step", 0) + 1
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
        mu_product = state.get("mu_product", 1.0) * mu
        grad_weight = -lr * (1.0 - mu) / (1.0 - mu_product)
        avg_weight = (-lr * mu_next) / (1.0 - mu_product * mu_next)
        return step, mu_product, grad_weight, avg_weight

    @reference("nadam_update")
    def update(self, xp: Any, param: Any, grad: Any, state: dict[str, Any],
               group: dict[str, Any]) -> Any:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        decay = group["weight_decay"]
        if decay and group["decoupled_weight_decay"]:
            param = param * (1.0 - lr * decay)
        elif decay:
            grad = grad + decay * param
        step, mu_product, grad_weight, avg_weight = self.step_weights(state, group)
        exp_avg = state.get("exp_avg")
        exp_avg_sq = state.get("exp_avg_sq")
        if exp_avg is None or exp_avg_sq is None:
            exp_avg = exp_avg_sq = xp.zeros_like(param)
        exp_avg = lerp(exp_avg, grad, 1.0 - beta1)
        exp_avg_sq = beta2 * exp_avg_sq + (1.0 - beta2) * grad * grad
        state.update(step=step, mu_product=mu_product, exp_avg=exp_avg, exp_avg_sq=exp_avg_sq)
        denominator = xp.sqrt(exp_avg_sq / (1.0 - beta2**step)) + eps
        param = param + (grad_weight * grad) / denominator
        return param + (avg_weight * exp_avg) / denominator
