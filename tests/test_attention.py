"""Scaled dot-product attention (one graph node) against its composition of small ops, and
MultiheadAttention (the PyTorch fixtures' coverage; ``test_torch_parity.py`` checks them), in
training, under DataParallel, and with bad arguments."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
import pytest
from conftest import to_tensor
from gradient_checks import check_gradients
from nn_helpers import assert_same_gradients, module_gradcheck
from torch_reference import load_cases

import dparray as dp
from dparray import nn
from dparray.nn import functional as F
from dparray.ops.attention import AttentionWeights, ScaledDotProductAttention
from dparray.testing import directional_gradcheck, gradcheck

F64 = dp.float64
CASES = [case for case in load_cases("attention") if case.layer == "MultiheadAttention"]


# ----------------------------------------------------------------------------- the composition
def composed_attention(q, k, v, mask=None, is_causal=False, scale=None, keep=None, p=0.0):
    """``softmax(q k^T * scale + mask) v`` in small dparray ops; a row whose scores are all
    ``-inf`` gets zeros (PyTorch's safe softmax); ``keep`` is a dropout mask."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale
    length, source = scores.shape[-2:]
    if is_causal:
        above = dp.tensor(np.triu(np.ones((length, source), dtype=bool), 1))
        scores = dp.masked_fill(scores, above, -math.inf)
    if mask is not None and mask.dtype == dp.bool:
        scores = dp.masked_fill(scores, dp.logical_not(mask), -math.inf)
    elif mask is not None:
        scores = scores + mask
    empty = (scores == -math.inf).all(axis=-1, keepdims=True)
    probs = dp.where(empty, 0.0, dp.where(empty, 0.0, scores).softmax(axis=-1))
    if keep is not None:
        probs = dp.where(keep, probs * (1.0 / (1.0 - p)), 0.0)
    return probs @ v


@dataclass
class AttentionCase:
    name: str
    query: tuple[int, ...]
    key: tuple[int, ...]
    value: tuple[int, ...]
    mask: tuple[int, ...] | None = None
    mask_kind: str = "none"  # "bool", "float" (a variable), "excluding" (bool, a row all out)
    options: dict = field(default_factory=dict)  # is_causal, scale

    def __repr__(self) -> str:
        return self.name

    def inputs(self, rng, dtype=np.float64, noncontiguous=False):
        tensors = []
        for shape in (self.query, self.key, self.value):
            a = rng.standard_normal(shape).astype(dtype)
            if noncontiguous:
                a = np.asfortranarray(a)  # the same values, column-major strides
            tensors.append(to_tensor(a, requires_grad=True))
        mask = None
        if self.mask_kind in ("bool", "excluding"):
            allowed = rng.random(self.mask) > 0.3
            allowed[..., 0] = True  # every query sees a key...
            if self.mask_kind == "excluding":
                allowed[..., 1, :] = False  # ...but the second sees none
            mask = dp.tensor(allowed)
        elif self.mask_kind == "float":
            additive = rng.standard_normal(self.mask).astype(dtype)
            additive[..., 0, 1] = -np.inf
            mask = to_tensor(additive, requires_grad=True)
        return tensors, mask

    def fused(self, q, k, v, mask=None):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **self.options)

    def composed(self, q, k, v, mask=None):
        return composed_attention(q, k, v, mask, **self.options)


