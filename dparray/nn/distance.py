"""Distances and similarities between vectors, PyTorch's: ``cosine_similarity`` and
``pairwise_distance`` (each with its module), and ``pdist``; ``dparray.cdist`` is beside the
other top-level ops (``dparray.ops.distance``).

All are composed of differentiable ops; a zero norm or distance has gradient 0 there, as in
PyTorch, not NaN.
"""

from __future__ import annotations

from dparray import ops
from dparray._checks import check_bool, check_int, check_number, check_tensor, normalize_axis
from dparray.nn.module import Module
from dparray.ops._util import broadcast_shapes
from dparray.ops.distance import check_p, p_norm
from dparray.tensor import Tensor, from_op

__all__ = ["CosineSimilarity", "PairwiseDistance", "cosine_similarity", "pairwise_distance",
           "pdist"]


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim``, the two broadcast
    together first, as PyTorch's ``F.cosine_similarity``: ``sum(x1 / max(|x1|, eps) *
    x2 / max(|x2|, eps))`` -- each norm kept at least ``eps`` on its own, as PyTorch computes
    it now, so the result stays within [-1, 1] and a zero vector has similarity 0.

    Where a norm is below ``eps`` it is the constant ``eps``, so its gradient is that of
    ``x / eps``; PyTorch clamps the norm outside autograd, so its gradient there (for a norm
    strictly between 0 and ``eps``) also carries the norm's own derivative. At a zero vector
    the two agree.

    Examples:
        >>> import dparray as dp
        >>> a = dp.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
        >>> b = dp.tensor([[0.0, 2.0], [2.0, 2.0], [1.0, 0.0]])
        >>> [round(c, 4) for c in dp.nn.functional.cosine_similarity(a, b).tolist()]
        [0.0, 1.0, 0.0]
    """
    where = "cosine_similarity"
    check_tensor(x1, "x1", where)
    check_tensor(x2, "x2", where)
    eps = check_number(eps, "eps", where, minimum=0.0)
    if not (x1.dtype.is_floating or x2.dtype.is_floating):
        raise TypeError(f"{where}: x1 or x2 must be floating, got {x1.dtype.name} and "
                        f"{x2.dtype.name}")
    shape = broadcast_shapes(where, x1.shape, x2.shape)
    axis = normalize_axis(check_int(dim, "dim", where), len(shape) or 1, where)
    if not shape:  # PyTorch: two 0-d tensors are vectors of one entry
        x1, x2, shape = x1.reshape(1), x2.reshape(1), (1,)
    x1, x2 = (x if x.shape == shape else ops.broadcast_to(x, shape) for x in (x1, x2))
    return ops.sum(_unit(x1, axis, eps) * _unit(x2, axis, eps), axis=axis)


def _unit(x: Tensor, axis: int, eps: float) -> Tensor:
    """``x / max(|x|, eps)`` along ``axis``: the maximum taken before the root (whose slope is
    infinite at 0), so a zero vector has a finite gradient."""
    squares = ops.sum(x * x, axis=axis, keepdims=True)
    return x / ops.sqrt(ops.maximum(squares, eps * eps))


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The ``p``-norm of ``x1 - x2 + eps`` along the last axis, the two broadcast together,
    as PyTorch's ``F.pairwise_distance``: the distance between corresponding rows, ``eps``
    keeping equal rows off the norm's kink. ``p`` is at least 0 or ``inf`` (PyTorch's norm
    also takes a negative ``p`` here, which no distance needs; dparray refuses it, as
    PyTorch's ``cdist`` and ``pdist`` do).

    Examples:
        >>> import dparray as dp
        >>> a, b = dp.tensor([[0.0, 0.0], [1.0, 1.0]]), dp.tensor([[3.0, 4.0], [1.0, 1.0]])
        >>> [round(d, 4) for d in dp.nn.functional.pairwise_distance(a, b, eps=0.0).tolist()]
        [5.0, 0.0]
    """
    where = "pairwise_distance"
    check_tensor(x1, "x1", where)
    check_tensor(x2, "x2", where)
    p = check_p(p, where)
    eps = check_number(eps, "eps", where)
    check_bool(keepdim, "keepdim", where)
    broadcast_shapes(where, x1.shape, x2.shape)
    difference = x1 - x2 + eps
    if difference.ndim == 0:  # PyTorch: a 0-d pair is a vector of one entry
        return p_norm(difference.reshape(1), p, axis=0)
    return p_norm(difference, p, axis=-1, keepdims=keepdim)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The ``p``-norm distance between every two rows of an ``(N, M)`` ``input``, as PyTorch's
    ``F.pdist``: the ``N * (N - 1) / 2`` entries above the diagonal of ``cdist(input,
    input)``, row by row. The gradient is 0 between equal rows, as in PyTorch.

    Examples:
        >>> import dparray as dp
        >>> x = dp.tensor([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])
        >>> dp.nn.functional.pdist(x).tolist()
        [5.0, 10.0, 5.0]
    """
    where = "pdist"
    check_tensor(input, "input", where)
    p = check_p(p, where)
    if input.ndim != 2:
        raise ValueError(f"{where}: input must be 2-D (N, M), got shape {input.shape}")
    if not input.dtype.is_floating:
        raise TypeError(f"{where}: input must be floating, got {input.dtype.name}")
    backend, xp = input.backend, input.backend.xp
    order = xp.arange(input.shape[0])
    rows, columns = xp.nonzero(order[:, None] < order[None, :])  # i < j, in row-major order
    first, second = (from_op(xp.astype(i, xp.int64), backend, None) for i in (rows, columns))
    return p_norm(ops.take(input, first, axis=0) - ops.take(input, second, axis=0), p, axis=1)


class CosineSimilarity(Module):
    """Module form of ``cosine_similarity``.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.CosineSimilarity(dim=0)(dp.tensor([1.0, 1.0]), dp.tensor([2.0, 0.0])).item()
        0.7071067...
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        where = "CosineSimilarity"
        self.dim = check_int(dim, "dim", where)
        self.eps = check_number(eps, "eps", where, minimum=0.0)

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """Module form of ``pairwise_distance``."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        where = "PairwiseDistance"
        self.norm = check_p(p, where)  # PyTorch's attribute names
        self.eps = check_number(eps, "eps", where)
        self.keepdim = check_bool(keepdim, "keepdim", where)

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
