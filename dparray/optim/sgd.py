"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

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

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0,
                 nesterov: bool = False) -> None:
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: nesterov needs momentum > 0 and dampening = 0")
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov})

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
