"""PyTorch's products beyond ``matmul``: ``mm``, ``mv``, ``dot``, ``bmm``, ``addmm``,
``baddbmm``, ``outer``, ``tensordot`` and ``kron``, and the diagonal helpers ``trace`` and
``diag_embed``.

Each is composed of ``matmul``, ``mul``, ``reshape``, ``permute`` and the diagonal ops, so its
gradients (and their derivatives) are theirs; the shapes are checked first, with PyTorch's
rules, so a mistake is an error naming both shapes before anything is computed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dparray._checks import check_int, check_tensor, describe, normalize_axis
from dparray.ops._autocast import autocast_op
from dparray.ops.arithmetic import add, mul
from dparray.ops.construct import DiagEmbed, diagonal
from dparray.ops.linalg import matmul
from dparray.ops.reduce import sum as _sum
from dparray.ops.shape import permute, reshape
from dparray.tensor import Tensor

__all__ = [
    "mm",
    "mv",
    "dot",
    "bmm",
    "addmm",
    "baddbmm",
    "outer",
    "tensordot",
    "kron",
    "trace",
    "diag_embed",
]


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """The product of two matrices, ``(n, m) @ (m, p) -> (n, p)``, as PyTorch's ``mm`` (which,
    unlike ``matmul``, takes 2-D tensors only).

    Examples:
        >>> import dparray
        >>> dparray.mm(dparray.ones(2, 3), dparray.ones(3, 4)).shape
        (2, 4)
    """
    _check_ranks("mm", (input, "input", 2), (mat2, "mat2", 2))
    _check_inner("mm", input, mat2)
    return matmul(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """A matrix times a vector, ``(n, m) @ (m,) -> (n,)``, as PyTorch's ``mv``.

    Examples:
        >>> import dparray
        >>> dparray.mv(dparray.ones(2, 3), dparray.tensor([1.0, 2.0, 3.0])).tolist()
        [6.0, 6.0]
    """
    _check_ranks("mv", (input, "input", 2), (vec, "vec", 1))
    if input.shape[1] != vec.shape[0]:
        raise ValueError(f"mv: shapes {input.shape} and {vec.shape} do not align: "
                         f"{input.shape[1]} != {vec.shape[0]}")
    return matmul(input, vec)


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """The inner product of two vectors of one length, a 0-D tensor, as PyTorch's ``dot``.

    Examples:
        >>> import dparray
        >>> dparray.dot(dparray.tensor([1.0, 2.0]), dparray.tensor([3.0, 4.0])).item()
        11.0
    """
    _check_ranks("dot", (input, "input", 1), (tensor, "tensor", 1))
    if input.shape != tensor.shape:
        raise ValueError(f"dot: the vectors must have one length, got shapes {input.shape} "
                         f"and {tensor.shape}")
    return matmul(input, tensor)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """The batched matrix product of two 3-D tensors, ``(b, n, m) @ (b, m, p) -> (b, n, p)``,
    as PyTorch's ``bmm`` (which, unlike ``matmul``, does not broadcast the batch).

    Examples:
        >>> import dparray
        >>> dparray.bmm(dparray.ones(2, 3, 4), dparray.ones(2, 4, 5)).shape
        (2, 3, 5)
    """
    _check_batched("bmm", input, mat2, "input", "mat2")
    return matmul(input, mat2)


@autocast_op("addmm")
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` for 2-D ``mat1`` and ``mat2``, ``input``
    broadcasting to the product's shape, as PyTorch's ``addmm`` (a linear layer's bias plus its
    product). With ``beta=0`` ``input`` is left out, so its NaNs do not reach the result.

    Examples:
        >>> import dparray
        >>> bias = dparray.tensor([1.0, 2.0])
        >>> dparray.addmm(bias, dparray.ones(1, 3), dparray.ones(3, 2), alpha=2).tolist()
        [[7.0, 8.0]]
    """
    for name, matrix in (("mat1", mat1), ("mat2", mat2)):
        check_tensor(matrix, name, "addmm")
        if matrix.ndim != 2:
            raise ValueError(f"addmm: {name} must be 2-D, got shape {matrix.shape}")
    _check_inner("addmm", mat1, mat2)
    shape = (mat1.shape[0], mat2.shape[1])
    return _scaled_sum("addmm", input, mat1, mat2, shape, beta, alpha)


