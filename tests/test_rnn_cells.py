"""Recurrent cells RNNCell, LSTMCell and GRUCell: against PyTorch's fixtures
(``tests/data/cells_and_dropout.safetensors``, made by ``tests/data/make_cell_fixtures.py``: outputs
and the gradients of the input, the states and every parameter, for one step and a loop of steps),
finite differences, agreement with the recurrent layers, DataParallel, and errors."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from conftest import to_tensor
from nn_helpers import module_gradcheck
from torch_reference import ReferenceCase, check, check_state_dict_round_trip, load_grouped

import dparray as dp
from dparray import nn
from dparray.parallel import ChunkError
from dparray.testing import directional_gradcheck

F64 = dp.float64
CELLS = [nn.RNNCell, nn.LSTMCell, nn.GRUCell]


def _cases() -> list[ReferenceCase]:
    described, arrays = load_grouped("cells_and_dropout.safetensors", "cells")
    return [ReferenceCase(name, info["layer"], info["kwargs"], info["plain_kwargs"],
                          info["training"], arrays[name]) for name, info in described.items()]


CASES = _cases()


def _loop(module, inputs, *states):
    """The fixtures' loop: the cell over ``inputs[t]`` in turn, the stacked hidden states
    (and LSTM's last cell state)."""
    hs = []
    if isinstance(module, nn.LSTMCell):
        h, c = states
        for t in range(inputs.shape[0]):
            h, c = module(inputs[t], (h, c))
            hs.append(h)
        return dp.stack(hs), c
    (h,) = states
    for t in range(inputs.shape[0]):
        h = module(inputs[t], h)
        hs.append(h)
    return dp.stack(hs)


def _call(case: ReferenceCase):
    if case.name.endswith("_loop"):
        return _loop
    if case.layer == "LSTMCell":
        return lambda module, x, *states: module(x, tuple(states) if states else None)
    return None


# ---------------------------------------------------------------------- against PyTorch
def test_the_fixtures_cover_every_cell_and_configuration():
    names = {case.name for case in CASES}
    for cell in ("rnncell", "rnncell_relu", "lstmcell", "grucell"):
        for config in ("batched_hx", "batched", "unbatched_hx", "unbatched", "no_bias_hx",
                       "loop"):
            assert f"{cell}_{config}" in names
    loop = next(case for case in CASES if case.name == "lstmcell_loop")
    assert loop.arrays["input.0"].ndim == 3  # a sequence of steps
    assert {"grad.input.1", "grad.input.2", "grad.state.weight_hh", "grad.state.bias_ih"} \
        <= set(loop.arrays)  # gradients of the states and the parameters


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_outputs_and_gradients_match_pytorch(case, backend, kernels):
    check(case, call=_call(case))


@pytest.mark.parametrize("case", [c for c in CASES if not c.name.endswith("_loop")], ids=repr)
def test_state_dict_round_trip(case, backend, tmp_path):
    check_state_dict_round_trip(case, tmp_path)


# ---------------------------------------------------------------------- parameters
def test_parameters_in_pytorchs_order_and_layout():
    names = ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]
    for cell, gates in ((nn.RNNCell, 1), (nn.LSTMCell, 4), (nn.GRUCell, 3)):
        module = cell(4, 6)
        assert [name for name, _ in module.named_parameters()] == names
        assert [p.shape for p in module.parameters()] == [
            (gates * 6, 4), (gates * 6, 6), (gates * 6,), (gates * 6,)]
        bare = cell(4, 6, bias=False)
        assert [name for name, _ in bare.named_parameters()] == names[:2]
        assert bare.bias_ih is None and bare.bias_hh is None and bare.bias is False


@pytest.mark.parametrize("cell", CELLS, ids=lambda c: c.__name__)
def test_initialisation_is_uniform_within_one_over_sqrt_hidden(cell):
    dp.manual_seed(0)
    hidden = 64
    module = cell(32, hidden, dtype=F64)
    bound = 1.0 / math.sqrt(hidden)
    values = np.concatenate([p.numpy().ravel() for p in module.parameters()])
    assert module.weight_ih.dtype == F64
    assert values.min() >= -bound and values.max() <= bound
    assert values.min() < -0.99 * bound and values.max() > 0.99 * bound
    np.testing.assert_allclose(values.mean(), 0.0, atol=0.02 * bound)
    np.testing.assert_allclose(values.var(), bound**2 / 3, rtol=0.05)  # U(-b, b)


