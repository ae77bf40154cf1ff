"""Layers without learnable state beyond an affine map: Linear, Identity, Flatten and the
activations, with PyTorch's names, arguments and initialisation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dparray import ops
from dparray.nn import functional as F
from dparray.nn import init
from dparray.nn.module import Module
from dparray.tensor import Tensor


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape ``(out_features, in_features)``.

    Weight and bias start from ``U(-1/sqrt(in), 1/sqrt(in))``, as in PyTorch.

    Examples:
        >>> import dparray as dp
        >>> layer = dp.nn.Linear(3, 2)
        >>> layer(dp.ones(4, 3)).shape
        (4, 2)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 dtype: Any = None) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = init.fan_in_uniform((out_features, in_features), in_features, dtype)
        self.bias = init.fan_in_uniform((out_features,), in_features, dtype) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim == 0 or x.shape[-1] != self.in_features:
            raise ValueError(
                f"{self!r}: expected input with {self.in_features} features in its last axis, "
                f"got shape {getattr(x, 'shape', type(x).__name__)}"
            )
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Identity(Module):
    """Returns its input."""

    def forward(self, x: Tensor) -> Tensor:
        return x


class Flatten(Module):
    """Merges axes ``start_dim .. end_dim`` (by default all but the batch axis)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return ops.flatten(x, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class ReLU(Module):
    def forward(self, x: Tensor) -> Tensor:
        return ops.relu(x)


class GELU(Module):
    """GELU, exact (``approximate="none"``) or with the tanh approximation."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return ops.gelu(x, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    def forward(self, x: Tensor) -> Tensor:
        return ops.tanh(x)


class Sigmoid(Module):
    def forward(self, x: Tensor) -> Tensor:
        return ops.sigmoid(x)


class _AlongDim(Module):
    """An op applied along one axis, ``dim``; subclasses name the op as ``function``."""

    function: Callable[..., Tensor]

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return self.function(x, axis=self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_AlongDim):
    function = staticmethod(ops.softmax)


class LogSoftmax(_AlongDim):
    function = staticmethod(ops.log_softmax)


class Dropout(Module):
    """Zeroes elements with probability ``p`` in training (scaling the rest by
    ``1 / (1 - p)``); the identity in evaluation."""

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        F.check_probability(p, "Dropout")
        self.p = float(p)

    def couples_rows(self) -> bool:
        return self.is_training() and self.p > 0  # the masks follow the chunks' streams

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, training=self.is_training())

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Embedding(Module):
    """A table of ``num_embeddings`` vectors, looked up by integer index; rows start from
    ``N(0, 1)`` as in PyTorch. Its gradient goes through the backend's ``scatter_add``."""

    def __init__(self, num_embeddings: int, embedding_dim: int, dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = init.normal((num_embeddings, embedding_dim), dtype)

    def forward(self, indices: Tensor) -> Tensor:
        if not isinstance(indices, Tensor) or indices.dtype.kind not in ("int", "uint"):
            raise TypeError(f"{self!r}: expected an integer tensor of indices, got "
                            f"{getattr(indices, 'dtype', type(indices).__name__)}")
        return F.embedding(indices, self.weight)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"
