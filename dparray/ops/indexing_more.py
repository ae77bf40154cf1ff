"""PyTorch's ``take_along_dim`` and ``index_add``, built on ``gather`` and ``scatter_add``
(differentiable as they are: the gradient of a pick is added back where it was picked; that
of an addition reaches both the tensor and the source)."""

from __future__ import annotations

from typing import Any

from dparray._checks import check_int, check_tensor, describe, normalize_axis
from dparray.ops._util import broadcast_shapes
from dparray.ops.arithmetic import mul
from dparray.ops.indexing import _index_argument, checked_positions, gather, scatter_add, take
from dparray.ops.shape import broadcast_to, reshape
from dparray.tensor import Tensor

__all__ = [
    "take_along_dim",
    "index_add",
]


def take_along_dim(x: Tensor, indices: Any, axis: int | None = None) -> Tensor:
    """``x`` picked at ``indices`` along ``axis`` (PyTorch's ``take_along_dim``, NumPy's
    ``take_along_axis``): ``indices`` has ``x``'s number of dimensions, and the two broadcast
    against each other in every axis but ``axis``. With ``axis=None`` both are flattened
    first. Negative positions count from the end.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([[10, 30, 20], [60, 40, 50]])
        >>> dparray.take_along_dim(x, dparray.argsort(x, axis=1), dim=1).tolist()
        [[10, 20, 30], [40, 50, 60]]
        >>> dparray.take_along_dim(x, dparray.tensor([5, 0])).tolist()
        [50, 10]
    """
    check_tensor(x, "x", "take_along_dim")
    indices = _index_argument(indices, x, "take_along_dim")
    if axis is None:
        return take(reshape(x, (-1,)), reshape(indices, (-1,)))
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_dim: indices need the tensor's {x.ndim} dimensions, "
                         f"got shape {indices.shape}")
    a = normalize_axis(check_int(axis, "axis", "take_along_dim"), x.ndim, "take_along_dim")
    try:
        rest = broadcast_shapes("take_along_dim", _without(x.shape, a), _without(indices.shape, a))
    except ValueError:
        raise ValueError(f"take_along_dim: shapes {x.shape} and {indices.shape} do not "
                         f"broadcast outside axis {a}") from None
    checked_positions(x.backend, indices.data, x.shape[a], "take_along_dim", a)
    x = _broadcast_outside(x, rest, a)
    return gather(x, a, _broadcast_outside(indices, rest, a))


def index_add(x: Tensor, axis: int, index: Any, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """PyTorch's ``index_add``, out of place: a copy of ``x`` with ``alpha * source[..., i,
    ...]`` added at position ``index[i]`` along ``axis``; repeated positions accumulate.
    ``index`` is 1-D, and ``source`` has ``x``'s shape except along ``axis``, where it has one
    entry per index. Differentiable in ``x`` and ``source``.

    Examples:
        >>> import dparray
        >>> x = dparray.zeros(3, 2)
        >>> dparray.index_add(x, 0, dparray.tensor([0, 2, 0]), dparray.ones(3, 2)).tolist()
        [[2.0, 2.0], [0.0, 0.0], [1.0, 1.0]]
    """
    check_tensor(x, "x", "index_add")
    check_tensor(source, "source", "index_add")
    index = _index_argument(index, x, "index_add")
    if index.ndim > 1:
        raise ValueError(f"index_add: index must be 1-D, got shape {index.shape}")
    if source.dtype is not x.dtype:
        raise TypeError(f"index_add: source must have the tensor's dtype {x.dtype.name}, got "
                        f"{source.dtype.name}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise TypeError(f"index_add: alpha must be a number, got {describe(alpha)}")
    a = normalize_axis(check_int(axis, "axis", "index_add"), x.ndim or 1, "index_add")
    if x.ndim == 0:  # PyTorch takes a 0-d tensor as one entry along axis 0
        return reshape(index_add(reshape(x, (1,)), 0, reshape(index, (-1,)),
                                 reshape(source, (-1,)), alpha=alpha), ())
    count = index.elem_count()
    if source.ndim != x.ndim or source.shape[a] != count or \
            _without(source.shape, a) != _without(x.shape, a):
        raise ValueError(f"index_add: source of shape {source.shape} must have the tensor's "
                         f"shape {x.shape} with {count} (the index's length) along axis {a}")
    checked_positions(x.backend, index.data, x.shape[a], "index_add", a)
    along = tuple(count if i == a else 1 for i in range(x.ndim))
    positions = broadcast_to(reshape(index, along), source.shape)
    return scatter_add(x, a, positions, source if alpha == 1 else mul(source, alpha))


def _without(shape: tuple[int, ...], axis: int) -> tuple[int, ...]:
    return shape[:axis] + shape[axis + 1:]


def _broadcast_outside(t: Tensor, rest: tuple[int, ...], axis: int) -> Tensor:
    """``t`` broadcast to ``rest`` in every axis but ``axis``, which keeps its size."""
    shape = (*rest[:axis], t.shape[axis], *rest[axis:])
    return t if shape == t.shape else broadcast_to(t, shape)