@autocast_op("baddbmm")
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
            alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)``, ``input`` broadcasting to the batched
    product's shape, as PyTorch's ``baddbmm`` (attention scores with a bias or mask added);
    with ``beta=0`` ``input`` is left out.

    Examples:
        >>> import dparray
        >>> mask = dparray.zeros(2, 3, 3)
        >>> dparray.baddbmm(mask, dparray.ones(2, 3, 4), dparray.ones(2, 4, 3), alpha=0.5).shape
        (2, 3, 3)
    """
    _check_batched("baddbmm", batch1, batch2, "batch1", "batch2")
    shape = (batch1.shape[0], batch1.shape[1], batch2.shape[2])
    return _scaled_sum("baddbmm", input, batch1, batch2, shape, beta, alpha)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two 1-D tensors: ``out[i, j] = input[i] * vec2[j]`` (PyTorch's
    ``outer``; dtypes promote as in ``*``).

    Examples:
        >>> import dparray
        >>> dparray.outer(dparray.tensor([1, 2]), dparray.tensor([3, 4, 5])).tolist()
        [[3, 4, 5], [6, 8, 10]]
    """
    for name, vector in (("input", input), ("vec2", vec2)):
        check_tensor(vector, name, "outer")
        if vector.ndim != 1:
            raise ValueError(f"outer: {name} must be 1-D, got shape {vector.shape}")
    return mul(reshape(input, (-1, 1)), reshape(vec2, (1, -1)))


def tensordot(a: Tensor, b: Tensor, axes: Any = 2) -> Tensor:
    """The sum of products of ``a`` and ``b`` over the axes ``axes`` names (PyTorch calls the
    argument ``dims``): an int ``n`` contracts the last ``n`` axes of ``a`` with the first ``n``
    of ``b``; a pair of sequences contracts ``a``'s axes ``axes[0][i]`` with ``b``'s
    ``axes[1][i]``. The result's axes are ``a``'s free axes, then ``b``'s. One ``matmul`` of
    the two tensors laid out as matrices.

    Examples:
        >>> import dparray
        >>> a, b = dparray.ones(2, 3, 4), dparray.ones(4, 3, 5)
        >>> dparray.tensordot(a, b, dims=([1, 2], [1, 0])).shape
        (2, 5)
        >>> dparray.tensordot(dparray.ones(2, 3), dparray.ones(3, 4), 1).tolist()[0]
        [3.0, 3.0, 3.0, 3.0]
    """
    check_tensor(a, "a", "tensordot")
    check_tensor(b, "b", "tensordot")
    first, second = _contracted(axes, a, b)
    for i, j in zip(first, second, strict=True):
        if a.shape[i] != b.shape[j]:
            raise ValueError(
                f"tensordot: contracted axes must have equal sizes, got axis {i} of size "
                f"{a.shape[i]} (shape {a.shape}) and axis {j} of size {b.shape[j]} (shape "
                f"{b.shape})"
            )
    free_a = [i for i in range(a.ndim) if i not in first]
    free_b = [j for j in range(b.ndim) if j not in second]
    inner = math.prod(a.shape[i] for i in first)
    rows = reshape(_ordered(a, [*free_a, *first]), (-1, inner))
    columns = reshape(_ordered(b, [*second, *free_b]), (inner, -1))
    shape = tuple(a.shape[i] for i in free_a) + tuple(b.shape[j] for j in free_b)
    return reshape(matmul(rows, columns), shape)


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: blocks ``input[i, j, ...] * other``, laid out in ``input``'s
    order, as PyTorch's ``kron`` (the tensor with fewer axes gains leading ones).

    Examples:
        >>> import dparray
        >>> dparray.kron(dparray.tensor([[1, 2]]), dparray.tensor([[1], [10]])).tolist()
        [[1, 2], [10, 20]]
    """
    check_tensor(input, "input", "kron")
    check_tensor(other, "other", "kron")
    ndim = max(input.ndim, other.ndim)
    first = (1,) * (ndim - input.ndim) + input.shape
    second = (1,) * (ndim - other.ndim) + other.shape
    spread_first = tuple(n for size in first for n in (size, 1))
    spread_second = tuple(n for size in second for n in (1, size))
    blocks = mul(reshape(input, spread_first), reshape(other, spread_second))
    return reshape(blocks, tuple(m * n for m, n in zip(first, second, strict=True)))


def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a 2-D tensor (any shape of matrix, as PyTorch's
    ``trace``); integers sum to int64.

    Examples:
        >>> import dparray
        >>> dparray.trace(dparray.tensor([[1, 2], [3, 4]])).item()
        5
    """
    check_tensor(input, "input", "trace")
    if input.ndim != 2:
        raise ValueError(f"trace: expected a matrix (2-D), got shape {input.shape}")
    return _sum(diagonal(input))


