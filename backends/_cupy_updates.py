"""The CuPy backend's optimizer updates: Adam (and AdamW), SGD and Adadelta as one CUDA
elementwise kernel per parameter, where the references launch a kernel, and make a pass over
memory, per array operation (about a dozen for Adam).

Each kernel does the reference's arithmetic in its order and in the parameter's dtype, with the
scalars that ``_update_arguments`` prepares for NumPy's loops too. It is compiled with
``--fmad=false``: NVRTC would otherwise contract a multiply and an add into one fused
multiply-add, which rounds once where the reference's two kernels round twice. So the result
is meant to be the reference's bit for bit, as on NumPy: ``bench/gpu_check.py`` and
``tests/test_fused_optim.py`` check it where a CUDA device is.
"""

from __future__ import annotations

import functools
from typing import Any

from . import _update_arguments as update_arguments
from ._fallback import floating

_NO_CONTRACTION = ("--fmad=false",)

_ADAM = (
    "T param, T grad, T m, T v, bool first, bool with_decay, bool decoupled, T decay, "
    "T beta1, T keep1, T beta2, T keep2, T step_size, T inverse_bias2, T eps",
    "T out, T m_out, T v_out",
    """
    T p = param;
    T g = grad;
    if (with_decay) {
        if (decoupled) p = p * decay; else g = g + decay * p;
    }
    const T mi = first ? keep1 * g : beta1 * m + keep1 * g;
    const T vi = first ? keep2 * g * g : beta2 * v + keep2 * g * g;
    m_out = mi;
    v_out = vi;
    out = p - step_size * (mi / (sqrt(vi) * inverse_bias2 + eps));
    """,
)

_SGD = (
    "T param, T grad, T buffer, bool first, T lr, bool with_decay, T decay, "
    "bool with_momentum, T momentum, T keep, bool nesterov",
    "T out, T buffer_out",
    """
    T g = with_decay ? grad + decay * param : grad;
    if (with_momentum) {
        const T b = first ? g : momentum * buffer + keep * g;
        buffer_out = b;
        g = nesterov ? g + momentum * b : b;
    }
    out = param - lr * g;
    """,
)


_ADADELTA = (
    "T param, T grad, T square, T accumulated, bool first, bool with_decay, T decay, T rho, "
    "T keep, T eps, T lr, T zero",
    "T out, T square_out, T accumulated_out",
    """
    const T g = with_decay ? grad + decay * param : grad;
    const T a = first ? zero : accumulated;
    const T s = rho * (first ? zero : square) + keep * g * g;
    const T d = sqrt(a + eps) / sqrt(s + eps) * g;
    square_out = s;
    accumulated_out = rho * a + keep * d * d;
    out = param - lr * d;
    """,
)


@functools.cache
def _kernel(name: str) -> Any:
    import cupy

    in_params, out_params, body = {"adam": _ADAM, "sgd": _SGD, "adadelta": _ADADELTA}[name]
    return cupy.ElementwiseKernel(in_params, out_params, body, f"dparray_{name}_update",
                                  options=_NO_CONTRACTION)


def adam_update(optimizer: Any, xp: Any, param: Any, grad: Any, state: dict[str, Any],
                group: dict[str, Any]) -> Any:
    """``Adam.update`` as one kernel (the reference's arithmetic, in its order and dtype)."""
    if not floating(param, grad):
        return type(optimizer).update(optimizer, xp, param, grad, state, group)
    step, arguments = update_arguments.adam(optimizer, state, group, param.dtype.type)
    first = arguments[0]
    m = grad if first else state["exp_avg"]
    v = grad if first else state["exp_avg_sq"]
    out, m_out, v_out = _kernel("adam")(param, grad, m, v, *arguments)
    state.update(step=step, exp_avg=m_out, exp_avg_sq=v_out)
    return out


def sgd_update(optimizer: Any, xp: Any, param: Any, grad: Any, state: dict[str, Any],
               group: dict[str, Any]) -> Any:
    """``SGD.update`` as one kernel (the reference's arithmetic, in its order and dtype)."""
    if not floating(param, grad):
        return type(optimizer).update(optimizer, xp, param, grad, state, group)
    arguments = update_arguments.sgd(state, group, param.dtype.type)
    buffer = grad if arguments[0] else state["momentum_buffer"]
    out, buffer_out = _kernel("sgd")(param, grad, buffer, *arguments)
    if group["momentum"]:
        state["momentum_buffer"] = buffer_out
    return out


def adadelta_update(optimizer: Any, xp: Any, param: Any, grad: Any, state: dict[str, Any],
                    group: dict[str, Any]) -> Any:
    """``Adadelta.update`` as one kernel (the reference's arithmetic, in its order and dtype)."""
    if not floating(param, grad):
        return type(optimizer).update(optimizer, xp, param, grad, state, group)
    arguments = update_arguments.adadelta(state, group, param.dtype.type)
    first = arguments[0]
    square = grad if first else state["square_avg"]
    accumulated = grad if first else state["acc_delta"]
    out, square_out, accumulated_out = _kernel("adadelta")(param, grad, square, accumulated,
                                                           *arguments)
    state.update(step=state.get("step", 0) + 1, square_avg=square_out,
                 acc_delta=accumulated_out)
    return out
