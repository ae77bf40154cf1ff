"""PyTorch's values and gradients of every differentiable op of the op table on special values:
``special_values.safetensors``.

    .venv/bin/python tests/data/make_special_value_fixtures.py   # the dev venv, with torch

For each case of ``tests/cases.py`` and ``tests/cases_activations.py`` (their names, shapes and
domains; this script needs dparray importable for them) and each variant of its inputs in
``tests/special_values.py`` -- one NaN, infinity, -0.0, 1e308 or subnormal among ordinary
values, every element special, a 0-size axis -- ``TORCH[name]`` (the same op, written with
PyTorch) is called in float64 and its output and the gradients of ``sum(output * cotangent)``
are recorded; a call or a backward PyTorch refuses is recorded as refused.

The file holds the cases' ordinary inputs (``base``), and every output and gradient, one after
another (``values``), all float64. Its metadata ``special_cases`` is JSON: for each case, its input
shapes and its variants, each ``[label, output]`` with ``output`` either ``[shape, offset,
[gradient offset or null per input]]`` or the name of PyTorch's exception. The cotangent of an
output of ``n`` elements is ``cotangent(n)`` of ``tests/special_values.py``.
Made with PyTorch 2.13.0 (CPU).
"""

from __future__ import annotations

import json
import os
import pathlib
import sys
import warnings

import numpy as np
import torch
from safetensors.numpy import save_file

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE.parent))  # tests/: the op table and the shared special values

from cases import ALL_CASES  # noqa: E402
from cases_activations import ACTIVATIONS  # noqa: E402
from special_values import cotangent, inputs, labels  # noqa: E402

F = torch.nn.functional


def _chunks(x):
    return torch.stack(x.chunk(2)[::-1])


