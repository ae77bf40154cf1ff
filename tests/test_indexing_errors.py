"""Bad input to the indexing, gather/scatter, pad, einsum, construction and layout ops: a clear
error of a built-in type (TypeError for a wrong type, ValueError for a wrong value, IndexError
for a position out of range), raised before any work."""

from __future__ import annotations

import array_api_strict
import numpy as np
import pytest

import dparray as dp


@pytest.fixture
def x(backend):
    return dp.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])


def test_getitem_positions_out_of_range_are_index_errors(x):
    with pytest.raises(IndexError, match="index 2 is out of range for axis 0 of size 2"):
        x[[0, 2]]
    with pytest.raises(IndexError, match="index -4 is out of range for axis 1 of size 3"):
        x[[0, 1], [0, -4]]
    with pytest.raises(IndexError, match="index 3 is out of range for axis 1 of size 3"):
        x[:, 3]
    with pytest.raises(IndexError, match="index 5 is out of range for axis 1 of size 3"):
        x[1, None, [5]]
    with pytest.raises(IndexError, match="index 2 is out of range for axis 0 of size 2"):
        x[dp.tensor(2)]


def test_getitem_bad_keys(x):
    with pytest.raises(IndexError, match="too many indices for a tensor of 2 dimensions: 3"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="only one ellipsis"):
        x[..., 0, ...]
    with pytest.raises(IndexError, match=r"shapes \(2,\), \(3,\) cannot be broadcast"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match=r"mask of shape \(3,\) does not match the shape \(2,\)"):
        x[dp.tensor([True, False, True])]
    with pytest.raises(IndexError, match="0-d bool tensor"):
        x[dp.tensor(True)]
    with pytest.raises(TypeError, match="cannot index with float"):
        x[0.5]
    with pytest.raises(TypeError, match="cannot index with a bool"):
        x[True]
    with pytest.raises(TypeError, match="cannot index with a float32 tensor"):
        x[dp.tensor([0.0, 1.0])]
    with pytest.raises(TypeError, match="cannot index with a float32 tensor"):
        x[[0.0, 1.0]]
    with pytest.raises(TypeError, match="cannot index with str"):
        x["a"]


def test_index_from_another_backend_names_both(backend):
    other = "numpy" if backend.name != "numpy" else "array_api_strict"
    x = dp.ones(3, 2)
    with pytest.raises(ValueError, match=f"backend {backend.name!r} with one of {other!r}"):
        x[dp.tensor([0, 1], backend=other)]


def test_a_bool_mask_where_the_backend_refuses_data_dependent_shapes():
    x = dp.ones(2, 3, backend="array_api_strict")
    with array_api_strict.ArrayAPIStrictFlags(data_dependent_shapes=False), pytest.raises(
            RuntimeError, match=r"shape that depends on the data.*use dparray\.where"):
        x[x > 0]


def test_gather_errors(x):
    with pytest.raises(TypeError, match="gather: index must be an integer tensor, got float32"):
        dp.gather(x, 0, dp.tensor([[0.0]]))
    with pytest.raises(TypeError, match="gather: index must be an integer tensor or a list"):
        dp.gather(x, 0, np.zeros((1, 1), dtype=np.int64))
    with pytest.raises(TypeError, match=r"gather: axis must be an int, got 0\.0"):
        dp.gather(x, 0.0, dp.tensor([[0]]))
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        dp.gather(x, 2, dp.tensor([[0]]))
    with pytest.raises(ValueError, match=r"index of shape \(2,\) must have the tensor's 2 dim"):
        dp.gather(x, 0, dp.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"no larger than its shape \(2, 3\) outside axis 0"):
        dp.gather(x, 0, dp.tensor([[0, 0, 0, 0]]))
    with pytest.raises(IndexError, match="gather: index 3 is out of range for axis 1 of size 3"):
        x.gather(1, dp.tensor([[3]]))


