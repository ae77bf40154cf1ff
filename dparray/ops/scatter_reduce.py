"""The node of PyTorch's ``scatter_reduce`` (and of ``scatter(reduce=)``): the entries of a
source combined, by sum, product, mean, maximum or minimum, into the positions of a tensor that
an index names, in array-API operations only (``dparray.ops.indexing`` checks the arguments and
turns the index into flat positions).

The array API has no segment reductions, so the entries are grouped by sorting their positions:
group ``g`` (one per position written) holds its entries in one row of a table ``(groups, k)``
(``k`` the largest group), padded with the reduction's identity, and with the tensor's own
value in a first column when ``include_self``; each row is reduced along the table's axis. The
gradient of each table entry is that row's local derivative -- 1, ``1 / count``, the product of
the others (right where some are 0), or an equal share among the entries equal to the maximum
or minimum, as PyTorch gives -- times the output's gradient at the row's position.
"""

from __future__ import annotations

import math
from typing import Any

from dparray import dtypes as _dtypes
from dparray.autograd import Function
from dparray.ops.reduce import others_product

REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


class ScatterReduce(Function):
    """``x`` with the entries of ``src`` reduced into the flat positions ``linear`` (one int64
    position per entry of ``src``, checked by the caller), by ``reduce``; with
    ``include_self`` the value of ``x`` at a written position takes part."""

    def __init__(self, reduce: str, include_self: bool, linear: Any) -> None:
        self.reduce, self.include_self, self.linear = reduce, include_self, linear

    def forward(self, x: Any, src: Any) -> Any:
        xp = self.xp
        flat, values = xp.reshape(x, (-1,)), xp.reshape(src, (-1,))
        self.shape, self.src_shape = tuple(x.shape), tuple(src.shape)
        if self.linear.shape[0] == 0:
            self.groups = None
            return x
        self.groups = groups = _Groups(xp, self.linear, flat.shape[0])
        table = groups.table(xp, values, _identity(self.backend, self.reduce, x.dtype))
        if self.include_self:
            table = xp.concat([xp.reshape(xp.take(flat, groups.targets, axis=0), (-1, 1)),
                               table], axis=1)
        reduced = self._reduce(table)
        self.save(table, reduced)
        return xp.reshape(xp.where(groups.hit, groups.at_positions(xp, reduced), flat),
                          self.shape)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        xp = self.xp
        groups = self.groups
        if groups is None:
            return grad, xp.zeros(self.src_shape, dtype=grad.dtype)
        table, reduced = self.saved
        flat = xp.reshape(grad, (-1,))
        local = self._local(table, reduced) * xp.reshape(
            xp.take(flat, groups.targets, axis=0), (-1, 1))
        grad_x = grad_src = None
        if self.needs_grad(0):
            mine = groups.at_positions(xp, local[:, 0]) if self.include_self else 0.0
            grad_x = xp.reshape(xp.where(groups.hit, mine, flat), self.shape)
        if self.needs_grad(1):
            entries = local[:, 1:] if self.include_self else local
            grad_src = xp.reshape(groups.per_entry(xp, entries), self.src_shape)
        return grad_x, grad_src

    def _reduce(self, table: Any) -> Any:
        xp = self.xp
        if self.reduce == "sum":
            return xp.sum(table, axis=1)
        if self.reduce == "prod":
            return xp.prod(table, axis=1)
        if self.reduce == "amax":
            return xp.max(table, axis=1)
        if self.reduce == "amin":
            return xp.min(table, axis=1)
        count = self._counts(table.dtype)
        total = xp.sum(table, axis=1)
        if xp.isdtype(table.dtype, "integral"):  # PyTorch floors an integer mean
            return total // xp.astype(count, table.dtype)
        return total / count

    def _counts(self, dtype: Any) -> Any:
        """How many entries each row combines, its own value included."""
        assert self.groups is not None
        return self.xp.astype(self.groups.count + int(self.include_self), dtype)

    def _local(self, table: Any, reduced: Any) -> Any:
        """Each table entry's derivative of its row's result (0 in the padding)."""
        xp = self.xp
        assert self.groups is not None
        valid = self.groups.valid
        if self.include_self:
            valid = xp.concat([xp.ones((valid.shape[0], 1), dtype=xp.bool), valid], axis=1)
        if self.reduce == "sum":
            return xp.astype(valid, table.dtype)
        if self.reduce == "mean":
            return xp.astype(valid, table.dtype) / xp.reshape(self._counts(table.dtype), (-1, 1))
        if self.reduce == "prod":
            return others_product(xp, table, 1)
        winners = xp.logical_and(valid, table == xp.reshape(reduced, (-1, 1)))
        share = xp.astype(winners, table.dtype)
        return share / xp.sum(share, axis=1, keepdims=True)


