"""Ops that build structured tensors: triangles and diagonals of matrices, one-hot codes, and
coordinate grids. Each is differentiable where PyTorch's is (``one_hot`` returns integers)."""

from __future__ import annotations

from typing import Any

from dparray._checks import check_choice, check_int, check_tensor, normalize_axis
from dparray.autograd import Function
from dparray.ops.shape import broadcast_to, permute, reshape
from dparray.tensor import Tensor

__all__ = [
    "diag",
    "diagonal",
    "meshgrid",
    "one_hot",
    "tril",
    "triu",
]


class Triangle(Function):
    """The lower (or upper) triangle of the last two axes, from diagonal ``k`` on; zeros
    elsewhere, where the gradient is zero too."""

    def __init__(self, k: int, upper: bool) -> None:
        self.k = k
        self.upper = upper

    def forward(self, x: Any) -> Any:
        if x.ndim < 2:
            name = "triu" if self.upper else "tril"
            raise ValueError(f"{name}: needs at least 2 dimensions, got shape {tuple(x.shape)}")
        return self._part(x)

    def backward(self, grad: Any) -> Any:
        return self._part(grad)

    def _part(self, a: Any) -> Any:
        return self.xp.triu(a, k=self.k) if self.upper else self.xp.tril(a, k=self.k)


class Diagonal(Function):
    """Diagonal ``offset`` of the last two axes, as a new last axis; the gradient is written
    back onto that diagonal of zeros."""

    def __init__(self, offset: int) -> None:
        self.offset = offset

    def forward(self, x: Any) -> Any:
        if x.ndim < 2:
            raise ValueError(f"diagonal: needs at least 2 dimensions, got shape {tuple(x.shape)}")
        self.rows, self.columns = x.shape[-2:]
        return _diagonal_of(self.xp, x, self.offset)

    def backward(self, grad: Any) -> Any:
        return _embed(self.xp, grad, self.rows, self.columns, self.offset)


class DiagEmbed(Function):
    """A square matrix over the last axis, holding ``x`` on diagonal ``offset`` and zeros
    elsewhere; the gradient is that diagonal of the output's."""

    def __init__(self, offset: int) -> None:
        self.offset = offset

    def forward(self, x: Any) -> Any:
        size = x.shape[-1] + abs(self.offset)
        return _embed(self.xp, x, size, size, self.offset)

    def backward(self, grad: Any) -> Any:
        return _diagonal_of(self.xp, grad, self.offset)


def tril(x: Tensor, k: int = 0) -> Tensor:
    """The lower triangle of the matrices in the last two axes of ``x``: entries on or below
    diagonal ``k`` (0 the main diagonal, positive above it), zeros above.

    Examples:
        >>> import dparray
        >>> dparray.tril(dparray.ones(3, 3)).tolist()
        [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
    """
    check_tensor(x, "x", "tril")
    return Triangle(check_int(k, "k", "tril"), upper=False)(x)


def triu(x: Tensor, k: int = 0) -> Tensor:
    """The upper triangle of the matrices in the last two axes of ``x``: entries on or above
    diagonal ``k``, zeros below (``triu(ones(n, n), 1)`` marks what a causal mask hides).

    Examples:
        >>> import dparray
        >>> dparray.triu(dparray.ones(3, 3), 1).tolist()
        [[0.0, 1.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    """
    check_tensor(x, "x", "triu")
    return Triangle(check_int(k, "k", "triu"), upper=True)(x)