def test_scatter_errors(x):
    index = dp.tensor([[0, 1, 0]])
    with pytest.raises(TypeError, match="exactly one of src and value"):
        dp.scatter(x, 0, index)
    with pytest.raises(TypeError, match="exactly one of src and value"):
        dp.scatter(x, 0, index, dp.ones(1, 3), value=1.0)
    with pytest.raises(TypeError, match="src must have the tensor's dtype float32, got float64"):
        dp.scatter(x, 0, index, dp.ones(1, 3, dtype="float64"))
    with pytest.raises(ValueError, match=r"src of shape \(1, 2\) must be at least as large"):
        dp.scatter(x, 0, index, dp.ones(1, 2))
    with pytest.raises(TypeError, match="scatter: src must be a number, got 'a'"):
        dp.scatter(x, 0, index, "a")
    with pytest.raises(TypeError, match=r"scatter: value must be an int, got 1\.5"):
        dp.scatter(dp.zeros(2, 3, dtype="int64"), 0, index, value=1.5)
    with pytest.raises(IndexError, match="scatter: index -3 is out of range for axis 0"):
        dp.scatter(x, 0, dp.tensor([[-3]]), value=1.0)
    with pytest.raises(TypeError, match=r"scatter_add: src must be a Tensor, got 1\.0"):
        dp.scatter_add(x, 0, index, 1.0)
    with pytest.raises(ValueError, match=r"scatter_add: src needs .* numeric dtype"):
        dp.scatter_add(x > 0, 0, index, dp.ones(1, 3) > 0)


def test_index_select_and_take_errors(x):
    with pytest.raises(ValueError, match=r"index_select: index must be 1-D, got shape \(1, 1\)"):
        dp.index_select(x, 0, dp.tensor([[0]]))
    with pytest.raises(TypeError, match="take: index must be an integer tensor or a list"):
        dp.take(x, 0.5)
    with pytest.raises(TypeError, match="take: x must be a Tensor"):
        dp.take([1.0], [0])


def test_masked_fill_errors(x):
    with pytest.raises(TypeError, match="masked_fill: mask must be a bool tensor, got int64"):
        dp.masked_fill(x, dp.tensor([1, 0, 1]), 0.0)
    with pytest.raises(TypeError, match="masked_fill: mask must be a Tensor"):
        dp.masked_fill(x, [True, False, True], 0.0)
    with pytest.raises(ValueError, match=r"mask of shape \(2, 2, 3\) does not broadcast to the"):
        dp.masked_fill(x, dp.ones(2, 2, 3) > 0, 0.0)
    with pytest.raises(ValueError, match=r"mask of shape \(2,\) does not broadcast"):
        dp.masked_fill(x, dp.tensor([True, False]), 0.0)
    with pytest.raises(ValueError, match=r"a tensor value must be 0-d, got shape \(1,\)"):
        dp.masked_fill(x, x > 2, dp.ones(1))
    with pytest.raises(TypeError, match="value of dtype int64 does not fit a tensor of float32"):
        dp.masked_fill(x, x > 2, dp.tensor(1))
    with pytest.raises(TypeError, match="masked_fill: value must be a number, got 'a'"):
        dp.masked_fill(x, x > 2, "a")
    with pytest.raises(TypeError, match="masked_fill: value must be a bool, got 1"):
        dp.masked_fill(x > 2, x > 3, 1)


