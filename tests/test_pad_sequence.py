"""``nn.utils.rnn.pad_sequence`` against padding written here in NumPy, its gradients against
finite differences in float64, its refusals; and ``dparray.utils.data``, ``torch.utils.data``'s
name for ``dparray.data``."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray.nn.utils.rnn import pad_sequence
from dparray.testing import gradcheck


def padded(arrays, batch_first, value, side):
    longest = max(a.shape[0] for a in arrays)
    out = np.full((len(arrays), longest, *arrays[0].shape[1:]), value, arrays[0].dtype)
    for i, a in enumerate(arrays):
        if side == "right":
            out[i, : a.shape[0]] = a
        else:
            out[i, longest - a.shape[0]:] = a
    return out if batch_first else np.swapaxes(out, 0, 1)


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths, trailing", [([3, 1, 4], (2,)), ([2, 0, 5], ()),
                                               ([1, 1], (3, 2))])
def test_the_sequences_padded_and_stacked(backend, lengths, trailing, batch_first, side, rng):
    arrays = [rng.standard_normal((n, *trailing)) for n in lengths]
    got = pad_sequence([to_tensor(a) for a in arrays], batch_first=batch_first,
                       padding_value=-2.5, padding_side=side)
    np.testing.assert_array_equal(got.numpy(), padded(arrays, batch_first, -2.5, side))


def test_integer_sequences_take_the_default_padding_as_an_int(backend):
    got = pad_sequence((dp.tensor([1, 2, 3]), dp.tensor([4])), batch_first=True)
    assert got.dtype is dp.int64 and got.tolist() == [[1, 2, 3], [4, 0, 0]]


def test_a_tensor_is_the_sequence_of_its_rows(backend, rng):
    x = rng.standard_normal((3, 4, 2))
    np.testing.assert_array_equal(pad_sequence(to_tensor(x)).numpy(), np.swapaxes(x, 0, 1))


@pytest.mark.parametrize("side", ["right", "left"])
def test_gradients_against_finite_differences(side, rng):
    inputs = [to_tensor(rng.standard_normal((n, 2)), requires_grad=True) for n in (3, 1, 2)]
    gradcheck(lambda *s: pad_sequence(list(s), padding_side=side, padding_value=1.0) ** 2,
              inputs)


@pytest.mark.parametrize("sequences, error, message", [
    ([], ValueError, r"pad_sequence: sequences must not be empty"),
    (dp.ones(3), TypeError, r"pad_sequence: sequences must be a list or tuple of tensors \(or "
                            r"a tensor of at least 2 dimensions\), got"),
    ([dp.ones(2), [1.0]], TypeError, r"pad_sequence: sequences\[1\] must be a Tensor"),
    ([dp.ones((2, 3)), dp.ones((2, 4))], ValueError,
     r"pad_sequence: every sequence must have the first one's trailing shape \(3,\), got shape "
     r"\(2, 4\) at index 1"),
    ([dp.ones(2), dp.ones(2, dtype=dp.float64)], TypeError,
     r"pad_sequence: every sequence must be float32 like the first, got float64 at index 1"),
    ([dp.tensor(1.0)], ValueError, r"pad_sequence: sequences\[0\] is 0-D"),
])
def test_bad_sequences_are_refused(sequences, error, message):
    with pytest.raises(error, match=message):
        pad_sequence(sequences)


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="padding_side"):
        pad_sequence([dp.ones(2)], padding_side="middle")
    with pytest.raises(TypeError, match=r"padding_value 0\.5 does not fit int64 sequences"):
        pad_sequence([dp.tensor([1, 2])], padding_value=0.5)
    with pytest.raises(TypeError, match="batch_first"):
        pad_sequence([dp.ones(2)], batch_first="yes")


def test_utils_data_is_dparray_data_under_pytorchs_name():
    from dparray.utils.data import DataLoader, TensorDataset

    assert DataLoader is dp.data.DataLoader and TensorDataset is dp.data.TensorDataset
    assert set(dp.utils.data.__all__) == set(dp.data.__all__)
    assert all(getattr(dp.utils.data, name) is getattr(dp.data, name)
               for name in dp.data.__all__)
    assert dp.nn.utils.rnn.pad_sequence is pad_sequence
