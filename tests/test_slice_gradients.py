"""Slices of one tensor add their gradients into one buffer (``autograd.SliceGradient``):
values against dense formulas written here, on every backend, and the buffer count."""

from __future__ import annotations

import numpy as np
from conftest import to_tensor

import dparray as dp
from dparray import autograd


def test_many_slices_of_one_tensor_add_up(backend):
    data = np.arange(12.0).reshape(4, 3) / 7.0
    x = to_tensor(data, requires_grad=True)
    loss = (x[0, 1] * 3.0 + x[1:3].sum() * 2.0 + (x[:, None, 2] * x[:, None, 2]).sum()
            + x[1].sum() + x[::2, ::2].sum())
    expected = np.zeros((4, 3))
    expected[0, 1] += 3.0
    expected[1:3] += 2.0
    expected[:, 2] += 2.0 * data[:, 2]
    expected[1] += 1.0
    expected[::2, ::2] += 1.0  # overlaps the others: sums, not overwrites
    np.testing.assert_allclose(loss.backward()[x].numpy(), expected, rtol=1e-15)


def test_a_slice_gradient_added_to_a_shared_gradient_leaves_the_sharer_alone(backend):
    """Add's backward hands one array to both inputs; a slice gradient reaching ``x`` after
    it must not write into the array that ``w`` was given."""
    x = to_tensor(np.ones((2, 3)), requires_grad=True)
    w = to_tensor(np.ones((2, 3)), requires_grad=True)
    loss = x[0, 1] * 5.0 + (x + w).sum()  # (x + w) is backpropagated first: made last
    grads = loss.backward()
    assert grads[w].tolist() == [[1.0] * 3] * 2
    assert grads[x].tolist() == [[1.0, 6.0, 1.0], [1.0, 1.0, 1.0]]


def test_a_slice_that_is_the_only_path_gives_zeros_elsewhere(backend):
    x = to_tensor(np.full((3, 2), 2.0), requires_grad=True)
    assert (x[2] * x[2]).sum().backward()[x].tolist() == [[0.0, 0.0], [0.0, 0.0], [4.0, 4.0]]


def test_slices_through_an_intermediate_node(backend):
    x = to_tensor(np.linspace(-1.0, 1.0, 6).reshape(3, 2), requires_grad=True)
    y = dp.tanh(x)
    loss = (y[0] * y[1]).sum() + y[2, 0]
    t = np.tanh(np.linspace(-1.0, 1.0, 6).reshape(3, 2))
    upstream = np.zeros((3, 2))
    upstream[0], upstream[1], upstream[2, 0] = t[1], t[0], 1.0
    np.testing.assert_allclose(loss.backward()[x].numpy(), upstream * (1 - t * t), rtol=1e-14)


def test_every_time_step_of_a_sequence_shares_one_buffer(monkeypatch):
    """Reading each of 64 time steps of one tensor makes one tensor-sized array of zeros in
    backward (the first two slices meeting), not one per step."""
    dense = autograd.SliceGradient.dense
    made = []

    def counting(self):
        made.append(self.shape)
        return dense(self)

    monkeypatch.setattr(autograd.SliceGradient, "dense", counting)
    x = dp.randn(64, 5, requires_grad=True)
    loss = sum((x[t] * float(t)).sum() for t in range(64))
    grad = loss.backward()[x].numpy()
    assert made == [(64, 5)]
    np.testing.assert_array_equal(grad, np.repeat(np.arange(64.0)[:, None], 5, axis=1))


def test_slices_of_a_0d_tensor_add_up(backend):
    """NumPy makes the sum of two 0-d arrays a scalar; the buffer must stay an array."""
    x = to_tensor(np.array(2.0), requires_grad=True)
    assert (x[...] * 3.0 + x * 2.0 + x[None].sum()).backward()[x].item() == 6.0
    v = to_tensor(np.arange(3.0), requires_grad=True)
    s = (v * v).sum()
    grad = (s[None].sum() + s * 2.0 + s[...]).backward()[v]
    np.testing.assert_array_equal(grad.numpy(), 4.0 * 2.0 * np.arange(3.0))
