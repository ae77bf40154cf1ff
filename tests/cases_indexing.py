"""Declarative cases for indexing, gather/scatter, pad, einsum, construction and layout ops.

Same pattern as ``cases.py``: a function of float tensors, the shapes and domains of its inputs,
and a reference computed on the host with NumPy alone (loops where NumPy has no equivalent).
Integer indices and masks are fixed NumPy arrays, turned into tensors inside the function so
that they land on the backend under test.
"""

from __future__ import annotations

import numpy as np
from cases import Case

import dparray as dp


def _t(array):
    """A constant tensor of ``array`` on the current backend (for indices and masks)."""
    return dp.tensor(np.asarray(array))


def _gather(x, axis, index):
    """``torch.gather`` by its definition: the output has the index's shape."""
    out = np.empty(index.shape, dtype=x.dtype)
    for position in np.ndindex(*index.shape):
        source = list(position)
        source[axis] = index[position]
        out[position] = x[tuple(source)]
    return out


def _scatter(x, axis, index, src, add=False):
    """``torch.scatter`` / ``scatter_add`` by their definition; later writes win."""
    out = x.copy()
    for position in np.ndindex(*index.shape):
        target = list(position)
        target[axis] = index[position]
        value = src if np.isscalar(src) else src[position]
        if add:
            out[tuple(target)] += value
        else:
            out[tuple(target)] = value
    return out


_NUMPY_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
                "circular": "wrap"}


def _pad(x, pad, mode="constant", value=0.0):
    """PyTorch's ``F.pad`` through ``np.pad``, one axis at a time from the last: circular
    crops first and wraps what is left; reflect and replicate pad from the whole axis, then
    crop; constant crops and fills."""
    pairs = [(pad[i], pad[i + 1]) for i in range(0, len(pad), 2)]
    for offset, (before, after) in enumerate(pairs):
        axis = x.ndim - 1 - offset
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(before, 0), max(after, 0))
        crop = [slice(None)] * x.ndim
        crop[axis] = slice(max(-before, 0), x.shape[axis] - max(-after, 0))
        extra = {"constant_values": value} if mode == "constant" else {}
        if mode in ("circular", "constant"):
            x = np.pad(x[tuple(crop)], widths, mode=_NUMPY_MODES[mode], **extra)
        else:
            padded = np.pad(x, widths, mode=_NUMPY_MODES[mode])
            crop[axis] = slice(max(-before, 0), padded.shape[axis] - max(-after, 0))
            x = padded[tuple(crop)]
    return x


# index arrays used by several cases (fixed, so the reference sees the same ones)
ROWS = np.array([0, 2, 1, 2])
COLS = np.array([1, 1, 3, 0])
COLUMN = np.array([[0], [2]])
ROW = np.array([[1, 3, 0]])
MASK_2D = np.array([[True, False, True, True], [False, False, True, False],
                    [True, True, False, False]])
MASK_23 = np.array([[True, False, True], [False, True, True]])
GATHER_0 = np.array([[2, 0, 1], [1, 1, 0]])
GATHER_1 = np.array([[3, 0, -1], [1, 1, 2], [0, 3, 3]])
SCATTER_1 = np.array([[2, 0], [1, 3], [3, 2]])
SCATTER_REPEATS = np.array([[1, 0, 1, 0], [1, 1, 0, 0]])
SCATTER_3D = np.array([[[1, 0], [0, 2]], [[2, 2], [1, 0]]])