def test_einsum_errors(x):
    with pytest.raises(TypeError, match="subscripts must be a str, got 3"):
        dp.einsum(3, x)
    with pytest.raises(TypeError, match=r"einsum: operands\[1\] must be a Tensor"):
        dp.einsum("ij,jk", x, [[1.0]])
    with pytest.raises(ValueError, match="needs at least one operand"):
        dp.einsum("ij")
    with pytest.raises(ValueError, match="name 2 operands, got 1"):
        dp.einsum("ij,jk->ik", x)
    with pytest.raises(ValueError, match="has '1'; indices are letters"):
        dp.einsum("i1", x)
    with pytest.raises(ValueError, match="operand 0 has 2 dimensions but 'ijk' names 3"):
        dp.einsum("ijk", x)
    with pytest.raises(ValueError, match="fewer than the 3 indices"):
        dp.einsum("...ijk", x)
    with pytest.raises(ValueError, match=r"more than one '\.\.\.'"):
        dp.einsum("...i...", x)
    with pytest.raises(ValueError, match="index 'j' of 'ij,jk' has size 3 in one operand and 2"):
        dp.einsum("ij,jk", x, x)
    with pytest.raises(ValueError, match="repeated in operand 0 over axes of sizes 2 and 3"):
        dp.einsum("ii", x)
    with pytest.raises(ValueError, match="output index 'k' of 'ij->k' is in no operand"):
        dp.einsum("ij->k", x)
    with pytest.raises(ValueError, match="output index 'i' of 'ij->ii' is repeated"):
        dp.einsum("ij->ii", x)


def test_pad_errors(x):
    with pytest.raises(TypeError, match="pad: pad must be a tuple of ints, got 1"):
        dp.pad(x, 1)
    with pytest.raises(TypeError, match=r"pad: each entry of pad must be an int, got 1\.0"):
        dp.pad(x, (1.0, 1))
    with pytest.raises(ValueError, match=r"needs \(before, after\) pairs, got 3 entries"):
        dp.pad(x, (1, 1, 1))
    with pytest.raises(ValueError, match="3 pairs of widths for a tensor of 2 dimensions"):
        dp.pad(x, (1, 1, 1, 1, 1, 1))
    with pytest.raises(ValueError, match="mode must be one of 'constant', 'reflect', "):
        dp.pad(x, (1, 1), mode="wrap")
    with pytest.raises(ValueError, match="crop more than the 3 entries of axis 1"):
        dp.pad(x, (-2, -2))
    with pytest.raises(ValueError, match="reflect widths must be less than the axis's length"):
        dp.pad(x, (3, 0), mode="reflect")
    with pytest.raises(ValueError, match="circular widths must be at most the axis's length"):
        dp.pad(x, (-1, 3), mode="circular")
    with pytest.raises(ValueError, match="replicate needs at least one entry"):
        dp.pad(dp.ones(2, 0), (1, 0), mode="replicate")
    with pytest.raises(ValueError, match=r"mode 'reflect' takes no value, got 1\.0"):
        dp.pad(x, (1, 1), mode="reflect", value=1.0)
    with pytest.raises(TypeError, match=r"pad: value must be an int, got 0\.5"):
        dp.pad(dp.ones(2, dtype="int64"), (1, 1), value=0.5)
    with pytest.raises(TypeError, match="pad: x must be a Tensor"):
        dp.pad(np.ones(2), (1, 1))


