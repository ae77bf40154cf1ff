"""PyTorch references for the top-level functions of ``tests/test_torch_ops_more.py``: products
(``bmm addmm baddbmm outer tensordot kron trace diag_embed``), reductions (``amax amin aminmax
nansum nanmean count_nonzero median norm``), rearrangements (``unbind movedim swapaxes narrow
take_along_dim cartesian_prod diff index_add``), searches (``bincount searchsorted
bucketize``) and elementwise functions (``nan_to_num hypot clamp_min clamp_max erfinv``):
``more_ops.safetensors``.

    ../torch-venv/bin/python tests/data/make_more_op_fixtures.py   # any environment with torch

Made with PyTorch 2.13.0 (CPU). The layout is ``make_op_fixtures.py``'s: ``<case>/input.<i>``,
``<case>/output.<i>`` (a tuple output flattened in order), and for a differentiable case
``<case>/cotangent.<i>`` per floating output and ``<case>/grad.<i>`` per floating input, the
gradients of ``sum(output_i * cotangent_i)``; the header's ``ops`` says which cases are
differentiable. Inputs are float64 unless a case says otherwise, and away from ties (except
where a case is about ties) and kinks.
"""

from __future__ import annotations

import json
import pathlib

import torch
from make_op_fixtures import OpCase, record
from safetensors.torch import save_file

HERE = pathlib.Path(__file__).parent
t = torch.tensor
NAN, INF = float("nan"), float("inf")


def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, dtype=torch.float64)


def _distinct(*shape: int) -> torch.Tensor:
    """No ties anywhere, in a random order."""
    n = 1
    for s in shape:
        n *= s
    return (torch.randperm(n).double() * 0.37 - 0.1 * n).reshape(shape)


def product_cases() -> list[OpCase]:
    return [
        OpCase("bmm", torch.bmm, [_randn(2, 3, 4), _randn(2, 4, 5)]),
        OpCase("addmm", lambda i, a, b: torch.addmm(i, a, b, beta=0.5, alpha=2.0),
               [_randn(3), _randn(2, 4), _randn(4, 3)]),
        OpCase("addmm_defaults", torch.addmm, [_randn(2, 3), _randn(2, 4), _randn(4, 3)]),
        OpCase("addmm_beta_zero_drops_nan", lambda i, a, b: torch.addmm(i, a, b, beta=0),
               [t([[NAN, 1.0]], dtype=torch.float64), _randn(2, 3), _randn(3, 2)]),
        OpCase("baddbmm", lambda i, a, b: torch.baddbmm(i, a, b, beta=-1.5, alpha=0.5),
               [_randn(3, 5), _randn(2, 3, 4), _randn(2, 4, 5)]),
        OpCase("outer", torch.outer, [_randn(3), _randn(4)]),
        OpCase("outer_int_float", torch.outer, [t([1, -2, 3]), _randn(2)]),
        OpCase("tensordot_int", lambda a, b: torch.tensordot(a, b, dims=2),
               [_randn(2, 3, 4), _randn(3, 4, 5)]),
        OpCase("tensordot_lists", lambda a, b: torch.tensordot(a, b, dims=([1, 2], [1, 0])),
               [_randn(2, 3, 4), _randn(4, 3, 5)]),
        OpCase("tensordot_zero", lambda a, b: torch.tensordot(a, b, dims=0),
               [_randn(2, 3), _randn(4)]),
        OpCase("kron", torch.kron, [_randn(2, 3), _randn(3, 2)]),
        OpCase("kron_fewer_axes", torch.kron, [_randn(2), _randn(2, 3)]),
        OpCase("kron_int", torch.kron, [t([[1, 2], [3, 4]]), t([[0, 5]])], grad=False),
        OpCase("trace", torch.trace, [_randn(3, 4)]),
        OpCase("trace_int32", torch.trace, [t([[1, 2], [3, 4]], dtype=torch.int32)],
               grad=False),
        OpCase("diag_embed", torch.diag_embed, [_randn(2, 3)]),
        OpCase("diag_embed_offset_dims",
               lambda a: torch.diag_embed(a, offset=-1, dim1=2, dim2=0), [_randn(2, 3)]),
    ]


