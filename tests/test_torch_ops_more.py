"""PyTorch's top-level functions that dparray added for programs ported from PyTorch (products,
reductions, rearrangements, searches, elementwise functions) against PyTorch, through the
fixtures of ``tests/data/make_more_op_fixtures.py``: values, dtypes and gradients on every backend,
each op called with PyTorch's argument names (``dim=``, ``keepdim=``, ``dims=``, ...).
Finite-difference gradients, methods and errors are in ``test_torch_ops_more_checks.py``."""

from __future__ import annotations

import pytest
from torch_reference import check_op_case, load_grouped

import dparray as dp

DESCRIBED, ARRAYS = load_grouped("more_ops.safetensors", "ops")

OPS = {
    "bmm": dp.bmm,
    "addmm": lambda i, a, b: dp.addmm(i, a, b, beta=0.5, alpha=2.0),
    "addmm_defaults": lambda i, a, b: i.addmm(a, b),
    "addmm_beta_zero_drops_nan": lambda i, a, b: dp.addmm(i, a, b, beta=0),
    "baddbmm": lambda i, a, b: i.baddbmm(a, b, beta=-1.5, alpha=0.5),
    "outer": lambda a, b: a.outer(b),
    "outer_int_float": dp.outer,
    "tensordot_int": lambda a, b: dp.tensordot(a, b, dims=2),
    "tensordot_lists": lambda a, b: dp.tensordot(a, b, dims=([1, 2], [1, 0])),
    "tensordot_zero": lambda a, b: dp.tensordot(a, b, 0),
    "kron": dp.kron,
    "kron_fewer_axes": lambda a, b: a.kron(b),
    "kron_int": dp.kron,
    "trace": lambda a: a.trace(),
    "trace_int32": dp.trace,
    "diag_embed": dp.diag_embed,
    "diag_embed_offset_dims": lambda a: a.diag_embed(offset=-1, dim1=2, dim2=0),
    "amax_dim": lambda a: dp.amax(a, 1),
    "amax_ties": lambda a: a.amax(dim=1),
    "amax_all": dp.amax,
    "amax_empty_dims_is_all": lambda a: dp.amax(a, dim=()),
    "amax_tuple_keepdim": lambda a: dp.amax(a, dim=(0, 2), keepdim=True),
    "amin_ties": lambda a: dp.amin(a, dim=0),
    "amin_int": lambda a: a.amin(1),
    "aminmax": lambda a: dp.aminmax(a, dim=0, keepdim=True),
    "aminmax_all_ties": lambda a: a.aminmax(),
    "nansum": lambda a: dp.nansum(a, 1),
    "nansum_all_keepdim": lambda a: a.nansum((0, 1), keepdim=True),
    "nansum_dtype": lambda a: dp.nansum(a, dtype=dp.float64),
    "nansum_int": lambda a: dp.nansum(a, 0),
    "nanmean": lambda a: dp.nanmean(a, dim=1),
    "nanmean_all": lambda a: a.nanmean(),
    "count_nonzero": dp.count_nonzero,
    "count_nonzero_dims": lambda a: a.count_nonzero(dim=(0, 2)),
    "median_all_odd": dp.median,
    "median_all_even_is_lower": lambda a: a.median(),
    "median_all_ties": dp.median,
    "median_all_nan": dp.median,
    "median_dim": lambda a: dp.median(a, 1),
    "median_dim_even_keepdim": lambda a: a.median(dim=0, keepdim=True),
    "median_dim_nan": lambda a: dp.median(a, dim=1),
    "median_int": lambda a: dp.median(a, -1),
    "norm": dp.norm,
    "norm_dim": lambda a: a.norm(dim=1),
    "norm_fro_two_dims": lambda a: dp.norm(a, "fro", dim=(1, 2)),
    "norm_p1": lambda a: dp.norm(a, p=1, dim=0),
    "norm_p3_keepdim": lambda a: dp.norm(a, 3, 1, keepdim=True),
    "norm_p_half_zeros": lambda a: dp.norm(a, p=0.5, dim=1),
    "norm_p_negative": lambda a: a.norm(p=-2.0, dim=1),
    "norm_zero_row": lambda a: dp.norm(a, dim=1),
    "norm_p3_zero_row": lambda a: dp.norm(a, p=3, dim=1),
    "norm_inf_ties": lambda a: dp.norm(a, p=float("inf"), dim=1),
    "norm_minus_inf": lambda a: dp.norm(a, p=-float("inf")),
    "norm_p0": lambda a: dp.norm(a, p=0, dim=1),
    "norm_dtype": lambda a: a.norm(dim=0, dtype=dp.float64),
    "unbind": lambda a: dp.unbind(a, 1),
    "movedim": lambda a: dp.movedim(a, 0, -1),
    "movedim_tuples": lambda a: a.movedim((0, 1), (2, 0)),
    "moveaxis": lambda a: dp.moveaxis(a, -1, 1),
    "swapaxes": lambda a: dp.swapaxes(a, 0, 2),
    "swapdims": lambda a: a.swapdims(1, -1),
    "narrow": lambda a: dp.narrow(a, 1, -3, 2),
    "narrow_tensor_start": lambda a: a.narrow(0, dp.tensor(1, backend=a.backend), 2),
    "take_along_dim": lambda a, i: dp.take_along_dim(a, i, dim=2),
    "take_along_dim_broadcast": lambda a, i: a.take_along_dim(i, 1),
    "take_along_dim_flat": dp.take_along_dim,
    "cartesian_prod": dp.cartesian_prod,
    "cartesian_prod_three_int": dp.cartesian_prod,
    "diff": dp.diff,
    "diff_n2_dim0": lambda a: a.diff(n=2, dim=0),
    "diff_prepend_append": lambda a, p, q: dp.diff(a, 1, 1, p, q),
    "diff_n_beyond_length": lambda a: dp.diff(a, n=4),
    "diff_bool": dp.diff,
    "diff_int": lambda a: a.diff(n=2),
    "index_add": lambda a, i, s: dp.index_add(a, 0, i, s, alpha=2.0),
    "index_add_dim1": lambda a, i, s: a.index_add(1, i, s),
    "bincount": dp.bincount,
    "bincount_weights_minlength": lambda a, w: a.bincount(weights=w, minlength=8),
    "bincount_int_weights": lambda a, w: dp.bincount(a, w),
    "bincount_empty": lambda a: dp.bincount(a, minlength=3),
    "searchsorted": dp.searchsorted,
    "searchsorted_right": lambda s, v: dp.searchsorted(s, v, right=True),
    "searchsorted_side": lambda s, v: dp.searchsorted(s, v, side="right"),
    "searchsorted_rows": dp.searchsorted,
    "searchsorted_rows_right": lambda s, v: dp.searchsorted(s, v, right=True, out_int32=True),
    "searchsorted_sorter": lambda s, v, o: dp.searchsorted(s, v, sorter=o),
    "searchsorted_scalar": lambda s: dp.searchsorted(s, 0.5),
    "searchsorted_int": dp.searchsorted,
    "bucketize": dp.bucketize,
    "bucketize_right": lambda v, b: dp.bucketize(v, b, right=True, out_int32=True),
    "bucketize_scalar": lambda b: dp.bucketize(3, b),
    "nan_to_num": dp.nan_to_num,
    "nan_to_num_float32": lambda a: a.nan_to_num(),
    "nan_to_num_values": lambda a: dp.nan_to_num(a, nan=2.0, posinf=1e3, neginf=-7.0),
    "nan_to_num_int": dp.nan_to_num,
    "hypot": dp.hypot,
    "hypot_huge_and_tiny": lambda a, b: a.hypot(b),
    "hypot_float32": dp.hypot,
    "clamp_min": lambda a: dp.clamp_min(a, 0.1),
    "clamp_max": lambda a: a.clamp_max(-0.1),
    "erfinv": dp.erfinv,
    "erfinv_tails": dp.erfinv,
    "erfinv_tiny": lambda a: a.erfinv(),
    "erfinv_float32": dp.erfinv,
    "erfinv_edges": dp.erfinv,
    "erfinv_int": dp.erfinv,
}


