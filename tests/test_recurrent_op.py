"""The recurrences as one node each (``dparray.ops.recurrent``: LSTM, GRU, RNN with tanh and
ReLU) against the same recurrence made of small ops, step by step: values and gradients in
float64 (tight) and float32, forward and reverse, odd shapes (one step, one row, one unit, an
empty batch, a non-contiguous projection), gradcheck, on every backend, with the backend's
kernel (NumPy's compiled one) and with the reference only (the ``kernels`` fixture), and inside
DataParallel with 2 and 3 workers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from conftest import to_tensor
from dparray.backends import _numpy_kernels
from gradient_checks import check_gradients
from parallel_parity import assert_data_parallel_matches

import dparray as dp
from dparray import nn, ops
from dparray.kernels import kernels_enabled, reference_only
from dparray.nn import functional as F
from dparray.ops.recurrent import gru_sequence, lstm_sequence, rnn_sequence


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


def composed_gru(projected, h0, weight_hh, bias_hh, reverse):
    """PyTorch's GRU cell of small ops: ``(L, N, H)``."""
    length, hidden = projected.shape[0], h0.shape[-1]
    h, outputs = h0, [None] * length
    for t in (range(length - 1, -1, -1) if reverse else range(length)):
        r_x, z_x, n_x = ops.split(projected[t], hidden, axis=-1)
        r_h, z_h, n_h = ops.split(F.linear(h, weight_hh, bias_hh), hidden, axis=-1)
        r, z = ops.sigmoid(r_x + r_h), ops.sigmoid(z_x + z_h)
        n = ops.tanh(n_x + r * n_h)
        h = (1.0 - z) * n + z * h
        outputs[t] = h
    return ops.stack(outputs, axis=0)


def composed_rnn(nonlinearity):
    def composed(projected, h0, weight_hh, reverse):
        length = projected.shape[0]
        h, outputs = h0, [None] * length
        activation = ops.tanh if nonlinearity == "tanh" else ops.relu
        for t in (range(length - 1, -1, -1) if reverse else range(length)):
            h = activation(projected[t] + F.linear(h, weight_hh))
            outputs[t] = h
        return ops.stack(outputs, axis=0)
    return composed


@dataclass
class Cell:
    """A node, its composition of small ops (both ``(*inputs, reverse)``), and its inputs:
    ``gates`` blocks of units, with ``c_0`` (LSTM) and ``b_hh`` (GRU) or without."""

    node: Callable[..., Any]
    composed: Callable[..., Any]
    gates: int
    cell_state: bool = False
    hidden_bias: bool = False

    def inputs(self, rng, shape, dtype, scale=1.0):
        length, batch, hidden = shape
        width = self.gates * hidden
        arrays = [rng.standard_normal((length, batch, width)) * 2.0,
                  rng.standard_normal((batch, hidden))]
        if self.cell_state:
            arrays.append(rng.standard_normal((batch, hidden)))
        arrays.append(rng.standard_normal((width, hidden)) * scale)
        if self.hidden_bias:
            arrays.append(rng.standard_normal(width))
        return [to_tensor(a.astype(dtype), requires_grad=True) for a in arrays]

    def rows(self, length):
        """The output's leading size: the steps, and LSTM's ``c_n``."""
        return length + 1 if self.cell_state else length


CELLS = {
    "lstm": Cell(lstm_sequence, composed_lstm, 4, cell_state=True),
    "gru": Cell(gru_sequence, composed_gru, 3, hidden_bias=True),
    "gru_no_bias": Cell(lambda p, h, w, reverse: gru_sequence(p, h, w, None, reverse),
                        lambda p, h, w, reverse: composed_gru(p, h, w, None, reverse), 3),
    "rnn_tanh": Cell(lambda p, h, w, reverse: rnn_sequence(p, h, w, "tanh", reverse),
                     composed_rnn("tanh"), 1),
    "rnn_relu": Cell(lambda p, h, w, reverse: rnn_sequence(p, h, w, "relu", reverse),
                     composed_rnn("relu"), 1),
}
SHAPES = {"typical": (5, 3, 6), "one_step": (1, 2, 3), "one_row": (4, 1, 5),
          "one_unit": (3, 2, 1)}


def _values_and_gradients(function, inputs, weight):
    out = function(*inputs)
    grads = (out * weight).sum().backward()
    return out.numpy(), [grads[x].numpy() for x in inputs]


@pytest.mark.parametrize("cell", CELLS.values(), ids=CELLS.keys())
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize(("dtype", "rtol", "atol"), [("float64", 1e-12, 1e-13),
                                                     ("float32", 2e-5, 2e-6)])
def test_the_node_is_the_recurrence_of_small_ops(cell, shape, reverse, dtype, rtol, atol,
                                                 backend, kernels, rng):
    inputs = cell.inputs(rng, shape, dtype)
    weight = to_tensor(rng.standard_normal((cell.rows(shape[0]), *shape[1:])).astype(dtype))
    got, got_grads = _values_and_gradients(lambda *a: cell.node(*a, reverse=reverse), inputs,
                                           weight)
    want, want_grads = _values_and_gradients(lambda *a: cell.composed(*a, reverse=reverse),
                                             inputs, weight)
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    for g, w in zip(got_grads, want_grads, strict=True):
        assert g.dtype == np.dtype(dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * 10)