CASES_SDPA = [
    AttentionCase("basic", (2, 3, 4), (2, 5, 4), (2, 5, 3)),
    AttentionCase("heads", (2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6)),
    AttentionCase("one_query", (2, 1, 4), (2, 5, 4), (2, 5, 3)),
    AttentionCase("one_key", (2, 3, 4), (2, 1, 4), (2, 1, 3)),
    AttentionCase("one_head_one_position", (1, 1, 1, 4), (1, 1, 1, 4), (1, 1, 1, 2)),
    AttentionCase("unbatched", (3, 4), (5, 4), (5, 2)),
    AttentionCase("broadcast_batch", (1, 3, 4), (2, 5, 4), (2, 5, 3)),
    AttentionCase("bool_mask", (2, 3, 4), (2, 5, 4), (2, 5, 3), (3, 5), "bool"),
    AttentionCase("bool_mask_per_batch", (2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 3),
                  (2, 1, 3, 5), "bool"),
    AttentionCase("float_mask", (2, 3, 4), (2, 5, 4), (2, 5, 3), (2, 3, 5), "float"),
    AttentionCase("float_mask_broadcast", (2, 3, 4), (2, 5, 4), (2, 5, 3), (1, 5), "float"),
    AttentionCase("row_sees_nothing", (2, 3, 4), (2, 5, 4), (2, 5, 3), (3, 5), "excluding"),
    AttentionCase("causal", (2, 3, 4), (2, 5, 4), (2, 5, 3), options={"is_causal": True}),
    AttentionCase("causal_more_queries", (2, 5, 4), (2, 3, 4), (2, 3, 3),
                  options={"is_causal": True}),
    AttentionCase("scale", (2, 3, 4), (2, 5, 4), (2, 5, 3), options={"scale": 0.3}),
]


def _variables(tensors, mask):
    return [*tensors, *([mask] if mask is not None and mask.is_variable else [])]


# ----------------------------------------------------------------------------- the node
@pytest.mark.parametrize("noncontiguous", [False, True], ids=["contiguous", "strided"])
@pytest.mark.parametrize("case", CASES_SDPA, ids=repr)
def test_value_and_gradients_equal_the_composition(case, noncontiguous, backend, kernels, rng):
    (q, k, v), mask = case.inputs(rng, noncontiguous=noncontiguous)
    fused, composed = case.fused(q, k, v, mask), case.composed(q, k, v, mask)
    assert fused.shape == composed.shape
    np.testing.assert_allclose(fused.numpy(), composed.numpy(), rtol=1e-12, atol=1e-13)
    variables = _variables([q, k, v], mask)
    got = assert_same_gradients(fused, composed, variables, rng)
    assert all(got[t].shape == t.shape for t in variables)


@pytest.mark.parametrize("case", CASES_SDPA, ids=repr)
def test_gradcheck(case, backend, kernels, rng):
    (q, k, v), mask = case.inputs(rng)
    if mask is not None and mask.is_variable:
        check_gradients(case.fused, [q, k, v, mask])
    else:
        check_gradients(lambda a, b, c: case.fused(a, b, c, mask), [q, k, v])


@pytest.mark.parametrize("case", CASES_SDPA, ids=repr)
def test_float32_stays_float32(case, backend, kernels, rng):
    (q, k, v), mask = case.inputs(rng, dtype=np.float32)
    out = case.fused(q, k, v, mask)
    assert out.dtype == dp.float32
    np.testing.assert_allclose(out.numpy(), case.composed(q, k, v, mask).numpy(), rtol=2e-5,
                               atol=2e-6)
    grads = out.sum().backward()
    for t in _variables([q, k, v], mask):
        assert grads[t].dtype == dp.float32 and grads[t].shape == t.shape


@pytest.mark.parametrize("where", ["query", "key", "value"])
@pytest.mark.parametrize("case", [CASES_SDPA[0], CASES_SDPA[7], CASES_SDPA[9]], ids=repr)
def test_nan_and_inf_propagate_as_in_the_composition(case, where, backend, kernels, rng):
    (q, k, v), mask = case.inputs(rng)
    arrays = {"query": q.numpy(), "key": k.numpy(), "value": v.numpy()}
    spoiled = arrays[where].copy()
    spoiled.reshape(-1)[0], spoiled.reshape(-1)[-1] = np.nan, np.inf
    arrays[where] = spoiled
    q, k, v = (to_tensor(arrays[name]) for name in ("query", "key", "value"))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        fused, composed = case.fused(q, k, v, mask), case.composed(q, k, v, mask)
        assert np.isnan(composed.numpy()).any()
        np.testing.assert_array_equal(np.isnan(fused.numpy()), np.isnan(composed.numpy()))
        np.testing.assert_array_equal(np.isinf(fused.numpy()), np.isinf(composed.numpy()))