def test_repr_is_pytorchs():
    assert repr(nn.RNNCell(4, 6)) == "RNNCell(4, 6)"
    assert repr(nn.RNNCell(4, 6, False, "relu")) == "RNNCell(4, 6, bias=False, nonlinearity=relu)"
    assert repr(nn.LSTMCell(4, 6)) == "LSTMCell(4, 6)"
    assert repr(nn.GRUCell(4, 6, bias=False)) == "GRUCell(4, 6, bias=False)"


@pytest.mark.parametrize("cell", CELLS, ids=lambda c: c.__name__)
def test_default_state_is_zeros_and_dtype_follows(cell, backend, rng):
    module = cell(4, 6)
    x = to_tensor(rng.standard_normal((3, 4)).astype(np.float32))
    zeros = dp.zeros(3, 6)
    given = (zeros, zeros) if cell is nn.LSTMCell else zeros
    for got, want in zip(_as_tuple(module(x)), _as_tuple(module(x, given)), strict=True):
        assert got.dtype == dp.float32 and got.shape == (3, 6)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def _as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


# ---------------------------------------------------------------------- gradients
@pytest.mark.parametrize(("cell", "extra"), [
    (nn.RNNCell, {}), (nn.RNNCell, {"nonlinearity": "relu"}), (nn.LSTMCell, {}),
    (nn.GRUCell, {})], ids=["RNNCell", "RNNCell-relu", "LSTMCell", "GRUCell"])
def test_gradients_by_finite_differences(cell, extra, backend, rng):
    module = cell(3, 4, dtype=F64, **extra)
    x = to_tensor(rng.standard_normal((2, 3)), requires_grad=True)
    h = to_tensor(rng.standard_normal((2, 4)), requires_grad=True)
    if cell is nn.LSTMCell:
        c = to_tensor(rng.standard_normal((2, 4)), requires_grad=True)
        wrapped = _LSTMStep(module)
        module_gradcheck(wrapped, x, h, c)
    else:
        module_gradcheck(module, x, h)


class _LSTMStep(nn.Module):
    """An LSTMCell called with its states as separate arguments; both new states, stacked."""

    def __init__(self, cell: nn.LSTMCell) -> None:
        super().__init__()
        self.cell = cell

    def forward(self, x, h, c):
        return dp.stack(self.cell(x, (h, c)))


def test_second_derivatives_through_a_cell(backend, rng):
    cell = nn.GRUCell(3, 4, dtype=F64)
    h = to_tensor(rng.standard_normal((2, 4)), requires_grad=True)

    def gradient(x):
        """d(loss)/dx as a function of x: differentiable in turn when x is a variable, and
        computed (under the check's no_grad) from a variable copy of x when it is not."""
        with dp.enable_grad():
            leaf = x if x.requires_grad else x.detach().requires_grad_()
            loss = (cell(leaf, h) ** 2).sum()
            (dx,) = dp.autograd.grad(loss, leaf, create_graph=x.requires_grad)
        return dx

    x = to_tensor(rng.standard_normal((2, 3)), requires_grad=True)
    directional_gradcheck(gradient, [x])


# ---------------------------------------------------------------------- against the layers
@pytest.mark.parametrize(("cell", "layer"), [(nn.RNNCell, nn.RNN), (nn.LSTMCell, nn.LSTM),
                                             (nn.GRUCell, nn.GRU)], ids=lambda c: c.__name__)
def test_a_loop_of_steps_is_the_one_layer_recurrence(cell, layer, backend, rng):
    module = cell(4, 5, dtype=F64)
    sequence = layer(4, 5, dtype=F64)
    sequence.load_state_dict({f"{name}_l0": p for name, p in module.state_dict().items()})
    xs = to_tensor(rng.standard_normal((6, 3, 4)))
    states = [to_tensor(rng.standard_normal((3, 5))) for _ in range(2)]
    if cell is nn.LSTMCell:
        hs, c = _loop(module, xs, *states)
        output, (_, c_n) = sequence(xs, (states[0][None], states[1][None]))
        np.testing.assert_allclose(c.numpy(), c_n[0].numpy(), rtol=1e-12, atol=1e-14)
    else:
        hs = _loop(module, xs, states[0])
        output, _ = sequence(xs, states[0][None])
    np.testing.assert_allclose(hs.numpy(), output.numpy(), rtol=1e-12, atol=1e-14)


