"""Sorting: ``sort``, ``argsort`` and ``topk`` along one axis.

``sort`` and ``argsort`` are the array API's: ``sort`` returns the values only (take the
positions from ``argsort``), both are stable by default, and ``descending`` keeps equal
elements in their original order. NaN sorts as the largest value, as in PyTorch and NumPy.
``topk`` returns values and positions, like PyTorch's. The gradient of the values goes back to
the positions they came from.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from dparray._checks import check_bool, check_int, normalize_axis
from dparray.autograd import Function
from dparray.ops._portable import take_along_axis
from dparray.tensor import Tensor, from_op

__all__ = [
    "sort",
    "argsort",
    "topk",
    "ValuesIndices",
]


class ValuesIndices(NamedTuple):
    """Values and the positions along the axis they came from (PyTorch's ``return_types``)."""

    values: Tensor
    indices: Tensor


class Sort(Function):
    """``x`` sorted along ``axis``; the gradient is un-sorted by the inverse permutation."""
    saved_values = "constants"  # the order


    def __init__(self, axis: int = -1, descending: bool = False, stable: bool = True) -> None:
        self.axis = axis
        self.descending = check_bool(descending, "descending", "sort")
        self.stable = check_bool(stable, "stable", "sort")

    def forward(self, x: Any) -> Any:
        xp = self.xp
        self.axis = normalize_axis(self.axis, x.ndim or 1, "sort")
        self.scalar = x.ndim == 0
        if self.scalar:
            return x
        order = xp.argsort(x, axis=self.axis, descending=self.descending, stable=self.stable)
        self.save(order)
        return take_along_axis(xp, x, order, self.axis)

    def backward(self, grad: Any) -> Any:
        if self.scalar:
            return grad
        (order,) = self.saved
        inverse = self.xp.argsort(order, axis=self.axis)
        return take_along_axis(self.xp, grad, inverse, self.axis)


class TopK(Function):
    """The ``k`` largest (or smallest) elements along ``axis``, in order; their positions are
    kept in ``self.indices`` for the caller. The gradient goes to the picked positions."""
    saved_values = "constants"  # the order


    def __init__(self, k: int, axis: int = -1, largest: bool = True) -> None:
        self.k = check_int(k, "k", "topk", minimum=0)
        self.axis = axis
        self.largest = check_bool(largest, "largest", "topk")

    def forward(self, x: Any) -> Any:
        xp = self.xp
        self.axis = axis = normalize_axis(self.axis, x.ndim or 1, "topk")
        self.scalar = x.ndim == 0 and self.k == 1
        data = x if x.ndim else xp.reshape(x, (1,))
        if self.k > data.shape[axis]:
            raise ValueError(
                f"topk: k must be at most {data.shape[axis]}, the size of axis {axis} of shape "
                f"{tuple(x.shape)}, got {self.k}"
            )
        order = xp.argsort(data, axis=axis, descending=self.largest, stable=True)
        picked = order[(slice(None),) * axis + (slice(0, self.k), ...)]
        values = take_along_axis(xp, data, picked, axis)
        self.save(order)
        if self.scalar:
            picked, values = xp.reshape(picked, ()), xp.reshape(values, ())
        self.indices = picked
        return values

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (order,) = self.saved
        axis = self.axis
        if self.scalar:
            grad = xp.reshape(grad, (1,))
        rest = list(grad.shape)
        rest[axis] = order.shape[axis] - self.k
        # in sorted order the gradient is grad for the first k and 0 after; un-sort it
        in_order = xp.concat([grad, xp.zeros(tuple(rest), dtype=grad.dtype)], axis=axis)
        out = take_along_axis(xp, in_order, xp.argsort(order, axis=axis), axis)
        return xp.reshape(out, ()) if self.scalar else out


def sort(x: Tensor, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """``x`` sorted along ``axis`` (the values only; ``argsort`` gives the positions).

    Examples:
        >>> import dparray
        >>> dparray.sort(dparray.tensor([3.0, 1.0, 2.0]), descending=True).tolist()
        [3.0, 2.0, 1.0]
    """
    return Sort(axis, descending, stable)(x)


def argsort(x: Tensor, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """The positions that sort ``x`` along ``axis``, as a constant int64 tensor; stable by
    default (equal elements keep their order, also when ``descending``).

    Examples:
        >>> import dparray
        >>> dparray.argsort(dparray.tensor([3.0, 1.0, 3.0]), descending=True).tolist()
        [0, 2, 1]
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"argsort needs a Tensor, got {type(x).__name__}")
    check_bool(descending, "descending", "argsort")
    check_bool(stable, "stable", "argsort")
    xp = x.backend.xp
    axis = normalize_axis(axis, x.ndim or 1, "argsort")
    if x.ndim == 0:
        return from_op(xp.zeros((), dtype=xp.int64), x.backend, None)
    order = xp.argsort(x.data, axis=axis, descending=descending, stable=stable)
    return from_op(order, x.backend, None)


def topk(x: Tensor, k: int, axis: int = -1, largest: bool = True,
         sorted: bool = True) -> ValuesIndices:
    """The ``k`` largest elements along ``axis`` (the smallest with ``largest=False``) and
    their positions, as PyTorch's ``topk``. The values always come sorted, largest first (the
    order PyTorch leaves unspecified with ``sorted=False``); ties keep the earlier position.

    Examples:
        >>> import dparray
        >>> values, indices = dparray.topk(dparray.tensor([1.0, 3.0, 2.0]), 2)
        >>> values.tolist(), indices.tolist()
        ([3.0, 2.0], [1, 2])
    """
    check_bool(sorted, "sorted", "topk")
    op = TopK(k, axis, largest)
    values = op(x)
    indices = from_op(op.indices, values.backend, None)
    del op.indices  # the node keeps only what backward needs
    return ValuesIndices(values, indices)
