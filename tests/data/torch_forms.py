"""Every op-table case written with PyTorch: ``FORMS[form_key(case)]`` is the case's op as a
function of float64 ``torch`` tensors, the case's inputs in the case's order.

The op table is ``tests/cases.py``, ``tests/cases_indexing.py`` and
``tests/cases_activations.py``. A case's key is its name; an activation's is
``activations.<name>`` (``cases.py`` has a ``softplus`` of its own, ``dparray.softplus``; the
activations' is ``F.softplus``). The fixture scripts that ask PyTorch about the whole table
(``make_special_value_fixtures.py``, ``make_second_order_fixtures.py``) share these forms; a
script that needs another form for a case (one PyTorch cannot differentiate twice, say) says
so beside its own override. A case added to the op table needs its form here.

Needs ``tests/`` on ``sys.path`` (the table's constants come from there) and dparray importable.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from cases import _SCATTER_INDEX, _MASK_2x3
from cases_activations import ACTIVATIONS

F = torch.nn.functional
T = torch.tensor

_ACTIVATION_CASES = {id(case) for case in ACTIVATIONS}


def form_key(case) -> str:
    """The case's key in ``FORMS``: its name, ``activations.<name>`` for an activation."""
    return f"activations.{case.name}" if id(case) in _ACTIVATION_CASES else case.name