def test_is_one_graph_node_saving_only_what_backward_needs(backend, kernels, rng):
    (q, k, v), mask = CASES_SDPA[9].inputs(rng)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    node = out.grad_fn
    assert isinstance(node, ScaledDotProductAttention)
    assert node.parents == [q, k, v, mask]  # straight from the inputs: nothing in between
    saved = [a for a in node.saved if a is not None]
    assert [tuple(a.shape) for a in saved] == [q.shape, k.shape, v.shape, (2, 3, 5)]
    out.sum().backward()
    assert node.saved == ()  # released after its backward


def test_the_numpy_kernel_table_runs_its_compiled_softmax(rng):
    """So that every test here with the ``kernels`` fixture checks the kernel too."""
    from dparray.backends import _numpy_kernels

    (q, k, v), mask = CASES_SDPA[9].inputs(rng)
    compiled = bool(_numpy_kernels.table())  # empty where Numba cannot run
    with dp.kernels.kernels_enabled():
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        weights = dp.ops.attention.attention_weights(q, k, mask, 0.0, False, 0.5)
    assert (type(out.grad_fn).__name__ == "AttentionKernel") is compiled
    assert (type(weights.grad_fn).__name__ == "AttentionWeightsKernel") is compiled


def test_a_query_that_sees_no_key_gets_zeros_and_passes_no_gradient(backend, kernels, rng):
    q, k, v = (to_tensor(rng.standard_normal(s), requires_grad=True)
               for s in ((2, 3, 4), (2, 5, 4), (2, 5, 3)))
    allowed = np.ones((3, 5), dtype=bool)
    allowed[1] = False
    additive = np.zeros((3, 5))
    additive[1] = -np.inf
    for mask in (dp.tensor(allowed), to_tensor(additive)):
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        np.testing.assert_array_equal(out.numpy()[:, 1], np.zeros((2, 3)))
        assert np.isfinite(out.numpy()).all()
        weights = to_tensor(rng.standard_normal(out.shape))
        grads = (out * weights).sum().backward()
        np.testing.assert_array_equal(grads[q].numpy()[:, 1], np.zeros((2, 4)))
        for t in (q, k, v):
            assert np.isfinite(grads[t].numpy()).all()
    empty = F.scaled_dot_product_attention(q, k[:, :0], v[:, :0])  # no key at all
    np.testing.assert_array_equal(empty.numpy(), np.zeros((2, 3, 3)))


def test_values_match_a_host_formula(backend, kernels, rng):
    q, k, v = (rng.standard_normal(s) for s in ((2, 3, 4), (2, 5, 4), (2, 5, 3)))
    scores = q @ k.transpose(0, 2, 1) / 2.0
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    expected = probs / probs.sum(-1, keepdims=True) @ v
    got = F.scaled_dot_product_attention(to_tensor(q), to_tensor(k), to_tensor(v))
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)


def test_dropout_draws_one_mask_from_the_current_stream(backend, kernels, rng):
    (q, k, v), _ = CASES_SDPA[0].inputs(rng)
    with dp.fork_rng(5):
        out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.4)
    with dp.fork_rng(5):
        keep = dp.Tensor(dp.random.generator(q.backend).bernoulli((2, 3, 5), 0.6), q.backend)
    composed = composed_attention(q, k, v, keep=keep, p=0.4)
    np.testing.assert_allclose(out.numpy(), composed.numpy(), rtol=1e-12, atol=1e-13)
    cotangent = to_tensor(rng.standard_normal(out.shape))
    got = (out * cotangent).sum().backward()
    want = (composed * cotangent).sum().backward()
    for t in (q, k, v):
        np.testing.assert_allclose(got[t].numpy(), want[t].numpy(), rtol=1e-10, atol=1e-12)
    node = out.grad_fn
    with dp.fork_rng(5):
        again = F.scaled_dot_product_attention(q, k, v, dropout_p=0.4)
    np.testing.assert_array_equal(again.numpy(), out.numpy())
    assert not np.allclose(out.numpy(), F.scaled_dot_product_attention(q, k, v).numpy())
    assert node.saved == ()


