"""The scalar arguments of the compiled optimizer updates (NumPy's Numba loops, CuPy's CUDA
kernels), shared so both backends pass the same ones.

Each scalar is combined as the reference (``dparray/optim``) combines it in Python floats
(``1 - beta1``, ``lr / (1 - beta1^step)``, ...) and then converted to the parameter's dtype, as
NumPy and CuPy convert a Python float that meets an array of that dtype. A kernel that computes
with them in that dtype, in the reference's order, gets the reference's result bit for bit.
"""

from __future__ import annotations

import functools
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
    lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
    decay = group["weight_decay"]
    step = state.get("step", 0) + 1
    decoupled = bool(optimizer.decoupled)
    combine = _adam_scalars if lr and beta1 and beta2 and eps else _adam_scalars.__wrapped__
    return step, (state.get("exp_avg") is None, bool(decay), decoupled,
                  *combine(scalar, lr, beta1, beta2, eps, decay, decoupled, step))


def sgd(state: Mapping[str, Any], group: Mapping[str, Any], scalar: Scalar) -> tuple[Any, ...]:
    """The SGD update's arguments after its three arrays (parameter, gradient, momentum
    buffer): ``first`` (no buffer yet), ``lr``, ``with_decay``, the weight decay,
    ``with_momentum``, the momentum, ``1 - dampening`` and ``nesterov``. ``1 - dampening`` is
    0 where the reference does not compute with it (no momentum, or the first step, where the
    buffer starts as the gradient), so that a huge dampening converts, and warns, only where
    the reference's does."""
    first = state.get("momentum_buffer") is None
    momentum, decay = group["momentum"], group["weight_decay"]
    lr, dampening = group["lr"], group["dampening"] if momentum and not first else None
    combine = _sgd_scalars if lr else _sgd_scalars.__wrapped__
    lr, decay_scalar, momentum_scalar, keep = combine(scalar, lr, decay, momentum, dampening)
    return (first, lr, bool(decay), decay_scalar, bool(momentum), momentum_scalar, keep,
            bool(group["nesterov"]))


def adadelta(state: Mapping[str, Any], group: Mapping[str, Any],
             scalar: Scalar) -> tuple[Any, ...]:
    """The Adadelta update's arguments after its four arrays (parameter, gradient, square
    average, accumulated delta): ``first`` (no state yet), ``with_decay``; then, as ``scalar``,
    the weight decay, ``rho``, ``1 - rho``, ``eps``, ``lr`` and zero (the state the reference
    starts from)."""
    first = state.get("square_avg") is None or state.get("acc_delta") is None
    decay, lr, rho, eps = group["weight_decay"], group["lr"], group["rho"], group["eps"]
    combine = _adadelta_scalars if lr and eps else _adadelta_scalars.__wrapped__
    return (first, bool(decay), *combine(scalar, decay, rho, eps, lr))


def rmsprop(state: Mapping[str, Any], group: Mapping[str, Any],
            scalar: Scalar) -> tuple[Any, ...]:
    """The RMSprop update's arguments after its five arrays (parameter, gradient, square
    average, gradient average, momentum buffer): whether each of the three states is still to
    start (``first_square``, ``first_average``, ``first_buffer``), ``with_decay``,
    ``centered``, ``with_momentum``, ``near`` (the gradient average's lerp from its start, as
    ``dparray.optim._shared.lerp`` takes it for a weight below 0.5); then, as ``scalar``, the
    weight decay, ``alpha``, ``1 - alpha``, the lerp's other factor ``1 - (1 - alpha)``,
    ``eps``, the momentum, ``lr`` and zero (the state the reference starts from)."""
    lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
    momentum, decay = group["momentum"], group["weight_decay"]
    weight = 1.0 - alpha
    combine = _rmsprop_scalars if lr and eps else _rmsprop_scalars.__wrapped__
    return (state.get("square_avg") is None, state.get("grad_avg") is None,
            state.get("momentum_buffer") is None, bool(decay), bool(group["centered"]),
            momentum > 0, abs(weight) < 0.5,
            *combine(scalar, decay, alpha, weight, eps, momentum, lr))


def adagrad(state: Mapping[str, Any], group: Mapping[str, Any],
            scalar: Scalar) -> tuple[int, tuple[Any, ...]]:
    """The new step count, and the Adagrad update's arguments after its three arrays
    (parameter, gradient, sum of squares): ``with_decay``; then, as ``scalar``, the weight
    decay, the step size ``lr / (1 + (step - 1) * lr_decay)`` and ``eps``."""
    decay, eps = group["weight_decay"], group["eps"]
    step = state.get("step", 0) + 1
    step_size = group["lr"] / (1.0 + (step - 1) * group["lr_decay"])
    combine = _adagrad_scalars if step_size and eps else _adagrad_scalars.__wrapped__
    return step, (bool(decay), *combine(scalar, decay, step_size, eps))


