"""Single ops against PyTorch (fixtures in tests/data/ops, made by make_op_fixtures.py): the
values, dtypes and gradients of the ops a ported peer op-test suite found missing or wrong,
on every backend; and PyTorch's promotion between dtype kinds, pair by pair."""

from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import pytest
from safetensors import safe_open
from torch_reference import check_op_case

import dparray as dp

F = dp.nn.functional
PATH = pathlib.Path(__file__).parent / "data" / "ops.safetensors"


def _load() -> tuple[dict[str, dict[str, np.ndarray]], dict[str, bool], list[list[str]]]:
    with safe_open(str(PATH), framework="numpy") as file:
        metadata = file.metadata()
        described = json.loads(metadata["ops"])
        grouped: dict[str, dict[str, np.ndarray]] = {name: {} for name in described}
        for key in file.keys():  # noqa: SIM118 - safe_open is not a mapping
            name, _, rest = key.partition("/")
            grouped[name][rest] = file.get_tensor(key)
    grads = {name: info["grad"] for name, info in described.items()}
    return grouped, grads, json.loads(metadata["promotion"])


ARRAYS, DIFFERENTIABLE, PROMOTION = _load()


def _scatter_reduce(reduce, include_self):
    return lambda a, s, i: a.scatter_reduce(0, i, s, reduce, include_self=include_self)


OPS = {
    "add_int_float64": lambda a, b: a + b,
    "div_int_float32": lambda a, b: a / b,
    "remainder_int_float": lambda a, b: a % b,
    "mul_float_bool": lambda a, b: a * b,
    "pow_int_float": lambda a, b: a**b,
    "pow_int_negative_tensor": lambda a, b: a**b,
    "rpow_int_negative_tensor": lambda b: 2**b,
    "or_int32_wraps": lambda a: a | 0xFFFFFFFF,
    "and_int32_wraps": lambda a: a & 0xFFFFFFFF,
    "add_int8_wraps": lambda a: a + 300,
    "eq_int8_wraps": lambda a: a == 257,
    "or_bool_int": lambda a, b: a | b,
    "fmod": dp.fmod,
    "fmod_scalar": lambda a: a.fmod(-1.5),
    "fmod_int": lambda a: dp.fmod(a, 3),
    "fmod_int_tensors": dp.fmod,
    "fmod_int_float_scalar": lambda a: dp.fmod(a, 2.5),
    "copysign": dp.copysign,
    "copysign_scalar": lambda a: a.copysign(-1.0),
    "copysign_int": dp.copysign,
    "div_trunc": lambda a, b: dp.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda a, b: a.div(b, rounding_mode="floor"),
    "div_trunc_int": lambda a: dp.div(a, 2, rounding_mode="trunc"),
    "div_floor_int": lambda a, b: dp.div(a, b, rounding_mode="floor"),
    "div_trunc_int_float": lambda a: dp.div(a, 2.5, rounding_mode="trunc"),
    **{f"scatter_reduce_{r}" + ("" if k else "_without_self"): _scatter_reduce(r, k)
       for r in ("sum", "prod", "mean", "amax", "amin") for k in (True, False)},
    "scatter_reduce_mean_int": lambda a, s, i: dp.scatter_reduce(a, 0, i, s, "mean"),
    "scatter_reduce_amax_axis1": lambda a, s, i: a.scatter_reduce(1, i, s, "amax"),
    "scatter_add_reduce": lambda a, s, i: a.scatter(1, i, s, reduce="add"),
    "scatter_multiply_value": lambda a, i: dp.scatter(a, 1, i, 2.5, reduce="multiply"),
    "nonzero": dp.nonzero,
    "nonzero_floats_3d": lambda a: a.nonzero(),
    "nonzero_as_tuple": lambda a: dp.nonzero(a, as_tuple=True),
    "nonzero_0d": dp.nonzero,
    "masked_select": dp.masked_select,
    "masked_select_broadcast": lambda a, m: a.masked_select(m),
    "masked_select_broadcast_input": dp.masked_select,
    "unfold": lambda a: a.unfold(1, 3, 2),
    "unfold_step_1_last": lambda a: dp.unfold(a, -1, 2, 1),
    "unflatten": lambda a: a.unflatten(1, (2, -1)),
    "std_mean": dp.std_mean,
    "var_mean_axis": lambda a: dp.var_mean(a, 1),
    "std_mean_correction0_keepdim": lambda a: dp.std_mean(a, (0, 2), correction=0,
                                                          keepdims=True),
    "var_default_correction": lambda a: a.var(1),
    "std_default_correction": lambda a: a.std(),
    "var_size_one_axis": lambda a: a.var((0, 3)),
    "var_size_one_axis_correction0": lambda a: a.var((0, 3), correction=0),
    "std_size_one_axis": lambda a: a.std(2),
    "std_size_one_axis_correction0": lambda a: dp.std(a, 2, correction=0),
    "var_unbiased_false": lambda a: a.var(0, unbiased=False),
    "sum_int_as_float64": lambda a: a.sum(dtype=dp.float64),
    "sum_float_as_int": lambda a: dp.sum(a, 1, dtype="int64"),
    "sum_float32_as_float64": lambda a: a.sum(0, dtype="float64"),
    "prod_int_as_float32": lambda a: a.prod(1, dtype="float32"),
    "prod_dtype": lambda a: dp.prod(a, dtype=dp.float64),
    "squeeze_not_one": lambda a: a.squeeze(1),
    "squeeze_tuple": lambda a: dp.squeeze(a, (0, 1, 2)),
    "roll_tuple": lambda a: a.roll(shifts=(1, -2), dims=(0, 1)),
    "roll_one_shift_flattened": lambda a: dp.roll(a, (2,)),
    "einsum_ellipsis_summed": lambda a, b: dp.einsum("ij...,ij...->ij", a, b),
    "einsum_ellipsis_only_summed": lambda a: dp.einsum("i...->i", a),
    "einsum_ellipsis_broadcast": lambda a, b: dp.einsum("...ij,...jk->ik", a, b),
    "linspace_int": lambda: dp.linspace(0, 10, 5, dtype=dp.int64),
    "linspace_int_negative": lambda: dp.linspace(-5, 5, 4, dtype="int64"),
    "linspace_int_descending": lambda: dp.linspace(10, 0, 7, dtype="int64"),
    "linspace_int_float_bounds": lambda: dp.linspace(-3.5, 7.2, 6, dtype="int32"),
    "linspace_int_one": lambda: dp.linspace(3, 9, 1, dtype="int64"),
    "linspace_uint8": lambda: dp.linspace(0, 255, 4, dtype="uint8"),
    "normalize": F.normalize,
    "normalize_p1_dim0": lambda a: F.normalize(a, p=1.0, dim=0),
    "normalize_inf_last": lambda a: F.normalize(a, p=float("inf"), dim=-1),
    "normalize_zero_row": lambda a: F.normalize(a, dim=1, eps=1e-3),
    "sdpa_grouped_query": lambda q, k, v: F.scaled_dot_product_attention(q, k, v,
                                                                          enable_gqa=True),
    "sdpa_grouped_query_causal": lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, is_causal=True, enable_gqa=True),
    "interpolate_linear_scale": lambda a: F.interpolate(a, scale_factor=2.3, mode="linear"),
    "interpolate_linear_size_align": lambda a: F.interpolate(a, size=4, mode="linear",
                                                             align_corners=True),
    "interpolate_nearest_1d": lambda a: F.interpolate(a, size=(11,)),
    "interpolate_nearest_exact_1d_down": lambda a: F.interpolate(a, scale_factor=0.45,
                                                                 mode="nearest-exact"),
    "interpolate_nearest_exact_2d": lambda a: F.interpolate(a, size=(7, 9),
                                                            mode="nearest-exact"),
    "interpolate_bilinear_int_size": lambda a: F.interpolate(a, size=6, mode="bilinear"),
    "interpolate_bicubic_size": lambda a: F.interpolate(a, size=(7, 9), mode="bicubic"),
    "interpolate_bicubic_scale_align": lambda a: F.interpolate(
        a, scale_factor=1.7, mode="bicubic", align_corners=True),
    "interpolate_bicubic_down": lambda a: F.interpolate(a, scale_factor=0.6, mode="bicubic"),
    "interpolate_bicubic_kept_height": lambda a: F.interpolate(a, scale_factor=(1.1, 2.0),
                                                               mode="bicubic"),
    "interpolate_trilinear_scale": lambda a: F.interpolate(a, scale_factor=(1.5, 2.0, 0.7),
                                                           mode="trilinear"),
    "interpolate_trilinear_size_align": lambda a: F.interpolate(
        a, size=(3, 7, 5), mode="trilinear", align_corners=True),
    "interpolate_nearest_3d": lambda a: F.interpolate(a, size=6),
    "interpolate_nearest_exact_3d": lambda a: dp.nn.Upsample(scale_factor=2,
                                                             mode="nearest-exact")(a),
}


