"""Cross-entropy's NumPy kernel (the shifted scores' exponentials and row sums kept from
forward, the closed-form gradient from them in one compiled pass) against the reference, to
rounding (the row sums are added in another order; the probabilities are ``e / total``, not
``exp(log_probs)``; the gradient's target entry is rounded once more). Reductions, class
weights, ignored rows, float32 and float64, one row, no row, one class, a large vocabulary, a
non-contiguous input, a graph run backward twice."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray import kernels
from dparray.nn import functional as F

CASES = {"plain": {}, "weighted": {"weight": True}, "ignored": {"ignore_index": 2},
         "smoothed": {"label_smoothing": 0.1},
         "weighted_ignored_smoothed": {"weight": True, "ignore_index": 0,
                                       "label_smoothing": 0.2}}
RTOL = {"float64": 1e-12, "float32": 2e-5}


def _loss_and_gradient(logits, target, options, reduction, transposed=False):
    x = to_tensor(logits, requires_grad=True)
    scores = x.T if transposed else x
    loss = F.cross_entropy(scores, dp.tensor(target), weight=options.get("weight"),
                           reduction=reduction, ignore_index=options.get("ignore_index", -100),
                           label_smoothing=options.get("label_smoothing", 0.0))
    cotangent = dp.ones(loss.shape, dtype=loss.dtype)
    return loss.numpy(), (loss * cotangent).sum().backward()[x].numpy()


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(6, 4), (1, 3), (5, 1), (0, 5), (7, 1000)],
                         ids=["rows", "one_row", "one_class", "no_row", "vocabulary"])
def test_the_kernel_agrees_with_the_reference(case, reduction, dtype, shape, rng):
    rows, classes = shape
    logits = (rng.standard_normal(shape) * 4).astype(dtype)
    target = rng.integers(0, classes, rows)
    options = dict(case)
    if options.get("weight"):
        options["weight"] = to_tensor(rng.uniform(0.5, 2.0, classes).astype(dtype))
    got = _loss_and_gradient(logits, target, options, reduction)
    with kernels.reference_only():
        want = _loss_and_gradient(logits, target, options, reduction)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
    for g, w in zip(got, want, strict=True):  # a loss near 0 is a difference of near-equals
        scale = np.abs(w).max(initial=0.0)
        np.testing.assert_allclose(g, w, rtol=RTOL[dtype], atol=RTOL[dtype] * scale)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_non_contiguous_input_gives_the_references_result(dtype, rng):
    logits = rng.standard_normal((9, 5)).astype(dtype)  # used as its (5, 9) transpose
    target = rng.integers(0, 9, 5)
    got = _loss_and_gradient(logits, target, {}, "mean", transposed=True)
    with kernels.reference_only():
        want = _loss_and_gradient(logits, target, {}, "mean", transposed=True)
    np.testing.assert_allclose(got[0], want[0], rtol=RTOL[dtype], atol=0.0)
    np.testing.assert_allclose(got[1], want[1], rtol=RTOL[dtype], atol=RTOL[dtype])


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_a_retained_graph_gives_the_same_gradient_twice(smoothing, rng):
    """Backward must not consume what forward kept: retain_graph runs it again."""
    x = to_tensor(rng.standard_normal((5, 7)).astype(np.float32), requires_grad=True)
    loss = F.cross_entropy(x, dp.tensor(rng.integers(0, 7, 5)), label_smoothing=smoothing)
    first = loss.backward(retain_graph=True)[x].numpy().copy()  # (not a view of its array)
    np.testing.assert_array_equal(loss.backward()[x].numpy(), first)