def adamax(state: Mapping[str, Any], group: Mapping[str, Any],
           scalar: Scalar) -> tuple[int, tuple[Any, ...]]:
    """The new step count, and the Adamax update's arguments after its four arrays
    (parameter, gradient, first moment, infinity norm): ``first`` (no state yet),
    ``with_decay``, ``near`` (the first moment's lerp weight below 0.5); then, as ``scalar``,
    the weight decay, ``1 - beta1``, ``1 - (1 - beta1)``, ``beta2``, ``eps``, the step size
    ``lr / (1 - beta1^step)`` and zero."""
    lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
    decay = group["weight_decay"]
    step = state.get("step", 0) + 1
    first = state.get("exp_avg") is None or state.get("exp_inf") is None
    weight, step_size = 1.0 - beta1, lr / (1.0 - beta1**step)
    combine = _adamax_scalars if step_size and eps else _adamax_scalars.__wrapped__
    return step, (first, bool(decay), abs(weight) < 0.5,
                  *combine(scalar, decay, weight, beta2, eps, step_size))


def nadam(state: Mapping[str, Any], group: Mapping[str, Any], grad_weight: float,
          avg_weight: float, scalar: Scalar) -> tuple[Any, ...]:
    """The NAdam update's arguments after its four arrays (parameter, gradient, first and
    second moments), given the step's two weights (``dparray.optim.NAdam.step_weights``):
    ``first``, ``with_decay``, ``decoupled``, ``near``; then, as ``scalar``, the decay (the
    decoupled factor ``1 - lr * weight_decay``, or the weight decay added to the gradient),
    ``1 - beta1``, ``1 - (1 - beta1)``, ``beta2``, ``1 - beta2``, ``1 - beta2^step``, ``eps``,
    the two weights and zero."""
    lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
    decay, decoupled = group["weight_decay"], bool(group["decoupled_weight_decay"])
    step = state.get("step", 0) + 1
    first = state.get("exp_avg") is None or state.get("exp_avg_sq") is None
    weight = 1.0 - beta1
    return (first, bool(decay), decoupled, abs(weight) < 0.5,
            scalar(1.0 - lr * decay if decoupled else decay), scalar(weight),
            scalar(1.0 - weight), scalar(beta2), scalar(1.0 - beta2),
            scalar(1.0 - beta2**step), scalar(eps), scalar(grad_weight), scalar(avg_weight),
            scalar(0.0))


# A group's parameters of one dtype share their scalars in a step: converted once, not once
# per parameter (per parameter, Adam's eight took 4 us: more than half of what the compiled
# update of 4096 float32 numbers takes). A zero lr (or beta, or eps) bypasses the cache: there
# -0.0 == 0.0, and the sign of that zero can reach the sign of a zero result. (A zero weight
# decay, momentum or dampening cannot: the update does not use it, or uses 1 - it.)
@functools.lru_cache(maxsize=256)
def _adam_scalars(scalar: Scalar, lr: float, beta1: float, beta2: float, eps: float,
                  decay: float, decoupled: bool, step: int) -> tuple[Any, ...]:
    return (scalar(1.0 - lr * decay if decoupled else decay),
            scalar(beta1), scalar(1.0 - beta1), scalar(beta2), scalar(1.0 - beta2),
            scalar(lr / (1.0 - beta1**step)), scalar(1.0 / math.sqrt(1.0 - beta2**step)),
            scalar(eps))


@functools.lru_cache(maxsize=256)
def _sgd_scalars(scalar: Scalar, lr: float, decay: float, momentum: float,
                 dampening: float | None) -> tuple[Any, ...]:
    """``dampening`` None: not computed with (its place holds 0)."""
    keep = scalar(0.0) if dampening is None else scalar(1.0 - dampening)
    return scalar(lr), scalar(decay), scalar(momentum), keep


@functools.lru_cache(maxsize=256)
def _adadelta_scalars(scalar: Scalar, decay: float, rho: float, eps: float,
                      lr: float) -> tuple[Any, ...]:
    return scalar(decay), scalar(rho), scalar(1.0 - rho), scalar(eps), scalar(lr), scalar(0.0)


@functools.lru_cache(maxsize=256)
def _rmsprop_scalars(scalar: Scalar, decay: float, alpha: float, weight: float, eps: float,
                     momentum: float, lr: float) -> tuple[Any, ...]:
    return (scalar(decay), scalar(alpha), scalar(weight), scalar(1.0 - weight), scalar(eps),
            scalar(momentum), scalar(lr), scalar(0.0))


@functools.lru_cache(maxsize=256)
def _adagrad_scalars(scalar: Scalar, decay: float, step_size: float,
                     eps: float) -> tuple[Any, ...]:
    return scalar(decay), scalar(step_size), scalar(eps)


@functools.lru_cache(maxsize=256)
def _adamax_scalars(scalar: Scalar, decay: float, weight: float, beta2: float, eps: float,
                    step_size: float) -> tuple[Any, ...]:
    return (scalar(decay), scalar(weight), scalar(1.0 - weight), scalar(beta2), scalar(eps),
            scalar(step_size), scalar(0.0))