def test_a_cell_under_data_parallel_is_the_cell(backend, rng):
    """DataParallel splits the tensor arguments (not those inside LSTMCell's pair)."""
    x = to_tensor(rng.standard_normal((6, 4)))
    h = to_tensor(rng.standard_normal((6, 5)))
    gru, lstm = nn.GRUCell(4, 5, dtype=F64), nn.LSTMCell(4, 5, dtype=F64)
    np.testing.assert_allclose(dp.DataParallel(gru, num_workers=3)(x, h).numpy(),
                               gru(x, h).numpy(), rtol=1e-12, atol=1e-14)
    for got, want in zip(dp.DataParallel(lstm, num_workers=3)(x), lstm(x), strict=True):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)
    with pytest.raises(Exception) as caught:  # one ChunkError, or a group of them
        dp.DataParallel(gru, num_workers=2, execution="threads")(x[0])
    failures = list(getattr(caught.value, "exceptions", [caught.value]))
    assert failures and all(isinstance(f, ChunkError) for f in failures)
    for failure in failures:
        assert isinstance(failure.__cause__, ValueError)
        assert re.search(r"^GRUCell\(4, 5\): DataParallel splits axis 0, which is the features "
                         r"for unbatched input \(a chunk has shape \(2,\)\); give the cell "
                         r"batched \(N, 4\) input", str(failure.__cause__))


# ---------------------------------------------------------------------- errors
def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match=r"^RNNCell: hidden_size must be at least 1, got 0"):
        nn.RNNCell(4, 0)
    with pytest.raises(TypeError, match=r"^LSTMCell: input_size must be an int"):
        nn.LSTMCell(4.0, 6)
    with pytest.raises(ValueError, match=r"^RNNCell: nonlinearity must be one of"):
        nn.RNNCell(4, 6, nonlinearity="sigmoid")
    with pytest.raises(TypeError, match=r"^GRUCell: bias must be a bool"):
        nn.GRUCell(4, 6, bias=1)


@pytest.mark.parametrize("cell", CELLS, ids=lambda c: c.__name__)
def test_bad_input_and_states(cell, backend):
    module = cell(4, 6)
    name = cell.__name__
    with pytest.raises(TypeError, match=rf"^{name}: input must be a Tensor"):
        module([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(TypeError, match=rf"^{name}: input must be a floating-point tensor"):
        module(dp.ones(3, 4, dtype=dp.int64))
    shape = re.escape("expected input of shape (N, 4) or unbatched (4,), got shape")
    with pytest.raises(ValueError, match=rf"^{name}\(4, 6\): {shape} \(3, 5\)"):
        module(dp.ones(3, 5))
    with pytest.raises(ValueError, match=rf"{shape} \(2, 3, 4\)"):
        module(dp.ones(2, 3, 4))
    state_name = "h_0" if cell is nn.LSTMCell else "hx"
    for x, state, expected in ((dp.ones(3, 4), dp.zeros(2, 6), "(3, 6)"),
                               (dp.ones(4), dp.zeros(1, 6), "(6,)"),
                               (dp.ones(3, 4), dp.zeros(3, 5), "(3, 6)")):
        given = (state, state) if cell is nn.LSTMCell else state
        with pytest.raises(ValueError, match=rf"{state_name} must have shape "
                                             rf"{re.escape(expected)} for input of shape"):
            module(x, given)
    integers = dp.zeros(3, 6, dtype=dp.int64)
    with pytest.raises(TypeError, match=rf"^{name}: {state_name} must be a floating-point"):
        module(dp.ones(3, 4), (integers, integers) if cell is nn.LSTMCell else integers)


def test_lstm_cell_takes_its_states_as_a_pair(backend):
    cell = nn.LSTMCell(4, 6)
    with pytest.raises(TypeError, match=r"^LSTMCell: hx must be a pair \(h_0, c_0\) of tensors, "
                                        r"got tensor\("):
        cell(dp.ones(3, 4), dp.zeros(3, 6))
    with pytest.raises(TypeError, match=r"^LSTMCell: hx must be a pair"):
        cell(dp.ones(3, 4), (dp.zeros(3, 6),))
    with pytest.raises(TypeError, match=r"^LSTMCell: c_0 must be a Tensor"):
        cell(dp.ones(3, 4), (dp.zeros(3, 6), None))