def reduction_cases() -> list[OpCase]:
    ties = t([[1.0, 5.0, 5.0], [2.0, 2.0, 0.0]], dtype=torch.float64)
    with_nan = _randn(3, 4)
    with_nan[0, 1] = with_nan[2, 2] = with_nan[2, 3] = NAN
    zeros = _randn(3, 4)
    zeros[1] = 0.0
    zeros[0, 2] = 0.0
    return [
        OpCase("amax_dim", lambda a: torch.amax(a, 1), [_distinct(3, 4)]),
        OpCase("amax_ties", lambda a: torch.amax(a, dim=1), [ties]),
        OpCase("amax_all", torch.amax, [_distinct(2, 3, 4)]),
        OpCase("amax_empty_dims_is_all", lambda a: torch.amax(a, dim=()), [ties]),
        OpCase("amax_tuple_keepdim", lambda a: torch.amax(a, dim=(0, 2), keepdim=True),
               [_distinct(2, 3, 4)]),
        OpCase("amin_ties", lambda a: torch.amin(a, dim=0), [ties]),
        OpCase("amin_int", lambda a: torch.amin(a, 1), [t([[3, 1], [0, 7]])], grad=False),
        OpCase("aminmax", lambda a: torch.aminmax(a, dim=0, keepdim=True), [_distinct(3, 4)]),
        OpCase("aminmax_all_ties", torch.aminmax, [t([1.0, 3.0, 3.0, 1.0],
                                                     dtype=torch.float64)]),
        OpCase("nansum", lambda a: torch.nansum(a, 1), [with_nan]),
        OpCase("nansum_all_keepdim", lambda a: torch.nansum(a, (0, 1), keepdim=True),
               [with_nan]),
        OpCase("nansum_dtype", lambda a: torch.nansum(a, dtype=torch.float64),
               [with_nan.float()]),
        OpCase("nansum_int", lambda a: torch.nansum(a, 0), [t([[1, 2], [3, 4]])], grad=False),
        OpCase("nanmean", lambda a: torch.nanmean(a, dim=1), [with_nan]),
        OpCase("nanmean_all", torch.nanmean, [with_nan]),
        OpCase("count_nonzero", torch.count_nonzero, [t([[0, 1, 2], [0, 0, -3]])],
               grad=False),
        OpCase("count_nonzero_dims", lambda a: torch.count_nonzero(a, dim=(0, 2)),
               [t([[[0.0, NAN], [1.0, 0.0]], [[2.0, 0.0], [0.0, -0.0]]])], grad=False),
        OpCase("median_all_odd", torch.median, [_distinct(3, 5)]),
        OpCase("median_all_even_is_lower", torch.median, [_distinct(2, 4)]),
        OpCase("median_all_ties", torch.median, [t([3.0, 2.0, 1.0, 2.0, 9.0],
                                                   dtype=torch.float64)]),
        OpCase("median_all_nan", torch.median, [with_nan]),
        OpCase("median_dim", lambda a: torch.median(a, 1), [_distinct(3, 5)]),
        OpCase("median_dim_even_keepdim", lambda a: torch.median(a, dim=0, keepdim=True),
               [_distinct(4, 3)]),
        OpCase("median_dim_nan", lambda a: torch.median(a, dim=1), [with_nan]),
        OpCase("median_int", lambda a: torch.median(a, -1), [t([[4, 1, 3], [9, 8, 7]])],
               grad=False),
        OpCase("norm", torch.norm, [_randn(3, 4)]),
        OpCase("norm_dim", lambda a: torch.norm(a, dim=1), [_randn(3, 4)]),
        OpCase("norm_fro_two_dims", lambda a: torch.norm(a, "fro", dim=(1, 2)),
               [_randn(2, 3, 4)]),
        OpCase("norm_p1", lambda a: torch.norm(a, p=1, dim=0), [_randn(3, 4)]),
        OpCase("norm_p3_keepdim", lambda a: torch.norm(a, 3, 1, keepdim=True), [_randn(3, 4)]),
        OpCase("norm_p_half_zeros", lambda a: torch.norm(a, p=0.5, dim=1), [zeros]),
        OpCase("norm_p_negative", lambda a: torch.norm(a, p=-2.0, dim=1), [_randn(3, 4)]),
        OpCase("norm_zero_row", lambda a: torch.norm(a, dim=1), [zeros]),
        OpCase("norm_p3_zero_row", lambda a: torch.norm(a, p=3, dim=1), [zeros]),
        OpCase("norm_inf_ties", lambda a: torch.norm(a, p=INF, dim=1),
               [t([[-2.0, 2.0, 1.0], [0.5, -3.0, 1.0]], dtype=torch.float64)]),
        OpCase("norm_minus_inf", lambda a: torch.norm(a, p=-INF), [_distinct(3, 4)]),
        OpCase("norm_p0", lambda a: torch.norm(a, p=0, dim=1), [zeros]),
        OpCase("norm_dtype", lambda a: torch.norm(a, dim=0, dtype=torch.float64),
               [_randn(3, 4).float()]),
    ]