ADVANCED = [
    Case("index_two_arrays", lambda x: x[ROWS.tolist(), COLS.tolist()], [(3, 4)],
         lambda x: x[ROWS, COLS]),
    Case("index_two_arrays_broadcast", lambda x: x[_t(COLUMN), _t(ROW)], [(3, 4)],
         lambda x: x[COLUMN, ROW]),
    Case("index_arrays_then_slice", lambda x: x[[0, 2], [1, 0], :], [(3, 2, 4)],
         lambda x: x[[0, 2], [1, 0], :]),
    Case("index_slice_then_arrays", lambda x: x[:, [0, 2, 2], [1, 3, 3]], [(2, 3, 4)],
         lambda x: x[:, [0, 2, 2], [1, 3, 3]]),
    Case("index_arrays_apart", lambda x: x[[0, 1, 1], :, [2, 0, 3]], [(2, 3, 4)],
         lambda x: x[[0, 1, 1], :, [2, 0, 3]]),
    Case("index_int_beside_array", lambda x: x[1, :, [0, 2]], [(2, 3, 4)],
         lambda x: x[1][:, [0, 2]]),  # PyTorch's rule: the int first (NumPy's: (2, 3))
    Case("index_array_then_partial_slice", lambda x: x[[0, 1, 1], 1:], [(3, 4)],
         lambda x: x[[0, 1, 1], 1:]),
    Case("index_negative_and_repeated", lambda x: x[[-1, 0, -1], [-2, 1, -2]], [(3, 4)],
         lambda x: x[[-1, 0, -1], [-2, 1, -2]]),
    Case("index_none_and_array", lambda x: x[None, [1, 0]], [(3, 4)],
         lambda x: x[None, [1, 0]]),
    Case("index_arrays_around_none", lambda x: x[[0, 1], None, [1, 2]], [(3, 4)],
         lambda x: x[[0, 1], None, [1, 2]]),
    Case("index_ellipsis_between_arrays", lambda x: x[[1, 0], ..., [2, 3]], [(2, 3, 4)],
         lambda x: x[[1, 0], ..., [2, 3]]),
    Case("index_ellipsis_then_array", lambda x: x[..., [0, 2]], [(2, 3, 4)],
         lambda x: x[..., [0, 2]]),
    Case("index_int32_tensor", lambda x: x[_t(ROWS.astype(np.int32)), 1:3], [(3, 4)],
         lambda x: x[ROWS, 1:3]),
    Case("index_0d_tensor", lambda x: x[_t(np.int64(2))], [(3, 4)], lambda x: x[2]),
    Case("mask_same_shape", lambda x: x[_t(MASK_2D)], [(3, 4)], lambda x: x[MASK_2D]),
    Case("mask_leading_axes", lambda x: x[_t(MASK_23)], [(2, 3, 4)], lambda x: x[MASK_23]),
    Case("mask_rows_as_list", lambda x: x[[True, False, True]], [(3, 4)],
         lambda x: x[np.array([True, False, True])]),
    Case("mask_after_slice", lambda x: x[:, _t(np.array([True, False, True, True]))], [(3, 4)],
         lambda x: x[:, np.array([True, False, True, True])]),
    Case("mask_from_data", lambda x: x[x > 0], [(3, 4)], lambda x: x[x > 0], ["away"]),
    Case("mask_nothing_selected", lambda x: x[_t(np.zeros((3, 4), dtype=bool))] * 2.0,
         [(3, 4)], lambda x: x[np.zeros((3, 4), dtype=bool)]),
]

GATHER_SCATTER = [
    Case("gather_axis0", lambda x: dp.gather(x, 0, _t(GATHER_0)), [(3, 3)],
         lambda x: _gather(x, 0, GATHER_0)),
    Case("gather_axis1_negative", lambda x: x.gather(-1, _t(GATHER_1)), [(3, 4)],
         lambda x: _gather(x, 1, GATHER_1 % 4)),
    Case("gather_smaller_index", lambda x: dp.gather(x, 1, _t(GATHER_1[:2, :2])), [(3, 4)],
         lambda x: _gather(x, 1, GATHER_1[:2, :2] % 4)),
    Case("gather_3d", lambda x: dp.gather(x, 2, _t(SCATTER_3D)), [(2, 3, 3)],
         lambda x: _gather(x, 2, SCATTER_3D)),
    Case("scatter_src", lambda x, s: dp.scatter(x, 1, _t(SCATTER_1), s), [(3, 4), (3, 2)],
         lambda x, s: _scatter(x, 1, SCATTER_1, s)),
    Case("scatter_src_larger", lambda x, s: x.scatter(1, _t(SCATTER_1), s), [(3, 4), (4, 3)],
         lambda x, s: _scatter(x, 1, SCATTER_1, s[:3, :2])),
    Case("scatter_repeats_last_wins", lambda x, s: dp.scatter(x, 0, _t(SCATTER_REPEATS), s),
         [(2, 4), (2, 4)], lambda x, s: _scatter(x, 0, SCATTER_REPEATS, s)),
    Case("scatter_value", lambda x: dp.scatter(x, 0, _t(SCATTER_REPEATS), value=2.5),
         [(2, 4)], lambda x: _scatter(x, 0, SCATTER_REPEATS, 2.5)),
    Case("scatter_3d", lambda x, s: dp.scatter(x, 2, _t(SCATTER_3D), s), [(2, 2, 3), (2, 2, 2)],
         lambda x, s: _scatter(x, 2, SCATTER_3D, s)),
    Case("scatter_add", lambda x, s: dp.scatter_add(x, 0, _t(SCATTER_REPEATS), s),
         [(2, 4), (2, 4)], lambda x, s: _scatter(x, 0, SCATTER_REPEATS, s, add=True)),
    Case("scatter_add_src_larger", lambda x, s: x.scatter_add(1, _t(SCATTER_1), s),
         [(3, 4), (3, 5)], lambda x, s: _scatter(x, 1, SCATTER_1, s[:, :2], add=True)),
    Case("index_select", lambda x: dp.index_select(x, 1, _t([3, 0, 3])), [(2, 4)],
         lambda x: x[:, [3, 0, 3]]),
    Case("index_select_list", lambda x: x.index_select(0, [1, -1]), [(3, 2)],
         lambda x: x[[1, -1]]),
    Case("masked_fill", lambda x: dp.masked_fill(x, _t(MASK_2D[0]), -1.5), [(3, 4)],
         lambda x: np.where(MASK_2D[0], -1.5, x)),
    Case("masked_fill_tensor_value", lambda x, v: x.masked_fill(_t(MASK_2D), v), [(3, 4), ()],
         lambda x, v: np.where(MASK_2D, v, x)),
]

