"""Transformer encoder and decoder layers and stacks: the PyTorch fixtures' coverage
(``test_torch_parity.py`` checks them), dropout in training, DataParallel, the W6 workload, and
errors."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from conftest import to_tensor
from nn_helpers import module_gradcheck
from torch_reference import load_cases

import dparray as dp
from dparray import nn
from dparray.nn import functional as F
from dparray.testing import directional_gradcheck

F64 = dp.float64
LAYERS = ("TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
          "TransformerDecoder")
CASES = [case for case in load_cases("attention") if case.layer in LAYERS]


def _causal(length):
    return dp.tensor(np.triu(np.ones((length, length), dtype=bool), 1))


# ---------------------------------------------------------------------- against PyTorch
def test_the_fixtures_cover_every_layer_and_configuration():
    names = {case.name for case in CASES}
    assert {case.layer for case in CASES} == set(LAYERS)
    for name in ("encoder_layer", "encoder_layer_pre_norm_gelu_batch_first",
                 "encoder_layer_masks", "encoder_layer_causal_no_bias",
                 "encoder_layer_module_activation", "encoder_layer_unbatched", "decoder_layer",
                 "decoder_layer_pre_norm_masks", "decoder_layer_causal_memory", "encoder",
                 "decoder"):
        assert name in names


# ---------------------------------------------------------------------- the layers
def test_sub_modules_carry_pytorchs_names():
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
    assert [name for name, _ in layer.named_children()] == [
        "self_attn", "linear1", "dropout", "linear2", "norm1", "norm2", "dropout1", "dropout2"]
    decoder = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, activation=nn.GELU())
    assert [name for name, _ in decoder.named_children()] == [
        "self_attn", "multihead_attn", "linear1", "dropout", "linear2", "norm1", "norm2",
        "norm3", "dropout1", "dropout2", "dropout3", "activation"]
    assert layer.self_attn.dropout == 0.1 and layer.dropout.p == 0.1
    assert layer.linear1.weight.shape == (16, 8) and layer.norm_first is False


def test_the_stacks_hold_independent_deep_copies(backend, rng):
    dp.manual_seed(0)
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, dtype=F64)
    encoder = nn.TransformerEncoder(layer, num_layers=3)
    assert len(encoder.layers) == 3 and encoder.norm is None
    copies = [m.self_attn.in_proj_weight for m in encoder.layers]
    assert all(w is not layer.self_attn.in_proj_weight for w in copies)
    assert copies[0] is not copies[1]
    for w in copies:
        np.testing.assert_array_equal(w.numpy(), layer.self_attn.in_proj_weight.numpy())
    x = to_tensor(rng.standard_normal((5, 2, 4)))
    expected = x
    for _ in range(3):
        expected = layer(expected)
    np.testing.assert_allclose(encoder(x).numpy(), expected.numpy(), rtol=1e-12)
    grads = encoder(x).sum().backward()
    assert len(grads) == 3 * len(layer.parameters())  # each copy trains on its own


@pytest.mark.parametrize("activation", [F.gelu, lambda t: F.gelu(t), nn.GELU()],
                         ids=["function", "lambda", "module"])
def test_a_callable_activation_equals_its_name(activation, backend, rng):
    dp.manual_seed(1)
    named = nn.TransformerEncoderLayer(6, 2, dim_feedforward=5, activation="gelu", dtype=F64)
    given = nn.TransformerEncoderLayer(6, 2, dim_feedforward=5, activation=activation,
                                       dtype=F64)
    given.load_state_dict(named.state_dict())
    x = to_tensor(rng.standard_normal((4, 3, 6)))
    named.eval(), given.eval()
    np.testing.assert_allclose(given(x).numpy(), named(x).numpy(), rtol=1e-13)
    relu = nn.TransformerEncoderLayer(6, 2, dim_feedforward=5, dtype=F64).eval()
    relu.load_state_dict(named.state_dict())
    assert not np.allclose(relu(x).numpy(), named(x).numpy())


def test_is_causal_equals_the_causal_mask(backend, rng):
    layer = nn.TransformerDecoderLayer(6, 2, dim_feedforward=5, batch_first=True,
                                       dtype=F64).eval()
    tgt, memory = to_tensor(rng.standard_normal((2, 4, 6))), to_tensor(rng.standard_normal(
        (2, 3, 6)))
    np.testing.assert_allclose(layer(tgt, memory, tgt_is_causal=True).numpy(),
                               layer(tgt, memory, tgt_mask=_causal(4)).numpy(), rtol=1e-12)
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(
        6, 2, dim_feedforward=5, batch_first=True, dtype=F64), 2).eval()
    np.testing.assert_allclose(encoder(tgt, is_causal=True).numpy(),
                               encoder(tgt, mask=_causal(4)).numpy(), rtol=1e-12)
    assert not np.allclose(encoder(tgt).numpy(), encoder(tgt, is_causal=True).numpy())


def test_dropout_in_training_repeats_under_a_seed_and_is_off_in_evaluation(backend, rng):
    layer = nn.TransformerEncoderLayer(6, 2, dim_feedforward=8, dropout=0.3, batch_first=True,
                                       dtype=F64)
    x = to_tensor(rng.standard_normal((3, 4, 6)))
    dp.manual_seed(3)
    first = layer(x)
    dp.manual_seed(3)
    again = layer(x)
    assert first.shape == (3, 4, 6)
    np.testing.assert_array_equal(again.numpy(), first.numpy())
    assert not np.allclose(layer(x).numpy(), first.numpy())  # the stream moved on
    evaluated = layer.eval()(x)
    assert not np.allclose(evaluated.numpy(), first.numpy())
    np.testing.assert_array_equal(layer(x).numpy(), evaluated.numpy())


def test_gradients_in_training_with_dropout_by_finite_differences(backend, rng):
    layer = nn.TransformerDecoderLayer(2, 2, dim_feedforward=3, dropout=0.2, batch_first=True,
                                       norm_first=True, activation="gelu", dtype=F64)
    tgt = to_tensor(rng.standard_normal((2, 3, 2)), requires_grad=True)
    memory = to_tensor(rng.standard_normal((2, 2, 2)), requires_grad=True)
    module_gradcheck(layer, tgt, memory, check=directional_gradcheck)


# ---------------------------------------------------------------------- DataParallel
class Decoding(nn.Module):
    """A decoder layer or stack called with its masks as keyword arguments."""

    def __init__(self, decoder):
        super().__init__()
        self.decoder = decoder

    def forward(self, tgt, memory, tgt_mask, memory_key_padding_mask):
        return self.decoder(tgt, memory, tgt_mask=tgt_mask,
                            memory_key_padding_mask=memory_key_padding_mask)


def _modules():
    encoder_layer = nn.TransformerEncoderLayer(6, 2, dim_feedforward=5, dropout=0.0,
                                               batch_first=True, norm_first=True,
                                               activation="gelu", dtype=F64)
    decoder_layer = nn.TransformerDecoderLayer(6, 2, dim_feedforward=5, dropout=0.0,
                                               batch_first=True, dtype=F64)
    return {
        "encoder_layer": encoder_layer,
        "encoder": nn.TransformerEncoder(encoder_layer, 2, norm=nn.LayerNorm(6, dtype=F64)),
        "decoder_layer": Decoding(decoder_layer),
        "decoder": Decoding(nn.TransformerDecoder(decoder_layer, 2)),
    }


def _results_and_gradients(model, inputs, kwargs, weights):
    out = model(*inputs, **kwargs)
    return out.numpy(), (out * weights).sum().backward()


@pytest.mark.parametrize("name", ["encoder_layer", "encoder", "decoder_layer", "decoder"])
@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("execution", ["threads", "inline"])
def test_under_data_parallel_same_as_unwrapped(name, workers, execution, backend, rng):
    dp.manual_seed(0)
    module = _modules()[name]
    model = dp.DataParallel(module, workers, execution=execution)
    x = to_tensor(rng.standard_normal((5, 4, 6)), requires_grad=True)
    padding = rng.random((5, 3)) > 0.6
    padding[:, 0] = False
    if name.startswith("encoder"):
        inputs = [x]
        padding = rng.random((5, 4)) > 0.6
        padding[:, 0] = False
        kwargs = {"src_key_padding_mask": dp.tensor(padding)}
        kwargs["src_mask" if name == "encoder_layer" else "mask"] = _causal(4)
    else:
        memory = to_tensor(rng.standard_normal((5, 3, 6)), requires_grad=True)
        inputs = [x, memory]
        kwargs = {"tgt_mask": _causal(4), "memory_key_padding_mask": dp.tensor(padding)}
    weights = to_tensor(rng.standard_normal((5, 4, 6)))
    expected, expected_grads = _results_and_gradients(module, inputs, kwargs, weights)
    got, grads = _results_and_gradients(model, inputs, kwargs, weights)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    assert set(grads) == set(expected_grads) and all(t in grads for t in inputs)
    for variable in expected_grads:
        np.testing.assert_allclose(grads[variable].numpy(), expected_grads[variable].numpy(),
                                   rtol=1e-11, atol=1e-13)


def test_under_data_parallel_with_dropout_in_training(backend, rng):
    module = nn.TransformerEncoderLayer(6, 2, dim_feedforward=5, batch_first=True, dtype=F64)
    model = dp.DataParallel(module, 3, execution="inline")
    x = to_tensor(rng.standard_normal((6, 4, 6)))
    dp.manual_seed(2)
    first = model(x)
    dp.manual_seed(2)
    again = model(x)
    assert model.last_execution == "inline"  # dropout couples the rows: chunks run in turn
    np.testing.assert_array_equal(again.numpy(), first.numpy())
    assert not np.allclose(first.numpy(), module.eval()(x).numpy())


def test_data_parallel_refuses_time_major_input(rng):
    module = nn.TransformerEncoderLayer(6, 2, dim_feedforward=5, dtype=F64)  # (L, N, E)
    with pytest.raises(Exception) as caught:  # one ChunkError, or a group of them
        dp.DataParallel(module, 2, execution="threads")(to_tensor(rng.standard_normal(
            (5, 3, 6))))
    for failure in getattr(caught.value, "exceptions", [caught.value]):
        assert isinstance(failure.__cause__, ValueError)
        assert "construct the layer with batch_first=True" in str(failure.__cause__)


# ---------------------------------------------------------------------- the W6 workload
def test_w6_is_a_pre_norm_gelu_encoder_block_on_a_batch_of_sequences():
    from dparray.cli.workloads import WORKLOADS

    workload = WORKLOADS["W6"]
    dp.manual_seed(0)
    block = workload.build()
    assert isinstance(block, nn.TransformerEncoderLayer)
    assert block.norm_first and block.activation is F.gelu and block.self_attn.batch_first
    assert block.self_attn.num_heads == 4 and block.linear1.weight.shape == (1024, 256)
    x, target = workload.batch()
    assert x.shape == target.shape == (32, 128, 256) and not workload.classify


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize("layer", [nn.TransformerEncoderLayer, nn.TransformerDecoderLayer],
                         ids=lambda c: c.__name__)
@pytest.mark.parametrize("kwargs, error, message", [
    ({"activation": "tanh"}, ValueError, "activation must be one of 'relu', 'gelu', got 'tanh'"),
    ({"activation": 3}, TypeError, "activation must be 'relu', 'gelu' or a callable, got 3"),
    ({"d_model": 0}, ValueError, "d_model must be at least 1, got 0"),
    ({"nhead": 2.0}, TypeError, r"nhead must be an int, got 2.0 \(float\)"),
    ({"dim_feedforward": 0}, ValueError, "dim_feedforward must be at least 1"),
    ({"dropout": -0.1}, ValueError, r"dropout must be in \[0, 1\)"),
    ({"norm_first": "yes"}, TypeError, "norm_first must be a bool"),
    ({"batch_first": None}, TypeError, "batch_first must be a bool"),
])
def test_bad_layer_arguments(layer, kwargs, error, message):
    arguments = {"d_model": 6, "nhead": 2, **kwargs}
    with pytest.raises(error, match=f"^{layer.__name__}: {message}"):
        layer(**arguments)


def test_d_model_must_divide_into_the_heads():
    with pytest.raises(ValueError, match="embed_dim must be divisible by num_heads, got 6 and 4"):
        nn.TransformerEncoderLayer(6, 4)


@pytest.mark.parametrize("stack, layer", [
    (nn.TransformerEncoder, lambda: nn.TransformerEncoderLayer(6, 2)),
    (nn.TransformerDecoder, lambda: nn.TransformerDecoderLayer(6, 2)),
], ids=["encoder", "decoder"])
def test_bad_stack_arguments(stack, layer):
    name = stack.__name__
    kind = "TransformerEncoderLayer" if stack is nn.TransformerEncoder else \
        "TransformerDecoderLayer"
    with pytest.raises(TypeError, match=f"^{name}: the layer must be a {kind}, got "):
        stack(nn.Linear(6, 6), 2)
    with pytest.raises(ValueError, match=f"^{name}: num_layers must be at least 1, got 0"):
        stack(layer(), 0)
    with pytest.raises(TypeError, match=f"^{name}: norm must be a Module or None, got 'x'"):
        stack(layer(), 2, norm="x")


def test_a_refused_call_changes_nothing(rng):
    layer = nn.TransformerEncoderLayer(6, 2, dim_feedforward=5, batch_first=True, dtype=F64)
    before = copy.deepcopy(layer.state_dict())
    state = dp.random.get_state()
    with pytest.raises(ValueError, match=r"^MultiheadAttention: attn_mask must have shape"):
        layer(to_tensor(rng.standard_normal((3, 4, 6))), src_mask=_causal(3))
    with pytest.raises(ValueError, match=r"^MultiheadAttention: expected query \(N, L, 6\)"):
        layer(to_tensor(rng.standard_normal((3, 4, 5))))
    assert dp.random.get_state() == state
    for key, value in layer.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), before[key].numpy())