def test_every_fixture_has_its_op_and_every_op_its_fixture():
    assert sorted(OPS) == sorted(ARRAYS)


@pytest.mark.parametrize("name", sorted(OPS))
def test_values_dtypes_and_gradients_match_pytorch(name, backend):
    check_op_case(OPS[name], ARRAYS[name], DESCRIBED[name]["grad"])


def test_the_functions_results_are_named_as_pytorchs(backend):
    x = dp.tensor([[3.0, 1.0, 2.0]])
    pair = dp.aminmax(x)
    assert isinstance(pair, dp.MinMax) and (pair.min.item(), pair.max.item()) == (1.0, 3.0)
    values, indices = dp.median(x, dim=1)
    assert dp.median(x, dim=1).values.tolist() == values.tolist() == [2.0]
    assert dp.median(x, dim=1).indices.tolist() == indices.tolist() == [2]


def test_integer_results_are_constants(backend):
    x = dp.tensor([1.0, 0.0, 2.0], requires_grad=True)
    for out in (dp.count_nonzero(x), dp.searchsorted(dp.tensor([0.5, 1.5]), x),
                dp.bucketize(x, dp.tensor([0.5, 1.5])), dp.median(x, dim=0).indices,
                dp.bincount(dp.tensor([0, 1, 1]))):
        assert not out.requires_grad and out.dtype.kind == "int"