def diag_embed(input: Tensor, offset: int = 0, axis1: int = -2, axis2: int = -1) -> Tensor:
    """Matrices with the last axis of ``input`` on diagonal ``offset`` (positive above the main
    one) and zeros elsewhere, spanning the new axes ``axis1`` (rows) and ``axis2`` (columns)
    of the result, which has one axis more than ``input`` (PyTorch's ``diag_embed``, its
    ``dim1`` and ``dim2``); the gradient is that diagonal of the output's.

    Examples:
        >>> import dparray
        >>> dparray.diag_embed(dparray.tensor([[1, 2]])).tolist()
        [[[1, 0], [0, 2]]]
        >>> dparray.diag_embed(dparray.ones(4, 3), offset=1, dim1=0, dim2=2).shape
        (4, 4, 4)
    """
    check_tensor(input, "input", "diag_embed")
    offset = check_int(offset, "offset", "diag_embed")
    if input.ndim == 0:
        raise ValueError("diag_embed: needs at least 1 dimension, got a 0-d tensor")
    ndim = input.ndim + 1
    rows = normalize_axis(axis1, ndim, "diag_embed")
    columns = normalize_axis(axis2, ndim, "diag_embed")
    if rows == columns:
        raise ValueError(f"diag_embed: axis1 and axis2 must differ, both are {rows}")
    out = DiagEmbed(offset)(input)  # the matrices in the last two axes
    batch = iter(range(ndim - 2))
    order = [ndim - 2 if i == rows else ndim - 1 if i == columns else next(batch)
             for i in range(ndim)]
    return _ordered(out, order)


def _check_ranks(where: str, *operands: tuple[Any, str, int]) -> None:
    """Each ``(tensor, name, ndim)``: a tensor of that many dimensions."""
    for value, name, ndim in operands:
        check_tensor(value, name, where)
        if value.ndim != ndim:
            raise ValueError(f"{where}: {name} must be {ndim}-D, got shape {value.shape}")


def _check_batched(where: str, first: Any, second: Any, name1: str, name2: str) -> None:
    """Two 3-D tensors of one batch size whose matrices multiply."""
    for name, batch in ((name1, first), (name2, second)):
        check_tensor(batch, name, where)
        if batch.ndim != 3:
            raise ValueError(f"{where}: {name} must be 3-D, got shape {batch.shape}")
    if first.shape[0] != second.shape[0]:
        raise ValueError(f"{where}: {name1} and {name2} need one batch size, got shapes "
                         f"{first.shape} and {second.shape}")
    _check_inner(where, first, second)


def _check_inner(where: str, first: Tensor, second: Tensor) -> None:
    if first.shape[-1] != second.shape[-2]:
        raise ValueError(f"{where}: shapes {first.shape} and {second.shape} do not align: "
                         f"{first.shape[-1]} != {second.shape[-2]}")


def _scaled_sum(where: str, input: Any, first: Tensor, second: Tensor,
                shape: tuple[int, ...], beta: Any, alpha: Any) -> Tensor:
    """``beta * input + alpha * (first @ second)`` for ``addmm`` and ``baddbmm``."""
    check_tensor(input, "input", where)
    for name, value in (("beta", beta), ("alpha", alpha)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{where}: {name} must be a number, got {describe(value)}")
    if not _broadcasts(input.shape, shape):
        raise ValueError(f"{where}: input of shape {input.shape} does not broadcast to the "
                         f"product's shape {shape}")
    product = matmul(first, second)
    if alpha != 1:
        product = mul(product, alpha)
    if beta == 0:
        return product
    return add(input if beta == 1 else mul(input, beta), product)


def _broadcasts(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    if len(shape) > len(target):
        return False
    return all(n in (1, m) for n, m in zip(shape[::-1], target[::-1], strict=False))


def _contracted(axes: Any, a: Tensor, b: Tensor) -> tuple[list[int], list[int]]:
    """``tensordot``'s axes as two lists of non-negative axes, one of ``a`` and one of ``b``."""
    if isinstance(axes, Tensor):
        axes = axes.tolist()  # PyTorch takes dims as a tensor too
    if isinstance(axes, int) and not isinstance(axes, bool):
        count = check_int(axes, "dims", "tensordot", minimum=0)
        if count > a.ndim or count > b.ndim:
            raise ValueError(f"tensordot: cannot contract {count} axes of tensors of shapes "
                             f"{a.shape} and {b.shape}")
        return list(range(a.ndim - count, a.ndim)), list(range(count))
    if not isinstance(axes, (list, tuple)) or len(axes) != 2:
        raise TypeError(f"tensordot: dims must be an int or a pair of sequences of axes, got "
                        f"{describe(axes)}")
    first, second = (_axis_list(side, t) for side, t in zip(axes, (a, b), strict=True))
    if len(first) != len(second):
        raise ValueError(f"tensordot: {len(first)} axes of the first tensor but "
                         f"{len(second)} of the second")
    return first, second


def _axis_list(side: Any, t: Tensor) -> list[int]:
    side = list(side) if isinstance(side, (list, tuple)) else [side]
    axes = [normalize_axis(check_int(axis, "each axis of dims", "tensordot"), t.ndim,
                           "tensordot") for axis in side]
    if len(set(axes)) != len(axes):
        raise ValueError(f"tensordot: repeated axis in {side!r}")
    return axes


def _ordered(x: Tensor, order: Sequence[int]) -> Tensor:
    """``x`` permuted to ``order`` (itself when that is its own order)."""
    return x if list(order) == list(range(x.ndim)) else permute(x, tuple(order))
