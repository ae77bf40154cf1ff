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
    if domain == "unit":  # inside (-1, 1), away from its ends: asin, acos, atanh
        return rng.uniform(-0.9, 0.9, shape)
    if domain == "above_one":  # acosh
        return rng.uniform(1.2, 3.0, shape)
    if domain == "with_zeros":  # every third element exactly 0: prod and cumprod at zeros
        x = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
        x.reshape(-1)[::3] = 0.0
        return x
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


def _topk(x: np.ndarray, k: int, axis: int, largest: bool = True) -> np.ndarray:
    order = np.argsort(-x if largest else x, axis=axis, kind="stable")
    return np.take_along_axis(x, np.take(order, np.arange(k), axis=axis), axis=axis)


def _lerp(start: np.ndarray, end: np.ndarray, weight: Any) -> np.ndarray:
    return start + weight * (end - start)


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
    Case("remainder", lambda a, b: a % b, [(3, 4), (4,)], np.remainder, ["normal", "positive"]),
    Case("remainder_negative_divisor", lambda a, b: a % -b, [(3, 4), (3, 1)],
         lambda a, b: np.remainder(a, -b), ["normal", "positive"]),
    Case("rremainder_scalar", lambda b: 2.5 % b, [(5,)], lambda b: np.remainder(2.5, b),
         ["positive"]),
    Case("floor_divide", lambda a, b: a // b, [(3, 4), (4,)], np.floor_divide,
         ["normal", "positive"]),
    Case("lerp_scalar_weight", lambda a, b: dp.lerp(a, b, 0.3), [(3, 4), (4,)],
         lambda a, b: _lerp(a, b, 0.3)),
    Case("lerp_tensor_weight", dp.lerp, [(3, 4), (3, 4), (3, 4)], _lerp),
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

TRIGONOMETRIC = [
    Case("sin", dp.sin, [(3, 4)], np.sin),
    Case("cos", dp.cos, [(3, 4)], np.cos),
    Case("tan", dp.tan, [(3, 4)], np.tan, ["unit"]),
    Case("asin", dp.asin, [(3, 4)], np.arcsin, ["unit"]),
    Case("acos", dp.acos, [(3, 4)], np.arccos, ["unit"]),
    Case("atan", dp.atan, [(3, 4)], np.arctan),
    Case("atan2", dp.atan2, [(3, 4), (4,)], np.arctan2, ["away", "away"]),
    Case("sinh", dp.sinh, [(3, 4)], np.sinh),
    Case("cosh", dp.cosh, [(3, 4)], np.cosh),
    Case("asinh", dp.asinh, [(3, 4)], np.arcsinh),
    Case("acosh", dp.acosh, [(3, 4)], np.arccosh, ["above_one"]),
    Case("atanh", dp.atanh, [(3, 4)], np.arctanh, ["unit"]),
    Case("sin_noncontiguous", lambda x: x.sin(), [(3, 4)], np.sin, noncontiguous=True),
]

ROUNDING = [  # gradient 0: normal inputs are almost surely away from the jumps
    Case("floor", dp.floor, [(3, 4)], np.floor),
    Case("ceil", dp.ceil, [(3, 4)], np.ceil),
    Case("round", dp.round, [(3, 4)], np.round),
    Case("round_decimals", lambda x: x.round(decimals=1), [(3, 4)],
         lambda x: np.round(x * 10.0) / 10.0),
    Case("round_negative_decimals", lambda x: (x * 100.0).round(decimals=-1), [(3, 4)],
         lambda x: np.round(x * 100.0 / 10.0) * 10.0),
    Case("trunc", dp.trunc, [(3, 4)], np.trunc),
    Case("sign", dp.sign, [(3, 4)], np.sign, ["away"]),
]

