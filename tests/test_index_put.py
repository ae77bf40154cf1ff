"""Item assignment, ``x[key] = v``: a new value of ``x``, recorded as an index-put.

The values and gradients of each kind of key against PyTorch are in ``test_porting.py``; here
the rules around it: copy-on-write (no views), leaves, ``no_grad``, dtypes, errors, keys
PyTorch does not take (negative steps), and gradients by finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import dparray as dp
from dparray.testing import gradcheck


def test_assignment_rebinds_the_tensor_and_leaves_what_came_before(backend):
    x = dp.zeros(2, 3)
    shared, doubled = x.detach(), x * 2
    x[0, 1] = 5.0
    assert x.tolist() == [[0.0, 5.0, 0.0], [0.0, 0.0, 0.0]]
    assert shared.tolist() == [[0.0] * 3] * 2 and doubled.tolist() == [[0.0] * 3] * 2


def test_the_habits_of_a_training_loop(backend):
    losses = dp.zeros(4)
    for k in range(4):
        losses[k] = dp.tensor(k * 0.5).item()  # losses[k] = loss.item()
    assert losses.tolist() == [0.0, 0.5, 1.0, 1.5]
    position = dp.arange(0, 6, dtype=dp.float64).unsqueeze(1)
    div_term = dp.exp(dp.arange(0, 4, 2, dtype=dp.float64) * (-np.log(10000.0) / 4))
    pe = dp.zeros(6, 4, dtype=dp.float64)
    pe[:, 0::2] = dp.sin(position * div_term)  # the Transformer's positional encoding
    pe[:, 1::2] = dp.cos(position * div_term)
    angles = np.arange(6)[:, None] * np.exp(np.arange(0, 4, 2) * (-np.log(10000.0) / 4))
    expected = np.zeros((6, 4))
    expected[:, 0::2], expected[:, 1::2] = np.sin(angles), np.cos(angles)
    np.testing.assert_allclose(pe.numpy(), expected, rtol=1e-14)


def test_a_trainable_leaf_is_assigned_into_only_under_no_grad(backend):
    w = dp.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^a leaf tensor that requires grad cannot be "
                                           r"assigned into: .*no_grad.*x\.clone\(\)"):
        w[0] = 2.0
    assert w.tolist() == [1.0, 1.0, 1.0]
    with dp.no_grad():
        w[0] = 2.0  # an initialisation: the same variable, new values
    assert w.tolist() == [2.0, 1.0, 1.0] and w.is_variable and w.grad_fn is None
    assert (w * w).sum().backward()[w].tolist() == [4.0, 2.0, 2.0]


def test_under_no_grad_a_computed_tensor_keeps_its_place_in_the_graph(backend):
    w = dp.tensor([1.0, 2.0], requires_grad=True)
    y = w * 3
    with dp.no_grad():
        y[0] = 10.0
    assert y.tolist() == [10.0, 6.0] and y.grad_fn is not None
    assert y.sum().backward()[w].tolist() == [3.0, 3.0]  # as the multiplication made it


def test_a_computed_tensor_assigned_into_passes_gradients_to_both(backend):
    w = dp.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = dp.tensor(5.0, requires_grad=True)
    y = w * 2
    y[1] = v
    grads = (y * dp.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert grads[w].tolist() == [2.0, 0.0, 200.0] and grads[v].item() == 10.0


@pytest.mark.parametrize("key", [
    (slice(None, None, -2),), (slice(3, 0, -1), 1), (Ellipsis, slice(None, None, -1)),
])
def test_keys_pytorch_does_not_take_follow_numpy(key, backend):
    base = np.arange(20.0).reshape(5, 4)
    expected = base.copy()
    values = -np.ones_like(expected[key])
    expected[key] = values
    x = dp.tensor(base)
    x[key] = dp.tensor(values)
    np.testing.assert_array_equal(x.numpy(), expected)


@pytest.mark.parametrize("key", [
    (1, slice(None)), (slice(None, None, 2), slice(1, 3)), (Ellipsis, 0), (None, 2),
    ([0, 2],), (slice(None), [3, 0]), ([1, 0], [2, 3]),
])
def test_gradients_of_both_operands_by_finite_differences(key, backend):
    x = dp.tensor(np.linspace(-1.0, 1.0, 20).reshape(5, 4), requires_grad=True)
    shape = np.zeros((5, 4))[key].shape
    v = dp.tensor(np.linspace(0.5, 2.0, max(1, int(np.prod(shape)))).reshape(shape),
                  requires_grad=True)

    def assigned(x, v):
        y = x * 1.0
        y[key] = v * v
        return y

    gradcheck(assigned, [x, v])


def test_the_last_write_wins_where_a_key_repeats_a_position(backend):
    x = dp.zeros(3)
    x[dp.tensor([0, 2, 0])] = dp.tensor([1.0, 2.0, 3.0])
    assert x.tolist() == [3.0, 0.0, 2.0]
    added = dp.index_put(dp.zeros(3), (dp.tensor([0, 2, 0]),), dp.tensor([1.0, 2.0, 3.0]),
                         accumulate=True)
    assert added.tolist() == [4.0, 0.0, 2.0]


def test_a_mask_with_one_value_is_a_where(backend):
    x = dp.tensor([[1.0, -2.0], [-3.0, 4.0]], requires_grad=True)
    y = x * 1.0
    y[y < 0] = 0.0
    assert y.tolist() == [[1.0, 0.0], [0.0, 4.0]]
    assert type(y.grad_fn).__name__ == "Where"
    assert y.sum().backward()[x].tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_values_take_the_tensors_dtype(backend):
    x = dp.zeros(3, dtype=dp.float64)
    x[0] = dp.tensor(1.5, dtype=dp.float32)
    x[1:] = dp.tensor([2, 3])
    assert x.dtype == dp.float64 and x.tolist() == [1.5, 2.0, 3.0]
    counts = dp.zeros(3, dtype=dp.int64)
    counts[1] = 7
    counts[2] = dp.tensor(2.9)  # a tensor is cast, as PyTorch's copy_ does
    assert counts.tolist() == [0, 7, 2] and counts.dtype == dp.int64


@pytest.mark.parametrize(("make", "value", "error", "message"), [
    (lambda: dp.zeros(3, dtype=dp.int64), 1.5, TypeError,
     r"^index_put_: value must be an int, got 1.5"),
    (lambda: dp.zeros(3, dtype=dp.bool), 1, TypeError, r"^index_put_: value must be a bool"),
    (lambda: dp.zeros(3), lambda: dp.ones(2), ValueError,
     r"^index_put_: values of shape \(2,\) cannot be broadcast to the selection's shape "
     r"\(3,\)"),
    (lambda: dp.zeros(3), "a", TypeError, r"cannot convert|must be numbers"),
])
def test_values_that_do_not_fit_are_refused_before_anything_changes(make, value, error,
                                                                       message, backend):
    x = make()
    before = x.tolist()
    with pytest.raises(error, match=message):
        x[:] = value() if callable(value) else value
    assert x.tolist() == before


def test_keys_are_checked_as_indexing_checks_them(backend):
    x = dp.zeros(2, 3)
    with pytest.raises(IndexError, match="index 5 is out of range for axis 1 of size 3"):
        x[0, 5] = 1.0
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0] = 1.0
    assert x.tolist() == [[0.0] * 3] * 2


def test_values_from_another_backend_are_refused(backend):
    other = "array_api_strict" if backend.name != "array_api_strict" else "numpy"
    with pytest.raises(ValueError, match=r"^index_put_: the values are on backend "):
        dp.zeros(2)[0] = dp.ones(1, backend=other)


def test_index_put_takes_pytorchs_arguments(backend):
    x = dp.zeros(2, 2)
    out = x.index_put((dp.tensor([0, 1]), dp.tensor([1, 0])), dp.tensor([3.0, 4.0]))
    assert out.tolist() == [[0.0, 3.0], [4.0, 0.0]] and x.tolist() == [[0.0, 0.0]] * 2
    assert x.index_put_((dp.tensor([1]),), dp.tensor(9.0)) is x
    assert x.tolist() == [[0.0, 0.0], [9.0, 9.0]]
    with pytest.raises(TypeError, match="accumulate must be a bool"):
        dp.index_put(x, (0,), 1.0, accumulate=1)