class _Groups:
    """The entries of ``linear`` grouped by position: sorted, one group per position written
    (``targets``), each entry's group and rank within it; and, for each of the ``size``
    positions of the output, whether it is written (``hit``) and by which group."""

    def __init__(self, xp: Any, linear: Any, size: int) -> None:
        entries = linear.shape[0]
        self.order = xp.argsort(linear, stable=True)
        ordered = xp.take(linear, self.order, axis=0)
        first = xp.concat([xp.ones((1,), dtype=xp.bool), ordered[1:] != ordered[:-1]])
        self.group = xp.cumulative_sum(xp.astype(first, xp.int64)) - 1
        count = int(self.group[-1]) + 1
        ids = xp.arange(count, dtype=xp.int64)
        start = xp.searchsorted(self.group, ids, side="left")
        self.count = xp.searchsorted(self.group, ids, side="right") - start
        self.width = int(xp.max(self.count))
        columns = xp.reshape(xp.arange(self.width, dtype=xp.int64), (1, -1))
        self.valid = columns < xp.reshape(self.count, (-1, 1))
        self.slots = xp.clip(xp.reshape(start, (-1, 1)) + columns, 0, entries - 1)
        self.rank = xp.arange(entries, dtype=xp.int64) - xp.take(start, self.group, axis=0)
        self.targets = xp.take(ordered, start, axis=0)
        positions = xp.arange(size, dtype=xp.int64)
        self.of_position = xp.clip(xp.searchsorted(self.targets, positions), 0, count - 1)
        self.hit = xp.take(self.targets, self.of_position, axis=0) == positions

    def table(self, xp: Any, values: Any, identity: Any) -> Any:
        """The entries of ``values`` (in ``linear``'s order) as one row per group, padded with
        ``identity``."""
        ordered = xp.take(values, self.order, axis=0)
        picked = xp.reshape(xp.take(ordered, xp.reshape(self.slots, (-1,)), axis=0),
                            self.slots.shape)
        return xp.where(self.valid, picked, identity)

    def at_positions(self, xp: Any, per_group: Any) -> Any:
        """One value per group spread to the output's positions (meaningful where ``hit``)."""
        return xp.take(per_group, self.of_position, axis=0)

    def per_entry(self, xp: Any, rows: Any) -> Any:
        """The table's entries back in ``linear``'s order: the adjoint of ``table``."""
        flat = xp.reshape(rows, (-1,))
        ordered = xp.take(flat, self.group * self.width + self.rank, axis=0)
        return xp.take(ordered, xp.argsort(self.order), axis=0)


def _identity(backend: Any, reduce: str, dtype: Any) -> Any:
    """The value that leaves ``reduce`` unchanged: what pads the table's rows."""
    if reduce == "prod":
        return 1
    if reduce not in ("amax", "amin"):
        return 0
    kind = _dtypes.from_native(backend, dtype)
    if kind.is_floating:
        return -math.inf if reduce == "amax" else math.inf
    low, high = _dtypes.value_range(kind)
    return low if reduce == "amax" else high