def shape_cases() -> list[OpCase]:
    order = torch.randn(2, 3, 5).argsort(dim=2)[..., :3]
    return [
        OpCase("unbind", lambda a: torch.unbind(a, 1), [_randn(2, 3)]),
        OpCase("movedim", lambda a: torch.movedim(a, 0, -1), [_randn(2, 3, 4)]),
        OpCase("movedim_tuples", lambda a: torch.movedim(a, (0, 1), (2, 0)), [_randn(2, 3, 4)]),
        OpCase("moveaxis", lambda a: torch.moveaxis(a, -1, 1), [_randn(2, 3, 4)]),
        OpCase("swapaxes", lambda a: torch.swapaxes(a, 0, 2), [_randn(2, 3, 4)]),
        OpCase("swapdims", lambda a: torch.swapdims(a, 1, -1), [_randn(2, 3, 4)]),
        OpCase("narrow", lambda a: torch.narrow(a, 1, -3, 2), [_randn(2, 5)]),
        OpCase("narrow_tensor_start", lambda a: torch.narrow(a, 0, t(1), 2), [_randn(4, 2)]),
        OpCase("take_along_dim", lambda a, i: torch.take_along_dim(a, i, dim=2),
               [_randn(2, 3, 5), order]),
        OpCase("take_along_dim_broadcast", lambda a, i: torch.take_along_dim(a, i, 1),
               [_randn(2, 3, 1), t([[[0, 2, 1, 2], [2, 2, 0, -1]]])]),
        OpCase("take_along_dim_flat", torch.take_along_dim, [_randn(2, 3), t([5, 0, 5])]),
        OpCase("cartesian_prod", torch.cartesian_prod, [_randn(2), _randn(3)]),
        OpCase("cartesian_prod_three_int", torch.cartesian_prod,
               [t([1, 2]), t([3]), t([4, 5, 6])], grad=False),
        OpCase("diff", torch.diff, [_randn(2, 5)]),
        OpCase("diff_n2_dim0", lambda a: torch.diff(a, n=2, dim=0), [_randn(4, 3)]),
        OpCase("diff_prepend_append", lambda a, p, q: torch.diff(a, 1, 1, p, q),
               [_randn(2, 3), _randn(2, 1), _randn(2, 2)]),
        OpCase("diff_n_beyond_length", lambda a: torch.diff(a, n=4), [_randn(3)]),
        OpCase("diff_bool", torch.diff, [t([True, False, False, True])], grad=False),
        OpCase("diff_int", lambda a: torch.diff(a, n=2), [t([1, 4, 9, 16])], grad=False),
        OpCase("index_add", lambda a, i, s: torch.index_add(a, 0, i, s, alpha=2.0),
               [_randn(5, 3), t([0, 2, 0, 4]), _randn(4, 3)]),
        OpCase("index_add_dim1", lambda a, i, s: a.index_add(1, i, s),
               [_randn(2, 4), t([3, 3]), _randn(2, 2)]),
    ]