PAD = [
    Case("pad_constant", lambda x: dp.pad(x, (1, 2)), [(2, 3)], lambda x: _pad(x, (1, 2))),
    Case("pad_constant_two_axes_value", lambda x: dp.pad(x, (2, 0, 1, 1), value=1.5),
         [(2, 3, 2)], lambda x: _pad(x, (2, 0, 1, 1), value=1.5)),
    Case("pad_constant_crop", lambda x: dp.pad(x, (-1, 2, 1, -2)), [(4, 5)],
         lambda x: _pad(x, (-1, 2, 1, -2))),
    Case("pad_constant_three_axes", lambda x: dp.pad(x, (1, 0, 0, 1, 1, 1)), [(2, 2, 2)],
         lambda x: _pad(x, (1, 0, 0, 1, 1, 1))),
    Case("pad_reflect", lambda x: dp.pad(x, (3, 1), mode="reflect"), [(2, 5)],
         lambda x: _pad(x, (3, 1), "reflect")),
    Case("pad_reflect_2d", lambda x: dp.pad(x, (2, 2, 1, 2), mode="reflect"), [(1, 2, 4, 5)],
         lambda x: _pad(x, (2, 2, 1, 2), "reflect")),
    Case("pad_reflect_crop", lambda x: dp.pad(x, (-2, 4, 3, -1), mode="reflect"), [(5, 6)],
         lambda x: _pad(x, (-2, 4, 3, -1), "reflect")),
    Case("pad_replicate", lambda x: dp.pad(x, (3, 1), mode="replicate"), [(2, 4)],
         lambda x: _pad(x, (3, 1), "replicate")),
    Case("pad_replicate_2d_crop", lambda x: dp.pad(x, (1, -1, -2, 2), mode="replicate"),
         [(2, 4, 3)], lambda x: _pad(x, (1, -1, -2, 2), "replicate")),
    Case("pad_circular", lambda x: dp.pad(x, (2, 4), mode="circular"), [(2, 4)],
         lambda x: _pad(x, (2, 4), "circular")),
    Case("pad_circular_2d_crop", lambda x: dp.pad(x, (-1, 2, 1, 1), mode="circular"),
         [(1, 3, 4)], lambda x: _pad(x, (-1, 2, 1, 1), "circular")),
    Case("pad_functional", lambda x: dp.nn.functional.pad(x, (1, 1), "replicate"), [(3,)],
         lambda x: np.pad(x, 1, mode="edge")),
]