TORCH = {
    # arithmetic
    "add_broadcast": lambda a, b: a + b,
    "add_both_broadcast": lambda a, b: a + b,
    "add_scalar_left": lambda a: 2.5 + a,
    "sub_broadcast": lambda a, b: a - b,
    "rsub_scalar": lambda a: 1.0 - a,
    "mul_broadcast": lambda a, b: a * b,
    "mul_noncontiguous": lambda a, b: a * b,
    "div_broadcast": lambda a, b: a / b,
    "rdiv_scalar": lambda a: 2.0 / a,
    "pow_scalar": lambda a: a**3,
    "pow_tensor": lambda a, b: a**b,
    "rpow_scalar": lambda a: 2.0**a,
    "neg": lambda a: -a,
    "remainder": lambda a, b: a % b,
    "remainder_negative_divisor": lambda a, b: a % -b,
    "rremainder_scalar": lambda b: 2.5 % b,
    "floor_divide": lambda a, b: a // b,
    "lerp_scalar_weight": lambda a, b: torch.lerp(a, b, 0.3),
    "lerp_tensor_weight": torch.lerp,
    # linear algebra
    **{name: torch.matmul for name in (
        "matmul_2d", "matmul_2d_noncontiguous", "matmul_vec_mat", "matmul_mat_vec",
        "matmul_vec_vec", "matmul_batched", "matmul_batch_broadcast", "matmul_batched_vec",
        "matmul_vec_batched")},
    # trigonometric
    "sin": torch.sin, "cos": torch.cos, "tan": torch.tan, "asin": torch.asin,
    "acos": torch.acos, "atan": torch.atan, "atan2": torch.atan2, "sinh": torch.sinh,
    "cosh": torch.cosh, "asinh": torch.asinh, "acosh": torch.acosh, "atanh": torch.atanh,
    "sin_noncontiguous": torch.sin,
    # rounding
    "floor": torch.floor, "ceil": torch.ceil, "round": torch.round,
    "round_decimals": lambda x: torch.round(x, decimals=1),
    "round_negative_decimals": lambda x: torch.round(x * 100.0, decimals=-1),
    "trunc": torch.trunc, "sign": torch.sign,
    # exponential
    "exp2": torch.exp2, "expm1": torch.expm1, "log2": torch.log2, "log10": torch.log10,
    "log1p": torch.log1p, "rsqrt": torch.rsqrt, "erf": torch.erf,
    "logaddexp": torch.logaddexp, "logaddexp_wide": torch.logaddexp,
    # elementwise
    "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "abs": torch.abs,
    "tanh": torch.tanh, "sigmoid": torch.sigmoid, "sigmoid_wide": torch.sigmoid,
    "relu": torch.relu, "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "softplus": F.softplus,  # (dparray.softplus has no threshold, but is exact where it is)
    "softplus_beta": lambda x: F.softplus(x, beta=2.0),
    "maximum": torch.maximum, "minimum": torch.minimum,
    "maximum_scalar": lambda a: torch.maximum(a, torch.zeros((), dtype=a.dtype)),
    "clip": lambda x: torch.clamp(x, -0.55, 0.75),
    "clip_lower_only": lambda x: torch.clamp(x, min=0.05),
    "where": lambda a, b: torch.where(a > 0, a, b),
    # reductions
    "sum_all": torch.sum,
    "sum_axis": lambda x: x.sum(1),
    "sum_axes_keepdims": lambda x: x.sum((0, 2), keepdim=True),
    "sum_negative_axis": lambda x: x.sum(-1),
    "mean_all": torch.mean,
    "mean_axis_keepdims": lambda x: x.mean(0, keepdim=True),
    "max_all": torch.max,  # the whole tensor's: ties share the gradient, as dparray's
    "max_axis": lambda x: torch.amax(x, 1),
    "min_axis_keepdims": lambda x: torch.amin(x, 0, keepdim=True),
    "var_all": lambda x: torch.var(x, correction=0),
    "var_axis_corrected": lambda x: torch.var(x, 1, correction=1),
    "logsumexp_all": lambda x: torch.logsumexp(x, (0, 1)),
    "logsumexp_axis": lambda x: torch.logsumexp(x, 1, keepdim=True),
    "softmax": lambda x: torch.softmax(x, -1),
    "softmax_axis0": lambda x: torch.softmax(x, 0),
    "log_softmax": lambda x: torch.log_softmax(x, -1),
    "prod_all": torch.prod,
    "prod_axis_with_zeros": lambda x: x.prod(1),
    "prod_two_zeros_keepdims": lambda x: x.prod(0, keepdim=True),
    "std_all": lambda x: torch.std(x, correction=0),
    "std_axis_corrected": lambda x: torch.std(x, 0, correction=1),
    # scans
    "cumsum": lambda x: x.cumsum(1),
    "cumsum_1d_no_axis": lambda x: x.cumsum(0),
    "cumsum_axis0_noncontiguous": lambda x: x.cumsum(0),
    "cumprod": lambda x: x.cumprod(-1),
    "cumprod_with_zeros": lambda x: x.cumprod(1),
    "cummax": lambda x: torch.cummax(x, 1).values,
    "cummin_axis0": lambda x: torch.cummin(x, 0).values,
    "logcumsumexp": lambda x: torch.logcumsumexp(x, 1),
    "logcumsumexp_wide": lambda x: torch.logcumsumexp(x, 0),
    # sorting
    "sort": lambda x: torch.sort(x, dim=-1, stable=True).values,
    "sort_descending_axis0": lambda x: torch.sort(x, dim=0, descending=True, stable=True).values,
    "topk": lambda x: torch.topk(x, 2).values,
    "topk_smallest_axis0": lambda x: torch.topk(x, 3, dim=0, largest=False).values,
    # shape
    "reshape": lambda x: x.reshape(4, -1),
    "reshape_noncontiguous": lambda x: x.reshape(-1),
    "permute": lambda x: x.permute(2, 0, 1),
    "transpose": lambda x: x.transpose(0, 2),
    "T": lambda x: x.T,
    "broadcast_to": lambda x: x.broadcast_to((2, 3, 4)),
    "expand": lambda x: x.expand(2, -1, 4),
    "squeeze": lambda x: x.squeeze(),
    "squeeze_axis": lambda x: x.squeeze(0),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "flatten": lambda x: x.flatten(1),
    "getitem_slices": lambda x: x[1:, ::2],
    "getitem_int": lambda x: x[1],
    "getitem_mixed": lambda x: x[None, ..., -1, 1:3],
    "getitem_negative_step": lambda x: x.flip(0),
    "take_repeats": lambda x: x[[2, 0, 2, 2]],
    "take_axis1": lambda x: x[:, [1, -1, 1]],
    "take_2d_index": lambda x: x[torch.tensor([[0, 1], [1, 1]])],
    "cat": lambda a, b: torch.cat([a, b], 1),
    "stack": lambda a, b: torch.stack([a, b], -1),
    "split": lambda x: torch.cat(x.split([1, 3], 1)[::-1], 1),
    "chunk": _chunks,
    # activations
    "leaky_relu": F.leaky_relu,
    "leaky_relu_slope": lambda x: F.leaky_relu(x, 0.3),
    "prelu_one_slope": lambda x, w: F.prelu(x, w[:1]),
    "prelu_channels": F.prelu,
    "elu": F.elu,
    "elu_alpha": lambda x: F.elu(x, alpha=0.4),
    "selu": F.selu,
    "celu": lambda x: F.celu(x, alpha=0.5),
    "silu": F.silu, "silu_wide": F.silu, "mish": F.mish, "mish_wide": F.mish,
    "hardswish": F.hardswish, "hardsigmoid": F.hardsigmoid, "hardtanh": F.hardtanh,
    "hardtanh_bounds": lambda x: F.hardtanh(x, -3.0, 6.0),
    "relu6": F.relu6,
    "softplus_beta_threshold": lambda x: F.softplus(x, beta=2.0, threshold=3.0),
    "softsign": F.softsign, "logsigmoid": F.logsigmoid, "logsigmoid_wide": F.logsigmoid,
    "softmin": lambda x: F.softmin(x, dim=0),
    "softmin_last": lambda x: F.softmin(x, dim=-1),
}


