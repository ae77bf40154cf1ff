"""Normalisation layers: LayerNorm and BatchNorm1d (with PyTorch's buffers and names)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dparray import creation
from dparray.nn import functional as F
from dparray.nn import init
from dparray.nn.module import Module
from dparray.tensor import Tensor


class LayerNorm(Module):
    """Normalises the last ``len(normalized_shape)`` axes of each sample, then applies an
    elementwise affine map (weight ones, bias zeros at start)."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, dtype: Any = None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(
            normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        self.weight = init.constant(shape, 1.0, dtype) if elementwise_affine else None
        self.bias = init.constant(shape, 0.0, dtype) if elementwise_affine and bias else None

    def forward(self, x: Tensor) -> Tensor:
        if x.shape[x.ndim - len(self.normalized_shape):] != self.normalized_shape:
            raise ValueError(f"{self!r}: input of shape {x.shape} does not end in "
                             f"{self.normalized_shape}")
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.weight is not None}")


class BatchNorm1d(Module):
    """Normalises each channel of ``(N, C)`` or ``(N, C, L)`` input: with the batch's
    statistics in training (updating running ones by ``momentum``), with the running ones in
    evaluation. Buffers ``running_mean``, ``running_var`` and ``num_batches_tracked`` are
    PyTorch's, so state dicts carry over.

    Under DataParallel each chunk is normalised with its own statistics, as in PyTorch.
    """

    running_mean: Tensor | None
    running_var: Tensor | None
    num_batches_tracked: Tensor | None

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.weight = init.constant((num_features,), 1.0, dtype) if affine else None
        self.bias = init.constant((num_features,), 0.0, dtype) if affine else None
        if track_running_stats:
            self.register_buffer("running_mean", creation.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", creation.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", creation.tensor(0))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def couples_rows(self) -> bool:
        return self.is_training() or self.running_mean is None

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim not in (2, 3) or x.shape[1] != self.num_features:
            raise ValueError(
                f"{self!r}: expected (N, {self.num_features}) or (N, {self.num_features}, L) "
                f"input, got shape {x.shape}"
            )
        momentum = self.momentum
        if self.is_training() and self.num_batches_tracked is not None:
            self.num_batches_tracked = self.num_batches_tracked + 1
            if momentum is None:  # a cumulative average over all batches so far
                momentum = 1.0 / self.num_batches_tracked.item()
        return F.batch_norm(
            x, self.running_mean, self.running_var, self.weight, self.bias,
            training=self.is_training() or self.running_mean is None,  # untracked: batch stats
            momentum=0.0 if momentum is None else momentum, eps=self.eps,
        )

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.weight is not None}, "
                f"track_running_stats={self.running_mean is not None}")
