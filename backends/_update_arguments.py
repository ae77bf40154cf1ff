"""The scalar arguments of the compiled optimizer updates (NumPy's Numba loops, CuPy's CUDA
kernels), shared so both backends pass the same ones.

Each scalar is combined as the reference (``dparray/optim``) combines it in Python floats
(``1 - beta1``, ``lr / (1 - beta1^step)``, ...) and then converted to the parameter's dtype, as
NumPy and CuPy convert a Python float that meets an array of that dtype. A kernel that computes
with them in that dtype, in the reference's order, gets the reference's result bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

Scalar = Callable[[float], Any]
"""The parameter's scalar type (``numpy.float32``, ...)."""


def adam(optimizer: Any, state: Mapping[str, Any], group: Mapping[str, Any],
         scalar: Scalar) -> tuple[int, tuple[Any, ...]]:
    """The new step count, and the Adam update's arguments after its four arrays (parameter,
    gradient, first and second moments): ``first`` (no moments yet), ``with_decay``,
    ``decoupled``; then, as ``scalar``, the decay (AdamW's factor ``1 - lr * weight_decay``, or
    Adam's weight decay added to the gradient), ``beta1``, ``1 - beta1``, ``beta2``,
    ``1 - beta2``, the step size ``lr / (1 - beta1^step)``, ``1 / sqrt(1 - beta2^step)`` and
    ``eps``."""
    lr, (beta1, beta2), decay = group["lr"], group["betas"], group["weight_decay"]
    step = state.get("step", 0) + 1
    decoupled = bool(optimizer.decoupled)
    return step, (
        state.get("exp_avg") is None, bool(decay), decoupled,
        scalar(1.0 - lr * decay if decoupled else decay),
        scalar(beta1), scalar(1.0 - beta1), scalar(beta2), scalar(1.0 - beta2),
        scalar(lr / (1.0 - beta1**step)), scalar(1.0 / math.sqrt(1.0 - beta2**step)),
        scalar(group["eps"]),
    )


def sgd(state: Mapping[str, Any], group: Mapping[str, Any], scalar: Scalar) -> tuple[Any, ...]:
    """The SGD update's arguments after its three arrays (parameter, gradient, momentum
    buffer): ``first`` (no buffer yet), ``lr``, ``with_decay``, the weight decay,
    ``with_momentum``, the momentum, ``1 - dampening`` and ``nesterov``. ``1 - dampening`` is
    0 where the reference does not compute with it (no momentum, or the first step, where the
    buffer starts as the gradient), so that a huge dampening converts, and warns, only where
    the reference's does."""
    first = state.get("momentum_buffer") is None
    momentum, decay = group["momentum"], group["weight_decay"]
    keep = scalar(1.0 - group["dampening"]) if momentum and not first else scalar(0.0)
    return (first, scalar(group["lr"]), bool(decay), scalar(decay), bool(momentum),
            scalar(momentum), keep, bool(group["nesterov"]))
