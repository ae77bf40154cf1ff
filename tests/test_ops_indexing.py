"""Indexing, gather/scatter, pad, einsum, construction and layout ops: values against NumPy,
gradients against finite differences in float64, float32 kept, on every backend."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dparray as dp


def test_repeated_positions_accumulate_their_gradient(backend):
    x = dp.zeros(3, 2, requires_grad=True)
    grads = x[[2, 0, 2], [1, 1, 1]].sum().backward()
    assert grads[x].tolist() == [[0.0, 1.0], [0.0, 0.0], [0.0, 2.0]]
    grads = dp.gather(x, 0, dp.tensor([[2, 2], [2, 0]])).sum().backward()
    assert grads[x].tolist() == [[0.0, 1.0], [0.0, 0.0], [2.0, 1.0]]


def test_scatter_sends_gradient_only_to_the_write_that_won(backend):
    x = dp.zeros(3, requires_grad=True)
    src = dp.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = dp.scatter(x, 0, dp.tensor([1, 1, 0]), src)
    assert out.tolist() == [3.0, 2.0, 0.0]
    grads = (out * dp.tensor([10.0, 20.0, 30.0])).sum().backward()
    assert grads[src].tolist() == [0.0, 20.0, 10.0]
    assert grads[x].tolist() == [0.0, 0.0, 30.0]


def test_masked_fill_gradient_is_zero_where_filled(backend):
    x = dp.tensor([[1.0, 2.0], [3.0, 4.0]], dtype="float64", requires_grad=True)
    mask = dp.tensor([True, False])
    out = x.masked_fill(mask, float("-inf"))
    assert out.tolist() == [[-math.inf, 2.0], [-math.inf, 4.0]]
    grads = (out.exp() * 3.0).sum().backward()
    np.testing.assert_allclose(grads[x].numpy(), [[0.0, 3.0 * math.exp(2.0)],
                                                  [0.0, 3.0 * math.exp(4.0)]], rtol=1e-14)


def test_integer_tensors_index_gather_and_scatter(backend):
    x = dp.tensor([[1, 2, 3], [4, 5, 6]], dtype="int32")
    assert x[[1, 0], [2, 2]].tolist() == [6, 3]
    assert x[x > 2].tolist() == [3, 4, 5, 6]
    assert x[dp.tensor([1], dtype="uint8")].tolist() == [[4, 5, 6]]
    assert dp.gather(x, 1, dp.tensor([[0], [2]])).tolist() == [[1], [6]]
    assert dp.scatter(x, 1, dp.tensor([[0], [2]]), value=-1).tolist() == [[-1, 2, 3],
                                                                         [4, 5, -1]]
    added = dp.scatter_add(x, 0, dp.tensor([[1, 1, 1]]), dp.ones(1, 3, dtype="int32"))
    assert added.dtype == dp.int32 and added.tolist() == [[1, 2, 3], [5, 6, 7]]
    assert dp.masked_fill(x, x > 4, 0).tolist() == [[1, 2, 3], [4, 0, 0]]
    assert dp.pad(x, (1, 0), value=9).tolist() == [[9, 1, 2, 3], [9, 4, 5, 6]]
    assert dp.einsum("ij->j", x).tolist() == [5, 7, 9]


@pytest.mark.parametrize(("n_rows", "n_cols", "k"), [(3, None, 0), (2, 4, 1), (4, 2, -1),
                                                     (3, 3, 5), (0, 2, 0)])
def test_eye_matches_numpy(backend, n_rows, n_cols, k):
    out = dp.eye(n_rows, n_cols, k=k)
    assert out.dtype == dp.float32 and out.backend is backend
    np.testing.assert_array_equal(out.numpy(), np.eye(n_rows, n_cols, k=k))
    assert dp.eye(2, dtype="int64").tolist() == [[1, 0], [0, 1]]
    assert dp.eye(2, requires_grad=True).is_variable


@pytest.mark.parametrize(("start", "stop", "num", "endpoint"),
                         [(0.0, 1.0, 5, True), (-2.0, 3.0, 4, False), (1.0, 1.0, 1, True),
                          (0.0, 1.0, 0, True), (5, -5, 11, True)])
def test_linspace_matches_numpy(backend, start, stop, num, endpoint):
    out = dp.linspace(start, stop, num, endpoint=endpoint, dtype="float64")
    assert out.shape == (num,)
    np.testing.assert_allclose(out.numpy(), np.linspace(start, stop, num, endpoint=endpoint),
                               rtol=1e-15, atol=1e-15)
    assert dp.linspace(start, stop, num).dtype == dp.float32


def test_one_hot_matches_numpy(backend):
    classes = np.array([[0, 3], [2, 2]])
    out = dp.one_hot(dp.tensor(classes))
    assert out.dtype == dp.int64 and out.shape == (2, 2, 4)
    np.testing.assert_array_equal(out.numpy(), np.eye(4, dtype=np.int64)[classes])
    wide = dp.one_hot(dp.tensor(classes, dtype="uint8"), num_classes=6)
    np.testing.assert_array_equal(wide.numpy(), np.eye(6, dtype=np.int64)[classes])
    assert dp.one_hot(dp.tensor([], dtype="int64"), num_classes=3).shape == (0, 3)


def test_meshgrid_keeps_each_dtype_and_gives_a_tuple(backend):
    xs, ys = dp.meshgrid(dp.tensor([1, 2, 3]), dp.tensor([0.5, 1.5]), indexing="ij")
    assert xs.dtype == dp.int64 and ys.dtype == dp.float32
    assert xs.shape == ys.shape == (3, 2)
    assert dp.meshgrid() == ()


def test_size_dim_numel_view_clone(backend):
    x = dp.ones(2, 3, 4, requires_grad=True)
    assert x.size() == (2, 3, 4) and x.size(1) == 3 and x.size(-1) == 4
    assert x.dim() == 3 and x.numel() == 24
    assert x.view(6, 4).shape == (6, 4) and x.view((4, -1)).shape == (4, 6)
    copy = x.clone()
    assert copy is not x and copy.grad_fn is not None and copy.tolist() == x.tolist()
    assert copy.sum().backward()[x].tolist() == np.ones((2, 3, 4)).tolist()


def test_take_and_index_select_along_an_axis(backend):
    x = dp.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert dp.take(x, dp.tensor(1), axis=1).tolist() == [2.0, 5.0]
    assert dp.index_select(x, 1, dp.tensor(1)).tolist() == [[2.0], [5.0]]
    assert dp.index_select(x, 0, []).shape == (0, 3)
    assert x[[]].shape == (0, 3)
    w = dp.ones(2, 3, requires_grad=True)
    assert (w[[]] * 2.0).sum().backward()[w].tolist() == [[0.0] * 3] * 2


def test_pad_without_widths_is_the_tensor_itself(backend):
    x = dp.ones(2, 2)
    assert dp.pad(x, ()) is x and dp.pad(x, (0, 0, 0, 0)) is x


def test_constant_pad_is_one_graph_node(backend):
    x = dp.ones(2, 3, requires_grad=True)
    assert type(dp.pad(x, (1, 1, -1, 2)).grad_fn).__name__ == "ConstantPad"
