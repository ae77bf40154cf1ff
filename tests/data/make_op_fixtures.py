"""PyTorch references for single ops (not layers): ``ops.safetensors``.

    ../torch-venv/bin/python tests/data/make_op_fixtures.py   # any environment with torch

Made with PyTorch 2.13.0 (CPU). For each case the file holds ``<case>/input.<i>`` (floating
inputs in float64 unless a case says otherwise), ``<case>/output.<i>`` (a tuple output
flattened in order), and, for a differentiable case, ``<case>/cotangent.<i>`` for each floating
output and ``<case>/grad.<i>`` for each floating input: the gradients of
``sum(output_i * cotangent_i)``. ``tests/test_torch_ops.py`` runs the dparray op of the same
name on the same inputs. The header's metadata holds ``ops`` (JSON: for each case whether it
is differentiable) and ``promotion`` (JSON: the result dtype of binary ops on tensors of every
pair of dtypes, as PyTorch promotes them).
"""

from __future__ import annotations

import itertools
import json
import pathlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch
from safetensors.torch import save_file

HERE = pathlib.Path(__file__).parent
F = torch.nn.functional
t = torch.tensor


@dataclass
class OpCase:
    name: str
    function: Callable[..., object]
    inputs: list[torch.Tensor]
    grad: bool = True


def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, dtype=torch.float64)


def _away(*shape: int) -> torch.Tensor:
    """Values at least 0.2 from 0: no kink of fmod, copysign or a division nearby."""
    x = torch.rand(*shape, dtype=torch.float64) * 1.3 + 0.2
    return x * torch.where(torch.rand(*shape) < 0.5, -1.0, 1.0).double()


def _distinct(*shape: int) -> torch.Tensor:
    """No ties anywhere (amax, amin), in a random order."""
    n = 1
    for s in shape:
        n *= s
    return (torch.randperm(n).double() * 0.37 - 0.1 * n).reshape(shape)


def arithmetic_cases() -> list[OpCase]:
    ints = t([7, -7, 5, -5, 3, 12])
    return [
        OpCase("add_int_float64", lambda a, b: a + b, [ints, _randn(6)]),
        OpCase("div_int_float32", lambda a, b: a / b, [ints, _away(6).float()]),
        OpCase("remainder_int_float", lambda a, b: a % b, [ints, _away(6).abs() + 1]),
        OpCase("mul_float_bool", lambda a, b: a * b, [_randn(6), t([True, False] * 3)]),
        OpCase("pow_int_float", lambda a, b: a**b, [t([1, 2, 3, 4, 5, 6]), _randn(6)]),
        OpCase("pow_int_negative_tensor", lambda a, b: a**b,
               [t([2, 1, -1, -1, 3, 0]), t([-1, -3, -3, -2, 2, 4])], grad=False),
        OpCase("rpow_int_negative_tensor", lambda b: 2**b, [t([-1, 0, 3])], grad=False),
        OpCase("or_int32_wraps", lambda a: a | 0xFFFFFFFF, [t([1, 2, -3], dtype=torch.int32)],
               grad=False),
        OpCase("and_int32_wraps", lambda a: a & 0xFFFFFFFF, [t([1, 2, -3], dtype=torch.int32)],
               grad=False),
        OpCase("add_int8_wraps", lambda a: a + 300, [t([1, 2, -3], dtype=torch.int8)],
               grad=False),
        OpCase("eq_int8_wraps", lambda a: a == 257, [t([1, 2, -3], dtype=torch.int8)],
               grad=False),
        OpCase("or_bool_int", lambda a, b: a | b, [t([True, False, True]), t([4, 2, 0])],
               grad=False),
        OpCase("fmod", torch.fmod, [_randn(3, 4) * 3, _away(4)]),
        OpCase("fmod_scalar", lambda a: torch.fmod(a, -1.5), [_randn(3, 4) * 3]),
        OpCase("fmod_int", lambda a: torch.fmod(a, 3), [ints], grad=False),
        OpCase("fmod_int_tensors", torch.fmod, [ints, t([3, 3, -3, -3, 2, 5])], grad=False),
        OpCase("fmod_int_float_scalar", lambda a: torch.fmod(a, 2.5), [ints], grad=False),
        OpCase("copysign", torch.copysign, [_away(3, 4), _away(3, 4)]),
        OpCase("copysign_scalar", lambda a: torch.copysign(a, -1.0), [_away(5)]),
        OpCase("copysign_int", torch.copysign, [ints, t([-1, 1, 1, -1, 0, -2])], grad=False),
        OpCase("div_trunc", lambda a, b: torch.div(a, b, rounding_mode="trunc"),
               [_randn(3, 4) * 4, _away(4)]),
        OpCase("div_floor", lambda a, b: torch.div(a, b, rounding_mode="floor"),
               [_randn(3, 4) * 4, _away(4)]),
        OpCase("div_trunc_int", lambda a: torch.div(a, 2, rounding_mode="trunc"), [ints],
               grad=False),
        OpCase("div_floor_int", lambda a, b: torch.div(a, b, rounding_mode="floor"),
               [ints, t([3, 3, -3, -3, 2, 5])], grad=False),
        OpCase("div_trunc_int_float", lambda a: torch.div(a, 2.5, rounding_mode="trunc"),
               [ints], grad=False),
    ]


