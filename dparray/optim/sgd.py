"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from dparray.kernels import reference
from dparray.optim._shared import OptionCheck, flag, non_negative
from dparray.optim.optimizer import Optimizer


class SGD(Optimizer):
    """PyTorch's SGD: ``g += weight_decay * p``; with momentum, ``buf = momentum * buf +
    (1 - dampening) * g`` (``buf = g`` at the first step) and ``g = buf`` (or
    ``g + momentum * buf`` with ``nesterov``); then ``p -= lr * g``.

    Examples:
        >>> import dparray as dp
        >>> w = dp.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = SGD([w], lr=0.5)
        >>> opt.step((w * w).sum().backward())
        >>> w.tolist()
        [0.0, 0.0]
    """

    state_arrays = ("momentum_buffer",)

    option_checks: ClassVar[Mapping[str, OptionCheck]] = {
        **Optimizer.option_checks,
        "momentum": non_negative,
        "dampening": non_negative,
        "nesterov": flag,
    }

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0,
                 nesterov: bool = False) -> None:
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov})

    def check_options(self, options: Mapping[str, Any], where: str) -> dict[str, Any]:
        """The declared checks, and ``nesterov`` only with ``momentum > 0`` and
        ``dampening == 0``."""
        checked = super().check_options(options, where)
        if checked.get("nesterov") and (checked.get("momentum", 0.0) <= 0
                                        or checked.get("dampening", 0.0)):
            raise ValueError(f"{where}: nesterov needs momentum > 0 and dampening = 0")
        return checked

    @reference("sgd_update")
    def update(self, xp: Any, param: Any, grad: Any, state: dict[str, Any],
               group: dict[str, Any]) -> Any:
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        momentum = group["momentum"]
        if momentum:
            buffer = state.get("momentum_buffer")
            if buffer is None:
                buffer = grad
            else:
                buffer = momentum * buffer + (1.0 - group["dampening"]) * grad
            state["momentum_buffer"] = buffer
            grad = grad + momentum * buffer if group["nesterov"] else buffer
        return param - group["lr"] * grad
