"""RMSprop: steps scaled by a running root-mean-square of the gradients."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from dparray.kernels import reference
from dparray.optim._shared import OptionCheck, flag, lerp, non_negative, unit_interval
from dparray.optim.optimizer import Optimizer


class RMSprop(Optimizer):
    """RMSprop (Hinton), as PyTorch computes it: ``g += weight_decay * p``; ``square_avg =
    alpha * square_avg + (1 - alpha) * g * g``; the divisor is ``sqrt(square_avg) + eps``
    (with ``centered``, ``sqrt(square_avg - grad_avg ** 2) + eps``, ``grad_avg`` being the
    running mean of ``g``); then ``p -= lr * g / divisor``, or with ``momentum``,
    ``buf = momentum * buf + g / divisor`` and ``p -= lr * buf``.

    The state holds PyTorch's entries: ``step`` and ``square_avg``, ``momentum_buffer`` only
    when ``momentum > 0`` and ``grad_avg`` only when ``centered``.

    Examples:
        >>> import dparray as dp
        >>> w = dp.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = RMSprop([w], lr=0.01)
        >>> opt.step((w * w).sum().backward())
        >>> [round(v, 4) for v in w.tolist()]
        [0.9, -1.9]
    """

    state_arrays = ("square_avg", "momentum_buffer", "grad_avg")
    state_counts = ("step",)

    option_checks: ClassVar[Mapping[str, OptionCheck]] = {
        **Optimizer.option_checks,
        "alpha": unit_interval,
        "eps": non_negative,
        "momentum": non_negative,
        "centered": flag,
    }

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum: float = 0.0,
                 centered: bool = False) -> None:
        super().__init__(params, {"lr": lr, "alpha": alpha, "eps": eps,
                                  "weight_decay": weight_decay, "momentum": momentum,
                                  "centered": centered})

    def state_keys(self, group: Mapping[str, Any]) -> tuple[str, ...]:
        """``step`` and ``square_avg``; ``momentum_buffer`` with momentum, ``grad_avg`` when
        centered (PyTorch's entries, so state dicts line up)."""
        keys = ["step", "square_avg"]
        if group["momentum"] > 0:
            keys.append("momentum_buffer")
        if group["centered"]:
            keys.append("grad_avg")
        return tuple(keys)

    @reference("rmsprop_update")
    def update(self, xp: Any, param: Any, grad: Any, state: dict[str, Any],
               group: dict[str, Any]) -> Any:
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        momentum, decay = group["momentum"], group["weight_decay"]
        if decay:
            grad = grad + decay * param
        square_avg = state.get("square_avg")
        if square_avg is None:
            square_avg = xp.zeros_like(param)
        square_avg = alpha * square_avg + (1.0 - alpha) * grad * grad
        state.update(step=state.get("step", 0) + 1, square_avg=square_avg)
        if group["centered"]:
            grad_avg = state.get("grad_avg")
            grad_avg = lerp(xp.zeros_like(param) if grad_avg is None else grad_avg, grad,
                            1.0 - alpha)
            state["grad_avg"] = grad_avg
            divisor = xp.sqrt(square_avg - grad_avg * grad_avg) + eps
        else:
            divisor = xp.sqrt(square_avg) + eps
        if momentum > 0:
            buffer = state.get("momentum_buffer")
            buffer = grad / divisor if buffer is None else momentum * buffer + grad / divisor
            state["momentum_buffer"] = buffer
            return param - lr * buffer
        return param - (lr * grad) / divisor