def scatter_cases() -> list[OpCase]:
    index = torch.randint(0, 3, (5, 4))
    x, src = _randn(3, 4), _randn(5, 4)
    src[1, 2], x[0, 1] = 0.0, 0.0  # prod's gradient at zeros
    cases = []
    for reduce, include_self in itertools.product(("sum", "prod", "mean", "amax", "amin"),
                                                  (True, False)):
        base, source = (_distinct(3, 4), _distinct(5, 4)) if reduce in ("amax", "amin") \
            else (x, src)
        name = f"scatter_reduce_{reduce}" + ("" if include_self else "_without_self")
        cases.append(OpCase(
            name, lambda a, s, i, r=reduce, k=include_self: a.scatter_reduce(0, i, s, r,
                                                                             include_self=k),
            [base, source, index]))
    ints, int_src = t([[1, 2], [3, 4]]), t([[5, 6], [7, 9]])
    cases += [
        OpCase("scatter_reduce_mean_int", lambda a, s, i: a.scatter_reduce(0, i, s, "mean"),
               [ints, int_src, t([[1, 1], [1, 0]])], grad=False),
        OpCase("scatter_reduce_amax_axis1", lambda a, s, i: a.scatter_reduce(1, i, s, "amax"),
               [_distinct(3, 5), _distinct(3, 4), torch.randint(0, 5, (3, 4))]),
        OpCase("scatter_add_reduce", lambda a, s, i: a.scatter(1, i, s, reduce="add"),
               [_randn(2, 3), _randn(2, 2), t([[0, 0], [2, 1]])], grad=False),
        OpCase("scatter_multiply_value", lambda a, i: a.scatter(1, i, 2.5, reduce="multiply"),
               [_randn(2, 3), t([[0, 0], [2, 1]])], grad=False),
    ]
    return cases


def selection_cases() -> list[OpCase]:
    mask = t([[True, False, True], [False, False, True]])
    return [
        OpCase("nonzero", torch.nonzero, [t([[0, 1, 0], [2, 0, 3]])], grad=False),
        OpCase("nonzero_floats_3d", torch.nonzero, [t([[[0.0, 1.5], [0.0, -2.0]]])],
               grad=False),
        OpCase("nonzero_as_tuple", lambda a: torch.nonzero(a, as_tuple=True),
               [t([[0, 1, 0], [2, 0, 3]])], grad=False),
        OpCase("nonzero_0d", torch.nonzero, [t(3)], grad=False),
        OpCase("masked_select", torch.masked_select, [_randn(2, 3), mask]),
        OpCase("masked_select_broadcast", torch.masked_select, [_randn(2, 3), t([True, False,
                                                                                True])]),
        OpCase("masked_select_broadcast_input", torch.masked_select, [_randn(3), mask]),
        OpCase("unfold", lambda a: a.unfold(1, 3, 2), [_randn(2, 7, 3)]),
        OpCase("unfold_step_1_last", lambda a: a.unfold(-1, 2, 1), [_randn(3, 4)]),
        OpCase("unflatten", lambda a: a.unflatten(1, (2, -1)), [_randn(3, 6)]),
    ]


