"""``nn.Transformer`` beyond PyTorch's numbers (which test_torch_parity.py checks against
tests/data/make_transformer_fixtures.py): the fixtures' coverage, parameter names and
initialisation, the causal mask helper, dropout in training, DataParallel, and errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor
from torch_reference import construct, load_cases

import dparray as dp
from dparray import nn

F64 = dp.float64
CASES = load_cases("transformer")


def test_the_fixtures_cover_every_configuration():
    assert {case.name for case in CASES} == {
        "transformer", "transformer_padding_masks", "transformer_batch_first_pre_norm_gelu",
        "transformer_no_bias", "transformer_unbatched", "transformer_custom_encoder"}


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_parameter_names_are_pytorchs(case):
    names = [name for name, _ in construct(case).named_parameters()]
    assert len(names) == len(set(names)) and set(names) == set(case.named("state"))


def test_generate_square_subsequent_mask_is_pytorchs(backend):
    case = next(case for case in CASES if case.name == "transformer")
    mask = nn.Transformer.generate_square_subsequent_mask(4)
    assert mask.dtype == dp.float32 and mask.backend is dp.get_backend()
    np.testing.assert_array_equal(mask.numpy(), case.arrays["kwarg.tgt_mask"])
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype="float64").dtype == F64
    assert nn.Transformer.generate_square_subsequent_mask(0).shape == (0, 0)
    moved = nn.Transformer.generate_square_subsequent_mask(3, device=dp.get_backend())
    assert moved.tolist()[0] == [0.0, -np.inf, -np.inf]
    with pytest.raises(TypeError, match=r"^generate_square_subsequent_mask: dtype must be "
                                        r"floating, got 'int64'"):
        nn.Transformer.generate_square_subsequent_mask(3, dtype="int64")
    with pytest.raises(ValueError, match=r"^generate_square_subsequent_mask: sz must be at "
                                         r"least 0, got -1"):
        nn.Transformer.generate_square_subsequent_mask(-1)


def test_weights_start_from_xavier_uniform_and_the_rest_as_the_layers_start(backend):
    dp.manual_seed(0)
    model = nn.Transformer(d_model=16, nhead=4, num_encoder_layers=1, num_decoder_layers=1,
                           dim_feedforward=32, dtype=F64)
    w = model.encoder.layers[0].linear1.weight.numpy()
    bound = np.sqrt(6.0 / (16 + 32))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    norm = model.decoder.norm
    assert norm.weight.tolist() == [1.0] * 16 and norm.bias.tolist() == [0.0] * 16
    assert model.encoder.layers[0].self_attn.in_proj_bias.tolist() == [0.0] * 48
    assert model.d_model == 16 and model.nhead == 4 and model.batch_first is False
    assert [name for name, _ in model.named_children()] == ["encoder", "decoder"]


def test_it_is_the_encoder_then_the_decoder(backend, rng):
    dp.manual_seed(1)
    model = nn.Transformer(d_model=6, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                           dim_feedforward=5, batch_first=True, dtype=F64).eval()
    src = to_tensor(rng.standard_normal((3, 5, 6)))
    tgt = to_tensor(rng.standard_normal((3, 4, 6)))
    mask = nn.Transformer.generate_square_subsequent_mask(4, dtype="float64")
    padding = dp.tensor(rng.random((3, 5)) > 0.7)
    expected = model.decoder(tgt, model.encoder(src, src_key_padding_mask=padding),
                             tgt_mask=mask, memory_key_padding_mask=padding)
    got = model(src, tgt, tgt_mask=mask, src_key_padding_mask=padding,
                memory_key_padding_mask=padding)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    causal = model(src, tgt, tgt_is_causal=True)
    np.testing.assert_allclose(causal.numpy(), model(src, tgt, tgt_mask=mask).numpy(),
                               rtol=1e-13)


def test_dropout_acts_in_training_only(backend, rng):
    model = nn.Transformer(d_model=6, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                           dim_feedforward=5, dropout=0.3, batch_first=True, dtype=F64)
    src, tgt = to_tensor(rng.standard_normal((2, 5, 6))), to_tensor(rng.standard_normal(
        (2, 4, 6)))
    dp.manual_seed(3)
    first = model(src, tgt)
    dp.manual_seed(3)
    np.testing.assert_array_equal(model(src, tgt).numpy(), first.numpy())
    model.training = False  # PyTorch's attribute: this module only
    assert model.encoder.training is True
    model.eval()
    evaluated = model(src, tgt)
    assert not np.allclose(evaluated.numpy(), first.numpy())
    np.testing.assert_array_equal(model(src, tgt).numpy(), evaluated.numpy())


@pytest.mark.parametrize("workers", [2, 3])
def test_under_data_parallel_same_as_unwrapped(workers, backend, rng):
    dp.manual_seed(0)
    module = nn.Transformer(d_model=6, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                            dim_feedforward=5, dropout=0.0, batch_first=True, dtype=F64)
    model = dp.DataParallel(module, workers, execution="threads")
    src = to_tensor(rng.standard_normal((5, 4, 6)), requires_grad=True)
    tgt = to_tensor(rng.standard_normal((5, 3, 6)), requires_grad=True)
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype="float64")
    weights = to_tensor(rng.standard_normal((5, 3, 6)))
    results = []
    for runner in (module, model):
        out = runner(src, tgt, tgt_mask=mask)
        results.append((out.numpy(), (out * weights).sum().backward()))
    (expected, expected_grads), (got, grads) = results
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    assert set(grads) == set(expected_grads)
    for variable in expected_grads:
        np.testing.assert_allclose(grads[variable].numpy(), expected_grads[variable].numpy(),
                                   rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"num_encoder_layers": 0}, ValueError, "num_encoder_layers must be at least 1, got 0"),
    ({"num_decoder_layers": 1.5}, TypeError, "num_decoder_layers must be an int"),
    ({"custom_encoder": "encoder"}, TypeError,
     "custom_encoder must be a Module or None, got 'encoder'"),
    ({"activation": "swish"}, ValueError, "activation must be one of 'relu', 'gelu'"),
    ({"d_model": 6, "nhead": 4}, ValueError, "embed_dim must be divisible by num_heads"),
])
def test_bad_arguments_are_refused(kwargs, error, message):
    arguments = {"d_model": 8, "nhead": 2, "dim_feedforward": 4, **kwargs}
    with pytest.raises(error, match=message):
        nn.Transformer(**arguments)


def test_inputs_of_different_batches_or_widths_are_refused(backend, rng):
    model = nn.Transformer(d_model=6, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                           dim_feedforward=5, dtype=F64)
    src = to_tensor(rng.standard_normal((5, 3, 6)))
    with pytest.raises(ValueError, match=r"^Transformer: src and tgt must have one batch size "
                                         r"\(axis 1\), got shapes \(5, 3, 6\) and \(4, 2, 6\)"):
        model(src, to_tensor(rng.standard_normal((4, 2, 6))))
    with pytest.raises(ValueError, match=r"^Transformer: src and tgt must have d_model=6 "
                                         r"features in their last axis"):
        model(src, to_tensor(rng.standard_normal((4, 3, 5))))
    with pytest.raises(TypeError, match=r"^Transformer: tgt must be a Tensor"):
        model(src, [[1.0]])