def _pad(x, pad, mode="constant", value=0.0):
    """dparray's (PyTorch's) pad one axis at a time from the last; a negative width crops
    first for constant and circular padding and last for reflect and replicate, as
    ``cases_indexing._pad`` does with NumPy."""
    for offset in range(len(pad) // 2):
        before, after = pad[2 * offset], pad[2 * offset + 1]
        axis = x.ndim - 1 - offset
        n = x.shape[axis]
        if mode in ("constant", "circular"):
            x = x.narrow(axis, max(-before, 0), n - max(-before, 0) - max(-after, 0))
            widths = (max(before, 0), max(after, 0))
            x = _pad_axis(x, axis, widths, mode, value)
        else:
            padded = _pad_axis(x, axis, (max(before, 0), max(after, 0)), mode, value)
            m = padded.shape[axis]
            x = padded.narrow(axis, max(-before, 0), m - max(-before, 0) - max(-after, 0))
    return x


def _pad_axis(x, axis, widths, mode, value):
    moved = x.movedim(axis, -1)
    shape = moved.shape
    flat = moved.reshape(1, -1, shape[-1])
    out = F.pad(flat, widths, value=value) if mode == "constant" else F.pad(flat, widths,
                                                                            mode=mode)
    return out.reshape(*shape[:-1], out.shape[-1]).movedim(-1, axis)


def _scatter(x, axis, index, src):
    return x.scatter(axis, T(index), src)


def _scatter_last_wins(x, axis, index, s):
    """dparray's scatter where positions repeat: the last write in row-major order wins
    (PyTorch leaves it undefined), written as one masked write per index entry."""
    index = np.asarray(index)
    out = x
    for position in np.ndindex(*index.shape):
        target = list(position)
        target[axis] = int(index[position])
        mask = torch.zeros_like(x, dtype=torch.bool)
        mask[tuple(target)] = True
        out = torch.where(mask, s[position], out)
    return out


def _meshgrid(*xs, indexing="xy"):
    return torch.stack(torch.meshgrid(*xs, indexing=indexing))


# cases_indexing.py's index arrays and masks
_ROWS, _COLS = [0, 2, 1, 2], [1, 1, 3, 0]
_COLUMN, _ROW = [[0], [2]], [[1, 3, 0]]
_MASK_2D = T([[True, False, True, True], [False, False, True, False], [True, True, False, False]])
_MASK_23 = T([[True, False, True], [False, True, True]])
_GATHER_0, _GATHER_1 = [[2, 0, 1], [1, 1, 0]], [[3, 0, -1], [1, 1, 2], [0, 3, 3]]
_SCATTER_1 = [[2, 0], [1, 3], [3, 2]]
_SCATTER_REPEATS = [[1, 0, 1, 0], [1, 1, 0, 0]]
_SCATTER_3D = [[[1, 0], [0, 2]], [[2, 2], [1, 0]]]

_OPS: dict[str, Callable[..., torch.Tensor]] = {
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
    "rremainder_scalar": lambda b: 2.5 % b,  # (PyTorch's backward of this form: not implemented)
    "floor_divide": lambda a, b: a // b,  # (nor of this one)
    "lerp_scalar_weight": lambda a, b: torch.lerp(a, b.expand_as(a), 0.3),
    "lerp_tensor_weight": torch.lerp,
    # linear algebra
    **{name: torch.matmul for name in (
        "matmul_2d", "matmul_2d_noncontiguous", "matmul_vec_mat", "matmul_mat_vec",
        "matmul_vec_vec", "matmul_batched", "matmul_batch_broadcast", "matmul_batched_vec",
        "matmul_vec_batched")},
    # trigonometric
    **{name: getattr(torch, name) for name in (
        "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh")},
    "atan2": torch.atan2,
    "sin_noncontiguous": torch.sin,
    # rounding
    "floor": torch.floor,
    "ceil": torch.ceil,
    "round": torch.round,
    "round_decimals": lambda x: torch.round(x, decimals=1),
    "round_negative_decimals": lambda x: torch.round(x * 100.0, decimals=-1),
    "trunc": torch.trunc,
    "sign": torch.sign,
    # exponential
    "exp2": torch.exp2,
    "expm1": torch.expm1,
    "log2": torch.log2,
    "log10": torch.log10,
    "log1p": torch.log1p,
    "rsqrt": torch.rsqrt,
    "erf": torch.erf,
    "logaddexp": torch.logaddexp,
    "logaddexp_wide": torch.logaddexp,
    # elementwise
    "exp": torch.exp,
    "log": torch.log,
    "sqrt": torch.sqrt,
    "abs": torch.abs,
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "sigmoid_wide": torch.sigmoid,
    "relu": torch.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    # dparray.softplus has no threshold; PyTorch's default one (the identity above 20, off by
    # less than exp(-20)) keeps softplus(1e308) finite, as dparray's is
    "softplus": F.softplus,
    "softplus_beta": lambda x: F.softplus(x, beta=2.0),
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    # torch.maximum, not clamp: a tie with 0 shares the gradient, as dparray.maximum does
    "maximum_scalar": lambda a: torch.maximum(a, torch.zeros((), dtype=a.dtype)),
    "clip": lambda x: torch.clamp(x, -0.55, 0.75),
    "clip_lower_only": lambda x: torch.clamp(x, min=0.05),
    "where": lambda a, b: torch.where(a > 0, a, b),
    # reductions
    "sum_all": torch.sum,
    "sum_axis": lambda x: x.sum(dim=1),
    "sum_axes_keepdims": lambda x: x.sum(dim=(0, 2), keepdim=True),
    "sum_negative_axis": lambda x: x.sum(dim=-1),
    "mean_all": torch.mean,
    "mean_axis_keepdims": lambda x: x.mean(dim=0, keepdim=True),
    "max_all": torch.max,  # the whole tensor's: ties share the gradient, as dparray's
    "max_axis": lambda x: x.amax(dim=1),
    "min_axis_keepdims": lambda x: x.amin(dim=0, keepdim=True),
    "var_all": lambda x: x.var(),
    "var_population": lambda x: x.var(correction=0),
    "var_unbiased_false": lambda x: x.var(dim=0, unbiased=False),
    "var_axis_corrected": lambda x: x.var(dim=1, correction=1),
    "logsumexp_all": lambda x: torch.logsumexp(x, dim=(0, 1)),
    "logsumexp_axis": lambda x: torch.logsumexp(x, dim=1, keepdim=True),
    "softmax": lambda x: torch.softmax(x, dim=-1),
    "softmax_axis0": lambda x: torch.softmax(x, dim=0),
    "log_softmax": lambda x: torch.log_softmax(x, dim=-1),
    "prod_all": torch.prod,
    "prod_axis_with_zeros": lambda x: x.prod(dim=1),
    "prod_two_zeros_keepdims": lambda x: x.prod(dim=0, keepdim=True),
    "std_all": lambda x: x.std(),
    "std_positional_unbiased": lambda x: x.std(1, False),
    "std_axis_corrected": lambda x: x.std(dim=0, correction=1),
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
    # sorting (stable: tied values keep their order, and their gradients, as dparray's sort)
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
    "take_2d_index": lambda x: x[T([[0, 1], [1, 1]])],
    "cat": lambda a, b: torch.cat([a, b], dim=1),
    "stack": lambda a, b: torch.stack([a, b], dim=-1),
    "split": lambda x: torch.cat(x.split([1, 3], dim=1)[::-1], dim=1),
    "chunk": lambda x: torch.stack(x.chunk(2)[::-1]),
    # advanced indexing
    "index_two_arrays": lambda x: x[_ROWS, _COLS],
    "index_two_arrays_broadcast": lambda x: x[T(_COLUMN), T(_ROW)],
    "index_arrays_then_slice": lambda x: x[[0, 2], [1, 0], :],
    "index_slice_then_arrays": lambda x: x[:, [0, 2, 2], [1, 3, 3]],
    "index_arrays_apart": lambda x: x[[0, 1, 1], :, [2, 0, 3]],
    "index_int_beside_array": lambda x: x[1, :, [0, 2]],  # the int first, as PyTorch applies it
    "index_array_then_partial_slice": lambda x: x[[0, 1, 1], 1:],
    "index_negative_and_repeated": lambda x: x[[-1, 0, -1], [-2, 1, -2]],
    "index_none_and_array": lambda x: x[None, [1, 0]],
    "index_arrays_around_none": lambda x: x[[0, 1], None, [1, 2]],
    "index_ellipsis_between_arrays": lambda x: x[[1, 0], ..., [2, 3]],
    "index_ellipsis_then_array": lambda x: x[..., [0, 2]],
    "index_int32_tensor": lambda x: x[T(_ROWS), 1:3],
    "index_0d_tensor": lambda x: x[2],
    "mask_same_shape": lambda x: x[_MASK_2D],
    "mask_leading_axes": lambda x: x[_MASK_23],
    "mask_rows_as_list": lambda x: x[T([True, False, True])],
    "mask_after_slice": lambda x: x[:, T([True, False, True, True])],
    "mask_from_data": lambda x: x[x > 0],
    "mask_nothing_selected": lambda x: x[torch.zeros((3, 4), dtype=torch.bool)] * 2.0,
    # gather and scatter
    "gather_axis0": lambda x: x.gather(0, T(_GATHER_0)),
    "gather_axis1_negative": lambda x: x.gather(-1, T(_GATHER_1) % 4),
    "gather_smaller_index": lambda x: x.gather(1, T(_GATHER_1)[:2, :2] % 4),
    "gather_3d": lambda x: x.gather(2, T(_SCATTER_3D)),
    "scatter_src": lambda x, s: _scatter(x, 1, _SCATTER_1, s),
    "scatter_src_larger": lambda x, s: _scatter(x, 1, _SCATTER_1, s[:3, :2]),
    "scatter_repeats_last_wins": lambda x, s: _scatter_last_wins(x, 0, _SCATTER_REPEATS, s),
    "scatter_value": lambda x: x.scatter(0, T(_SCATTER_REPEATS), 2.5),
    "scatter_3d": lambda x, s: _scatter_last_wins(x, 2, _SCATTER_3D, s),
    "scatter_add": lambda x, s: x.scatter_add(0, T(_SCATTER_REPEATS), s),
    "scatter_add_src_larger": lambda x, s: x.scatter_add(1, T(_SCATTER_1), s[:, :2]),
    "index_select": lambda x: x.index_select(1, T([3, 0, 3])),
    "index_select_list": lambda x: x.index_select(0, T([1, 2])),
    "masked_fill": lambda x: x.masked_fill(_MASK_2D[0], -1.5),
    "masked_fill_tensor_value": lambda x, v: x.masked_fill(_MASK_2D, v),
    # pad
    "pad_constant": lambda x: _pad(x, (1, 2)),
    "pad_constant_two_axes_value": lambda x: _pad(x, (2, 0, 1, 1), value=1.5),
    "pad_constant_crop": lambda x: _pad(x, (-1, 2, 1, -2)),
    "pad_constant_three_axes": lambda x: _pad(x, (1, 0, 0, 1, 1, 1)),
    "pad_reflect": lambda x: _pad(x, (3, 1), "reflect"),
    "pad_reflect_2d": lambda x: _pad(x, (2, 2, 1, 2), "reflect"),
    "pad_reflect_crop": lambda x: _pad(x, (-2, 4, 3, -1), "reflect"),
    "pad_replicate": lambda x: _pad(x, (3, 1), "replicate"),
    "pad_replicate_2d_crop": lambda x: _pad(x, (1, -1, -2, 2), "replicate"),
    "pad_circular": lambda x: _pad(x, (2, 4), "circular"),
    "pad_circular_2d_crop": lambda x: _pad(x, (-1, 2, 1, 1), "circular"),
    "pad_functional": lambda x: _pad(x, (1, 1), "replicate"),
    # einsum
    "einsum_matmul": lambda a, b: torch.einsum("ij,jk->ik", a, b),
    "einsum_implicit": lambda a, b: torch.einsum("ij,jk", a, b),
    "einsum_implicit_order": lambda a, b: torch.einsum("ba,cb", a, b),
    "einsum_diagonal": lambda a: torch.einsum("ii->i", a),
    "einsum_trace": lambda a: torch.einsum("ii", a),
    "einsum_diagonal_3d": lambda a: torch.einsum("iji->ji", a),
    "einsum_transpose": lambda a: torch.einsum("ijk->kij", a),
    "einsum_sum": lambda a: torch.einsum("ij->", a),
    "einsum_outer": lambda a, b: torch.einsum("i,j->ij", a, b),
    "einsum_dot": lambda a, b: torch.einsum("i,i->", a, b),
    "einsum_batched": lambda a, b: torch.einsum("bij,bjk->bik", a, b),
    "einsum_rowwise": lambda a, b: torch.einsum("ij,ij->i", a, b),
    "einsum_ellipsis_broadcast": lambda a, b: torch.einsum("...ij,...jk->...ik", a, b),
    "einsum_ellipsis_implicit": lambda a, b: torch.einsum("...j,j", a, b),
    "einsum_size_one_broadcast": lambda a, b: a * b,
    "einsum_three_operands": lambda a, b, c: torch.einsum("ijk,jl,lk->i", a, b, c),
    "einsum_bilinear": lambda a, w, b: torch.einsum("bn,anm,bm->ba", a, w, b),
    "einsum_attention_scores": lambda q, k: torch.einsum("bhqd,bhkd->bhqk", q, k),
    "einsum_uppercase_spaces": lambda a, b: torch.einsum("Ab,bC->CA", a, b),
    "einsum_unshared_summed": lambda a, b: torch.einsum("ijk,j->i", a, b),
    "einsum_scalar_operand": lambda a, s: s * a,
    # construction
    "tril": torch.tril,
    "tril_offset": lambda x: x.tril(1),
    "triu_negative_offset": lambda x: x.triu(-1),
    "diagonal": torch.diagonal,
    "diagonal_offset": lambda x: x.diagonal(1),
    "diagonal_below": lambda x: x.diagonal(-2),
    "diagonal_axes": lambda x: torch.diagonal(x, 1, 2, 0),
    "diagonal_negative_axes": lambda x: torch.diagonal(x, 0, -1, -3),
    "diagonal_empty": lambda x: torch.diagonal(x, 5) + 1.0,
    "diag_vector": torch.diag,
    "diag_vector_above": lambda x: torch.diag(x, 2),
    "diag_vector_below": lambda x: torch.diag(x, -1),
    "diag_matrix": lambda x: torch.diag(x, 1),
    "meshgrid_xy": lambda a, b: _meshgrid(a, b),
    "meshgrid_ij_three": lambda a, b, c: _meshgrid(a, b, c, indexing="ij"),
    "meshgrid_xy_three": lambda a, b, c: _meshgrid(a, b, c),
    # layout
    "flip_axis": lambda x: x.flip(0),
    "flip_all": lambda x: x.flip((0, 1, 2)),
    "flip_axes": lambda x: x.flip((0, -1)),
    "roll_flat": lambda x: x.roll(5),
    "roll_axes": lambda x: x.roll((1, -2), (0, 1)),
    "roll_one_shift_two_axes": lambda x: x.roll((7, 7), (2, 0)),
    "tile": lambda x: x.tile((2, 3)),
    "tile_fewer_reps": lambda x: x.tile((2,)),
    "tile_more_reps": lambda x: x.tile((2, 1, 2)),
    "repeat_as_torch": lambda x: x.repeat(2, 1, 3),
    "repeat_interleave": lambda x: x.repeat_interleave(2, dim=1),
    "repeat_interleave_flat": lambda x: x.repeat_interleave(3),
    "repeat_interleave_counts": lambda x: x.repeat_interleave(T([2, 0, 3]), dim=0),
    "repeat_interleave_count_list": lambda x: x.repeat_interleave(T([1, 2]), dim=-1),
    "clone": lambda x: x.clone() * 2.0,
    "view": lambda x: x.reshape(3, -1),
    # the ops a ported peer op-test suite found missing (cases.py's PEER)
    "fmod": torch.fmod,
    "fmod_scalar_method": lambda a: a.fmod(-1.5),
    "copysign": torch.copysign,
    "copysign_scalar": lambda a: a.copysign(-2.0),
    "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "div_floor_method": lambda a, b: a.div(b, rounding_mode="floor"),
    "div_none": lambda a, b: torch.div(a, b, rounding_mode=None),
    "masked_select": lambda a: torch.masked_select(a, T(_MASK_2x3)),
    "masked_select_broadcast": lambda a: a.masked_select(T(_MASK_2x3[0])),
    "unfold": lambda a: a.unfold(1, 3, 2),
    "unflatten": lambda a: a.unflatten(-1, (3, 2)),
    **{f"scatter_reduce_{reduce}" + ("" if include_self else "_without_self"):
       lambda a, s, r=reduce, k=include_self: a.scatter_reduce(0, T(_SCATTER_INDEX), s, r,
                                                               include_self=k)
       for reduce in ("sum", "prod", "mean", "amax", "amin") for include_self in (True, False)},
    "std_mean": lambda a: torch.stack(torch.std_mean(a, dim=1)),
    "var_mean_keepdims": lambda a: torch.cat(torch.var_mean(a, 0, correction=0, keepdim=True)),
    "normalize": F.normalize,
    "normalize_p3_dim0": lambda a: F.normalize(a, p=3.0, dim=0),
    "squeeze_not_one": lambda a: a.squeeze((0, 1)),
    "roll_shifts_dims": lambda a: a.roll(shifts=(1, -2), dims=(0, 1)),
    "einsum_ellipsis_summed": lambda a, b: torch.einsum("ij...,ij...->ij", a, b),
    "sdpa_grouped_query": lambda q, k, v: F.scaled_dot_product_attention(q, k, v,
                                                                         enable_gqa=True),
    "conv3d": F.conv3d,
    "conv_transpose3d": lambda x, w: F.conv_transpose3d(x, w, stride=2),
    "max_pool3d": lambda x: F.max_pool3d(x, 2, stride=(1, 2, 1)),
    "avg_pool3d": lambda x: F.avg_pool3d(x, (2, 3, 2)),
    "max_unpool2d": lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2),
    "interpolate_linear": lambda x: F.interpolate(x, size=9, mode="linear"),
    "interpolate_trilinear_align": lambda x: F.interpolate(x, size=(3, 5, 2), mode="trilinear",
                                                           align_corners=True),
    "interpolate_bicubic": lambda x: F.interpolate(x, size=(6, 3), mode="bicubic"),
    "interpolate_bicubic_align": lambda x: F.interpolate(x, size=(7, 4), mode="bicubic",
                                                         align_corners=True),
    "interpolate_nearest_exact": lambda x: F.interpolate(x, size=(5, 7), mode="nearest-exact"),
}

