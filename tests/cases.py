"""Declarative op cases: a function of tensors, how to draw its inputs, and a reference.

Inputs are drawn in float64 from a named domain that keeps them away from kinks and poles
(ReLU at 0, ties of max, log at 0), as Chainer's op tests do. ``reference`` computes the same
value with NumPy or ``math`` on the host, independently of dparray.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import dparray as dp

_erf = np.vectorize(math.erf)


def draw(rng: np.random.Generator, shape: tuple[int, ...], domain: str) -> np.ndarray:
    """Float64 test data of ``shape`` from ``domain``."""
    if domain == "normal":
        return rng.standard_normal(shape)
    if domain == "positive":
        return rng.uniform(0.5, 2.0, shape)
    if domain == "away":  # |x| in [0.2, 1.5], either sign: away from 0
        return rng.uniform(0.2, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    if domain == "distinct":  # all values at least 0.1 apart: no ties
        n = math.prod(shape)
        return (rng.permutation(n).astype(np.float64) * 0.1 - 0.05 * n).reshape(shape)
    if domain == "wide":
        return rng.uniform(-30.0, 30.0, shape)
    raise ValueError(domain)


@dataclass
class Case:
    name: str
    function: Callable[..., dp.Tensor]
    shapes: list[tuple[int, ...]]
    reference: Callable[..., np.ndarray]
    domains: list[str] = field(default_factory=list)
    noncontiguous: bool = False

    def inputs(self, rng: np.random.Generator) -> list[np.ndarray]:
        domains = self.domains or ["normal"] * len(self.shapes)
        arrays = []
        for shape, domain in zip(self.shapes, domains, strict=True):
            if self.noncontiguous and len(shape) >= 2:
                arrays.append(draw(rng, shape[::-1], domain).T)  # a transposed view
            else:
                arrays.append(draw(rng, shape, domain))
        return arrays

    def __repr__(self) -> str:
        return self.name


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _logsumexp(x: np.ndarray, axis: Any, keepdims: bool = False) -> np.ndarray:
    m = x.max(axis=axis, keepdims=True)
    out = m + np.log(np.exp(x - m).sum(axis=axis, keepdims=True))
    return out if keepdims else np.squeeze(out, axis=axis)


def _gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def _softplus(x: np.ndarray, beta: float) -> np.ndarray:
    return np.array([math.log1p(math.exp(beta * v)) / beta for v in x.ravel()]).reshape(x.shape)


ARITHMETIC = [
    Case("add_broadcast", lambda a, b: a + b, [(3, 4), (4,)], np.add),
    Case("add_both_broadcast", lambda a, b: a + b, [(2, 1, 3), (4, 1)], np.add),
    Case("add_scalar_left", lambda a: 2.5 + a, [(3,)], lambda a: 2.5 + a),
    Case("sub_broadcast", lambda a, b: a - b, [(3, 4), (3, 1)], np.subtract),
    Case("rsub_scalar", lambda a: 1.0 - a, [(2, 3)], lambda a: 1.0 - a),
    Case("mul_broadcast", lambda a, b: a * b, [(2, 3), (2, 1)], np.multiply),
    Case("mul_noncontiguous", lambda a, b: a * b, [(3, 4), (3, 4)], np.multiply,
         noncontiguous=True),
    Case("div_broadcast", lambda a, b: a / b, [(3, 4), (4,)], np.divide, ["normal", "positive"]),
    Case("rdiv_scalar", lambda a: 2.0 / a, [(5,)], lambda a: 2.0 / a, ["positive"]),
    Case("pow_scalar", lambda a: a**3, [(2, 3)], lambda a: a**3),
    Case("pow_tensor", lambda a, b: a**b, [(2, 3), (3,)], np.power, ["positive", "normal"]),
    Case("rpow_scalar", lambda a: 2.0**a, [(4,)], lambda a: 2.0**a),
    Case("neg", lambda a: -a, [(3, 2)], np.negative),
]

LINALG = [
    Case("matmul_2d", dp.matmul, [(3, 4), (4, 5)], np.matmul),
    Case("matmul_2d_noncontiguous", dp.matmul, [(3, 4), (4, 5)], np.matmul, noncontiguous=True),
    Case("matmul_vec_mat", dp.matmul, [(4,), (4, 5)], np.matmul),
    Case("matmul_mat_vec", dp.matmul, [(3, 4), (4,)], np.matmul),
    Case("matmul_vec_vec", dp.matmul, [(4,), (4,)], np.matmul),
    Case("matmul_batched", dp.matmul, [(2, 3, 4), (4, 5)], np.matmul),
    Case("matmul_batch_broadcast", dp.matmul, [(2, 3, 4), (1, 4, 2)], np.matmul),
    Case("matmul_batched_vec", dp.matmul, [(2, 3, 4), (4,)], np.matmul),
    Case("matmul_vec_batched", dp.matmul, [(4,), (2, 4, 3)], np.matmul),
]

ELEMENTWISE = [
    Case("exp", dp.exp, [(3, 4)], np.exp),
    Case("log", dp.log, [(3, 4)], np.log, ["positive"]),
    Case("sqrt", dp.sqrt, [(3, 4)], np.sqrt, ["positive"]),
    Case("abs", dp.abs, [(3, 4)], np.abs, ["away"]),
    Case("tanh", dp.tanh, [(3, 4)], np.tanh),
    Case("sigmoid", dp.sigmoid, [(3, 4)], lambda x: 1 / (1 + np.exp(-x))),
    Case("sigmoid_wide", dp.sigmoid, [(6,)], lambda x: 1 / (1 + np.exp(-x)), ["wide"]),
    Case("relu", dp.relu, [(3, 4)], lambda x: np.where(x > 0, x, 0.0), ["away"]),
    Case("gelu", dp.gelu, [(3, 4)], lambda x: x * 0.5 * (1 + _erf(x / math.sqrt(2)))),
    Case("gelu_tanh", lambda x: dp.gelu(x, approximate="tanh"), [(3, 4)], _gelu_tanh),
    Case("softplus", dp.softplus, [(3, 4)], lambda x: _softplus(x, 1.0)),
    Case("softplus_beta", lambda x: dp.softplus(x, beta=2.0), [(3, 4)],
         lambda x: _softplus(x, 2.0)),
    Case("maximum", dp.maximum, [(3, 4), (4,)], np.maximum, ["distinct", "distinct"]),
    Case("minimum", dp.minimum, [(3, 4), (3, 1)], np.minimum, ["distinct", "distinct"]),
    Case("maximum_scalar", lambda a: dp.maximum(a, 0.0), [(3, 4)],
         lambda a: np.maximum(a, 0.0), ["away"]),
    Case("clip", lambda x: dp.clip(x, -0.55, 0.75), [(4, 5)], lambda x: np.clip(x, -0.55, 0.75),
         ["distinct"]),
    Case("clip_lower_only", lambda x: x.clip(min=0.05), [(4, 5)], lambda x: np.maximum(x, 0.05),
         ["distinct"]),
    Case("where", lambda a, b: dp.where(a > 0, a, b), [(3, 4), (4,)],
         lambda a, b: np.where(a > 0, a, b), ["away", "normal"]),
]

REDUCTIONS = [
    Case("sum_all", dp.sum, [(3, 4)], np.sum),
    Case("sum_axis", lambda x: x.sum(axis=1), [(3, 4)], lambda x: x.sum(axis=1)),
    Case("sum_axes_keepdims", lambda x: x.sum(axis=(0, 2), keepdims=True), [(2, 3, 4)],
         lambda x: x.sum(axis=(0, 2), keepdims=True)),
    Case("sum_negative_axis", lambda x: x.sum(axis=-1), [(2, 3, 4)], lambda x: x.sum(axis=-1),
         noncontiguous=True),
    Case("mean_all", dp.mean, [(3, 4)], np.mean),
    Case("mean_axis_keepdims", lambda x: x.mean(axis=0, keepdims=True), [(3, 4)],
         lambda x: x.mean(axis=0, keepdims=True)),
    Case("max_all", dp.max, [(3, 4)], np.max, ["distinct"]),
    Case("max_axis", lambda x: x.max(axis=1), [(3, 4)], lambda x: x.max(axis=1), ["distinct"]),
    Case("min_axis_keepdims", lambda x: x.min(axis=0, keepdims=True), [(3, 4)],
         lambda x: x.min(axis=0, keepdims=True), ["distinct"]),
    Case("var_all", dp.var, [(3, 4)], np.var),
    Case("var_axis_corrected", lambda x: x.var(axis=1, correction=1), [(3, 4)],
         lambda x: x.var(axis=1, ddof=1)),
    Case("logsumexp_all", dp.logsumexp, [(3, 4)], lambda x: _logsumexp(x, None)),
    Case("logsumexp_axis", lambda x: x.logsumexp(axis=1, keepdims=True), [(3, 4)],
         lambda x: _logsumexp(x, 1, keepdims=True)),
    Case("softmax", dp.softmax, [(3, 4)], lambda x: _softmax(x, -1)),
    Case("softmax_axis0", lambda x: x.softmax(axis=0), [(3, 4)], lambda x: _softmax(x, 0)),
    Case("log_softmax", dp.log_softmax, [(3, 4)], lambda x: np.log(_softmax(x, -1))),
]

SHAPE = [
    Case("reshape", lambda x: x.reshape(4, -1), [(2, 3, 2)], lambda x: x.reshape(4, -1)),
    Case("reshape_noncontiguous", lambda x: x.reshape(-1), [(3, 4)], lambda x: x.reshape(-1),
         noncontiguous=True),
    Case("permute", lambda x: x.permute(2, 0, 1), [(2, 3, 4)],
         lambda x: x.transpose(2, 0, 1)),
    Case("transpose", lambda x: x.transpose(0, 2), [(2, 3, 4)], lambda x: x.swapaxes(0, 2)),
    Case("T", lambda x: x.T, [(3, 4)], lambda x: x.T),
    Case("broadcast_to", lambda x: x.broadcast_to((2, 3, 4)), [(3, 1)],
         lambda x: np.broadcast_to(x, (2, 3, 4))),
    Case("expand", lambda x: x.expand(2, -1, 4), [(3, 1)],
         lambda x: np.broadcast_to(x, (2, 3, 4))),
    Case("squeeze", lambda x: x.squeeze(), [(1, 3, 1)], np.squeeze),
    Case("squeeze_axis", lambda x: x.squeeze(0), [(1, 3, 1)], lambda x: x.squeeze(0)),
    Case("unsqueeze", lambda x: x.unsqueeze(1), [(3, 4)], lambda x: x[:, None]),
    Case("flatten", lambda x: x.flatten(1), [(2, 3, 4)], lambda x: x.reshape(2, 12)),
    Case("getitem_slices", lambda x: x[1:, ::2], [(3, 5)], lambda x: x[1:, ::2]),
    Case("getitem_int", lambda x: x[1], [(3, 4)], lambda x: x[1]),
    Case("getitem_mixed", lambda x: x[None, ..., -1, 1:3], [(2, 3, 4)],
         lambda x: x[None, ..., -1, 1:3]),
    Case("getitem_negative_step", lambda x: x[::-1], [(4, 2)], lambda x: x[::-1]),
    Case("take_repeats", lambda x: x[[2, 0, 2, 2]], [(3, 4)], lambda x: x[[2, 0, 2, 2]]),
    Case("take_axis1", lambda x: x[:, [1, -1, 1]], [(3, 4)], lambda x: x[:, [1, -1, 1]]),
    Case("take_2d_index", lambda x: dp.take(x, [[0, 1], [1, 1]], axis=0), [(3, 2)],
         lambda x: x[np.array([[0, 1], [1, 1]])]),
    Case("cat", lambda a, b: dp.cat([a, b], axis=1), [(2, 3), (2, 1)],
         lambda a, b: np.concatenate([a, b], axis=1)),
    Case("stack", lambda a, b: dp.stack([a, b], axis=-1), [(2, 3), (2, 3)],
         lambda a, b: np.stack([a, b], axis=-1)),
    Case("split", lambda x: dp.cat(x.split([1, 3], axis=1)[::-1], axis=1), [(2, 4)],
         lambda x: np.concatenate([x[:, 1:], x[:, :1]], axis=1)),
    Case("chunk", lambda x: dp.stack(x.chunk(2)[::-1]), [(4, 3)],
         lambda x: np.stack([x[2:], x[:2]])),
]

ALL_CASES = ARITHMETIC + LINALG + ELEMENTWISE + REDUCTIONS + SHAPE