EXPONENTIAL = [
    Case("exp2", dp.exp2, [(3, 4)], np.exp2),
    Case("expm1", dp.expm1, [(3, 4)], np.expm1),
    Case("log2", dp.log2, [(3, 4)], np.log2, ["positive"]),
    Case("log10", dp.log10, [(3, 4)], np.log10, ["positive"]),
    Case("log1p", dp.log1p, [(3, 4)], np.log1p, ["positive"]),
    Case("rsqrt", dp.rsqrt, [(3, 4)], lambda x: 1.0 / np.sqrt(x), ["positive"]),
    Case("erf", dp.erf, [(3, 4)], _erf),
    Case("logaddexp", dp.logaddexp, [(3, 4), (4,)], np.logaddexp),
    Case("logaddexp_wide", dp.logaddexp, [(6,), (6,)], np.logaddexp, ["wide", "wide"]),
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
    Case("var_all", dp.var, [(3, 4)], lambda x: np.var(x, ddof=1)),  # PyTorch's correction 1
    Case("var_population", lambda x: x.var(correction=0), [(3, 4)], np.var),
    Case("var_unbiased_false", lambda x: x.var(axis=0, unbiased=False), [(3, 4)],
         lambda x: np.var(x, axis=0)),
    Case("var_axis_corrected", lambda x: x.var(axis=1, correction=1), [(3, 4)],
         lambda x: x.var(axis=1, ddof=1)),
    Case("logsumexp_all", dp.logsumexp, [(3, 4)], lambda x: _logsumexp(x, None)),
    Case("logsumexp_axis", lambda x: x.logsumexp(axis=1, keepdims=True), [(3, 4)],
         lambda x: _logsumexp(x, 1, keepdims=True)),
    Case("softmax", dp.softmax, [(3, 4)], lambda x: _softmax(x, -1)),
    Case("softmax_axis0", lambda x: x.softmax(axis=0), [(3, 4)], lambda x: _softmax(x, 0)),
    Case("log_softmax", dp.log_softmax, [(3, 4)], lambda x: np.log(_softmax(x, -1))),
    Case("prod_all", dp.prod, [(3, 4)], np.prod),
    Case("prod_axis_with_zeros", lambda x: x.prod(axis=1), [(4, 3)], lambda x: x.prod(axis=1),
         ["with_zeros"]),
    Case("prod_two_zeros_keepdims", lambda x: x.prod(axis=0, keepdims=True), [(6, 2)],
         lambda x: x.prod(axis=0, keepdims=True), ["with_zeros"]),
    Case("std_all", dp.std, [(3, 4)], lambda x: np.std(x, ddof=1)),
    Case("std_positional_unbiased", lambda x: x.std(1, False), [(3, 4)],
         lambda x: np.std(x, axis=1)),
    Case("std_axis_corrected", lambda x: x.std(axis=0, correction=1), [(3, 4)],
         lambda x: x.std(axis=0, ddof=1)),
]

SCANS = [
    Case("cumsum", lambda x: x.cumsum(1), [(3, 4)], lambda x: np.cumsum(x, axis=1)),
    Case("cumsum_1d_no_axis", dp.cumsum, [(5,)], np.cumsum),
    Case("cumsum_axis0_noncontiguous", lambda x: dp.cumsum(x, axis=0), [(3, 4)],
         lambda x: np.cumsum(x, axis=0), noncontiguous=True),
    Case("cumprod", lambda x: x.cumprod(-1), [(3, 4)], lambda x: np.cumprod(x, axis=-1)),
    Case("cumprod_with_zeros", lambda x: dp.cumprod(x, axis=1), [(3, 5)],
         lambda x: np.cumprod(x, axis=1), ["with_zeros"]),
    Case("cummax", lambda x: dp.cummax(x, axis=1).values, [(3, 5)],
         lambda x: np.maximum.accumulate(x, axis=1), ["distinct"]),
    Case("cummin_axis0", lambda x: x.cummin(0).values, [(4, 3)],
         lambda x: np.minimum.accumulate(x, axis=0), ["distinct"]),
    Case("logcumsumexp", lambda x: dp.logcumsumexp(x, axis=1), [(3, 5)],
         lambda x: np.logaddexp.accumulate(x, axis=1)),
    Case("logcumsumexp_wide", dp.logcumsumexp, [(8,)], np.logaddexp.accumulate, ["wide"]),
]