def cases():
    """Every case of the op table, by key: the activations' prefixed (``cases.py`` has a
    ``softplus`` of its own, ``dparray.softplus``; the activations' is ``F.softplus``)."""
    found = [(case.name, case) for case in ALL_CASES]
    found += [(f"activations.{case.name}", case) for case in ACTIVATIONS]
    return found


def torch_function(key):
    return TORCH[key.removeprefix("activations.")]


def record(function, arrays, values):
    """The output's shape and offset and each input's gradient offset in ``values`` (None
    where PyTorch gives no gradient), or the name of the exception PyTorch raised."""
    tensors = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    try:
        out = function(*tensors)
    except (RuntimeError, IndexError, ValueError, TypeError) as error:
        return type(error).__name__
    result = [list(out.shape), len(values), []]
    values.extend(out.detach().reshape(-1).tolist())
    weight = torch.tensor(cotangent(out.numel()), dtype=torch.float64).reshape(out.shape)
    try:
        grads = torch.autograd.grad(out, tensors, grad_outputs=weight, allow_unused=True)
    except RuntimeError:  # no derivative (floor_divide)
        grads = [None] * len(tensors)
    for g in grads:
        if g is None:
            result[2].append(None)
        else:
            result[2].append(len(values))
            values.extend(g.reshape(-1).tolist())
    return result


def main() -> None:
    missing = [key for key, _ in cases() if key.removeprefix("activations.") not in TORCH]
    if missing:
        raise SystemExit(f"no PyTorch equivalent for {missing}")
    rng = np.random.default_rng(2113)
    described, base, values = {}, [], []
    for key, case in cases():
        arrays = case.inputs(rng)
        offsets = []
        for a in arrays:
            offsets.append(len(base))
            base.extend(np.asarray(a, dtype=np.float64).reshape(-1).tolist())
        variants = []
        for label in labels([tuple(a.shape) for a in arrays]):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                variants.append([label, record(torch_function(key), inputs(arrays, label),
                                               values)])
        described[key] = {"shapes": [list(a.shape) for a in arrays], "base": offsets,
                          "variants": variants}
    path = HERE / "special_values.safetensors"
    save_file({"base": np.array(base, dtype=np.float64),
               "values": np.array(values, dtype=np.float64)}, path,
              metadata={"special_cases": json.dumps(described, separators=(",", ":")),
                        "torch": torch.__version__})
    os.chmod(path, 0o644)
    count = sum(len(c["variants"]) for c in described.values())
    print(f"{path.name}: {len(described)} ops, {count} calls, {len(values)} values")


if __name__ == "__main__":
    main()