def test_dropout_gradients_by_finite_differences(backend, kernels, rng):
    (q, k, v), mask = CASES_SDPA[9].inputs(rng)

    def attention(a, b, c, m):
        with dp.fork_rng(3):
            return F.scaled_dot_product_attention(a, b, c, attn_mask=m, dropout_p=0.3)

    gradcheck(attention, [q, k, v, mask])


def test_attention_weights_node_equals_the_probabilities(backend, kernels, rng):
    (q, k, v), mask = CASES_SDPA[9].inputs(rng)
    from dparray.ops.attention import attention_weights

    weights = attention_weights(q, k, mask, 0.0, False, 0.5)
    assert isinstance(weights.grad_fn, AttentionWeights)
    np.testing.assert_allclose((weights @ v).numpy(),
                               composed_attention(q, k, v, mask, scale=0.5).numpy(), rtol=1e-12)
    gradcheck(lambda a, b, m: attention_weights(a, b, m, 0.0, True, 0.5), [q, k, mask])


@pytest.mark.parametrize("arguments, error, message", [
    ({"query": "q"}, TypeError, "query must be a Tensor, got 'q'$"),
    ({"key": dp.ones(2, 5, 4, dtype="int64")}, TypeError,
     "key must be a floating-point tensor, got int64"),
    ({"value": dp.ones(2, 5, 3, dtype="float32")}, TypeError,
     "query, key and value must have one dtype, got float64, float64 and float32"),
    ({"query": dp.ones(4, dtype=F64)}, ValueError, r"query must have at least 2 axes"),
    ({"key": dp.ones(2, 5, 3, dtype=F64)}, ValueError,
     r"query \(2, 3, 4\), key \(2, 5, 3\) and value \(2, 5, 3\) do not fit \(\.\.\., L, E\), "
     r"\(\.\.\., S, E\), \(\.\.\., S, Ev\)$"),
    ({"value": dp.ones(2, 4, 3, dtype=F64)}, ValueError,
     r"query \(2, 3, 4\), key \(2, 5, 4\) and value \(2, 4, 3\) do not fit"),
    ({"value": dp.ones(3, 5, 3, dtype=F64)}, ValueError,
     r"the leading axes of query \(2, 3, 4\), key \(2, 5, 4\) and value \(3, 5, 3\) cannot be "
     "broadcast together"),
    ({"attn_mask": dp.ones(3, 5, dtype="int64")}, TypeError,
     "attn_mask must be a bool or floating-point tensor, got int64"),
    ({"attn_mask": dp.ones(3, 4, dtype=F64)}, ValueError,
     r"attn_mask of shape \(3, 4\) does not broadcast to the scores' shape \(2, 3, 5\)"),
    ({"attn_mask": dp.ones(4, 2, 3, 5, dtype=F64)}, ValueError,
     r"attn_mask of shape \(4, 2, 3, 5\) does not broadcast"),
    ({"attn_mask": dp.ones(3, 5, dtype="bool"), "is_causal": True}, ValueError,
     "attn_mask and is_causal cannot both be given"),
    ({"dropout_p": 1.0}, ValueError, r"dropout_p must be in \[0, 1\), got 1.0"),
    ({"dropout_p": "0.1"}, TypeError, "dropout_p must be a number"),
    ({"is_causal": 1}, TypeError, "is_causal must be a bool, got 1"),
    ({"scale": float("nan")}, ValueError, "scale must be a finite number"),
    ({"scale": "2"}, TypeError, "scale must be a number"),
])
def test_bad_arguments(arguments, error, message):
    given = {"query": dp.ones(2, 3, 4, dtype=F64), "key": dp.ones(2, 5, 4, dtype=F64),
             "value": dp.ones(2, 5, 3, dtype=F64), **arguments}
    with pytest.raises(error, match=f"^scaled_dot_product_attention: {message}"):
        F.scaled_dot_product_attention(**given)