def reduction_cases() -> list[OpCase]:
    ints = t([[1, 2, 3], [4, 5, 7]])
    return [
        OpCase("std_mean", torch.std_mean, [_randn(3, 4)]),
        OpCase("var_mean_axis", lambda a: torch.var_mean(a, 1), [_randn(3, 4)]),
        OpCase("std_mean_correction0_keepdim",
               lambda a: torch.std_mean(a, (0, 2), correction=0, keepdim=True), [_randn(2, 3, 4)]),
        OpCase("var_default_correction", lambda a: a.var(1), [_randn(3, 4)]),
        OpCase("std_default_correction", lambda a: a.std(), [_randn(3, 4)]),
        OpCase("var_size_one_axis", lambda a: a.var(dim=(0, 3)), [_randn(1, 2, 3, 1, 5)]),
        OpCase("var_size_one_axis_correction0", lambda a: a.var(dim=(0, 3), correction=0),
               [_randn(1, 2, 3, 1, 5)]),
        OpCase("std_size_one_axis", lambda a: a.std(dim=2), [_randn(2, 3, 1)]),
        OpCase("std_size_one_axis_correction0", lambda a: a.std(dim=2, correction=0),
               [_randn(2, 3, 1)]),
        OpCase("var_unbiased_false", lambda a: a.var(0, unbiased=False), [_randn(3, 4)]),
        OpCase("sum_int_as_float64", lambda a: a.sum(dtype=torch.float64), [ints], grad=False),
        OpCase("sum_float_as_int", lambda a: a.sum(1, dtype=torch.int64), [_randn(2, 3) * 3],
               grad=False),
        OpCase("sum_float32_as_float64", lambda a: a.sum(0, dtype=torch.float64),
               [_randn(2, 3).float()]),
        OpCase("prod_int_as_float32", lambda a: a.prod(1, dtype=torch.float32), [ints],
               grad=False),
        OpCase("prod_dtype", lambda a: a.prod(dtype=torch.float64), [_randn(2, 3).float()]),
    ]


def shape_cases() -> list[OpCase]:
    return [
        OpCase("squeeze_not_one", lambda a: a.squeeze(1), [_randn(2, 3)]),
        OpCase("squeeze_tuple", lambda a: a.squeeze((0, 1, 2)), [_randn(1, 3, 1)]),
        OpCase("roll_tuple", lambda a: torch.roll(a, (1, -2), (0, 1)), [_randn(3, 4)]),
        OpCase("roll_one_shift_flattened", lambda a: torch.roll(a, (2,)), [_randn(3, 4)]),
        OpCase("einsum_ellipsis_summed", lambda a, b: torch.einsum("ij...,ij...->ij", a, b),
               [_randn(2, 3, 4), _randn(2, 3, 4)]),
        OpCase("einsum_ellipsis_only_summed", lambda a: torch.einsum("i...->i", a),
               [_randn(2, 3, 4)]),
        OpCase("einsum_ellipsis_broadcast", lambda a, b: torch.einsum("...ij,...jk->ik", a, b),
               [_randn(2, 3, 4), _randn(1, 4, 5)]),
        OpCase("linspace_int", lambda: torch.linspace(0, 10, 5, dtype=torch.int64), [],
               grad=False),
        OpCase("linspace_int_negative", lambda: torch.linspace(-5, 5, 4, dtype=torch.int64), [],
               grad=False),
        OpCase("linspace_int_descending", lambda: torch.linspace(10, 0, 7, dtype=torch.int64),
               [], grad=False),
        OpCase("linspace_int_float_bounds",
               lambda: torch.linspace(-3.5, 7.2, 6, dtype=torch.int32), [], grad=False),
        OpCase("linspace_int_one", lambda: torch.linspace(3, 9, 1, dtype=torch.int64), [],
               grad=False),
        OpCase("linspace_uint8", lambda: torch.linspace(0, 255, 4, dtype=torch.uint8), [],
               grad=False),
    ]


def nn_cases() -> list[OpCase]:
    zero_row = _randn(3, 4)
    zero_row[1] = 0.0
    return [
        OpCase("normalize", F.normalize, [_randn(3, 4)]),
        OpCase("normalize_p1_dim0", lambda a: F.normalize(a, p=1.0, dim=0), [_randn(3, 4)]),
        OpCase("normalize_inf_last", lambda a: F.normalize(a, p=float("inf"), dim=-1),
               [_randn(2, 3, 4)]),
        OpCase("normalize_zero_row", lambda a: F.normalize(a, dim=1, eps=1e-3), [zero_row]),
        OpCase("sdpa_grouped_query", lambda q, k, v: F.scaled_dot_product_attention(
            q, k, v, enable_gqa=True),
            [_randn(2, 4, 3, 5), _randn(2, 2, 6, 5), _randn(2, 2, 6, 7)]),
        OpCase("sdpa_grouped_query_causal", lambda q, k, v: F.scaled_dot_product_attention(
            q, k, v, is_causal=True, enable_gqa=True),
            [_randn(1, 6, 4, 3), _randn(1, 3, 4, 3), _randn(1, 3, 4, 2)]),
    ]


