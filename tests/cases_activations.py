"""Declarative cases for the activations of ``dparray.ops.activations`` and their functional
forms: same pattern as ``cases.py`` (a function of float tensors, the domains of its inputs,
a reference on the host with NumPy and ``math`` alone, written from the definitions).

The domains keep every input away from the kinks (the ``away`` domain is at least 0.2 from 0;
``hard`` at least 0.2 from -3, 0, 3 and 6), where finite differences straddle two formulas.
The kinks themselves are checked against PyTorch in ``test_activations.py``.
"""

from __future__ import annotations

import math

import numpy as np
from cases import Case

import dparray as dp
from dparray.nn import functional as F

SELU_ALPHA = 1.6732632423543772848170429916717  # from the SELU paper, as PyTorch has them
SELU_SCALE = 1.0507009873554804934193349852946


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.array([1.0 / (1.0 + math.exp(-v)) for v in x.ravel()]).reshape(x.shape)


def _softplus(x: np.ndarray, beta: float = 1.0) -> np.ndarray:
    return np.array([math.log1p(math.exp(beta * v)) / beta for v in x.ravel()]).reshape(x.shape)


def _elu(x: np.ndarray, alpha: float) -> np.ndarray:
    return np.where(x > 0, x, alpha * (np.exp(np.minimum(x, 0.0)) - 1.0))


def _relu6(x: np.ndarray) -> np.ndarray:
    return np.minimum(np.maximum(x, 0.0), 6.0)


def _softmin(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(-x - (-x).max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _prelu(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    slope = weight.reshape(-1, *([1] * (x.ndim - 2))) if x.ndim >= 2 else weight
    return np.where(x > 0, x, slope * x)


def _hard(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Inputs in (-7, 8), each at least 0.2 from -3, 0, 3 and 6."""
    x = rng.uniform(-7.0, 8.0, shape)
    for kink in (-3.0, 0.0, 3.0, 6.0):
        near = np.abs(x - kink) < 0.2
        x[near] = kink + np.where(x[near] >= kink, 0.3, -0.3)
    return x


class HardCase(Case):
    """A case whose single input comes from ``_hard`` (the kinks of the piecewise ops)."""

    def inputs(self, rng: np.random.Generator) -> list[np.ndarray]:
        return [_hard(rng, shape) for shape in self.shapes]


ACTIVATIONS = [
    Case("leaky_relu", dp.leaky_relu, [(3, 4)], lambda x: np.where(x > 0, x, 0.01 * x),
         ["away"]),
    Case("leaky_relu_slope", lambda x: F.leaky_relu(x, 0.3), [(3, 4)],
         lambda x: np.where(x > 0, x, 0.3 * x), ["away"]),
    Case("prelu_one_slope", lambda x, w: dp.prelu(x, w[:1]), [(3, 4), (4,)],
         lambda x, w: _prelu(x, w[:1]), ["away", "normal"]),
    Case("prelu_channels", F.prelu, [(2, 4, 3), (4,)], _prelu, ["away", "normal"]),
    Case("elu", dp.elu, [(3, 4)], lambda x: _elu(x, 1.0), ["away"]),
    Case("elu_alpha", lambda x: F.elu(x, alpha=0.4), [(3, 4)], lambda x: _elu(x, 0.4),
         ["away"]),
    Case("selu", dp.selu, [(3, 4)], lambda x: SELU_SCALE * _elu(x, SELU_ALPHA), ["away"]),
    Case("celu", lambda x: dp.celu(x, alpha=0.5), [(3, 4)],
         lambda x: np.where(x > 0, x, 0.5 * (np.exp(np.minimum(x, 0.0) / 0.5) - 1.0)),
         ["normal"]),
    Case("silu", dp.silu, [(3, 4)], lambda x: x * _sigmoid(x)),
    Case("silu_wide", F.silu, [(6,)], lambda x: x * _sigmoid(x), ["wide"]),
    Case("mish", dp.mish, [(3, 4)], lambda x: x * np.tanh(_softplus(x))),
    Case("mish_wide", F.mish, [(6,)], lambda x: x * np.tanh(_softplus(x)), ["wide"]),
    HardCase("hardswish", dp.hardswish, [(4, 5)], lambda x: x * _relu6(x + 3.0) / 6.0),
    HardCase("hardsigmoid", F.hardsigmoid, [(4, 5)], lambda x: _relu6(x + 3.0) / 6.0),
    HardCase("hardtanh", dp.hardtanh, [(4, 5)], lambda x: np.clip(x, -1.0, 1.0)),
    HardCase("hardtanh_bounds", lambda x: F.hardtanh(x, -3.0, 6.0), [(4, 5)],
             lambda x: np.clip(x, -3.0, 6.0)),
    HardCase("relu6", F.relu6, [(4, 5)], _relu6),
    Case("softplus", F.softplus, [(3, 4)], _softplus),
    Case("softplus_beta_threshold", lambda x: F.softplus(x, beta=2.0, threshold=3.0), [(8,)],
         lambda x: np.where(2.0 * x > 3.0, x, _softplus(x, 2.0)), ["wide"]),
    Case("softsign", dp.softsign, [(3, 4)], lambda x: x / (1.0 + np.abs(x))),
    Case("logsigmoid", dp.logsigmoid, [(3, 4)], lambda x: np.log(_sigmoid(x))),
    Case("logsigmoid_wide", F.logsigmoid, [(6,)], lambda x: -_softplus(-x), ["wide"]),
    Case("softmin", lambda x: F.softmin(x, dim=0), [(3, 4)], lambda x: _softmin(x, 0)),
    Case("softmin_last", F.softmin, [(2, 3, 4)], lambda x: _softmin(x, -1)),
]
