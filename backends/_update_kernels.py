"""The optimizers' updates on NumPy, each one compiled pass per parameter
(``_numba_loops``: ``adam_update``, ``sgd_update``, ...): the reference's arithmetic
(``dparray.optim``), in its order and the parameter's dtype, so parameters and state are the
reference's to the bit. The scalar arguments come from ``_update_arguments``, shared with
CuPy's kernels. A 0-d parameter, or one whose gradient is of another dtype, takes the
reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _update_arguments as update_arguments
from ._fallback import floating
from ._numba_setup import loops as _loops


def _covered(param: Any, grad: Any) -> bool:
    return floating(param, grad) and param.ndim != 0


def _reference(optimizer: Any, *arguments: Any) -> Any:
    return type(optimizer).update(optimizer, *arguments)


def _previous(state: dict[str, Any], first: bool, *names: str) -> list[Any]:
    """The states ``names`` an update reads: None on the first step (there are none yet)."""
    return [None if first else state[name] for name in names]


def _fused(loop: str, param: Any, grad: Any, states: Sequence[Any], arguments: Sequence[Any],
           written: Sequence[bool]) -> list[Any]:
    """``loop(param, grad, *states, *arguments, out, *state_outs)`` on flat views. A state of
    None (none yet, or not used) passes the gradient in its place, which the loop does not
    read; a state the loop does not write (``written`` False) gets no array of its own.
    Returns the new parameter, then each new state (None where not written), in the
    parameter's shape."""
    flat_p, flat_g = param.ravel(), grad.ravel()
    out = np.empty_like(flat_p)
    outs = [np.empty_like(flat_p) if w else out for w in written]
    getattr(_loops(), loop)(flat_p, flat_g, *(flat_g if s is None else s.ravel() for s in states),
                            *arguments, out, *outs)
    return [out.reshape(param.shape)] + [o.reshape(param.shape) if w else None
                                         for o, w in zip(outs, written, strict=True)]


def adam_update(optimizer: Any, xp: Any, param: Any, grad: Any, state: dict[str, Any],
                group: dict[str, Any]) -> Any:
    """``Adam.update`` (and AdamW's)."""
    if not _covered(param, grad):
        return _reference(optimizer, xp, param, grad, state, group)
    step, arguments = update_arguments.adam(optimizer, state, group, param.dtype.type)
    first = arguments[0]
    out, m, v = _fused("adam_update", param, grad,
                       _previous(state, first, "exp_avg", "exp_avg_sq"), arguments, (True, True))
    state.update(step=step, exp_avg=m, exp_avg_sq=v)
    return out


def sgd_update(optimizer: Any, xp: Any, param: Any, grad: Any, state: dict[str, Any],
               group: dict[str, Any]) -> Any:
    """``SGD.update``, with or without momentum."""
    if not _covered(param, grad):
        return _reference(optimizer, xp, param, grad, state, group)
    arguments = update_arguments.sgd(state, group, param.dtype.type)
    momentum = bool(group["momentum"])
    out, buffer = _fused("sgd_update", param, grad,
                         _previous(state, arguments[0], "momentum_buffer"), arguments,
                         (momentum,))
    if momentum:
        state["momentum_buffer"] = buffer
    return out


def rmsprop_update(optimizer: Any, xp: Any, param: Any, grad: Any, state: dict[str, Any],
                   group: dict[str, Any]) -> Any:
    """``RMSprop.update``, centered or not, with or without momentum."""
    if not _covered(param, grad):
        return _reference(optimizer, xp, param, grad, state, group)
    arguments = update_arguments.rmsprop(state, group, param.dtype.type)
    first_square, first_average, first_buffer, _, centered, with_momentum = arguments[:6]
    out, square, average, buffer = _fused(
        "rmsprop_update", param, grad,
        [None if first_square else state["square_avg"],
         None if first_average or not centered else state["grad_avg"],
         None if first_buffer or not with_momentum else state["momentum_buffer"]],
        arguments, (True, centered, with_momentum))
    state.update(step=state.get("step", 0) + 1, square_avg=square)
    if centered:
        state["grad_avg"] = average
    if with_momentum:
        state["momentum_buffer"] = buffer
    return out


def adagrad_update(optimizer: Any, xp: Any, param: Any, grad: Any, state: dict[str, Any],
                   group: dict[str, Any]) -> Any:
    """``Adagrad.update``; a parameter without its sum (a state dict that lacked it) takes
    the reference."""
    total = state.get("sum")
    if (total is None or not _covered(param, grad) or not floating(param, total)
            or total.shape != param.shape):
        return _reference(optimizer, xp, param, grad, state, group)
    step, arguments = update_arguments.adagrad(state, group, param.dtype.type)
    out, total = _fused("adagrad_update", param, grad, [total], arguments, (True,))
    state.update(step=step, sum=total)
    return out


def adamax_update(optimizer: Any, xp: Any, param: Any, grad: Any, state: dict[str, Any],
                  group: dict[str, Any]) -> Any:
    """``Adamax.update``."""
    if not _covered(param, grad):
        return _reference(optimizer, xp, param, grad, state, group)
    step, arguments = update_arguments.adamax(state, group, param.dtype.type)
    first = arguments[0]
    out, m, u = _fused("adamax_update", param, grad, _previous(state, first, "exp_avg", "exp_inf"),
                       arguments, (True, True))
    state.update(step=step, exp_avg=m, exp_inf=u)
    return out


def nadam_update(optimizer: Any, xp: Any, param: Any, grad: Any, state: dict[str, Any],
                 group: dict[str, Any]) -> Any:
    """``NAdam.update``, the step's weights from ``NAdam.step_weights`` as the reference takes
    them."""
    if not _covered(param, grad):
        return _reference(optimizer, xp, param, grad, state, group)
    step, mu_product, grad_weight, avg_weight = optimizer.step_weights(state, group)
    arguments = update_arguments.nadam(state, group, grad_weight, avg_weight,
                                       param.dtype.type)
    first = arguments[0]
    out, m, v = _fused("nadam_update", param, grad,
                       _previous(state, first, "exp_avg", "exp_avg_sq"), arguments, (True, True))
    state.update(step=step, mu_product=mu_product, exp_avg=m, exp_avg_sq=v)
    return out


def adadelta_update(optimizer: Any, xp: Any, param: Any, grad: Any, state: dict[str, Any],
                    group: dict[str, Any]) -> Any:
    """``Adadelta.update``."""
    if not _covered(param, grad):
        return _reference(optimizer, xp, param, grad, state, group)
    arguments = update_arguments.adadelta(state, group, param.dtype.type)
    first = arguments[0]
    out, square, delta = _fused("adadelta_update", param, grad,
                                _previous(state, first, "square_avg", "acc_delta"), arguments,
                                (True, True))
    state.update(step=state.get("step", 0) + 1, square_avg=square, acc_delta=delta)
    return out