@pytest.mark.parametrize("cell", CELLS.values(), ids=CELLS.keys())
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_compiled_cells_give_the_references_values_to_the_bit(cell, reverse, dtype, rng):
    """NumPy's kernel against the reference on the same backend. With ``W_hh`` zero every
    hidden product is exact zeros (plus GRU's ``b_hh``), so what is compared is the cells'
    arithmetic, which is the reference's, exponentials and tanh included; projections of up
    to about +-40 saturate some gates, and a NaN in one row must stay in that row."""
    projected, *rest = cell.inputs(rng, (6, 5, 7), dtype, scale=0.0)
    values = projected.numpy() * 8.0
    values[0, 2, 1] = np.nan
    projected = to_tensor(values, requires_grad=True)
    inputs = [projected, *rest]
    weight = to_tensor(rng.standard_normal((cell.rows(6), 5, 7)).astype(dtype))
    node = type(cell.node(*inputs, reverse=reverse).grad_fn).__name__
    assert node.endswith("Kernel") is bool(_numpy_kernels.table())  # not where Numba cannot run
    with kernels_enabled():
        got, got_grads = _values_and_gradients(lambda *a: cell.node(*a, reverse=reverse),
                                               inputs, weight)
    with reference_only():
        want, want_grads = _values_and_gradients(lambda *a: cell.node(*a, reverse=reverse),
                                                 inputs, weight)
    assert np.isnan(got).any() and np.isfinite(got).any()
    np.testing.assert_array_equal(got, want)
    # the gradients by the projection and by the initial cell state (h_0's is W_hh times
    # something: zero; W_hh's and b_hh's are products over the steps)
    compared = [0, 2] if cell.cell_state else [0]
    for i in compared:
        np.testing.assert_array_equal(got_grads[i], want_grads[i])


@pytest.mark.parametrize("cell", CELLS.values(), ids=CELLS.keys())
def test_an_empty_batch(cell, backend, kernels, rng):
    inputs = cell.inputs(rng, (3, 0, 2), "float64")
    out = cell.node(*inputs, reverse=False)
    assert out.shape == (cell.rows(3), 0, 2)
    grads = out.sum().backward()
    assert [grads[x].shape for x in inputs] == [x.shape for x in inputs]
    assert all(not np.any(grads[x].numpy()) for x in inputs)  # nothing reached them


@pytest.mark.parametrize("cell", CELLS.values(), ids=CELLS.keys())
def test_a_non_contiguous_projection(cell, backend, kernels, rng):
    inputs = cell.inputs(rng, (4, 3, 2), "float64")
    wide = to_tensor(rng.standard_normal((3, 4, cell.gates * 2)), requires_grad=True)
    inputs = [wide, *inputs[1:]]
    weight = to_tensor(rng.standard_normal((cell.rows(4), 3, 2)))

    def permuted(function):  # the projection (4, 3, G H) a transposed view: not contiguous
        return lambda w, *rest: function(ops.permute(w, (1, 0, 2)), *rest, reverse=False)

    got, got_grads = _values_and_gradients(permuted(cell.node), inputs, weight)
    want, want_grads = _values_and_gradients(permuted(cell.composed), inputs, weight)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    for g, w in zip(got_grads, want_grads, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cell", CELLS.values(), ids=CELLS.keys())
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_gradcheck(cell, reverse, backend, kernels, rng):
    inputs = cell.inputs(rng, (3, 2, 2), "float64", scale=0.5)
    check_gradients(lambda *a: cell.node(*a, reverse=reverse), inputs)


@pytest.mark.parametrize("node", [lstm_sequence, gru_sequence, rnn_sequence])
def test_a_sequence_without_steps_is_refused(node):
    projected = dp.zeros((0, 2, 4))
    with pytest.raises(ValueError, match=r"_sequence: the sequence must have at least one "
                                         r"time step, got a projection of shape \(0, 2, 4\)"):
        node(projected, *([dp.zeros((2, 1))] * 3))


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
    gru_out = gru_sequence(projected[..., :3], h0, weight_hh[:3], None)
    gru_grads = gru_out.sum().backward()
    assert np.isfinite(gru_out.numpy()).all()
    assert np.isfinite(gru_grads[projected].numpy()).all()


class Sequence(nn.Module):
    """A bidirectional two-layer recurrent layer's output sequence (its states keep the batch
    in axis 1, which DataParallel does not join)."""

    def __init__(self, kind, **options):
        super().__init__()
        self.layer = kind(3, 4, num_layers=2, bidirectional=True, batch_first=True,
                          dtype="float64", **options)

    def forward(self, x):
        return self.layer(x)[0]


LAYERS = {"lstm": (nn.LSTM, {}), "gru": (nn.GRU, {}), "rnn_tanh": (nn.RNN, {}),
          "rnn_relu": (nn.RNN, {"nonlinearity": "relu"}), "gru_no_bias": (nn.GRU, {"bias": False})}


@pytest.mark.parametrize("layer", LAYERS.values(), ids=LAYERS.keys())
@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("execution", ["threads", "inline"])
def test_under_data_parallel_same_as_unwrapped(layer, workers, execution, kernels, rng):
    dp.manual_seed(0)
    kind, options = layer
    module = Sequence(kind, **options)
    x = to_tensor(rng.standard_normal((5, 6, 3)), requires_grad=True)
    weight = to_tensor(rng.standard_normal((5, 6, 8)))
    assert_data_parallel_matches(module, x, weight, workers, execution)


@pytest.mark.parametrize("layer", LAYERS.values(), ids=LAYERS.keys())
def test_a_layer_is_one_node_per_layer_and_direction(layer):
    """No per-step graph: the layer's backward visits a handful of nodes whatever the length
    (the old per-step RNN and GRU made a dozen a step)."""
    kind, options = layer
    dp.manual_seed(0)
    module = kind(3, 4, dtype="float64", **options)
    counts = []
    for length in (2, 20):
        out, _ = module(dp.randn(length, 2, 3, dtype="float64"))
        counts.append(_graph_size(out))
    assert counts[0] == counts[1] < 12


def _graph_size(tensor):
    seen, stack = set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(getattr(node, "parents", ()))
    return len(seen)
