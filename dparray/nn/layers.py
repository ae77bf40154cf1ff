"""Small layers: Linear, Identity, Flatten, Unflatten, Embedding, Dropout and the most common
activations (the others are in ``dparray.nn.activation``), with PyTorch's names, arguments and
initialisation."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from dparray import creation, ops
from dparray._checks import (
    check_bool,
    check_choice,
    check_embedding_table,
    check_int,
    check_tensor,
    describe,
)
from dparray.nn import functional as F
from dparray.nn import init
from dparray.nn.module import Module, Parameter
from dparray.ops import dropout as _dropout
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
    """``max(x, 0)``. ``inplace`` is accepted for PyTorch's code and changes nothing: dparray
    never writes into an array, so the result is always a new tensor."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = check_bool(inplace, "inplace", "ReLU")

    def forward(self, x: Tensor) -> Tensor:
        return ops.relu(x)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """GELU, exact (``approximate="none"``) or with the tanh approximation."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = check_choice(approximate, "approximate", "GELU", ("none", "tanh"))

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
    ``1 / (1 - p)``); the identity in evaluation. ``inplace`` is accepted for PyTorch's code
    and changes nothing (the result is always a new tensor)."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        self.p = F.check_probability(p, "Dropout")
        self.inplace = check_bool(inplace, "inplace", "Dropout")

    def couples_rows(self) -> bool:
        return self.is_training() and self.p > 0  # the masks follow the chunks' streams

    def forward(self, x: Tensor) -> Tensor:
        if not self.is_training() or self.p == 0.0:
            return x
        return _dropout.dropout(check_tensor(x, "input", "Dropout"), self.p)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Embedding(Module):
    """A table of ``num_embeddings`` vectors, looked up by integer index; rows start from
    ``N(0, 1)`` as in PyTorch. Its gradient goes through the backend's ``scatter_add``.

    ``padding_idx`` names a row for padding tokens (negative counts from the end): it starts
    at zero and receives no gradient, so it stays what it is. ``max_norm`` (PyTorch renormalises
    the rows it looks up, in place) is not supported: anything but None is a ValueError.

    Examples:
        >>> import dparray as dp
        >>> table = dp.nn.Embedding(4, 2, padding_idx=0)
        >>> table(dp.tensor([[0, 2], [3, 0]])).shape
        (2, 2, 2)
        >>> table.weight[0].tolist()
        [0.0, 0.0]
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, *, dtype: Any = None,
                 _weight: Tensor | None = None) -> None:
        super().__init__()
        where = "Embedding"
        self.num_embeddings = check_int(num_embeddings, "num_embeddings", where, minimum=0)
        self.embedding_dim = check_int(embedding_dim, "embedding_dim", where, minimum=0)
        self.padding_idx = _padding_row(padding_idx, self.num_embeddings, where)
        F.refuse_max_norm(max_norm, where)
        if _weight is not None:  # from_pretrained: the given rows, padding row included
            self.weight = Parameter(_weight)
        else:
            weight = init.normal((self.num_embeddings, self.embedding_dim), dtype)
            if self.padding_idx is not None:
                rows = creation.arange(self.num_embeddings, backend=weight.backend)
                padding = ops.unsqueeze(rows == self.padding_idx, -1)
                weight = Parameter(ops.where(padding, 0.0, weight.detach()))
            self.weight = weight

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None,
                        max_norm: float | None = None) -> Embedding:
        """An ``Embedding`` holding ``embeddings`` (``(num_embeddings, embedding_dim)``) as its
        weight, frozen (not trained) unless ``freeze=False``; as PyTorch's, the padding row
        keeps its given values (it only receives no gradient).

        Examples:
            >>> import dparray as dp
            >>> table = dp.nn.Embedding.from_pretrained(dp.tensor([[1.0, 2.0], [3.0, 4.0]]))
            >>> table(dp.tensor([1])).tolist(), table.weight.requires_grad
            ([[3.0, 4.0]], False)
        """
        where = "Embedding.from_pretrained"
        check_tensor(embeddings, "embeddings", where)
        check_bool(freeze, "freeze", where)
        F.refuse_max_norm(max_norm, where)
        check_embedding_table(embeddings, "embeddings", where)
        rows, dim = embeddings.shape
        layer = cls(rows, dim, padding_idx, max_norm, _weight=embeddings)
        layer.weight.is_variable = not freeze  # still a parameter (in the state dict), frozen
        return layer

    def forward(self, indices: Tensor) -> Tensor:
        if not isinstance(indices, Tensor) or indices.dtype.kind not in ("int", "uint"):
            raise TypeError(f"{self!r}: expected an integer tensor of indices, got "
                            f"{getattr(indices, 'dtype', type(indices).__name__)}")
        return F.embedding(indices, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        padding = "" if self.padding_idx is None else f", padding_idx={self.padding_idx}"
        return f"{self.num_embeddings}, {self.embedding_dim}{padding}"


def _padding_row(padding_idx: int | None, rows: int, where: str) -> int | None:
    """``padding_idx`` as a row number in ``[0, rows)`` (a negative one counts from the end)."""
    if padding_idx is None:
        return None
    index = check_int(padding_idx, "padding_idx", where, minimum=-rows, maximum=rows - 1)
    return index % rows


class Unflatten(Module):
    """Splits axis ``dim`` into the axes ``unflattened_size`` (one of which may be -1, the size
    that makes the product fit): the inverse of ``Flatten``.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.Unflatten(1, (2, -1))(dp.zeros(4, 6)).shape
        (4, 2, 3)
    """

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        where = "Unflatten"
        self.dim = check_int(dim, "dim", where)
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(f"{where}: unflattened_size must be a tuple or list of ints, got "
                            f"{describe(unflattened_size)}")
        sizes = tuple(check_int(s, "unflattened_size", where, minimum=-1)
                      for s in unflattened_size)
        if not sizes:
            raise ValueError(f"{where}: unflattened_size must not be empty")
        if sizes.count(-1) > 1:
            raise ValueError(f"{where}: at most one size in unflattened_size can be -1, got "
                             f"{sizes}")
        self.unflattened_size = sizes

    def forward(self, input: Tensor) -> Tensor:
        where = "Unflatten"
        check_tensor(input, "input", where)
        if not -input.ndim <= self.dim < input.ndim:
            raise ValueError(f"{where}: dim {self.dim} is out of range for input of shape "
                             f"{input.shape}")
        axis = self.dim % input.ndim
        size = input.shape[axis]
        known = math.prod(s for s in self.unflattened_size if s != -1)
        if -1 in self.unflattened_size and known > 0 and size % known == 0:
            sizes = tuple(size // known if s == -1 else s for s in self.unflattened_size)
        elif -1 not in self.unflattened_size and known == size:
            sizes = self.unflattened_size
        else:
            raise ValueError(f"{where}: sizes {self.unflattened_size} do not fit axis {axis} of "
                             f"size {size} (input of shape {input.shape})")
        return input.reshape(*input.shape[:axis], *sizes, *input.shape[axis + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
