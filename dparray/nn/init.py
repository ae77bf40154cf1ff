"""Initial values for parameters, drawn from the current random stream (``dparray.manual_seed``
makes them repeat). The defaults match PyTorch's layers."""

from __future__ import annotations

import math
from typing import Any

from dparray import creation
from dparray.nn.module import Parameter
from dparray.tensor import Tensor


def uniform(shape: tuple[int, ...], bound: float, dtype: Any = None) -> Tensor:
    """A trainable tensor of samples from ``U(-bound, bound)``."""
    samples = creation.rand(shape, dtype=dtype)
    return Parameter(samples * (2.0 * bound) - bound)


def fan_in_uniform(shape: tuple[int, ...], fan_in: int, dtype: Any = None) -> Tensor:
    """``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``: what PyTorch's ``kaiming_uniform_(a=sqrt(5))``
    gives weights, and its layers give biases."""
    return uniform(shape, 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0, dtype)


def xavier_uniform(shape: tuple[int, ...], dtype: Any = None, gain: float = 1.0) -> Tensor:
    """``U(-b, b)`` with ``b = gain * sqrt(6 / (fan_in + fan_out))`` for a weight of shape
    ``(out, in, *kernel)``: PyTorch's ``xavier_uniform_`` (Glorot), which its attention layers
    give their input projections."""
    receptive = math.prod(shape[2:])
    fan_in = shape[1] * receptive if len(shape) > 1 else shape[0]
    fan_out = shape[0] * receptive
    total = fan_in + fan_out
    return uniform(shape, gain * math.sqrt(6.0 / total) if total > 0 else 0.0, dtype)


def normal(shape: tuple[int, ...], dtype: Any = None) -> Tensor:
    """A trainable tensor of standard normal samples."""
    return Parameter(creation.randn(shape, dtype=dtype))


def constant(shape: tuple[int, ...], value: float, dtype: Any = None) -> Tensor:
    """A trainable tensor filled with ``value``."""
    return Parameter(creation.full(shape, float(value), dtype=dtype))