EINSUM = [
    Case("einsum_matmul", lambda a, b: dp.einsum("ij,jk->ik", a, b), [(2, 3), (3, 4)],
         lambda a, b: np.einsum("ij,jk->ik", a, b)),
    Case("einsum_implicit", lambda a, b: dp.einsum("ij,jk", a, b), [(2, 3), (3, 4)],
         lambda a, b: np.einsum("ij,jk", a, b)),
    Case("einsum_implicit_order", lambda a, b: dp.einsum("ba,cb", [a, b]), [(2, 3), (4, 2)],
         lambda a, b: np.einsum("ba,cb", a, b)),
    Case("einsum_diagonal", lambda a: dp.einsum("ii->i", a), [(3, 3)],
         lambda a: np.einsum("ii->i", a)),
    Case("einsum_trace", lambda a: dp.einsum("ii", a), [(3, 3)], lambda a: np.einsum("ii", a)),
    Case("einsum_diagonal_3d", lambda a: dp.einsum("iji->ji", a), [(3, 2, 3)],
         lambda a: np.einsum("iji->ji", a)),
    Case("einsum_transpose", lambda a: dp.einsum("ijk->kij", a), [(2, 3, 4)],
         lambda a: np.einsum("ijk->kij", a)),
    Case("einsum_sum", lambda a: dp.einsum("ij->", a), [(2, 3)], lambda a: np.einsum("ij->", a)),
    Case("einsum_outer", lambda a, b: dp.einsum("i,j->ij", a, b), [(3,), (4,)],
         lambda a, b: np.einsum("i,j->ij", a, b)),
    Case("einsum_dot", lambda a, b: dp.einsum("i,i->", a, b), [(5,), (5,)],
         lambda a, b: np.einsum("i,i->", a, b)),
    Case("einsum_batched", lambda a, b: dp.einsum("bij,bjk->bik", a, b), [(2, 3, 4), (2, 4, 2)],
         lambda a, b: np.einsum("bij,bjk->bik", a, b)),
    Case("einsum_rowwise", lambda a, b: dp.einsum("ij,ij->i", a, b), [(3, 4), (3, 4)],
         lambda a, b: np.einsum("ij,ij->i", a, b)),
    Case("einsum_ellipsis_broadcast", lambda a, b: dp.einsum("...ij,...jk->...ik", a, b),
         [(2, 1, 3, 4), (5, 4, 2)], lambda a, b: np.einsum("...ij,...jk->...ik", a, b)),
    Case("einsum_ellipsis_implicit", lambda a, b: dp.einsum("...j,j", a, b), [(2, 3, 4), (4,)],
         lambda a, b: np.einsum("...j,j", a, b)),
    Case("einsum_size_one_broadcast", lambda a, b: dp.einsum("ij,ij->ij", a, b),
         [(1, 3), (2, 3)], lambda a, b: a * b),
    Case("einsum_three_operands", lambda a, b, c: dp.einsum("ijk,jl,lk->i", a, b, c),
         [(2, 3, 4), (3, 5), (5, 4)], lambda a, b, c: np.einsum("ijk,jl,lk->i", a, b, c)),
    Case("einsum_bilinear", lambda a, w, b: dp.einsum("bn,anm,bm->ba", a, w, b),
         [(2, 3), (4, 3, 5), (2, 5)], lambda a, w, b: np.einsum("bn,anm,bm->ba", a, w, b)),
    Case("einsum_attention_scores", lambda q, k: dp.einsum("bhqd,bhkd->bhqk", q, k),
         [(2, 2, 3, 4), (2, 2, 5, 4)], lambda q, k: np.einsum("bhqd,bhkd->bhqk", q, k)),
    Case("einsum_uppercase_spaces", lambda a, b: dp.einsum("Ab, bC -> CA", a, b),
         [(2, 3), (3, 4)], lambda a, b: np.einsum("Ab,bC->CA", a, b)),
    Case("einsum_unshared_summed", lambda a, b: dp.einsum("ijk,j->i", a, b), [(2, 3, 4), (3,)],
         lambda a, b: np.einsum("ijk,j->i", a, b)),
    Case("einsum_scalar_operand", lambda a, s: dp.einsum(",ij->ij", s, a), [(2, 3), ()],
         lambda a, s: s * a),
]

