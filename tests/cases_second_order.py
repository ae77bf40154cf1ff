"""Cases for second derivatives beyond the op table: every fused op (each reference a kernel
table names, called as layers call it) and every loss, as functions of float64 tensors.

Constants -- class labels, masks, running statistics -- are built inside the functions, so
every input is a variable. A dropout draws its mask inside ``dp.fork_rng``, the same mask on
every call (finite differences evaluate the function many times). The domains keep inputs away
from kinks (``away``, ``distinct``, ``unit`` for probabilities).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from cases import draw

import dparray as dp
from dparray.nn import functional as F
from dparray.ops.attention import attention_weights
from dparray.ops.elementwise import AsType
from dparray.ops.recurrent import gru_sequence, lstm_sequence, rnn_sequence


@dataclass
class GradCase:
    """A function of float tensors, the shapes and domains of its inputs."""

    name: str
    function: Callable[..., dp.Tensor]
    shapes: list[tuple[int, ...]]
    domains: list[str] = field(default_factory=list)

    def inputs(self, rng: np.random.Generator) -> list[np.ndarray]:
        domains = self.domains or ["normal"] * len(self.shapes)
        arrays = []
        for shape, domain in zip(self.shapes, domains, strict=True):
            if domain == "probability":
                arrays.append(rng.uniform(0.1, 0.9, shape))
            else:
                arrays.append(draw(rng, shape, domain))
        return arrays

    def __repr__(self) -> str:
        return self.name


def _t(array):
    return dp.tensor(np.asarray(array))


LABELS = np.array([2, 0, 3, 1, 3, 2])
BOOL_MASK = np.array([[True, False, True, True, False], [True, True, False, True, True],
                      [False, True, True, True, True]])


def _dropped(function: Callable[..., dp.Tensor], seed: int = 3) -> Callable[..., dp.Tensor]:
    def call(*tensors: dp.Tensor) -> dp.Tensor:
        with dp.fork_rng(seed):
            return function(*tensors)
    return call


def _eval_batch_norm(x, w, b):
    mean, var = _t([0.1, -0.2, 0.3]), _t([0.5, 1.5, 2.0])
    return F.batch_norm(x, mean, var, w, b, training=False)


FUSED = [
    GradCase("linear", F.linear, [(4, 3), (2, 3), (2,)]),
    GradCase("linear_3d", F.linear, [(2, 2, 3), (2, 3), (2,)]),
    GradCase("layer_norm", lambda x, w, b: F.layer_norm(x, (5,), w, b), [(4, 5), (5,), (5,)]),
    GradCase("layer_norm_two_axes", lambda x, w, b: F.layer_norm(x, (2, 3), w, b),
             [(2, 2, 3), (2, 3), (2, 3)]),
    GradCase("batch_norm_train", lambda x, w, b: F.batch_norm(x, None, None, w, b,
                                                              training=True),
             [(5, 3), (3,), (3,)]),
    GradCase("batch_norm_train_4d", lambda x, w, b: F.batch_norm(x, None, None, w, b,
                                                                 training=True),
             [(3, 2, 2, 3), (2,), (2,)]),
    GradCase("batch_norm_eval", _eval_batch_norm, [(4, 3, 2), (3,), (3,)]),
    GradCase("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), [(2, 4, 3), (4,), (4,)]),
    GradCase("instance_norm", lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
             [(2, 3, 4), (3,), (3,)]),
    GradCase("rms_norm", lambda x, w: F.rms_norm(x, 4, w, eps=1e-5), [(3, 4), (4,)]),
    GradCase("softmax_last", lambda x: F.softmax(x, dim=-1), [(3, 5)]),
    GradCase("softmax_first", lambda x: F.softmax(x, dim=0), [(3, 5)]),
    GradCase("log_softmax", lambda x: F.log_softmax(x, dim=1), [(2, 4, 3)]),
    GradCase("gelu", F.gelu, [(3, 4)]),
    GradCase("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), [(3, 4)]),
    GradCase("relu", F.relu, [(3, 4)], ["away"]),
    GradCase("dropout", _dropped(lambda x: F.dropout(x, 0.4)), [(4, 5)]),
    GradCase("dropout_of_tanh", _dropped(lambda x: F.dropout(x.tanh(), 0.3)), [(4, 5)]),
    GradCase("conv2d", lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2),
                                                dilation=(1, 2)),
             [(2, 2, 5, 6), (3, 2, 3, 2), (3,)]),
    GradCase("conv2d_groups", lambda x, w: F.conv2d(x, w, groups=2, padding=1),
             [(1, 4, 4, 3), (2, 2, 3, 3)]),
    GradCase("conv1d", lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1),
             [(2, 3, 7), (2, 3, 3), (2,)]),
    GradCase("conv_transpose2d", lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2,
                                                                    padding=1),
             [(1, 2, 3, 3), (2, 3, 3, 2), (3,)]),
    GradCase("conv_transpose1d", lambda x, w: F.conv_transpose1d(x, w, stride=2),
             [(2, 2, 4), (2, 1, 3)]),
    GradCase("max_pool2d", lambda x: F.max_pool2d(x, 2, stride=1, padding=1),
             [(1, 2, 4, 3)], ["distinct"]),
    GradCase("max_pool1d", lambda x: F.max_pool1d(x, 3, stride=2), [(2, 2, 7)], ["distinct"]),
    GradCase("avg_pool2d", lambda x: F.avg_pool2d(x, (2, 3), stride=1, padding=1),
             [(1, 2, 4, 4)]),
    GradCase("avg_pool1d", lambda x: F.avg_pool1d(x, 2), [(2, 3, 6)]),
    GradCase("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (2, 3)),
             [(1, 2, 5, 4)]),
    GradCase("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, (2, 2)),
             [(1, 2, 5, 4)], ["distinct"]),
    GradCase("interpolate_bilinear", lambda x: F.interpolate(x, size=(5, 3), mode="bilinear"),
             [(1, 2, 3, 4)]),
    GradCase("interpolate_nearest", lambda x: F.interpolate(x, scale_factor=2.0), [(1, 1, 2, 3)]),
    GradCase("embedding", lambda w: F.embedding(_t([[1, 0], [3, 1]]), w), [(4, 3)]),
    GradCase("attention", F.scaled_dot_product_attention, [(2, 3, 4), (2, 5, 4), (2, 5, 3)]),
    GradCase("attention_float_mask", lambda q, k, v, m: F.scaled_dot_product_attention(
        q, k, v, attn_mask=m), [(3, 4), (5, 4), (5, 2), (3, 5)]),
    GradCase("attention_bool_mask", lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, attn_mask=_t(BOOL_MASK)), [(3, 4), (5, 4), (5, 2)]),
    GradCase("attention_causal", lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, is_causal=True), [(2, 4, 3), (2, 4, 3), (2, 4, 2)]),
    GradCase("attention_dropout", _dropped(lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, dropout_p=0.3)), [(3, 4), (5, 4), (5, 2)]),
    GradCase("attention_weights", lambda q, k: attention_weights(q, k, None, 0.0, False, 0.5),
             [(2, 3, 4), (2, 5, 4)]),
    GradCase("attention_weights_dropout", _dropped(
        lambda q, k: attention_weights(q, k, None, 0.25, False, 0.5)), [(3, 4), (5, 4)]),
    GradCase("lstm_sequence", lstm_sequence, [(3, 2, 8), (2, 2), (2, 2), (8, 2)]),
    GradCase("lstm_sequence_reverse", lambda p, h, c, w: lstm_sequence(p, h, c, w, reverse=True),
             [(2, 1, 4), (1, 1), (1, 1), (4, 1)]),
    # the cast node itself (its floating casts round; here float64 to float64, so finite
    # differences see its rule exactly: the gradient passes through, cast back by the engine)
    GradCase("astype_node", lambda x: AsType(x.data.dtype)(x) ** 3, [(3, 2)]),
    GradCase("gru_sequence", gru_sequence, [(3, 2, 6), (2, 2), (6, 2), (6,)]),
    GradCase("gru_sequence_reverse_no_bias",
             lambda p, h, w: gru_sequence(p, h, w, None, reverse=True),
             [(2, 1, 3), (1, 1), (3, 1)]),
    GradCase("rnn_sequence", rnn_sequence, [(3, 2, 2), (2, 2), (2, 2)]),
    GradCase("rnn_sequence_relu_reverse",
             lambda p, h, w: rnn_sequence(p, h, w, "relu", reverse=True),
             [(2, 1, 3), (1, 3), (3, 3)]),
]


def _reductions(name: str, function: Callable[..., dp.Tensor], shapes: list[tuple[int, ...]],
                domains: list[str] | None = None) -> list[GradCase]:
    return [GradCase(f"{name}_{r}", lambda *t, r=r: function(*t, reduction=r), shapes,
                     domains or []) for r in ("mean", "sum", "none")]


LOSSES = [
    *_reductions("mse_loss", F.mse_loss, [(4, 3), (4, 3)]),
    *_reductions("l1_loss", lambda x, y, reduction: F.l1_loss(x, y, reduction),
                 [(3, 4), (3, 4)], ["distinct", "normal"]),
    *_reductions("cross_entropy", lambda x, reduction: F.cross_entropy(
        x, _t(LABELS), reduction=reduction), [(6, 4)]),
    GradCase("cross_entropy_weight_smoothing", lambda x: F.cross_entropy(
        x, _t(LABELS), _t([1.0, 0.5, 2.0, 1.5]), label_smoothing=0.2), [(6, 4)]),
    GradCase("cross_entropy_ignore_index", lambda x: F.cross_entropy(
        x, _t(LABELS), ignore_index=3), [(6, 4)]),
    GradCase("cross_entropy_spatial", lambda x: F.cross_entropy(
        x, _t([[1, 0, 2], [2, 2, 0]])), [(2, 3, 3)]),
    GradCase("cross_entropy_probabilities", lambda x, p: F.cross_entropy(x, p.softmax(axis=1)),
             [(3, 4), (3, 4)]),
    GradCase("cross_entropy_probabilities_smoothing", lambda x, p: F.cross_entropy(
        x, p.softmax(axis=1), _t([1.0, 0.5, 2.0, 1.5]), label_smoothing=0.1, reduction="sum"),
             [(3, 4), (3, 4)]),
    *_reductions("nll_loss", lambda x, reduction: F.nll_loss(
        F.log_softmax(x, dim=1), _t(LABELS), reduction=reduction), [(6, 4)]),
    *_reductions("binary_cross_entropy_with_logits", lambda x, y, reduction:
                 F.binary_cross_entropy_with_logits(x, y, _t([1.0, 2.0, 0.5]),
                                                    pos_weight=_t([1.5, 1.0, 0.5]),
                                                    reduction=reduction),
                 [(4, 3), (4, 3)], ["normal", "probability"]),
    *_reductions("binary_cross_entropy_with_logits_plain", lambda x, y, reduction:
                 F.binary_cross_entropy_with_logits(x, y, reduction=reduction),
                 [(4, 3), (4, 3)], ["normal", "probability"]),
    *_reductions("binary_cross_entropy", lambda x, y, reduction: F.binary_cross_entropy(
        x, y, reduction=reduction), [(4, 3), (4, 3)], ["probability", "probability"]),
    *_reductions("huber_loss", lambda x, y, reduction: F.huber_loss(x, y, reduction, delta=0.7),
                 [(3, 4), (3, 4)], ["distinct", "normal"]),
    *_reductions("smooth_l1_loss", lambda x, y, reduction: F.smooth_l1_loss(
        x, y, reduction, beta=0.6), [(3, 4), (3, 4)], ["distinct", "normal"]),
    *_reductions("kl_div", lambda x, y, reduction: F.kl_div(
        F.log_softmax(x, dim=1), y, reduction), [(3, 4), (3, 4)], ["normal", "probability"]),
    GradCase("kl_div_log_target", lambda x, y: F.kl_div(
        F.log_softmax(x, dim=1), F.log_softmax(y, dim=1), "batchmean", log_target=True),
             [(3, 4), (3, 4)]),
    *_reductions("cosine_embedding_loss", lambda a, b, reduction: F.cosine_embedding_loss(
        a, b, _t([1, -1, -1, 1]), margin=-0.5, reduction=reduction), [(4, 3), (4, 3)]),
    *_reductions("margin_ranking_loss", lambda a, b, reduction: F.margin_ranking_loss(
        a, b, _t([1.0, -1.0, 1.0, -1.0, 1.0]), margin=0.1, reduction=reduction),
                 [(5,), (5,)], ["distinct", "distinct"]),
]

SECOND_ORDER_CASES = FUSED + LOSSES


def fixture_keys(cases: list) -> list[str]:
    """Each case's key in ``tests/data/second_order.safetensors``: its name, with ``#2``,
    ``#3``... for a name met again (``softplus`` is both an op and an activation case)."""
    seen: dict[str, int] = {}
    keys = []
    for case in cases:
        seen[case.name] = seen.get(case.name, 0) + 1
        keys.append(case.name if seen[case.name] == 1 else f"{case.name}#{seen[case.name]}")
    return keys