def test_mixing_backends_is_refused():
    q = dp.ones(2, 3, 4, dtype=F64, backend="array_api_strict")
    k, v = dp.ones(2, 5, 4, dtype=F64), dp.ones(2, 5, 3, dtype=F64)
    with pytest.raises(ValueError, match="cannot combine tensors of backends"):
        F.scaled_dot_product_attention(q, k, v)


# ----------------------------------------------------------------------------- against PyTorch
def test_the_fixtures_cover_every_configuration():
    names = {case.name for case in CASES}
    for name in ("self", "cross", "cross_batch_first", "kdim_vdim", "no_bias", "bool_masks",
                 "float_masks", "bool_and_float_masks", "per_head_mask", "weights_per_head",
                 "no_weights_fully_padded", "causal", "unbatched", "unbatched_per_head_mask"):
        assert f"mha_{name}" in names


# ----------------------------------------------------------------------------- the layer
def test_parameters_in_pytorchs_names_layout_and_initialisation():
    dp.manual_seed(0)
    mha = nn.MultiheadAttention(64, 4, dtype=F64)
    shapes = {name: p.shape for name, p in mha.named_parameters()}
    assert shapes == {"in_proj_weight": (192, 64), "in_proj_bias": (192,),
                      "out_proj.weight": (64, 64), "out_proj.bias": (64,)}
    weight = mha.in_proj_weight.numpy()
    bound = math.sqrt(6.0 / (64 + 192))  # Glorot: fan_in 64, fan_out 192
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.95 * bound
    assert abs(weight.std() - bound / math.sqrt(3.0)) < 0.05 * bound
    assert not mha.in_proj_bias.numpy().any() and not mha.out_proj.bias.numpy().any()
    assert np.abs(mha.out_proj.weight.numpy()).max() <= 1.0 / math.sqrt(64)
    separate = nn.MultiheadAttention(6, 2, kdim=5, vdim=3, bias=False)
    assert [(n, p.shape) for n, p in separate.named_parameters()] == [
        ("q_proj_weight", (6, 6)), ("k_proj_weight", (6, 5)), ("v_proj_weight", (6, 3)),
        ("out_proj.weight", (6, 6))]
    assert separate.in_proj_weight is None and separate.in_proj_bias is None
    assert mha.head_dim == 16 and mha.batch_first is False and mha.dropout == 0.0


def test_default_dtype_repr_and_weights_that_sum_to_one(backend, rng):
    mha = nn.MultiheadAttention(6, 3, batch_first=True)
    assert mha.in_proj_weight.dtype == dp.float32
    assert repr(mha).startswith("MultiheadAttention(\n  embed_dim=6, num_heads=3, "
                                "batch_first=True\n  (out_proj): Linear(")
    x = to_tensor(rng.standard_normal((2, 4, 6)).astype(np.float32))
    out, weights = mha(x, x, x)
    assert out.shape == (2, 4, 6) and weights.shape == (2, 4, 4)
    np.testing.assert_allclose(weights.numpy().sum(-1), 1.0, rtol=1e-6)


def test_need_weights_changes_only_what_is_returned(backend, rng):
    mha = nn.MultiheadAttention(6, 2, batch_first=True, dtype=F64)
    q, kv = to_tensor(rng.standard_normal((3, 4, 6))), to_tensor(rng.standard_normal((3, 5, 6)))
    padding = dp.tensor(rng.random((3, 5)) > 0.6)
    with_weights, weights = mha(q, kv, kv, key_padding_mask=padding)
    without, none = mha(q, kv, kv, key_padding_mask=padding, need_weights=False)
    assert none is None and weights.shape == (3, 4, 5)
    np.testing.assert_allclose(without.numpy(), with_weights.numpy(), rtol=1e-12, atol=1e-14)
    _, per_head = mha(q, kv, kv, key_padding_mask=padding, average_attn_weights=False)
    np.testing.assert_allclose(per_head.numpy().mean(axis=1), weights.numpy(), rtol=1e-12)
    assert not weights.numpy()[np.broadcast_to(padding.numpy()[:, None], (3, 4, 5))].any()


