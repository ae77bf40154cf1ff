"""The functions of ``test_torch_ops_more.py`` beyond PyTorch's values: gradients and second
derivatives against finite differences in float64 on every backend, the row-by-row search
against NumPy's, erfinv's accuracy, the Tensor methods, and the errors (type and message) that
bad arguments raise before any work."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import to_tensor
from gradient_checks import check_gradients
from test_second_order import check_second_order

import dparray as dp


def _distinct(rng, *shape):
    """Values 0.3 apart at least, in a random order: no ties of max, min or median."""
    n = math.prod(shape)
    return (rng.permutation(n) * 0.3 - 0.15 * n).reshape(shape)


def _away(rng, *shape):
    """Magnitudes in [0.2, 1.5]: away from the kinks of norms, clamps and hypot."""
    return (rng.uniform(0.2, 1.5, shape) * rng.choice([-1.0, 1.0], shape))


def _with_nans(rng, *shape):
    """Normal values with NaN at the first and every fifth entry."""
    x = rng.standard_normal(shape)
    x.reshape(-1)[::5] = np.nan
    return x


def _with_specials(rng, *shape):
    x = rng.standard_normal(shape)
    x.reshape(-1)[:3] = [np.nan, np.inf, -np.inf]
    return x


GRADIENT_CASES = {
    "mm": (dp.mm, lambda r: [r.standard_normal((3, 4)), r.standard_normal((4, 2))]),
    "mv": (dp.mv, lambda r: [r.standard_normal((3, 4)), r.standard_normal(4)]),
    "dot": (dp.dot, lambda r: [r.standard_normal(5), r.standard_normal(5)]),
    "bmm": (dp.bmm, lambda r: [r.standard_normal((2, 3, 4)), r.standard_normal((2, 4, 2))]),
    "addmm": (lambda i, a, b: dp.addmm(i, a, b, beta=0.5, alpha=2.0),
              lambda r: [r.standard_normal(3), r.standard_normal((2, 4)),
                         r.standard_normal((4, 3))]),
    "baddbmm": (lambda i, a, b: dp.baddbmm(i, a, b, beta=-1.5),
                lambda r: [r.standard_normal((1, 3)), r.standard_normal((2, 1, 4)),
                           r.standard_normal((2, 4, 3))]),
    "outer": (dp.outer, lambda r: [r.standard_normal(3), r.standard_normal(2)]),
    "tensordot": (lambda a, b: dp.tensordot(a, b, dims=([0, 2], [1, 0])),
                  lambda r: [r.standard_normal((2, 3, 4)), r.standard_normal((4, 2, 3))]),
    "kron": (dp.kron, lambda r: [r.standard_normal((2, 1, 2)), r.standard_normal((3, 2))]),
    "trace": (dp.trace, lambda r: [r.standard_normal((3, 2))]),
    "diag_embed": (lambda a: dp.diag_embed(a, 1, dim1=0, dim2=2),
                   lambda r: [r.standard_normal((2, 3))]),
    "amax": (lambda a: dp.amax(a, dim=(0, 2)), lambda r: [_distinct(r, 2, 3, 2)]),
    "aminmax": (lambda a: dp.stack(list(dp.aminmax(a, dim=1))), lambda r: [_distinct(r, 3, 4)]),
    "nansum": (lambda a: dp.nansum(a, 1), lambda r: [_with_nans(r, 2, 3)]),
    "nanmean": (lambda a: dp.nanmean(a, dim=0), lambda r: [_with_nans(r, 4, 3)]),
    "median_all": (dp.median, lambda r: [_distinct(r, 3, 4)]),
    "median_dim": (lambda a: dp.median(a, dim=0).values, lambda r: [_distinct(r, 4, 3)]),
    "norm": (dp.norm, lambda r: [r.standard_normal((3, 4))]),
    "norm_p3": (lambda a: dp.norm(a, 3, dim=1), lambda r: [r.standard_normal((3, 4))]),
    "norm_p_half": (lambda a: dp.norm(a, 0.5, dim=0), lambda r: [_away(r, 3, 4)]),
    "norm_inf": (lambda a: dp.norm(a, float("inf"), dim=1), lambda r: [_distinct(r, 3, 4)]),
    "unbind": (lambda a: dp.unbind(a, 1)[0] * 2.0 + dp.unbind(a, 1)[2],
               lambda r: [r.standard_normal((2, 3))]),
    "movedim": (lambda a: dp.movedim(a, (0, 2), (1, 0)), lambda r: [r.standard_normal((2, 3, 4))]),
    "narrow": (lambda a: dp.narrow(a, 0, -2, 2), lambda r: [r.standard_normal((4, 2))]),
    "take_along_dim": (lambda a: dp.take_along_dim(a, dp.tensor([[[2, 0, 2]]]), dim=2),
                       lambda r: [r.standard_normal((2, 3, 4))]),
    "cartesian_prod": (dp.cartesian_prod, lambda r: [r.standard_normal(2), r.standard_normal(3)]),
    "diff": (lambda a, p: dp.diff(a, n=2, dim=0, prepend=p),
             lambda r: [r.standard_normal((4, 3)), r.standard_normal((1, 3))]),
    "index_add": (lambda a, s: dp.index_add(a, 1, dp.tensor([2, 0, 2]), s, alpha=-0.5),
                  lambda r: [r.standard_normal((2, 3)), r.standard_normal((2, 3))]),
    "nan_to_num": (lambda a: dp.nan_to_num(a, posinf=2.0, neginf=-3.0),
                   lambda r: [_with_specials(r, 2, 3)]),
    "hypot": (dp.hypot, lambda r: [_away(r, 3, 4), _away(r, 4)]),
    "clamp_min": (lambda a: dp.clamp_min(a, 0.1), lambda r: [_away(r, 3, 4)]),
    "erfinv": (dp.erfinv, lambda r: [r.uniform(-0.9, 0.9, (3, 4))]),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_match_finite_differences(name, backend, rng):
    function, make = GRADIENT_CASES[name]
    inputs = [to_tensor(a, requires_grad=True) for a in make(rng)]
    check_gradients(function, inputs)


SECOND_ORDER = {  # the ops with a Function of their own, and a composition or two
    "hypot": (dp.hypot, lambda r: [_away(r, 3), _away(r, 3)]),
    "hypot_number": (lambda a: dp.hypot(a, 2.0), lambda r: [_away(r, 4)]),  # replays forward
    "erfinv": (dp.erfinv, lambda r: [r.uniform(-0.9, 0.9, 5)]),
    "median_all": (dp.median, lambda r: [_distinct(r, 2, 3)]),
    "norm_p3": (lambda a: dp.norm(a, 3, dim=1), lambda r: [r.standard_normal((2, 3))]),
    "addmm": (lambda i, a, b: dp.addmm(i, a, b, alpha=2.0),
              lambda r: [r.standard_normal(2), r.standard_normal((2, 3)),
                         r.standard_normal((3, 2))]),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_derivatives_match_finite_differences(name, backend, rng):
    function, make = SECOND_ORDER[name]
    check_second_order(function, make(rng), rng)


@pytest.mark.parametrize("right", [False, True])
def test_rows_are_searched_as_numpy_searches_each(right, backend, rng):
    sequence = np.sort(rng.integers(0, 6, (3, 2, 7)).astype(float), axis=-1)
    sequence[0, 0, -2:] = np.nan  # NaN sorts last
    values = rng.integers(-1, 8, (3, 2, 5)).astype(float)
    values[1, 1, 0] = np.nan
    got = dp.searchsorted(to_tensor(sequence), to_tensor(values), right=right).numpy()
    side = "right" if right else "left"
    for row in np.ndindex(sequence.shape[:-1]):
        np.testing.assert_array_equal(got[row], np.searchsorted(sequence[row], values[row],
                                                                side=side))


def test_erfinv_inverts_erf_and_rounds_float32_once(backend, rng):
    x = np.concatenate([rng.uniform(-1, 1, 200), [1 - 1e-12, -1 + 1e-9, 1e-200]])
    y = dp.erfinv(to_tensor(x))
    np.testing.assert_allclose(dp.erf(y).numpy(), x, rtol=4e-16, atol=2e-16)
    narrow = x.astype(np.float32)
    wide = dp.erfinv(to_tensor(narrow.astype(np.float64))).numpy().astype(np.float32)
    np.testing.assert_array_equal(dp.erfinv(to_tensor(narrow)).numpy(), wide)


def test_mm_mv_and_dot_are_numpys_products(backend, rng):
    a, b, v = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.standard_normal(4)
    x, y, u = (to_tensor(t, backend=backend) for t in (a, b, v))
    np.testing.assert_allclose(dp.mm(x, y).numpy(), a @ b, rtol=1e-14)
    np.testing.assert_allclose(dp.mv(x, u).numpy(), a @ v, rtol=1e-14)
    dot = dp.dot(u, u)
    assert dot.shape == ()
    np.testing.assert_allclose(dot.numpy(), np.dot(v, v), rtol=1e-14)


def test_the_methods_are_the_functions(backend, rng):
    a, b = to_tensor(rng.standard_normal((2, 3, 4))), to_tensor(rng.standard_normal((2, 4, 1)))
    m, v = a[0], b[0, :, 0]
    pairs = [
        (m.mm(b[0]), dp.mm(m, b[0])),
        (m.mv(v), dp.mv(m, v)),
        (v.dot(v), dp.dot(v, v)),
        (a.bmm(b), dp.bmm(a, b)),
        (dp.stack(a.unbind(dim=2)), dp.stack(dp.unbind(a, 2))),
        (a.moveaxis(0, 2), dp.movedim(a, 0, 2)),
        (a.swapaxes(0, 1), dp.swapdims(a, dim0=0, dim1=1)),
        (a.clamp_min(0.2), dp.clip(a, min=0.2)),
        (a.amin(dim=1, keepdim=True), dp.min(a, axis=1, keepdims=True)),
        (a.count_nonzero(2), dp.count_nonzero(a, dim=2)),
    ]
    for method, function in pairs:
        np.testing.assert_array_equal(method.numpy(), function.numpy())
    names = ["mm", "mv", "dot", "bmm", "addmm", "baddbmm", "outer", "kron", "trace", "diag_embed",
             "amax", "amin",
             "aminmax", "nansum", "nanmean", "count_nonzero", "median", "norm", "nan_to_num",
             "hypot", "clamp_min", "clamp_max", "erfinv", "diff", "unbind", "movedim",
             "moveaxis", "swapaxes", "swapdims", "narrow", "take_along_dim", "index_add",
             "bincount"]
    assert [n for n in names if not hasattr(dp.Tensor, n)] == []


def _x(*shape):
    return dp.ones(*shape)


ERRORS = [
    (lambda: dp.mm(_x(2, 3, 4), _x(4, 2)), ValueError, r"^mm: input must be 2-D, got shape"),
    (lambda: dp.mm(_x(2, 3), _x(2, 3)), ValueError, r"^mm: .* do not align: 3 != 2"),
    (lambda: dp.mv(_x(2, 3), _x(3, 1)), ValueError, r"^mv: vec must be 1-D, got shape"),
    (lambda: dp.mv(_x(2, 3), _x(2)), ValueError, r"^mv: .* do not align: 3 != 2"),
    (lambda: dp.dot(_x(3), _x(2)), ValueError, r"^dot: the vectors must have one length"),
    (lambda: dp.dot(_x(3, 1), _x(3)), ValueError, r"^dot: input must be 1-D"),
    (lambda: dp.dot([1.0], _x(1)), TypeError, r"^dot: input must be a Tensor"),
    (lambda: dp.bmm(_x(2, 3), _x(2, 3, 4)), ValueError, r"^bmm: input must be 3-D, got shape"),
    (lambda: dp.bmm(_x(2, 3, 4), _x(3, 4, 5)), ValueError, r"^bmm: input and mat2 need one batch"),
    (lambda: dp.bmm(_x(2, 3, 4), _x(2, 3, 5)), ValueError, r"^bmm: .* do not align: 4 != 3"),
    (lambda: dp.addmm(_x(3, 2, 2), _x(2, 3), _x(3, 2)), ValueError,
     r"^addmm: input of shape \(3, 2, 2\) does not broadcast to the product's shape \(2, 2\)"),
    (lambda: dp.addmm(_x(2), _x(2), _x(2, 2)), ValueError, r"^addmm: mat1 must be 2-D"),
    (lambda: dp.addmm(_x(2), _x(2, 2), _x(2, 2), beta="1"), TypeError,
     r"^addmm: beta must be a number"),
    (lambda: dp.baddbmm(_x(2, 2), _x(2, 2), _x(2, 2, 2)), ValueError, r"^baddbmm: batch1 must"),
    (lambda: dp.outer(_x(2, 2), _x(2)), ValueError, r"^outer: input must be 1-D"),
    (lambda: dp.tensordot(_x(2, 3), _x(3, 2), dims=-1), ValueError,
     r"^tensordot: dims must be at least 0"),
    (lambda: dp.tensordot(_x(2, 3), _x(3), dims=2), ValueError, r"^tensordot: cannot contract 2"),
    (lambda: dp.tensordot(_x(2, 3), _x(3, 2), dims=([0], [0])), ValueError,
     r"^tensordot: contracted axes must have equal sizes, got axis 0 of size 2"),
    (lambda: dp.tensordot(_x(2, 3), _x(3, 2), dims=([0, 0], [1, 1])), ValueError,
     r"^tensordot: repeated axis"),
    (lambda: dp.tensordot(_x(2, 3), _x(3, 2), dims="ij"), TypeError,
     r"^tensordot: dims must be an int or a pair"),
    (lambda: dp.trace(_x(2, 2, 2)), ValueError, r"^trace: expected a matrix \(2-D\)"),
    (lambda: dp.diag_embed(_x(3), dim1=0, dim2=-2), ValueError,
     r"^diag_embed: axis1 and axis2 must differ"),
    (lambda: dp.amax(dp.zeros(0, 2)), ValueError, r"^amax: reducing over an empty axis"),
    (lambda: dp.aminmax(_x(2, 2), dim=(0, 1)), TypeError, r"^aminmax: axis must be an int"),
    (lambda: dp.nanmean(dp.tensor([1, 2])), TypeError, r"^nanmean: needs a floating tensor"),
    (lambda: dp.median(dp.zeros(2, 0), dim=1), ValueError, r"^median: axis 1 .* no elements"),
    (lambda: dp.median(dp.tensor([], dtype="int64")), ValueError,
     r"^median: an empty int64 tensor has no median"),
    (lambda: dp.norm(dp.tensor([1, 2])), TypeError, r"^norm: needs a floating tensor, got int64"),
    (lambda: dp.norm(_x(2, 2), "nuc"), ValueError, r"^norm: p='nuc' .* singular value"),
    (lambda: dp.norm(_x(2, 2, 2)), ValueError, r"^norm: p='fro' takes at most 2 axes"),
    (lambda: dp.norm(_x(2), "max"), ValueError, r"^norm: p must be a number, 'fro' or 'nuc'"),
    (lambda: dp.norm(_x(2), [1]), TypeError, r"^norm: p must be a number"),
    (lambda: dp.unbind(dp.tensor(1.0)), ValueError, r"^unbind: a 0-d tensor has no axis"),
    (lambda: dp.movedim(_x(2, 3), (0, 0), (1, 0)), ValueError, r"^movedim: repeated axis"),
    (lambda: dp.movedim(_x(2, 3), (0, 1), 1), ValueError, r"^movedim: 2 source axes but 1"),
    (lambda: dp.swapaxes(_x(2, 3), 0, 2), ValueError, r"^swapaxes: axis 2 is out of range"),
    (lambda: dp.narrow(_x(2, 5), 1, 3, 3), ValueError, r"^narrow: start \(3\) \+ length \(3\)"),
    (lambda: dp.narrow(_x(2, 5), 1, -6, 1), ValueError, r"^narrow: start must be at least -5"),
    (lambda: dp.cartesian_prod(_x(2, 2)), ValueError, r"^cartesian_prod: tensors\[0\] must be"),
    (lambda: dp.cartesian_prod(_x(2), dp.tensor([1])), TypeError,
     r"^cartesian_prod: the tensors need one dtype, got float32 and int64"),
    (lambda: dp.cartesian_prod(), TypeError, r"^cartesian_prod: needs at least one tensor"),
    (lambda: dp.diff(dp.tensor(1.0)), ValueError, r"^diff: needs at least 1 dimension"),
    (lambda: dp.diff(_x(3), n=-1), ValueError, r"^diff: n must be at least 0"),
    (lambda: dp.diff(_x(3), prepend=1.0), TypeError, r"^diff: prepend must be a Tensor"),
    (lambda: dp.diff(_x(2, 3), append=_x(3, 1)), ValueError,
     r"^diff: append of shape \(3, 1\) must match the tensor's shape \(2, 3\) outside axis 1"),
    (lambda: dp.take_along_dim(_x(2, 3), dp.tensor([0]), dim=1), ValueError,
     r"^take_along_dim: indices need the tensor's 2 dimensions"),
    (lambda: dp.take_along_dim(_x(2, 3), dp.tensor([[0], [1], [0]]), dim=1), ValueError,
     r"^take_along_dim: shapes \(2, 3\) and \(3, 1\) do not broadcast outside axis 1"),
    (lambda: dp.take_along_dim(_x(2, 3), _x(2, 1), dim=1), TypeError,
     r"^take_along_dim: index must be an integer tensor"),
    (lambda: dp.take_along_dim(_x(2, 3), dp.tensor([[3]]), dim=1), IndexError,
     r"^take_along_dim: index 3 is out of range for axis 1 of size 3"),
    (lambda: dp.index_add(_x(3, 2), 0, dp.tensor([[0]]), _x(1, 2)), ValueError,
     r"^index_add: index must be 1-D"),
    (lambda: dp.index_add(_x(3, 2), 0, dp.tensor([0, 1]), _x(3, 2)), ValueError,
     r"^index_add: source of shape \(3, 2\) must have the tensor's shape \(3, 2\) with 2"),
    (lambda: dp.index_add(_x(3, 2), 0, dp.tensor([0]), dp.ones(1, 2, dtype="float64")),
     TypeError, r"^index_add: source must have the tensor's dtype float32, got float64"),
    (lambda: dp.index_add(_x(3, 2), 0, dp.tensor([3]), _x(1, 2)), IndexError,
     r"^index_add: index 3 is out of range for axis 0 of size 3"),
    (lambda: dp.bincount(_x(3)), TypeError, r"^bincount: needs an integer tensor, got float32"),
    (lambda: dp.bincount(dp.tensor([[1]])), ValueError, r"^bincount: needs a 1-D tensor"),
    (lambda: dp.bincount(dp.tensor([1, -1])), ValueError,
     r"^bincount: the entries must be non-negative, got -1"),
    (lambda: dp.bincount(dp.tensor([1, 2]), weights=_x(3)), ValueError,
     r"^bincount: weights of shape \(3,\) must have the tensor's shape \(2,\)"),
    (lambda: dp.searchsorted(_x(3), _x(2), side="left", right=True), ValueError,
     r"^searchsorted: side='left' and right=True contradict each other"),
    (lambda: dp.searchsorted(_x(3), _x(2), side="up"), ValueError,
     r"^searchsorted: side must be one of 'left', 'right'"),
    (lambda: dp.searchsorted(_x(2, 3), _x(3, 1)), ValueError,
     r"^searchsorted: an N-D sorted_sequence of shape \(2, 3\) needs input with its leading"),
    (lambda: dp.searchsorted(dp.tensor(1.0), _x(2)), ValueError,
     r"^searchsorted: sorted_sequence must have at least 1 dimension"),
    (lambda: dp.searchsorted(_x(3), "a"), TypeError,
     r"^searchsorted: input must be a Tensor or a number"),
    (lambda: dp.searchsorted(_x(3), _x(2), sorter=dp.tensor([0, 1])), ValueError,
     r"^searchsorted: sorter of shape \(2,\) must have the sorted_sequence's shape \(3,\)"),
    (lambda: dp.bucketize(_x(2), _x(2, 2)), ValueError, r"^bucketize: boundaries must be 1-D"),
    (lambda: dp.nan_to_num(_x(2), nan="0"), TypeError, r"^nan_to_num: nan must be a number"),
    (lambda: dp.clamp_min(_x(2), None), TypeError, r"^clamp_min: min must be a number"),
    (lambda: dp.erfinv([0.5]), TypeError, r"^erfinv: x must be a Tensor"),
]


@pytest.mark.parametrize(("call", "error", "message"), ERRORS,
                         ids=[message[1:40] for _, _, message in ERRORS])
def test_bad_arguments_raise_before_any_work(call, error, message, backend):
    with pytest.raises(error, match=message):
        call()
