"""The LSTM recurrence as one node (``dparray.ops.recurrent``) against the same recurrence made
of small ops, step by step: values and gradients in float64 (tight) and float32, forward and
reverse, odd shapes (one step, one row, one unit, a non-contiguous projection), gradcheck, on
every backend, with the backend's kernel (NumPy's compiled one) and with the reference only
(the ``kernels`` fixture), and inside DataParallel with 2 and 3 workers."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray import nn, ops
from dparray.nn import functional as F
from dparray.ops.recurrent import lstm_sequence
from dparray.testing import gradcheck


def composed_lstm(projected, h0, c0, weight_hh, reverse):
    """The recurrence of small ops: ``(L + 1, N, H)``, the hidden states then ``c_n``."""
    length, hidden = projected.shape[0], h0.shape[-1]
    h, c, outputs = h0, c0, [None] * length
    for t in (range(length - 1, -1, -1) if reverse else range(length)):
        gates = projected[t] + F.linear(h, weight_hh)
        i, f, g, o = ops.split(gates, hidden, axis=-1)
        c = ops.sigmoid(f) * c + ops.sigmoid(i) * ops.tanh(g)
        h = ops.sigmoid(o) * ops.tanh(c)
        outputs[t] = h
    return ops.cat([ops.stack(outputs, axis=0), ops.unsqueeze(c, 0)], axis=0)


SHAPES = {"typical": (5, 3, 6), "one_step": (1, 2, 3), "one_row": (4, 1, 5),
          "one_unit": (3, 2, 1)}


def _inputs(rng, shape, dtype, scale=1.0):
    length, batch, hidden = shape
    arrays = [rng.standard_normal((length, batch, 4 * hidden)) * 2.0,
              rng.standard_normal((batch, hidden)), rng.standard_normal((batch, hidden)),
              rng.standard_normal((4 * hidden, hidden)) * scale]
    return [to_tensor(a.astype(dtype), requires_grad=True) for a in arrays]


def _values_and_gradients(function, inputs, weight):
    out = function(*inputs)
    grads = (out * weight).sum().backward()
    return out.numpy(), [grads[x].numpy() for x in inputs]


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize(("dtype", "rtol", "atol"), [("float64", 1e-12, 1e-13),
                                                     ("float32", 2e-5, 2e-6)])
def test_the_node_is_the_recurrence_of_small_ops(shape, reverse, dtype, rtol, atol, backend,
                                                 kernels, rng):
    inputs = _inputs(rng, shape, dtype)
    weight = to_tensor(rng.standard_normal((shape[0] + 1, shape[1], shape[2])).astype(dtype))
    got, got_grads = _values_and_gradients(
        lambda *a: lstm_sequence(*a, reverse=reverse), inputs, weight)
    want, want_grads = _values_and_gradients(
        lambda *a: composed_lstm(*a, reverse=reverse), inputs, weight)
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    for g, w in zip(got_grads, want_grads, strict=True):
        assert g.dtype == np.dtype(dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * 10)


def test_a_non_contiguous_projection(backend, kernels, rng):
    inputs = _inputs(rng, (4, 3, 2), "float64")
    wide = to_tensor(rng.standard_normal((3, 4, 8)), requires_grad=True)
    inputs = [wide, *inputs[1:]]
    weight = to_tensor(rng.standard_normal((5, 3, 2)))

    def permuted(function):  # the projection (4, 3, 8) a transposed view: not contiguous
        return lambda w, *rest: function(ops.permute(w, (1, 0, 2)), *rest, reverse=False)

    got, got_grads = _values_and_gradients(permuted(lstm_sequence), inputs, weight)
    want, want_grads = _values_and_gradients(permuted(composed_lstm), inputs, weight)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    for g, w in zip(got_grads, want_grads, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_gradcheck(reverse, backend, kernels, rng):
    inputs = _inputs(rng, (3, 2, 2), "float64", scale=0.5)
    gradcheck(lambda *a: lstm_sequence(*a, reverse=reverse), inputs)


def test_saturated_gates_stay_finite(backend, kernels):
    """Projections of +-1000: every sigmoid and tanh saturates without overflow."""
    projected = dp.tensor(np.tile([1000.0, -1000.0], (2, 1, 2)), requires_grad=True)
    h0 = dp.zeros((1, 1), dtype="float64", requires_grad=True)
    c0 = dp.ones((1, 1), dtype="float64", requires_grad=True)
    weight_hh = dp.zeros((4, 1), dtype="float64", requires_grad=True)
    out = lstm_sequence(projected, h0, c0, weight_hh)
    grads = out.sum().backward()
    assert np.isfinite(out.numpy()).all()
    assert all(np.isfinite(grads[x].numpy()).all() for x in (projected, h0, c0, weight_hh))


class Sequence(nn.Module):
    """A bidirectional two-layer LSTM's output sequence (its states keep the batch in axis 1,
    which DataParallel does not join)."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True,
                            dtype="float64")

    def forward(self, x):
        return self.lstm(x)[0]


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("execution", ["threads", "inline"])
def test_lstm_under_data_parallel_same_as_unwrapped(workers, execution, kernels, rng):
    dp.manual_seed(0)
    module = Sequence()
    model = dp.DataParallel(module, workers, execution=execution)
    x = to_tensor(rng.standard_normal((5, 6, 3)), requires_grad=True)
    weight = to_tensor(rng.standard_normal((5, 6, 8)))
    want = module(x)
    want_grads = (want * weight).sum().backward()
    got = model(x)
    got_grads = (got * weight).sum().backward()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)
    for variable in want_grads:
        np.testing.assert_allclose(got_grads[variable].numpy(), want_grads[variable].numpy(),
                                   rtol=1e-12, atol=1e-13)
