"""The embedding lookup as one node (``dparray.ops.embedding``) against ``take`` and a where for
the padding row: values and the table's gradient in float64 and float32 (repeated, negative and
padding positions, an empty lookup, one row, a 3-D index), gradcheck, on every backend, with the
backend's kernel and with the reference only, and inside DataParallel with 2 and 3 workers."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray import nn, ops
from dparray.nn import functional as F
from dparray.testing import gradcheck


def composed_embedding(indices, weight, padding_idx):
    out = ops.take(weight, indices, axis=0)
    if padding_idx is None:
        return out
    rows = weight.shape[0]
    return ops.where(ops.unsqueeze(indices == padding_idx % rows, -1), out.detach(), out)


INDICES = {"repeated": [[1, 3, 1], [0, 3, 3]], "negative": [-1, 2, -5, 2], "empty": [],
           "one": [4], "three_axes": [[[0, 1], [2, 0]], [[4, 4], [1, 3]]]}


@pytest.mark.parametrize("indices", INDICES.values(), ids=INDICES.keys())
@pytest.mark.parametrize("padding_idx", [None, 3, -2])
@pytest.mark.parametrize(("dtype", "tolerance"), [("float64", 0.0), ("float32", 0.0)])
def test_the_node_is_take_with_a_padding_row(indices, padding_idx, dtype, tolerance, backend,
                                             kernels, rng):
    """Equal bit for bit: both add the same gradients into zeros in the positions' order."""
    weight = to_tensor(rng.standard_normal((5, 3)).astype(dtype), requires_grad=True)
    index = dp.tensor(np.asarray(indices, dtype=np.int64))
    cotangent = to_tensor(rng.standard_normal((*index.shape, 3)).astype(dtype))
    got = F.embedding(index, weight, padding_idx=padding_idx)
    want = composed_embedding(index, weight, padding_idx)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert got.dtype == weight.dtype
    got_grad = (got * cotangent).sum().backward()[weight].numpy()
    want_grad = (want * cotangent).sum().backward()[weight].numpy()
    np.testing.assert_allclose(got_grad, want_grad, rtol=tolerance, atol=tolerance)
    if padding_idx is not None:
        assert not got_grad[padding_idx % 5].any()


def test_gradcheck(backend, kernels, rng):
    weight = to_tensor(rng.standard_normal((6, 2)), requires_grad=True)
    index = dp.tensor([[5, 0, 5], [2, 2, 1]])
    gradcheck(lambda w: F.embedding(index, w), [weight])  # (the padding row: by design none)


def test_an_index_out_of_range_is_an_index_error(backend, kernels):
    with pytest.raises(IndexError, match="embedding: index 7 is out of range for axis 0 of "
                                         "size 4"):
        F.embedding(dp.tensor([0, 7]), dp.zeros(4, 2))


class Lookup(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(11, 4, padding_idx=0, dtype="float64")

    def forward(self, tokens):
        return self.table(tokens)


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("execution", ["threads", "inline"])
def test_under_data_parallel_same_as_unwrapped(workers, execution, kernels, rng):
    dp.manual_seed(0)
    module = Lookup()
    model = dp.DataParallel(module, workers, execution=execution)
    tokens = dp.tensor(rng.integers(0, 11, (7, 5)))
    cotangent = to_tensor(rng.standard_normal((7, 5, 4)))
    want = (module(tokens) * cotangent).sum().backward()[module.table.weight].numpy()
    got = (model(tokens) * cotangent).sum().backward()[module.table.weight].numpy()
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-15)