def test_is_causal_alone_builds_the_causal_mask(backend, rng):
    """PyTorch needs ``attn_mask`` beside ``is_causal`` (a hint); dparray builds the mask."""
    mha = nn.MultiheadAttention(6, 2, batch_first=True, dtype=F64)
    x = to_tensor(rng.standard_normal((3, 4, 6)))
    above = dp.tensor(np.triu(np.ones((4, 4), dtype=bool), 1))
    padding = dp.tensor(np.array([[False] * 3 + [True]] * 3))
    for kwargs in ({}, {"key_padding_mask": padding}):
        for need_weights in (True, False):
            explicit, _ = mha(x, x, x, attn_mask=above, need_weights=need_weights, **kwargs)
            causal, _ = mha(x, x, x, is_causal=True, need_weights=need_weights, **kwargs)
            np.testing.assert_allclose(causal.numpy(), explicit.numpy(), rtol=1e-12)
    _, weights = mha(x, x, x, is_causal=True)
    assert not weights.numpy()[:, np.triu(np.ones((4, 4), dtype=bool), 1)].any()


def test_gradients_by_finite_differences_through_the_module(backend, rng):
    mha = nn.MultiheadAttention(4, 2, kdim=3, vdim=5, batch_first=True, dtype=F64)
    q = to_tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    k = to_tensor(rng.standard_normal((2, 4, 3)), requires_grad=True)
    v = to_tensor(rng.standard_normal((2, 4, 5)), requires_grad=True)

    class Both(nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = mha

        def forward(self, a, b, c):
            out, weights = self.mha(a, b, c)
            return out.sum(axis=-1, keepdims=True) * weights

    module_gradcheck(Both(), q, k, v, check=directional_gradcheck)


def test_dropout_in_training_repeats_under_a_seed(backend, rng):
    mha = nn.MultiheadAttention(6, 2, dropout=0.5, batch_first=True, dtype=F64)
    x = to_tensor(rng.standard_normal((3, 4, 6)))
    dp.manual_seed(4)
    out, weights = mha(x, x, x, average_attn_weights=False)
    dp.manual_seed(4)
    again, weights_again = mha(x, x, x, average_attn_weights=False)
    assert out.shape == (3, 4, 6) and weights.shape == (3, 2, 4, 4)
    np.testing.assert_array_equal(again.numpy(), out.numpy())
    np.testing.assert_array_equal(weights_again.numpy(), weights.numpy())
    dropped = weights.numpy() == 0.0
    assert 0.3 < dropped.mean() < 0.7  # the weights are returned after dropout, as in PyTorch
    _, kept = mha.eval()(x, x, x, average_attn_weights=False)
    np.testing.assert_allclose(weights.numpy()[~dropped], 2.0 * kept.numpy()[~dropped],
                               rtol=1e-12)
    assert mha.eval()(x, x, x)[0].numpy().tolist() == mha(x, x, x)[0].numpy().tolist()


def test_dropout_gradients_in_training_by_finite_differences(backend, rng):
    mha = nn.MultiheadAttention(4, 2, dropout=0.3, batch_first=True, dtype=F64)
    q, k, v = (to_tensor(rng.standard_normal((2, 3, 4)), requires_grad=True) for _ in range(3))
    module_gradcheck(mha, q, k, v, output=lambda result: result[0],
                     check=directional_gradcheck)


# ----------------------------------------------------------------------------- DataParallel
def _flat(result):
    return [t for t in result if t is not None] if isinstance(result, tuple) else [result]


def _assert_same_as_unwrapped(module, model, *inputs, rng, **kwargs):
    weights = [to_tensor(rng.standard_normal(t.shape)) for t in _flat(module(*inputs, **kwargs))]

    def run(m):
        outputs = _flat(m(*inputs, **kwargs))
        loss = sum(((o * w).sum() for o, w in zip(outputs, weights, strict=True)),
                   start=dp.zeros((), dtype=F64))
        return [o.numpy() for o in outputs], loss.backward()

    expected, expected_grads = run(module)
    got, grads = run(model)
    for out, want in zip(got, expected, strict=True):
        np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-14)
    assert set(grads) == set(expected_grads)
    for variable in expected_grads:
        np.testing.assert_allclose(grads[variable].numpy(), expected_grads[variable].numpy(),
                                   rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("execution", ["threads", "inline"])
@pytest.mark.parametrize("need_weights", [True, False])
def test_under_data_parallel_same_as_unwrapped(workers, execution, need_weights, backend, rng):
    dp.manual_seed(0)
    module = nn.MultiheadAttention(6, 2, kdim=4, vdim=5, batch_first=True, dtype=F64)
    model = dp.DataParallel(module, workers, execution=execution)
    q = to_tensor(rng.standard_normal((5, 3, 6)), requires_grad=True)
    k = to_tensor(rng.standard_normal((5, 4, 4)), requires_grad=True)
    v = to_tensor(rng.standard_normal((5, 4, 5)), requires_grad=True)
    padding = rng.random((5, 4)) > 0.6
    padding[:, 0] = False
    mask = to_tensor(rng.standard_normal((3, 4)))  # (L, S): no batch axis, passed whole
    _assert_same_as_unwrapped(module, model, q, k, v, rng=rng,
                              key_padding_mask=dp.tensor(padding), attn_mask=mask,
                              need_weights=need_weights)
    assert model.last_execution == ("whole" if execution == "inline" else "threads")


def test_under_data_parallel_a_batch_sized_mask_is_replicated(backend, rng):
    module = nn.MultiheadAttention(4, 2, batch_first=True, dtype=F64)
    model = dp.DataParallel(module, 2, execution="threads", replicate=["attn_mask"])
    x = to_tensor(rng.standard_normal((4, 4, 4)), requires_grad=True)  # L == N == 4
    mask = dp.tensor(np.triu(np.ones((4, 4), dtype=bool), 1))
    _assert_same_as_unwrapped(module, model, x, x, x, rng=rng, attn_mask=mask)


def test_under_data_parallel_with_dropout_in_training(backend, rng):
    module = nn.MultiheadAttention(4, 2, dropout=0.5, batch_first=True, dtype=F64)
    assert module.couples_rows()  # the masks depend on the split: the chunks always run
    model = dp.DataParallel(module, 3, execution="inline")
    x = to_tensor(rng.standard_normal((6, 3, 4)))
    dp.manual_seed(2)
    first, _ = model(x, x, x)
    dp.manual_seed(2)
    again, _ = model(x, x, x)
    assert again.shape == (6, 3, 4) and model.last_execution == "inline"
    np.testing.assert_array_equal(again.numpy(), first.numpy())


@pytest.mark.parametrize("shape", [(5, 2, 4), (5, 4)], ids=["time_major", "unbatched"])
def test_data_parallel_refuses_input_whose_axis_0_is_the_sequence(shape, rng):
    module = nn.MultiheadAttention(4, 2, batch_first=len(shape) == 2, dtype=F64)
    x = to_tensor(rng.standard_normal(shape))
    with pytest.raises(Exception) as caught:  # one ChunkError, or a group of them
        dp.DataParallel(module, 2, execution="threads")(x, x, x)
    failures = getattr(caught.value, "exceptions", [caught.value])
    for failure in failures:
        assert isinstance(failure, dp.ChunkError)
        assert isinstance(failure.__cause__, ValueError)
        assert "DataParallel splits axis 0, which is the sequence" in str(failure.__cause__)


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("kwargs, error, message", [
    ({"embed_dim": 6, "num_heads": 4}, ValueError,
     "embed_dim must be divisible by num_heads, got 6 and 4"),
    ({"embed_dim": 0, "num_heads": 1}, ValueError, "embed_dim must be at least 1, got 0"),
    ({"embed_dim": 6.0, "num_heads": 2}, TypeError, r"embed_dim must be an int, got 6.0"),
    ({"embed_dim": 6, "num_heads": 2, "dropout": 1.0}, ValueError, r"dropout must be in"),
    ({"embed_dim": 6, "num_heads": 2, "add_bias_kv": True}, ValueError,
     r"add_bias_kv=True is not supported \(it must be False\)"),
    ({"embed_dim": 6, "num_heads": 2, "add_zero_attn": True}, ValueError,
     "add_zero_attn=True is not supported"),
    ({"embed_dim": 6, "num_heads": 2, "kdim": 0}, ValueError, "kdim must be at least 1"),
    ({"embed_dim": 6, "num_heads": 2, "batch_first": 1}, TypeError,
     "batch_first must be a bool"),
])
def test_bad_constructor_arguments(kwargs, error, message):
    with pytest.raises(error, match=f"^MultiheadAttention: {message}"):
        nn.MultiheadAttention(**kwargs)


def _inputs(rng):
    return (to_tensor(rng.standard_normal((3, 4, 6))), to_tensor(rng.standard_normal((3, 5, 6))))


@pytest.mark.parametrize("change, error, message", [
    ({"query": "x"}, TypeError, "query must be a Tensor, got 'x'$"),
    ({"key": dp.ones(3, 5, 6, dtype="int64")}, TypeError, "key must be a floating-point"),
    ({"query": dp.ones(3, 4, 5, dtype=F64)}, ValueError,
     r"expected query \(N, L, 6\), key \(N, S, 6\) and value \(N, S, 6\) \(or unbatched, "
     r"without N\), got query \(3, 4, 5\)"),
    ({"value": dp.ones(3, 4, 6, dtype=F64)}, ValueError, "expected query"),
    ({"key": dp.ones(2, 5, 6, dtype=F64), "value": dp.ones(2, 5, 6, dtype=F64)}, ValueError,
     "expected query"),
    ({"query": dp.ones(4, 6, dtype=F64)}, ValueError, "expected query"),
    ({"key_padding_mask": dp.ones(3, 4, dtype="bool")}, ValueError,
     r"key_padding_mask must have shape \(3, 5\), got shape \(3, 4\)"),
    ({"key_padding_mask": dp.ones(3, 5, dtype="int64")}, TypeError,
     "key_padding_mask must be a bool or floating-point tensor, got int64"),
    ({"attn_mask": dp.ones(5, 4, dtype="bool")}, ValueError,
     r"attn_mask must have shape \(4, 5\) or \(6, 4, 5\), got shape \(5, 4\)"),
    ({"attn_mask": [[True]]}, TypeError, "attn_mask must be a Tensor"),
    ({"need_weights": None}, TypeError, "need_weights must be a bool, got None"),
    ({"is_causal": "yes"}, TypeError, "is_causal must be a bool"),
    ({"average_attn_weights": 0}, TypeError, "average_attn_weights must be a bool"),
])
def test_bad_call_arguments_change_nothing(change, error, message, rng):
    mha = nn.MultiheadAttention(6, 2, batch_first=True, dtype=F64)
    before = {k: v.numpy().copy() for k, v in mha.state_dict().items()}
    q, kv = _inputs(rng)
    arguments = {"query": q, "key": kv, "value": kv, **change}
    state = dp.random.get_state()
    with pytest.raises(error, match=f"^MultiheadAttention: {message}"):
        mha(**arguments)
    assert dp.random.get_state() == state
    for key, value in mha.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), before[key])


def test_unbatched_key_padding_mask_has_no_batch_axis(rng):
    mha = nn.MultiheadAttention(6, 2, dtype=F64)
    q, kv = to_tensor(rng.standard_normal((4, 6))), to_tensor(rng.standard_normal((5, 6)))
    out, weights = mha(q, kv, kv, key_padding_mask=dp.tensor([False] * 4 + [True]))
    assert out.shape == (4, 6) and weights.shape == (4, 5)
    assert not weights.numpy()[:, 4].any()
    message = re.escape("key_padding_mask must have shape (5,), got shape (1, 5)")
    with pytest.raises(ValueError, match=message):
        mha(q, kv, kv, key_padding_mask=dp.tensor([[False] * 4 + [True]]))