def diagonal(x: Tensor, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """Diagonal ``offset`` (positive above the main one) of the matrices spanned by ``axis1``
    and ``axis2``, as a new last axis; the other axes stay in order (NumPy's and PyTorch's
    ``diagonal``).

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        >>> dparray.diagonal(x).tolist(), dparray.diagonal(x, offset=1).tolist()
        ([1.0, 5.0], [2.0, 6.0])
    """
    check_tensor(x, "x", "diagonal")
    offset = check_int(offset, "offset", "diagonal")
    if x.ndim < 2:
        raise ValueError(f"diagonal: needs at least 2 dimensions, got shape {x.shape}")
    first = normalize_axis(axis1, x.ndim, "diagonal")
    second = normalize_axis(axis2, x.ndim, "diagonal")
    if first == second:
        raise ValueError(f"diagonal: axis1 and axis2 must differ, both are {first}")
    if (first, second) != (x.ndim - 2, x.ndim - 1):
        rest = tuple(a for a in range(x.ndim) if a not in (first, second))
        x = permute(x, (*rest, first, second))
    return Diagonal(offset)(x)


def diag(x: Tensor, offset: int = 0) -> Tensor:
    """PyTorch's ``diag``: a 1-D ``x`` becomes a square matrix with ``x`` on diagonal
    ``offset``; a 2-D ``x`` gives its diagonal ``offset`` as a 1-D tensor.

    Examples:
        >>> import dparray
        >>> dparray.diag(dparray.tensor([1.0, 2.0])).tolist()
        [[1.0, 0.0], [0.0, 2.0]]
    """
    check_tensor(x, "x", "diag")
    offset = check_int(offset, "offset", "diag")
    if x.ndim == 1:
        return DiagEmbed(offset)(x)
    if x.ndim == 2:
        return Diagonal(offset)(x)
    raise ValueError(f"diag: needs a 1-D or 2-D tensor, got shape {x.shape}")


def one_hot(index: Tensor, num_classes: int = -1) -> Tensor:
    """PyTorch's ``one_hot``: an int64 tensor of shape ``(*index.shape, num_classes)`` with a 1
    at each entry's class. ``num_classes=-1`` takes one more than the largest class present.
    Classes must lie in ``[0, num_classes)``; they are read on the host to check it.

    Examples:
        >>> import dparray
        >>> dparray.one_hot(dparray.tensor([0, 2])).tolist()
        [[1, 0, 0], [0, 0, 1]]
    """
    check_tensor(index, "index", "one_hot")
    if index.dtype.kind not in ("int", "uint"):
        raise TypeError(f"one_hot: index must be an integer tensor, got {index.dtype.name}")
    num_classes = check_int(num_classes, "num_classes", "one_hot", minimum=-1)
    xp = index.backend.xp
    classes = xp.astype(index.data, xp.int64)
    if index.elem_count():
        low, high = int(xp.min(classes)), int(xp.max(classes))
        if low < 0:
            raise ValueError(f"one_hot: classes must be non-negative, got {low}")
        if num_classes == -1:
            num_classes = high + 1
        elif high >= num_classes:
            raise ValueError(f"one_hot: class {high} is not below num_classes={num_classes}")
    elif num_classes == -1:
        raise ValueError("one_hot: an empty index has no classes to count; pass num_classes")
    codes = classes[..., None] == xp.arange(num_classes, dtype=xp.int64)
    return Tensor(xp.astype(codes, xp.int64), index.backend)


def meshgrid(*tensors: Tensor | Any, indexing: str = "xy") -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D tensors (the array API's ``meshgrid``): output ``i`` holds
    ``tensors[i]`` repeated along every other axis. ``indexing="xy"`` (the standard's and
    NumPy's default) swaps the first two axes, as for image coordinates; ``"ij"`` keeps them in
    order (PyTorch's default). A single list of tensors works too. Differentiable.

    Examples:
        >>> import dparray
        >>> xs, ys = dparray.meshgrid(dparray.tensor([1, 2, 3]), dparray.tensor([7, 8]))
        >>> xs.tolist(), ys.tolist()
        ([[1, 2, 3], [1, 2, 3]], [[7, 7, 7], [8, 8, 8]])
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    indexing = check_choice(indexing, "indexing", "meshgrid", ("xy", "ij"))
    for i, t in enumerate(tensors):
        check_tensor(t, f"tensors[{i}]", "meshgrid")
        if t.ndim > 1:
            raise ValueError(f"meshgrid: tensors[{i}] must be 1-D, got shape {t.shape}")
        if t.backend is not tensors[0].backend:
            raise ValueError(
                f"meshgrid: cannot combine tensors of backends {tensors[0].backend.name!r} and "
                f"{t.backend.name!r}; move one with .to(...)"
            )
    places = list(range(len(tensors)))
    if indexing == "xy" and len(places) >= 2:
        places[0], places[1] = 1, 0
    sizes = [t.elem_count() for t in tensors]
    shape = [0] * len(tensors)
    for place, size in zip(places, sizes, strict=True):
        shape[place] = size
    grids = []
    for t, place, size in zip(tensors, places, sizes, strict=True):
        along = tuple(size if j == place else 1 for j in range(len(shape)))
        grids.append(broadcast_to(reshape(t, along), tuple(shape)))
    return tuple(grids)


def _extent(rows: int, columns: int, offset: int) -> tuple[int, int, int]:
    """Where diagonal ``offset`` of a ``rows x columns`` matrix starts, and its length."""
    row, column = max(-offset, 0), max(offset, 0)
    return row, column, max(0, min(rows - row, columns - column))


def _diagonal_of(xp: Any, a: Any, offset: int) -> Any:
    """Diagonal ``offset`` of the last two axes of ``a``, read at its flat positions."""
    rows, columns = a.shape[-2:]
    row, column, length = _extent(rows, columns, offset)
    batch = tuple(a.shape[:-2])
    flat = xp.reshape(a, (*batch, rows * columns))
    positions = xp.arange(length, dtype=xp.int64) * (columns + 1) + (row * columns + column)
    return xp.take(flat, positions, axis=len(batch))


def _embed(xp: Any, v: Any, rows: int, columns: int, offset: int) -> Any:
    """Zeros of shape ``(..., rows, columns)`` with ``v`` (``(..., length)``) on diagonal
    ``offset``: each row's entry is padded into place, then kept only on the diagonal."""
    row, _, length = _extent(rows, columns, offset)
    batch = tuple(v.shape[:-1])
    if length == 0:
        return xp.zeros((*batch, rows, columns), dtype=v.dtype)
    pieces = [v]
    if row:
        pieces.insert(0, xp.zeros((*batch, row), dtype=v.dtype))
    if rows - row - length:
        pieces.append(xp.zeros((*batch, rows - row - length), dtype=v.dtype))
    per_row = xp.concat(pieces, axis=-1) if len(pieces) > 1 else v
    on_diagonal = xp.eye(rows, columns, k=offset, dtype=xp.bool)
    return xp.where(on_diagonal, per_row[..., :, None], xp.zeros((), dtype=v.dtype))