def test_construction_errors(backend, x):
    with pytest.raises(ValueError, match=r"tril: needs at least 2 dimensions, got shape \(3,\)"):
        dp.tril(dp.ones(3))
    with pytest.raises(TypeError, match=r"triu: k must be an int, got 1\.0"):
        dp.triu(x, 1.0)
    with pytest.raises(ValueError, match="axis1 and axis2 must differ, both are 1"):
        dp.diagonal(x, 0, 1, -1)
    with pytest.raises(ValueError, match="diagonal: needs at least 2 dimensions"):
        dp.diagonal(dp.ones(3))
    with pytest.raises(ValueError, match=r"diag: needs a 1-D or 2-D tensor, got shape \(1, 1, 1\)"):
        dp.diag(dp.ones(1, 1, 1))
    with pytest.raises(TypeError, match="one_hot: index must be an integer tensor, got float32"):
        dp.one_hot(x)
    with pytest.raises(ValueError, match="one_hot: classes must be non-negative, got -1"):
        dp.one_hot(dp.tensor([0, -1]))
    with pytest.raises(ValueError, match="class 3 is not below num_classes=3"):
        dp.one_hot(dp.tensor([0, 3]), num_classes=3)
    with pytest.raises(ValueError, match="num_classes must be at least -1, got -2"):
        dp.one_hot(dp.tensor([0]), num_classes=-2)
    with pytest.raises(ValueError, match="an empty index has no classes to count"):
        dp.one_hot(dp.tensor([], dtype="int64"))
    with pytest.raises(ValueError, match=r"meshgrid: tensors\[1\] must be 1-D, got shape"):
        dp.meshgrid(dp.ones(2), x)
    with pytest.raises(ValueError, match="indexing must be one of 'xy', 'ij', got 'xx'"):
        dp.meshgrid(dp.ones(2), indexing="xx")
    with pytest.raises(TypeError, match=r"meshgrid: tensors\[0\] must be a Tensor"):
        dp.meshgrid([1.0, 2.0], dp.ones(2))


def test_factory_errors(backend):
    with pytest.raises(ValueError, match="eye: n_rows must be at least 0, got -1"):
        dp.eye(-1)
    with pytest.raises(TypeError, match=r"eye: n_cols must be an int, got 2\.0"):
        dp.eye(2, 2.0)
    with pytest.raises(TypeError, match="eye: k must be an int"):
        dp.eye(2, k=None)
    with pytest.raises(ValueError, match="linspace: num must be at least 0, got -1"):
        dp.linspace(0.0, 1.0, -1)
    with pytest.raises(ValueError, match="linspace: start must be a finite number, got nan"):
        dp.linspace(float("nan"), 1.0, 3)
    with pytest.raises(TypeError, match="linspace: endpoint must be a bool, got 1"):
        dp.linspace(0.0, 1.0, 3, endpoint=1)
    with pytest.raises(TypeError, match="linspace: dtype must be a number dtype, got 'bool'"):
        dp.linspace(0.0, 1.0, 3, dtype="bool")
    with pytest.raises(ValueError, match=r"linspace: values from -1\.0 to 300\.0 do not fit uint8"):
        dp.linspace(-1, 300, 3, dtype="uint8")


def test_layout_errors(backend, x):
    with pytest.raises(ValueError, match="roll: 2 shifts for 1 axes"):
        dp.roll(x, (1, 2), axis=0)
    with pytest.raises(TypeError, match=r"roll: shift must be an int, got 0\.5"):
        dp.roll(x, 0.5)
    with pytest.raises(ValueError, match="roll: 2 shifts without axes"):
        dp.roll(x, (1, 1))
    with pytest.raises(TypeError, match=r"^roll\(\) got both shift= and its alias shifts="):
        dp.roll(x, 1, shifts=1)
    with pytest.raises(ValueError, match="flip: repeated axis"):
        dp.flip(x, (0, -2))
    with pytest.raises(ValueError, match="tile: each repetition must be at least 0, got -1"):
        dp.tile(x, (2, -1))
    with pytest.raises(ValueError, match="repeat: 1 sizes for a tensor of 2 dimensions"):
        x.repeat(2)
    with pytest.raises(ValueError, match="repeat_interleave: 2 repeats for an axis of 3"):
        dp.repeat_interleave(x, [1, 2], axis=1)
    with pytest.raises(ValueError, match="each of repeats must be at least 0, got -1"):
        dp.repeat_interleave(x, [1, -1], axis=0)
    with pytest.raises(TypeError, match="a repeats tensor must hold integers"):
        dp.repeat_interleave(x, dp.tensor([1.0, 2.0]), axis=0)
    with pytest.raises(ValueError, match="size: axis 2 is out of range"):
        x.size(2)
    with pytest.raises(TypeError, match="clone: x must be a Tensor"):
        dp.clone(np.ones(2))