_ACTIVATIONS: dict[str, Callable[..., torch.Tensor]] = {
    "leaky_relu": F.leaky_relu,
    "leaky_relu_slope": lambda x: F.leaky_relu(x, 0.3),
    "prelu_one_slope": lambda x, w: F.prelu(x, w[:1]),
    "prelu_channels": F.prelu,
    "elu": F.elu,
    "elu_alpha": lambda x: F.elu(x, alpha=0.4),
    "selu": F.selu,
    "celu": lambda x: F.celu(x, alpha=0.5),
    "silu": F.silu,
    "silu_wide": F.silu,
    "mish": F.mish,
    "mish_wide": F.mish,
    "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid,
    "hardtanh": F.hardtanh,
    "hardtanh_bounds": lambda x: F.hardtanh(x, -3.0, 6.0),
    "relu6": F.relu6,
    "softplus": F.softplus,
    "softplus_beta_threshold": lambda x: F.softplus(x, beta=2.0, threshold=3.0),
    "softsign": F.softsign,
    "logsigmoid": F.logsigmoid,
    "logsigmoid_wide": F.logsigmoid,
    "softmin": lambda x: F.softmin(x, dim=0),
    "softmin_last": lambda x: F.softmin(x, dim=-1),
}

FORMS: dict[str, Callable[..., torch.Tensor]] = {
    **_OPS, **{f"activations.{name}": form for name, form in _ACTIVATIONS.items()}}