CONSTRUCT = [
    Case("tril", dp.tril, [(3, 4)], np.tril),
    Case("tril_offset", lambda x: x.tril(1), [(2, 3, 4)], lambda x: np.tril(x, 1)),
    Case("triu_negative_offset", lambda x: dp.triu(x, -1), [(4, 3)], lambda x: np.triu(x, -1)),
    Case("diagonal", dp.diagonal, [(3, 4)], np.diagonal),
    Case("diagonal_offset", lambda x: x.diagonal(1), [(3, 4)], lambda x: np.diagonal(x, 1)),
    Case("diagonal_below", lambda x: dp.diagonal(x, -2), [(4, 3)], lambda x: np.diagonal(x, -2)),
    Case("diagonal_axes", lambda x: dp.diagonal(x, 1, 2, 0), [(3, 2, 4)],
         lambda x: np.diagonal(x, 1, 2, 0)),
    Case("diagonal_negative_axes", lambda x: dp.diagonal(x, 0, -1, -3), [(3, 2, 4)],
         lambda x: np.diagonal(x, 0, -1, -3)),
    Case("diagonal_empty", lambda x: dp.diagonal(x, 5) + 1.0, [(3, 4)],
         lambda x: np.diagonal(x, 5) + 1.0),
    Case("diag_vector", dp.diag, [(3,)], np.diag),
    Case("diag_vector_above", lambda x: dp.diag(x, 2), [(3,)], lambda x: np.diag(x, 2)),
    Case("diag_vector_below", lambda x: x.diag(-1), [(2,)], lambda x: np.diag(x, -1)),
    Case("diag_matrix", lambda x: dp.diag(x, 1), [(3, 4)], lambda x: np.diag(x, 1)),
    Case("meshgrid_xy", lambda a, b: dp.stack(dp.meshgrid(a, b)), [(3,), (2,)],
         lambda a, b: np.stack(np.meshgrid(a, b))),
    Case("meshgrid_ij_three", lambda a, b, c: dp.stack(dp.meshgrid([a, b, c], indexing="ij")),
         [(2,), (3,), (2,)], lambda a, b, c: np.stack(np.meshgrid(a, b, c, indexing="ij"))),
    Case("meshgrid_xy_three", lambda a, b, c: dp.stack(dp.meshgrid(a, b, c)),
         [(2,), (3,), (4,)], lambda a, b, c: np.stack(np.meshgrid(a, b, c))),
]

LAYOUT = [
    Case("flip_axis", lambda x: dp.flip(x, axis=0), [(3, 4)], lambda x: np.flip(x, 0)),
    Case("flip_all", dp.flip, [(2, 3, 2)], np.flip),
    Case("flip_axes", lambda x: x.flip((0, -1)), [(2, 3, 4)], lambda x: np.flip(x, (0, 2))),
    Case("roll_flat", lambda x: dp.roll(x, 5), [(3, 4)], lambda x: np.roll(x, 5)),
    Case("roll_axes", lambda x: x.roll((1, -2), (0, 1)), [(3, 4)],
         lambda x: np.roll(x, (1, -2), (0, 1))),
    Case("roll_one_shift_two_axes", lambda x: dp.roll(x, 7, axis=(2, 0)), [(2, 3, 4)],
         lambda x: np.roll(x, 7, axis=(2, 0))),
    Case("tile", lambda x: dp.tile(x, (2, 3)), [(2, 2)], lambda x: np.tile(x, (2, 3))),
    Case("tile_fewer_reps", lambda x: x.tile(2), [(2, 3)], lambda x: np.tile(x, 2)),
    Case("tile_more_reps", lambda x: dp.tile(x, (2, 1, 2)), [(3, 2)],
         lambda x: np.tile(x, (2, 1, 2))),
    Case("repeat_as_torch", lambda x: x.repeat(2, 1, 3), [(2, 3)],
         lambda x: np.tile(x, (2, 1, 3))),
    Case("repeat_interleave", lambda x: dp.repeat_interleave(x, 2, axis=1), [(2, 3)],
         lambda x: np.repeat(x, 2, axis=1)),
    Case("repeat_interleave_flat", lambda x: x.repeat_interleave(3), [(2, 2)],
         lambda x: np.repeat(x, 3)),
    Case("repeat_interleave_counts", lambda x: dp.repeat_interleave(x, _t([2, 0, 3]), axis=0),
         [(3, 2)], lambda x: np.repeat(x, [2, 0, 3], axis=0)),
    Case("repeat_interleave_count_list", lambda x: x.repeat_interleave([1, 2], axis=-1),
         [(3, 2)], lambda x: np.repeat(x, [1, 2], axis=-1)),
    Case("clone", lambda x: x.clone() * 2.0, [(2, 3)], lambda x: x * 2.0),
    Case("view", lambda x: x.view(3, -1), [(2, 3, 2)], lambda x: x.reshape(3, -1),
         noncontiguous=True),
]

INDEXING_CASES = ADVANCED + GATHER_SCATTER + PAD + EINSUM + CONSTRUCT + LAYOUT
