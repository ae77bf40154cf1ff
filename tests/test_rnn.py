"""Recurrent layers RNN, LSTM and GRU: the PyTorch fixtures' coverage (``test_torch_parity.py``
checks them), dropout in training, DataParallel, and errors."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from conftest import to_tensor
from nn_helpers import module_gradcheck
from torch_reference import load_cases

import dparray as dp
from dparray import nn
from dparray.parallel import ChunkError
from dparray.testing import directional_gradcheck

F64 = dp.float64
CASES = load_cases("rnn")
LAYERS = [nn.RNN, nn.LSTM, nn.GRU]


# ---------------------------------------------------------------------- against PyTorch
def test_the_fixtures_cover_every_layer_and_configuration():
    names = {case.name for case in CASES}
    for layer in ("rnn", "rnn_relu", "lstm", "gru"):
        for config in ("one_layer", "two_layers_bidirectional_batch_first_h0", "h0",
                       "unbatched"):
            assert f"{layer}_{config}" in names
    for layer in ("rnn", "lstm", "gru"):
        for config in ("two_layers", "bidirectional", "no_bias", "unbatched_bidirectional_h0",
                       "one_step", "dropout_eval"):
            assert f"{layer}_{config}" in names


def test_parameters_in_pytorchs_order_and_layout():
    lstm = nn.LSTM(4, 6, num_layers=2, bidirectional=True)
    names = [f"{kind}_l{layer}{suffix}" for layer in (0, 1) for suffix in ("", "_reverse")
             for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    assert [name for name, _ in lstm.named_parameters()] == names
    shapes = dict((name, p.shape) for name, p in lstm.named_parameters())
    assert shapes["weight_ih_l0"] == (24, 4)
    assert shapes["weight_ih_l1_reverse"] == (24, 12)  # both directions of layer 0 feed it
    assert shapes["weight_hh_l1"] == (24, 6)
    assert shapes["bias_hh_l0_reverse"] == (24,)
    assert [p for group in lstm.all_weights for p in group] == lstm.parameters()
    assert [name for name, _ in nn.GRU(4, 6, bias=False).named_parameters()] == [
        "weight_ih_l0", "weight_hh_l0"]
    assert nn.GRU(4, 6).weight_hh_l0.shape == (18, 6)
    assert nn.RNN(4, 6).weight_hh_l0.shape == (6, 6)


@pytest.mark.parametrize("layer", LAYERS, ids=lambda c: c.__name__)
def test_initialisation_is_uniform_within_one_over_sqrt_hidden(layer):
    dp.manual_seed(0)
    hidden = 64
    module = layer(32, hidden, num_layers=2, dtype=F64)
    bound = 1.0 / math.sqrt(hidden)
    values = np.concatenate([p.numpy().ravel() for p in module.parameters()])
    assert module.weight_ih_l0.dtype == F64
    assert values.min() >= -bound and values.max() <= bound
    assert values.min() < -0.99 * bound and values.max() > 0.99 * bound
    np.testing.assert_allclose(values.mean(), 0.0, atol=0.02 * bound)
    np.testing.assert_allclose(values.var(), bound**2 / 3, rtol=0.05)  # U(-b, b)


def test_repr_is_pytorchs():
    assert repr(nn.RNN(4, 6)) == "RNN(4, 6)"
    assert (repr(nn.LSTM(4, 6, num_layers=2, batch_first=True, bidirectional=True))
            == "LSTM(4, 6, num_layers=2, batch_first=True, bidirectional=True)")
    assert repr(nn.GRU(4, 6, bias=False, num_layers=2, dropout=0.5)) == (
        "GRU(4, 6, num_layers=2, bias=False, dropout=0.5)")
    assert repr(nn.RNN(4, 6, nonlinearity="relu")) == "RNN(4, 6, nonlinearity='relu')"


@pytest.mark.parametrize("layer", LAYERS, ids=lambda c: c.__name__)
def test_default_dtype_and_positional_arguments(layer, backend):
    module = layer(4, 6, 2)  # PyTorch's positional order: input_size, hidden_size, num_layers
    assert module.num_layers == 2
    output, _ = module(dp.randn(5, 3, 4))
    assert output.dtype == dp.float32 and output.shape == (5, 3, 6)
    assert dp.nn.RNN(4, 6, 1, "relu").nonlinearity == "relu"
    module.flatten_parameters()  # PyTorch code calls it; nothing to do here


# ---------------------------------------------------------------------- dropout in training
@pytest.mark.parametrize("layer", LAYERS, ids=lambda c: c.__name__)
def test_dropout_in_training_draws_masks_that_repeat_under_a_seed(layer, backend, rng):
    module = layer(4, 6, num_layers=3, dropout=0.5, batch_first=True, dtype=F64)
    x = to_tensor(rng.standard_normal((3, 5, 4)))
    eval_output = module.eval()(x)[0].numpy()
    module.train()
    dp.manual_seed(1)
    first, second = module(x)[0].numpy(), module(x)[0].numpy()
    dp.manual_seed(1)
    again = module(x)[0].numpy()
    assert first.shape == (3, 5, 6)
    assert not np.allclose(first, second)  # a new mask at every call
    assert not np.allclose(first, eval_output)
    np.testing.assert_array_equal(first, again)  # the same masks under the same seed
    np.testing.assert_array_equal(module.eval()(x)[0].numpy(), eval_output)


def test_dropout_acts_between_layers_only(backend, rng):
    """A two-layer LSTM in training is its first layer, dropout, then its second layer."""
    stacked = nn.LSTM(4, 6, num_layers=2, dropout=0.4, bidirectional=True, dtype=F64)
    first = nn.LSTM(4, 6, bidirectional=True, dtype=F64)
    second = nn.LSTM(12, 6, bidirectional=True, dtype=F64)
    state = stacked.state_dict()
    first.load_state_dict({k: v for k, v in state.items() if "_l0" in k})
    second.load_state_dict({k.replace("_l1", "_l0"): v for k, v in state.items() if "_l1" in k})
    x = to_tensor(rng.standard_normal((5, 3, 4)))
    with dp.fork_rng(7):
        output, (h_n, c_n) = stacked(x)
    with dp.fork_rng(7):
        middle, (h_0, c_0) = first(x)
        expected, (h_1, c_1) = second(nn.functional.dropout(middle, 0.4))
    np.testing.assert_allclose(output.numpy(), expected.numpy(), rtol=1e-13)
    np.testing.assert_allclose(h_n.numpy(), np.concatenate([h_0.numpy(), h_1.numpy()]),
                               rtol=1e-13)
    np.testing.assert_allclose(c_n.numpy(), np.concatenate([c_0.numpy(), c_1.numpy()]),
                               rtol=1e-13)


@pytest.mark.parametrize("layer", LAYERS, ids=lambda c: c.__name__)
def test_gradients_in_training_with_dropout_by_finite_differences(layer, backend, rng):
    dp.manual_seed(0)
    module = layer(2, 3, num_layers=2, dropout=0.3, bidirectional=True, dtype=F64)
    x = to_tensor(rng.standard_normal((3, 2, 2)), requires_grad=True)

    def everything(result):
        output, last = result
        states = last if isinstance(last, tuple) else (last,)
        return dp.cat([output.reshape(-1), *[s.reshape(-1) for s in states]])

    module_gradcheck(module, x, output=everything, check=directional_gradcheck)


def test_dropout_with_one_layer_warns_and_does_nothing(rng):
    with pytest.warns(UserWarning, match="dropout is applied between recurrent layers"):
        module = nn.GRU(4, 6, dropout=0.5, dtype=F64)
    x = to_tensor(rng.standard_normal((5, 3, 4)))
    np.testing.assert_array_equal(module(x)[0].numpy(), module.eval()(x)[0].numpy())


# ---------------------------------------------------------------------- DataParallel
class OutputOnly(nn.Module):
    """The recurrent layer's output sequence alone."""

    def __init__(self, recurrent):
        super().__init__()
        self.recurrent = recurrent

    def forward(self, x):
        return self.recurrent(x)[0]