def interpolate_cases() -> list[OpCase]:
    def up(name: str, shape: tuple[int, ...], **kwargs: object) -> OpCase:
        return OpCase(name, lambda a: F.interpolate(a, **kwargs), [_randn(*shape)])

    return [
        up("interpolate_linear_scale", (2, 3, 7), scale_factor=2.3, mode="linear"),
        up("interpolate_linear_size_align", (2, 3, 7), size=4, mode="linear",
           align_corners=True),
        up("interpolate_nearest_1d", (2, 3, 7), size=(11,)),
        up("interpolate_nearest_exact_1d_down", (2, 3, 7), scale_factor=0.45,
           mode="nearest-exact"),
        up("interpolate_nearest_exact_2d", (2, 2, 5, 4), size=(7, 9), mode="nearest-exact"),
        up("interpolate_bilinear_int_size", (2, 2, 5, 4), size=6, mode="bilinear"),
        up("interpolate_bicubic_size", (2, 2, 5, 4), size=(7, 9), mode="bicubic"),
        up("interpolate_bicubic_scale_align", (2, 2, 5, 4), scale_factor=1.7, mode="bicubic",
           align_corners=True),
        up("interpolate_bicubic_down", (2, 2, 6, 5), scale_factor=0.6, mode="bicubic"),
        up("interpolate_bicubic_kept_height", (2, 2, 5, 4), scale_factor=(1.1, 2.0),
           mode="bicubic"),
        up("interpolate_trilinear_scale", (1, 2, 4, 5, 3), scale_factor=(1.5, 2.0, 0.7),
           mode="trilinear"),
        up("interpolate_trilinear_size_align", (1, 2, 4, 5, 3), size=(3, 7, 5),
           mode="trilinear", align_corners=True),
        up("interpolate_nearest_3d", (1, 2, 4, 5, 3), size=6),
        up("interpolate_nearest_exact_3d", (1, 2, 4, 5, 3), scale_factor=2,
           mode="nearest-exact"),
    ]


def promotion_table() -> list[list[str]]:
    """``[op, dtype_a, dtype_b, result]`` for tensors of every pair of dtypes."""
    dtypes = {"bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8,
              "int32": torch.int32, "int64": torch.int64, "float16": torch.float16,
              "float32": torch.float32, "float64": torch.float64}
    ops: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
        "add": torch.add, "mul": torch.mul, "div": torch.div, "maximum": torch.maximum,
        "less": torch.lt, "cat": lambda a, b: torch.cat([a, b]),
        "where": lambda a, b: torch.where(torch.tensor([True, False]), a, b),
    }
    rows = []
    for (op, function), (name_a, a), (name_b, b) in itertools.product(
            ops.items(), dtypes.items(), dtypes.items()):
        x, y = torch.ones(2, dtype=a), torch.ones(2, dtype=b)
        rows.append([op, name_a, name_b, str(function(x, y).dtype).removeprefix("torch.")])
    return rows


def record(case: OpCase, generator: torch.Generator) -> dict[str, torch.Tensor]:
    inputs = [x.detach().clone().requires_grad_(case.grad and x.is_floating_point())
              for x in case.inputs]
    with warnings.catch_warnings():  # var over one element warns, as dparray does
        warnings.simplefilter("ignore")
        result = case.function(*inputs)
    outputs = list(result) if isinstance(result, tuple) else [result]
    tensors = {f"input.{i}": x for i, x in enumerate(case.inputs)}
    total: torch.Tensor | None = None
    for i, out in enumerate(outputs):
        tensors[f"output.{i}"] = out.detach()
        if case.grad and out.is_floating_point():
            cotangent = torch.randn(out.shape, generator=generator, dtype=out.dtype)
            tensors[f"cotangent.{i}"] = cotangent
            term = (out * cotangent).sum()
            total = term if total is None else total + term
    wanted = [x for x in inputs if x.requires_grad]
    if total is not None and wanted:
        grads = torch.autograd.grad(total, wanted, allow_unused=True)
        floating = [i for i, x in enumerate(inputs) if x.requires_grad]
        for i, g in zip(floating, grads, strict=True):
            tensors[f"grad.{i}"] = torch.zeros_like(inputs[i]) if g is None else g
    return tensors


def main() -> None:
    torch.manual_seed(0)
    cases = (arithmetic_cases() + scatter_cases() + selection_cases() + reduction_cases()
             + shape_cases() + nn_cases() + interpolate_cases())
    generator = torch.Generator().manual_seed(0)
    tensors: dict[str, torch.Tensor] = {}
    for case in cases:
        for key, value in record(case, generator).items():
            tensors[f"{case.name}/{key}"] = value.detach().clone().contiguous()
    metadata = {"ops": json.dumps({case.name: {"grad": case.grad} for case in cases}),
                "promotion": json.dumps(promotion_table()), "torch": torch.__version__}
    save_file(tensors, HERE / "ops.safetensors", metadata=metadata)


if __name__ == "__main__":
    main()