SORTING = [
    Case("sort", dp.sort, [(3, 5)], lambda x: np.sort(x, axis=-1), ["distinct"]),
    Case("sort_descending_axis0", lambda x: x.sort(axis=0, descending=True), [(4, 3)],
         lambda x: -np.sort(-x, axis=0), ["distinct"]),
    Case("topk", lambda x: dp.topk(x, 2).values, [(3, 5)], lambda x: _topk(x, 2, -1),
         ["distinct"]),
    Case("topk_smallest_axis0", lambda x: x.topk(3, axis=0, largest=False).values, [(4, 3)],
         lambda x: _topk(x, 3, 0, largest=False), ["distinct"]),
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

ALL_CASES = (ARITHMETIC + LINALG + TRIGONOMETRIC + ROUNDING + EXPONENTIAL + ELEMENTWISE
             + REDUCTIONS + SCANS + SORTING + SHAPE)


@dataclass
class ConstantCase:
    """An op with a constant result (integer, bool), on fixed inputs, against NumPy exactly."""

    name: str
    function: Callable[..., Any]
    inputs: list[Any]
    reference: Callable[..., Any]

    def __repr__(self) -> str:
        return self.name


_INTS = np.array([7, -7, 5, -5, 0, 12])
_DIVISORS = np.array([3, 3, -3, -3, 2, 5])
_SMALL = np.array([0, 1, 2, 3, 62, 5])
_MASK = np.array([True, False, True, False, True, True])
_OTHER_MASK = np.array([True, True, False, False, True, False])
_SPECIAL = np.array([1.5, np.nan, np.inf, -np.inf, 0.0, -2.0])

CONSTANT_CASES = [
    ConstantCase("remainder_int", lambda a, b: a % b, [_INTS, _DIVISORS], np.remainder),
    ConstantCase("remainder_int_scalar", lambda a: a % 4, [_INTS], lambda a: a % 4),
    ConstantCase("rremainder_int", lambda b: 17 % b, [_DIVISORS], lambda b: 17 % b),
    ConstantCase("floor_divide_int", lambda a, b: a // b, [_INTS, _DIVISORS], np.floor_divide),
    ConstantCase("rfloor_divide_int", lambda b: -17 // b, [_DIVISORS], lambda b: -17 // b),
    ConstantCase("add_int", lambda a, b: a + b, [_INTS, _DIVISORS], np.add),
    ConstantCase("mul_int_scalar", lambda a: a * 3, [_INTS], lambda a: a * 3),
    ConstantCase("pow_int", lambda a: a**2, [_INTS], lambda a: a**2),
    ConstantCase("rpow_int", lambda b: 2**b, [_SMALL[:4]], lambda b: 2**b),
    ConstantCase("pow_int_tensors", lambda a, b: a**b, [_SMALL, _SMALL[::-1].copy() % 4],
                 np.power),
    ConstantCase("rpow_zero_int", lambda b: 0**b, [_SMALL], lambda b: 0**b),
    ConstantCase("and_int", lambda a, b: a & b, [_INTS, _SMALL], np.bitwise_and),
    ConstantCase("or_int", lambda a, b: a | b, [_INTS, _SMALL], np.bitwise_or),
    ConstantCase("xor_int", lambda a, b: a ^ b, [_INTS, _SMALL], np.bitwise_xor),
    ConstantCase("rand_int_scalar", lambda a: 6 & a, [_INTS], lambda a: 6 & a),
    ConstantCase("ror_int_scalar", lambda a: 6 | a, [_INTS], lambda a: 6 | a),
    ConstantCase("rxor_int_scalar", lambda a: 6 ^ a, [_INTS], lambda a: 6 ^ a),
    ConstantCase("invert_int", lambda a: ~a, [_INTS], np.invert),
    ConstantCase("left_shift", lambda a, b: a << b, [_INTS, np.array([0, 1, 2, 3, 1, 2])],
                 np.left_shift),
    ConstantCase("right_shift", lambda a: a >> 1, [_INTS], lambda a: a >> 1),
    ConstantCase("rlshift", lambda b: 1 << b, [_SMALL[:4]], lambda b: 1 << b),
    ConstantCase("rrshift", lambda b: -64 >> b, [_SMALL[:4]], lambda b: -64 >> b),
    ConstantCase("and_bool", lambda a, b: a & b, [_MASK, _OTHER_MASK], np.logical_and),
    ConstantCase("or_bool_scalar", lambda a: a | False, [_MASK], lambda a: a),
    ConstantCase("rxor_bool", lambda a: True ^ a, [_MASK], np.logical_not),
    ConstantCase("invert_bool", lambda a: ~a, [_MASK], np.logical_not),
    ConstantCase("logical_and", dp.logical_and, [_MASK, _OTHER_MASK], np.logical_and),
    ConstantCase("logical_or_numbers", dp.logical_or, [_INTS, _SMALL], np.logical_or),
    ConstantCase("logical_xor_floats", lambda a: a.logical_xor(a > 0), [_SPECIAL],
                 lambda a: np.logical_xor(a != 0, a > 0)),
    ConstantCase("logical_not_ints", dp.logical_not, [_INTS], np.logical_not),
    ConstantCase("isnan", dp.isnan, [_SPECIAL], np.isnan),
    ConstantCase("isinf", lambda x: x.isinf(), [_SPECIAL], np.isinf),
    ConstantCase("isfinite", dp.isfinite, [_SPECIAL], np.isfinite),
    ConstantCase("isnan_int", dp.isnan, [_INTS], np.isnan),
    ConstantCase("isfinite_bool", dp.isfinite, [_MASK], lambda m: np.ones(m.shape, bool)),
    ConstantCase("isclose", dp.isclose, [_SPECIAL, _SPECIAL + np.array([0, 0, 0, 0, 1e-9, 1e-4])],
                 np.isclose),
    ConstantCase("isclose_infinities", dp.isclose, [_SPECIAL, _SPECIAL[::-1].copy()],
                 np.isclose),
    ConstantCase("isclose_equal_nan_tolerances",
                 lambda a, b: a.isclose(b, rtol=0.1, atol=0.0, equal_nan=True),
                 [_SPECIAL, _SPECIAL * 1.05],
                 lambda a, b: np.isclose(a, b, rtol=0.1, atol=0.0, equal_nan=True)),
    ConstantCase("isclose_int", dp.isclose, [_INTS, _DIVISORS], np.isclose),
    ConstantCase("less_int_float_scalar", lambda a: a < 2.5, [_INTS], lambda a: a < 2.5),
    ConstantCase("argmin", lambda x: x.argmin(), [_INTS.reshape(2, 3)], np.argmin),
    ConstantCase("argmin_axis", lambda x: dp.argmin(x, axis=0), [_INTS.reshape(2, 3)],
                 lambda x: np.argmin(x, axis=0)),
    ConstantCase("argmin_keepdims", lambda x: x.argmin(axis=1, keepdims=True),
                 [_INTS.reshape(2, 3)], lambda x: np.argmin(x, axis=1, keepdims=True)),
    ConstantCase("argmax_all_keepdims", lambda x: x.argmax(keepdims=True),
                 [_INTS.reshape(2, 3)], lambda x: np.argmax(x, keepdims=True)),
    ConstantCase("argsort", dp.argsort, [_INTS], lambda x: np.argsort(x, kind="stable")),
    ConstantCase("argsort_descending_stable", lambda x: x.argsort(descending=True),
                 [np.array([2, 1, 2, 3, 1, 2])], lambda x: np.array([3, 0, 2, 5, 1, 4])),
    ConstantCase("sort_int", lambda x: x.sort(), [_INTS], np.sort),
    ConstantCase("cumsum_int", dp.cumsum, [_INTS], np.cumsum),
    ConstantCase("cumsum_bool_counts", lambda m: m.cumsum(0), [_MASK],
                 lambda m: np.cumsum(m.astype(np.int64))),
    ConstantCase("sum_bool_counts", lambda m: m.sum(), [_MASK],
                 lambda m: np.sum(m.astype(np.int64))),
    ConstantCase("cumprod_int", dp.cumprod, [_DIVISORS], np.cumprod),
    ConstantCase("prod_int", dp.prod, [_DIVISORS], np.prod),
    ConstantCase("cummax_int_indices", lambda x: dp.cummax(x).indices,
                 [np.array([1, 3, 3, 2, 5, 5])], lambda x: np.array([0, 1, 2, 2, 4, 5])),
    ConstantCase("floor_int", dp.floor, [_INTS], lambda x: x),
    ConstantCase("round_int", lambda x: x.round(decimals=2), [_INTS], lambda x: x),
    ConstantCase("sign_int", dp.sign, [_INTS], np.sign),
    ConstantCase("abs_int", dp.abs, [_INTS], np.abs),
    ConstantCase("relu_int", dp.relu, [_INTS], lambda x: np.maximum(x, 0)),
    ConstantCase("clip_int", lambda x: x.clip(-5, 6), [_INTS], lambda x: np.clip(x, -5, 6)),
]


# ------------------------------------------- ops that a ported peer op-test suite found missing
_SCATTER_INDEX = np.array([[0, 2, 1, 0], [2, 2, 0, 1], [0, 1, 1, 1]])
_MASK_2x3 = np.array([[True, False, True], [False, True, True]])
F = dp.nn.functional


def _windows(x: np.ndarray, kernel: tuple[int, ...], stride: tuple[int, ...]) -> np.ndarray:
    """``(N, C, *out, *kernel)`` windows of ``(N, C, *spatial)`` ``x``, NumPy's view."""
    view = np.lib.stride_tricks.sliding_window_view(x, kernel, axis=tuple(range(2, x.ndim)))
    return view[(slice(None), slice(None), *(slice(None, None, s) for s in stride))]


def _conv3d(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.einsum("ncdhwijk,ocijk->nodhw", _windows(x, w.shape[2:], (1, 1, 1)), w)


def _conv_transpose3d(x: np.ndarray, w: np.ndarray, stride: int) -> np.ndarray:
    """Each input entry scatters ``x * w`` into the output, ``stride`` apart."""
    n, _, d, h, width = x.shape
    k = w.shape[2:]
    out = np.zeros((n, w.shape[1], *((s - 1) * stride + kk for s, kk in zip(
        (d, h, width), k, strict=True))))
    for i, j, m in np.ndindex(d, h, width):
        patch = np.einsum("nc,cokji->nokji", x[:, :, i, j, m], w[:, :, ::-1, ::-1, ::-1])
        out[:, :, i * stride:i * stride + k[0], j * stride:j * stride + k[1],
            m * stride:m * stride + k[2]] += patch[:, :, ::-1, ::-1, ::-1]
    return out


def _scatter_reduce(x: np.ndarray, src: np.ndarray, reduce: Callable[..., Any],
                    include_self: bool) -> np.ndarray:
    """Along axis 0, written one position at a time."""
    out = x.copy()
    for row, column in np.ndindex(x.shape):
        picked = list(src[_SCATTER_INDEX[:, column] == row, column])
        if picked:
            out[row, column] = reduce([x[row, column], *picked] if include_self else picked)
    return out


def _cubic(t: float) -> list[float]:
    """Keys' cubic convolution weights (a = -0.75) of the taps -1, 0, 1, 2 at distance t."""
    a = -0.75

    def near(s: float) -> float:
        return (a + 2) * s**3 - (a + 3) * s**2 + 1

    def far(s: float) -> float:
        return a * s**3 - 5 * a * s**2 + 8 * a * s - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _resample_matrix(n: int, out: int, mode: str, align_corners: bool) -> np.ndarray:
    """``(out, n)``: the weights each output entry gives the input entries along one axis, from
    the definition of each mode (PyTorch's source positions, edges clamped)."""
    m = np.zeros((out, n))
    scale = (n - 1) / (out - 1) if align_corners else n / out
    for i in range(out):
        source = scale * i if align_corners else scale * (i + 0.5) - 0.5
        if mode == "nearest-exact":
            m[i, min(int(np.floor((i + 0.5) * n / out)), n - 1)] = 1.0
        elif mode == "bicubic":
            low = int(np.floor(source))
            for j, weight in enumerate(_cubic(source - low)):
                m[i, min(max(low - 1 + j, 0), n - 1)] += weight
        else:
            source = max(source, 0.0)
            low = min(int(np.floor(source)), n - 1)
            t = source - low
            m[i, low] += 1 - t
            m[i, min(low + 1, n - 1)] += t
    return m


def _resampled(x: np.ndarray, size: tuple[int, ...], mode: str,
               align_corners: bool = False) -> np.ndarray:
    for axis, out in enumerate(size, start=2):
        m = _resample_matrix(x.shape[axis], out, mode, align_corners)
        x = np.moveaxis(np.tensordot(m, np.moveaxis(x, axis, 0), axes=1), 0, axis)
    return x


def _normalized(x: np.ndarray, p: float, axis: int) -> np.ndarray:
    norm = np.sum(np.abs(x) ** p, axis=axis, keepdims=True) ** (1 / p)
    return x / np.maximum(norm, 1e-12)


def _gqa(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    groups = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, groups, axis=1), np.repeat(v, groups, axis=1)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    return _softmax(scores, -1) @ v


PEER = [
    Case("fmod", dp.fmod, [(3, 4), (4,)], np.fmod, ["wide", "away"]),
    Case("fmod_scalar_method", lambda a: a.fmod(-1.5), [(3, 4)], lambda a: np.fmod(a, -1.5),
         ["wide"]),
    Case("copysign", dp.copysign, [(3, 4), (3, 4)], np.copysign, ["away", "away"]),
    Case("copysign_scalar", lambda a: a.copysign(-2.0), [(5,)], lambda a: np.copysign(a, -2.0),
         ["away"]),
    Case("div_trunc", lambda a, b: dp.div(a, b, rounding_mode="trunc"), [(3, 4), (4,)],
         lambda a, b: np.trunc(a / b), ["wide", "away"]),
    Case("div_floor_method", lambda a, b: a.div(b, rounding_mode="floor"), [(3, 4), (4,)],
         lambda a, b: np.floor_divide(a, b), ["wide", "away"]),
    Case("div_none", lambda a, b: dp.div(a, b, rounding_mode=None), [(3, 4), (4,)], np.divide,
         ["normal", "away"]),
    Case("masked_select", lambda a: dp.masked_select(a, dp.tensor(_MASK_2x3, backend=a.backend)),
         [(2, 3)], lambda a: a[_MASK_2x3]),
    Case("masked_select_broadcast", lambda a: a.masked_select(
        dp.tensor(_MASK_2x3[0], backend=a.backend)), [(4, 3)],
        lambda a: a[np.broadcast_to(_MASK_2x3[0], (4, 3))]),
    Case("unfold", lambda a: a.unfold(1, 3, 2), [(2, 7, 3)],
         lambda a: np.lib.stride_tricks.sliding_window_view(a, 3, axis=1)[:, ::2]),
    Case("unflatten", lambda a: a.unflatten(-1, (3, 2)), [(2, 6)], lambda a: a.reshape(2, 3, 2)),
    *(Case(f"scatter_reduce_{name}" + ("" if include_self else "_without_self"),
           lambda a, s, r=name, k=include_self: a.scatter_reduce(
               0, dp.tensor(_SCATTER_INDEX, backend=a.backend), s, r, include_self=k),
           [(3, 4), (3, 4)],
           lambda a, s, f=function, k=include_self: _scatter_reduce(a, s, f, k),
           ["distinct", "distinct"] if name in ("amax", "amin") else ["positive", "away"])
      for name, function in (("sum", np.sum), ("prod", np.prod), ("mean", np.mean),
                             ("amax", np.max), ("amin", np.min))
      for include_self in (True, False)),
    Case("std_mean", lambda a: dp.stack(dp.std_mean(a, axis=1)), [(3, 4)],
         lambda a: np.stack([a.std(axis=1, ddof=1), a.mean(axis=1)])),
    Case("var_mean_keepdims", lambda a: dp.cat(dp.var_mean(a, 0, correction=0, keepdims=True)),
         [(3, 4)], lambda a: np.concatenate([a.var(axis=0, keepdims=True),
                                             a.mean(axis=0, keepdims=True)])),
    Case("normalize", F.normalize, [(3, 4)], lambda a: _normalized(a, 2.0, 1)),
    Case("normalize_p3_dim0", lambda a: F.normalize(a, p=3.0, dim=0), [(3, 4)],
         lambda a: _normalized(a, 3.0, 0), ["away"]),
    Case("squeeze_not_one", lambda a: a.squeeze((0, 1)), [(1, 3, 2)], lambda a: a[0]),
    Case("roll_shifts_dims", lambda a: a.roll(shifts=(1, -2), dims=(0, 1)), [(3, 4)],
         lambda a: np.roll(a, (1, -2), (0, 1))),
    Case("einsum_ellipsis_summed", lambda a, b: dp.einsum("ij...,ij...->ij", a, b),
         [(2, 3, 4), (2, 3, 4)], lambda a, b: (a * b).sum(axis=2)),
    Case("sdpa_grouped_query", lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, enable_gqa=True), [(1, 4, 3, 2), (1, 2, 5, 2), (1, 2, 5, 3)], _gqa),
    Case("conv3d", F.conv3d, [(2, 2, 4, 3, 4), (3, 2, 2, 2, 3)], _conv3d),
    Case("conv_transpose3d", lambda x, w: F.conv_transpose3d(x, w, stride=2),
         [(1, 2, 2, 3, 2), (2, 3, 2, 3, 2)], lambda x, w: _conv_transpose3d(x, w, 2)),
    Case("max_pool3d", lambda x: F.max_pool3d(x, 2, stride=(1, 2, 1)), [(1, 2, 3, 4, 3)],
         lambda x: _windows(x, (2, 2, 2), (1, 2, 1)).max(axis=(-3, -2, -1)), ["distinct"]),
    Case("avg_pool3d", lambda x: F.avg_pool3d(x, (2, 3, 2)), [(1, 2, 4, 6, 4)],
         lambda x: _windows(x, (2, 3, 2), (2, 3, 2)).mean(axis=(-3, -2, -1))),
    Case("max_unpool2d", lambda x: F.max_unpool2d(
        *F.max_pool2d(x, 2, return_indices=True), 2), [(1, 2, 4, 6)],
        lambda x: np.where(x == np.repeat(np.repeat(_windows(x, (2, 2), (2, 2)).max(
            axis=(-2, -1)), 2, axis=2), 2, axis=3), x, 0.0), ["distinct"]),
    Case("interpolate_linear", lambda x: F.interpolate(x, size=9, mode="linear"), [(2, 3, 5)],
         lambda x: _resampled(x, (9,), "linear")),
    Case("interpolate_trilinear_align", lambda x: F.interpolate(
        x, size=(3, 5, 2), mode="trilinear", align_corners=True), [(1, 2, 2, 3, 4)],
        lambda x: _resampled(x, (3, 5, 2), "linear", align_corners=True)),
    Case("interpolate_bicubic", lambda x: F.interpolate(x, size=(6, 3), mode="bicubic"),
         [(1, 2, 4, 5)], lambda x: _resampled(x, (6, 3), "bicubic")),
    Case("interpolate_bicubic_align", lambda x: F.interpolate(
        x, size=(7, 4), mode="bicubic", align_corners=True), [(1, 1, 4, 3)],
        lambda x: _resampled(x, (7, 4), "bicubic", align_corners=True)),
    Case("interpolate_nearest_exact", lambda x: F.interpolate(x, size=(5, 7),
                                                              mode="nearest-exact"),
         [(1, 2, 3, 4)], lambda x: _resampled(x, (5, 7), "nearest-exact")),
]
ALL_CASES += PEER

_NEGATIVE_POWERS = np.array([-1, -3, -3, -2, 2, 4])

PEER_CONSTANT = [
    ConstantCase("pow_int_negative_tensor", lambda a, b: a**b,
                 [np.array([2, 1, -1, -1, 3, 0]), _NEGATIVE_POWERS],
                 lambda a, b: np.array([0, 1, -1, 1, 9, 0])),
    ConstantCase("fmod_int", dp.fmod, [_INTS, _DIVISORS], np.fmod),
    ConstantCase("div_trunc_int", lambda a, b: dp.div(a, b, rounding_mode="trunc"),
                 [_INTS, _DIVISORS], lambda a, b: np.trunc(a / b).astype(np.int64)),
    ConstantCase("div_floor_int", lambda a, b: a.div(b, rounding_mode="floor"),
                 [_INTS, _DIVISORS], np.floor_divide),
    ConstantCase("or_int32_wraps", lambda a: a | 0xFFFFFFFF, [_INTS.astype(np.int32)],
                 lambda a: a | np.int32(-1)),
    ConstantCase("add_int8_wraps", lambda a: a + 300, [_SMALL.astype(np.int8)],
                 lambda a: a + np.int8(44)),
    ConstantCase("or_bool_int", lambda a, b: a | b, [_MASK, _SMALL],
                 lambda a, b: a.astype(np.int64) | b),
    ConstantCase("nonzero", dp.nonzero, [_INTS.reshape(2, 3)], np.argwhere),
    ConstantCase("nonzero_as_tuple_stacked", lambda a: dp.stack(a.nonzero(as_tuple=True)),
                 [_MASK.reshape(3, 2)], lambda a: np.stack(np.nonzero(a))),
    ConstantCase("scatter_reduce_mean_int", lambda a: a.scatter_reduce(
        0, dp.tensor([1, 1, 0], backend=a.backend), a, "mean"), [np.array([1, 4, 10])],
        lambda a: np.array([(1 + 10) // 2, (4 + 1 + 4) // 3, 10])),
    ConstantCase("sum_int_as_float", lambda a: a.sum(dtype="float64"), [_INTS],
                 lambda a: np.sum(a.astype(np.float64))),
    ConstantCase("linspace_int", lambda a: dp.linspace(-5, 5, 4, dtype="int64"), [_INTS],
                 lambda a: np.array([-5, -1, 1, 5])),
]
CONSTANT_CASES += PEER_CONSTANT