def test_every_fixture_has_its_op_and_every_op_its_fixture():
    assert sorted(OPS) == sorted(ARRAYS)


@pytest.mark.parametrize("name", sorted(OPS))
def test_values_dtypes_and_gradients_match_pytorch(name, backend):
    with warnings.catch_warnings():  # a variance without degrees of freedom warns, as PyTorch's
        warnings.filterwarnings("ignore", message=r"(var|std): .* leave no degrees of freedom")
        check_op_case(OPS[name], ARRAYS[name], DIFFERENTIABLE[name])


PROMOTING = {
    "add": lambda a, b: a + b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "maximum": dp.maximum, "less": lambda a, b: a < b, "cat": lambda a, b: dp.cat([a, b]),
    "where": lambda a, b: dp.where(dp.tensor([True, False], backend=a.backend), a, b),
}


@pytest.mark.parametrize("op", sorted(PROMOTING))
def test_dtypes_promote_across_kinds_as_in_pytorch(op, backend):
    """Across kinds PyTorch's result (the higher kind's dtype); within a kind the array API's,
    which is PyTorch's too for these tensors of one dimension. The array API defines no
    arithmetic or order on bools, so bool with bool is left to the backend."""
    for name, first, second, result in (row for row in PROMOTION if row[0] == op):
        if backend.name == "array_api_strict" and "float16" in (first, second):
            continue  # array_api_strict has no float16
        if first == second == "bool" and name not in ("cat", "where"):
            continue
        a, b = dp.ones(2, dtype=first), dp.ones(2, dtype=second)
        out = PROMOTING[name](a, b)
        assert out.dtype.name == result, f"{name}({first}, {second})"