class BatchFirstStates(nn.Module):
    """The recurrent layer with its initial and final states batch-first, ``(N, layers *
    directions, hidden)``: DataParallel splits and joins every tensor along axis 0, while the
    layer's states keep their batch in axis 1."""

    def __init__(self, recurrent):
        super().__init__()
        self.recurrent = recurrent

    def forward(self, x, *states):
        states = [s.transpose(0, 1) for s in states]
        if isinstance(self.recurrent, nn.LSTM):
            output, last = self.recurrent(x, tuple(states))
        else:
            output, last = self.recurrent(x, *states)
        last = last if isinstance(last, tuple) else (last,)
        return output, tuple(s.transpose(0, 1) for s in last)


def _flat(result):
    if isinstance(result, dp.Tensor):
        return [result]
    return [t for item in result for t in _flat(item)]


def _results_and_gradients(model, inputs, weights):
    outputs = _flat(model(*inputs))
    loss = sum(((out * w).sum() for out, w in zip(outputs, weights, strict=True)),
               start=dp.zeros((), dtype=F64))
    return [out.numpy() for out in outputs], loss.backward()


def _assert_same_as_unwrapped(module, model, *inputs, rng):
    weights = [to_tensor(rng.standard_normal(out.shape)) for out in _flat(module(*inputs))]
    expected, expected_grads = _results_and_gradients(module, inputs, weights)
    got, grads = _results_and_gradients(model, inputs, weights)
    assert len(got) == len(expected)
    for out, want in zip(got, expected, strict=True):
        assert out.shape == want.shape
        np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-14)
    assert all(x in grads for x in inputs) and set(grads) == set(expected_grads)
    for variable in expected_grads:
        np.testing.assert_allclose(grads[variable].numpy(), expected_grads[variable].numpy(),
                                   rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("layer", LAYERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("execution", ["threads", "inline"])
def test_under_data_parallel_same_as_unwrapped(layer, workers, execution, backend, rng):
    dp.manual_seed(0)
    module = OutputOnly(layer(3, 4, num_layers=2, bidirectional=True, batch_first=True,
                              dtype=F64))
    model = dp.DataParallel(module, workers, execution=execution)
    x = to_tensor(rng.standard_normal((5, 4, 3)), requires_grad=True)
    _assert_same_as_unwrapped(module, model, x, rng=rng)


@pytest.mark.parametrize("layer", LAYERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("execution", ["threads", "inline"])
def test_under_data_parallel_with_initial_and_final_states(layer, workers, execution, backend,
                                                           rng):
    dp.manual_seed(0)
    module = BatchFirstStates(layer(3, 4, num_layers=2, bidirectional=True, batch_first=True,
                                    dtype=F64))
    model = dp.DataParallel(module, workers, execution=execution)
    x = to_tensor(rng.standard_normal((5, 4, 3)), requires_grad=True)
    states = [to_tensor(rng.standard_normal((5, 4, 4)), requires_grad=True)
              for _ in range(2 if layer is nn.LSTM else 1)]
    _assert_same_as_unwrapped(module, model, x, *states, rng=rng)


def test_under_data_parallel_with_dropout_in_training(backend, rng):
    module = OutputOnly(nn.LSTM(3, 4, num_layers=2, dropout=0.5, batch_first=True, dtype=F64))
    assert module.recurrent.couples_rows()  # masks depend on the split: chunks always run
    model = dp.DataParallel(module, 3, execution="threads")
    x = to_tensor(rng.standard_normal((6, 4, 3)))
    dp.manual_seed(2)
    first = model(x).numpy()
    dp.manual_seed(2)
    again = model(x)
    assert again.shape == (6, 4, 4)
    np.testing.assert_array_equal(again.numpy(), first)
    assert not np.allclose(first, module.eval()(x).numpy())


def _chunk_failures(error):
    """The ChunkErrors of a DataParallel call: one, or a group of them (several chunks)."""
    failures = list(getattr(error, "exceptions", [error]))
    assert failures and all(isinstance(f, ChunkError) for f in failures)
    return [f.__cause__ for f in failures]


@pytest.mark.parametrize("execution", ["threads", "inline", "auto"])
def test_data_parallel_refuses_time_major_input(execution, rng):
    module = OutputOnly(nn.GRU(3, 4, dtype=F64))  # batch_first=False: axis 0 is time
    model = dp.DataParallel(module, 2, execution=execution)
    with pytest.raises(Exception) as caught:  # one ChunkError, or a group of them
        model(to_tensor(rng.standard_normal((5, 2, 3))))
    for cause in _chunk_failures(caught.value):
        assert isinstance(cause, ValueError)
        assert re.search(r"GRU\(3, 4\): DataParallel splits axis 0, which is time for "
                         r"time-major input of shape \(\d, 2, 3\); construct the layer with "
                         r"batch_first=True", str(cause))


def test_data_parallel_refuses_unbatched_input(rng):
    module = OutputOnly(nn.RNN(3, 4, batch_first=True, dtype=F64))
    model = dp.DataParallel(module, 2, execution="threads")
    with pytest.raises(Exception) as caught:  # one ChunkError, or a group of them
        model(to_tensor(rng.standard_normal((5, 3))))
    for cause in _chunk_failures(caught.value):
        assert isinstance(cause, ValueError)
        assert "unbatched input of shape" in str(cause)
        assert "give the layer batched (N, L, features) input" in str(cause)


def test_data_parallel_gives_every_chunk_an_initial_state_with_its_batch_in_axis_1(rng):
    """DataParallel passes a tensor whose axis 0 is not the batch whole to every chunk; the
    layer then says which shape it needed."""
    module = nn.GRU(3, 4, num_layers=2, batch_first=True, dtype=F64)
    model = dp.DataParallel(module, 2, execution="threads")
    x = to_tensor(rng.standard_normal((5, 4, 3)))
    with pytest.raises(Exception) as caught:  # one ChunkError, or a group of them
        model(x, to_tensor(rng.standard_normal((2, 5, 4))))
    for cause in _chunk_failures(caught.value):
        assert isinstance(cause, ValueError)
        assert re.search(r"hx must have shape \(2, [23], 4\) for input of shape "
                         r"\([23], 4, 3\), got shape \(2, 5, 4\)", str(cause))


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize("layer", LAYERS, ids=lambda c: c.__name__)
def test_input_of_the_wrong_rank_or_size(layer, rng):
    name = layer.__name__
    module = layer(4, 6, dtype=F64)
    for shape in [(4,), (2, 5, 3, 4), (5, 3, 5), (5, 3)]:
        with pytest.raises(ValueError, match=rf"{name}\(4, 6\): expected input of shape "
                           rf"\(L, N, 4\) or unbatched \(L, 4\), got shape "
                           rf"{re.escape(str(shape))}"):
            module(to_tensor(rng.standard_normal(shape)))
    with pytest.raises(ValueError, match=r"\(N, L, 4\) or unbatched"):
        layer(4, 6, batch_first=True, dtype=F64)(to_tensor(rng.standard_normal((3, 5, 2))))
    with pytest.raises(ValueError, match=r"at least one time step, got input of shape"):
        module(dp.zeros((0, 3, 4), dtype=F64))
    with pytest.raises(ValueError, match=r"at least one time step"):
        layer(4, 6, batch_first=True)(dp.zeros((3, 0, 4)))
    with pytest.raises(TypeError, match=rf"{name}: input must be a Tensor, got"):
        module(np.zeros((5, 3, 4)))
    with pytest.raises(TypeError, match=rf"{name}: input must be a floating-point tensor, "
                                        "got int64"):
        module(dp.tensor(np.zeros((5, 3, 4), dtype=np.int64)))


@pytest.mark.parametrize("layer", [nn.RNN, nn.GRU], ids=lambda c: c.__name__)
def test_initial_state_of_the_wrong_shape_or_kind(layer, rng):
    module = layer(4, 6, num_layers=2, bidirectional=True, batch_first=True, dtype=F64)
    x = to_tensor(rng.standard_normal((3, 5, 4)))
    name = layer.__name__
    for shape in [(2, 3, 6), (4, 5, 6), (4, 3, 5), (4, 6), (1, 4, 3, 6)]:
        with pytest.raises(ValueError, match=rf"hx must have shape \(4, 3, 6\) for input of "
                           rf"shape \(3, 5, 4\), got shape {re.escape(str(shape))}"):
            module(x, to_tensor(rng.standard_normal(shape)))
    with pytest.raises(ValueError, match=r"hx must have shape \(4, 6\) for input of shape "
                                         r"\(5, 4\), got shape \(4, 1, 6\)"):
        module(x[0], to_tensor(rng.standard_normal((4, 1, 6))))
    with pytest.raises(TypeError, match=rf"{name}: hx must be a Tensor, got"):
        module(x, np.zeros((4, 3, 6)))
    with pytest.raises(TypeError, match=rf"{name}: hx must be a floating-point tensor"):
        module(x, dp.tensor(np.zeros((4, 3, 6), dtype=np.int64)))


def test_lstm_initial_states_of_the_wrong_shape_or_kind(rng):
    module = nn.LSTM(4, 6, dtype=F64)
    x = to_tensor(rng.standard_normal((5, 3, 4)))
    h0 = to_tensor(rng.standard_normal((1, 3, 6)))
    with pytest.raises(ValueError, match=r"c_0 must have shape \(1, 3, 6\) for input of shape "
                                         r"\(5, 3, 4\), got shape \(1, 2, 6\)"):
        module(x, (h0, to_tensor(rng.standard_normal((1, 2, 6)))))
    with pytest.raises(ValueError, match=r"h_0 must have shape \(1, 3, 6\)"):
        module(x, (h0[:, :2], h0))
    for hx in [h0, (h0,), (h0, h0, h0), "h0"]:
        with pytest.raises(TypeError, match=r"LSTM: hx must be a pair \(h_0, c_0\) of tensors"):
            module(x, hx)
    with pytest.raises(TypeError, match=r"LSTM: c_0 must be a Tensor, got None"):
        module(x, (h0, None))


def test_a_refused_call_changes_nothing(rng):
    module = nn.GRU(4, 6, num_layers=2, dropout=0.5, dtype=F64)
    before = {k: v.numpy().copy() for k, v in module.state_dict().items()}
    x = to_tensor(rng.standard_normal((5, 3, 4)))
    dp.manual_seed(5)
    with pytest.raises(ValueError, match="hx must have shape"):
        module(x, dp.zeros((2, 2, 6), dtype=F64))
    drawn = dp.rand(3).numpy()
    dp.manual_seed(5)
    np.testing.assert_array_equal(dp.rand(3).numpy(), drawn)  # no dropout mask was drawn
    for key, value in module.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), before[key])


BAD_ARGUMENTS = [  # (arguments, error, the message after "<Layer>: ", as a regex)
    ({"input_size": 4.0}, TypeError, r"input_size must be an int, got 4\.0 \(float\)"),
    ({"input_size": 0}, ValueError, r"input_size must be at least 1, got 0"),
    ({"hidden_size": "6"}, TypeError, r"hidden_size must be an int, got '6'"),
    ({"hidden_size": 0}, ValueError, r"hidden_size must be at least 1, got 0"),
    ({"num_layers": 0}, ValueError, r"num_layers must be at least 1, got 0"),
    ({"num_layers": True}, TypeError, r"num_layers must be an int, got True"),
    ({"bias": 1}, TypeError, r"bias must be a bool, got 1"),
    ({"batch_first": None}, TypeError, r"batch_first must be a bool, got None"),
    ({"bidirectional": "yes"}, TypeError, r"bidirectional must be a bool, got 'yes'"),
    ({"dropout": 1.0}, ValueError, r"dropout must be .*, got 1\.0"),
    ({"dropout": -0.1}, ValueError, r"dropout must be .*, got -0\.1"),
    ({"dropout": "0.5"}, TypeError, r"dropout must be a number, got '0\.5'"),
]


@pytest.mark.parametrize("layer", LAYERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize(("kwargs", "error", "message"), BAD_ARGUMENTS,
                         ids=[str(k) for k, _, _ in BAD_ARGUMENTS])
def test_bad_constructor_arguments(layer, kwargs, error, message):
    arguments = {"input_size": 4, "hidden_size": 6, "num_layers": 2, **kwargs}
    dp.manual_seed(3)
    with pytest.raises(error, match=f"^{layer.__name__}: {message}$"):
        layer(**arguments)
    drawn = dp.rand(2).numpy()
    dp.manual_seed(3)
    np.testing.assert_array_equal(dp.rand(2).numpy(), drawn)  # refused before any draw


def test_bad_nonlinearity_and_projection():
    with pytest.raises(ValueError, match=r"^RNN: nonlinearity must be one of 'tanh', 'relu', "
                                         r"got 'sigmoid'$"):
        nn.RNN(4, 6, nonlinearity="sigmoid")
    with pytest.raises(TypeError, match=r"^RNN: nonlinearity must be one of"):
        nn.RNN(4, 6, nonlinearity=None)
    with pytest.raises(ValueError, match=r"^LSTM: proj_size is not supported and must be 0, "
                                         r"got 3$"):
        nn.LSTM(4, 6, proj_size=3)
    with pytest.raises(ValueError, match=r"^LSTM: proj_size must be at least 0, got -1$"):
        nn.LSTM(4, 6, proj_size=-1)
    with pytest.raises(TypeError, match=r"^LSTM: proj_size must be an int, got 2.0"):
        nn.LSTM(4, 6, proj_size=2.0)
    assert nn.LSTM(4, 6, proj_size=0).proj_size == 0