def search_cases() -> list[OpCase]:
    edges = t([-1.0, 0.5, 0.5, 2.0], dtype=torch.float64)
    values = t([[-2.0, 0.5, 1.0], [2.0, 3.0, NAN]], dtype=torch.float64)
    rows = torch.sort(_randn(2, 3, 6), dim=-1).values
    rows[0, 1, 2] = rows[0, 1, 3]  # a tie inside a row
    row_values = torch.cat([_randn(2, 3, 3), rows[..., 2:3]], dim=-1)
    shuffled = t([3.0, -1.0, 5.0, 0.0], dtype=torch.float64)
    return [
        OpCase("bincount", torch.bincount, [t([0, 2, 2, 5, 1])], grad=False),
        OpCase("bincount_weights_minlength",
               lambda a, w: torch.bincount(a, weights=w, minlength=8),
               [t([0, 2, 2, 5]), _randn(4)], grad=False),
        OpCase("bincount_int_weights", lambda a, w: torch.bincount(a, w),
               [t([1, 1, 3]), t([2, 3, 4])], grad=False),
        OpCase("bincount_empty", lambda a: torch.bincount(a, minlength=3),
               [t([], dtype=torch.int64)], grad=False),
        OpCase("searchsorted", torch.searchsorted, [edges, values], grad=False),
        OpCase("searchsorted_right", lambda s, v: torch.searchsorted(s, v, right=True),
               [edges, values], grad=False),
        OpCase("searchsorted_side", lambda s, v: torch.searchsorted(s, v, side="right"),
               [edges, values], grad=False),
        OpCase("searchsorted_rows", torch.searchsorted, [rows, row_values], grad=False),
        OpCase("searchsorted_rows_right",
               lambda s, v: torch.searchsorted(s, v, right=True, out_int32=True),
               [rows, row_values], grad=False),
        OpCase("searchsorted_sorter",
               lambda s, v, o: torch.searchsorted(s, v, sorter=o),
               [shuffled, t([0.0, 4.0], dtype=torch.float64), t([1, 3, 0, 2])], grad=False),
        OpCase("searchsorted_scalar", lambda s: torch.searchsorted(s, 0.5), [edges],
               grad=False),
        OpCase("searchsorted_int", torch.searchsorted, [t([1, 3, 5, 7]), t([[3, 8], [0, 5]])],
               grad=False),
        OpCase("bucketize", lambda v, b: torch.bucketize(v, b), [values, edges], grad=False),
        OpCase("bucketize_right", lambda v, b: torch.bucketize(v, b, right=True,
                                                               out_int32=True),
               [values, edges], grad=False),
        OpCase("bucketize_scalar", lambda b: torch.bucketize(3, b), [t([1, 3, 5])],
               grad=False),
    ]


def elementwise_cases() -> list[OpCase]:
    special = t([NAN, INF, -INF, 1.5, -0.0], dtype=torch.float64)
    uniform = torch.rand(40, dtype=torch.float64) * 1.98 - 0.99
    tails = 1.0 - torch.logspace(-15, -1, 12, dtype=torch.float64)
    return [
        OpCase("nan_to_num", torch.nan_to_num, [special]),
        OpCase("nan_to_num_float32", torch.nan_to_num, [special.float()]),
        OpCase("nan_to_num_values", lambda a: torch.nan_to_num(a, nan=2.0, posinf=1e3,
                                                               neginf=-7.0), [special]),
        OpCase("nan_to_num_int", torch.nan_to_num, [t([1, -2])], grad=False),
        OpCase("hypot", torch.hypot, [_randn(3, 4), _randn(4)]),
        OpCase("hypot_huge_and_tiny", torch.hypot,
               [t([1e300, 3e-300, -5.0], dtype=torch.float64),
                t([1e300, 4e-300, 12.0], dtype=torch.float64)]),
        OpCase("hypot_float32", torch.hypot, [_randn(5).float(), _randn(5).float()]),
        OpCase("clamp_min", lambda a: torch.clamp_min(a, 0.1), [_randn(3, 4)]),
        OpCase("clamp_max", lambda a: a.clamp_max(-0.1), [_randn(3, 4)]),
        OpCase("erfinv", torch.erfinv, [uniform]),
        OpCase("erfinv_tails", torch.erfinv, [torch.cat([tails, -tails])]),
        OpCase("erfinv_tiny", torch.erfinv, [t([1e-300, -3e-20, 2e-8], dtype=torch.float64)]),
        OpCase("erfinv_float32", torch.erfinv, [uniform.float()]),
        OpCase("erfinv_edges", torch.erfinv,
               [t([-1.0, 1.0, 0.0, -0.0, 1.5, -2.0, NAN], dtype=torch.float64)], grad=False),
        OpCase("erfinv_int", torch.erfinv, [t([0, 1, -1])], grad=False),
    ]


def main() -> None:
    torch.manual_seed(0)
    cases = (product_cases() + reduction_cases() + shape_cases() + search_cases()
             + elementwise_cases())
    generator = torch.Generator().manual_seed(0)
    tensors: dict[str, torch.Tensor] = {}
    for case in cases:
        for key, value in record(case, generator).items():
            tensors[f"{case.name}/{key}"] = value.detach().clone().contiguous()
    metadata = {"ops": json.dumps({case.name: {"grad": case.grad} for case in cases}),
                "torch": torch.__version__}
    save_file(tensors, HERE / "more_ops.safetensors", metadata=metadata)


if __name__ == "__main__":
    main()
