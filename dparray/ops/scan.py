"""Scans along one axis: ``cumsum``, ``cumprod``, ``cummax``, ``cummin``, ``logcumsumexp``.

The array API has ``cumulative_sum`` (2023.12) and ``cumulative_prod`` (2024.12) and no other
scan, so the others -- and the gradients of ``cumprod`` and ``logcumsumexp`` -- run one
vectorised step per position along the axis: ``n`` Python-level steps for an axis of length
``n``, each over all the other axes at once. That is quick for the sequence lengths of models
and slow for an axis of millions.

As in the array API, ``axis`` may be omitted only for tensors of at most one dimension. A 0-d
tensor is scanned as one element, as PyTorch does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dparray._checks import normalize_axis
from dparray.autograd import Function
from dparray.ops._autocast import autocast_op
from dparray.ops._portable import cumulative_prod, running
from dparray.ops._promote import as_count, as_float
from dparray.ops.sorting import ValuesIndices
from dparray.tensor import Tensor, from_op

__all__ = [
    "cumsum",
    "cumprod",
    "cummax",
    "cummin",
    "logcumsumexp",
]


class _Scan(Function):
    """Shared set-up: the scan axis moved to the front (where the loops index it), and back."""

    name = "scan"

    def __init__(self, axis: int | None = None) -> None:
        self.axis = axis

    def begin(self, x: Any) -> Any:
        """``x`` with the scan axis first, remembering how to put it back."""
        if self.axis is None:
            if x.ndim > 1:
                raise ValueError(
                    f"{self.name}: axis is needed for a tensor with {x.ndim} dimensions"
                )
            self.axis = 0
        self.axis = normalize_axis(self.axis, x.ndim or 1, self.name)
        self.shape = tuple(x.shape)
        return self.front(x)

    def front(self, array: Any) -> Any:
        """An array of the input's shape with the scan axis first."""
        if not self.shape:
            return self.xp.reshape(array, (1,))
        return self.xp.moveaxis(array, self.axis, 0)

    def end(self, array: Any) -> Any:
        """Undo ``front``."""
        if not self.shape:
            return self.xp.reshape(array, ())
        return self.xp.moveaxis(array, 0, self.axis)


class CumSum(_Scan):
    """Running sum; its gradient is the running sum of the gradient from the other end."""

    name = "cumsum"

    def forward(self, x: Any) -> Any:
        xp = self.xp
        x = as_count(xp, x)  # a bool tensor's is a running count, as in PyTorch (int64)
        return self.end(xp.cumulative_sum(self.begin(x), axis=0))

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        reversed_grad = xp.flip(self.front(grad), axis=0)
        return self.end(xp.flip(xp.cumulative_sum(reversed_grad, axis=0), axis=0))


class CumProd(_Scan):
    """Running product. Its gradient divides by no element, so it is right where some are 0."""

    name = "cumprod"

    def forward(self, x: Any) -> Any:
        x = self.begin(as_count(self.xp, x))
        out = cumulative_prod(self.xp, x, 0)
        self.save(x, out)
        return self.end(out)

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        x, out = self.saved
        g = self.front(grad)
        n = g.shape[0]
        if n == 0:
            return self.end(g)
        # d out[k] / d x[i] = out[i - 1] * x[i + 1] * ... * x[k] for k >= i, so the gradient is
        # out[i - 1] * after[i] with after[i] = sum over k >= i of g[k] * x[i + 1] * ... * x[k],
        # which satisfies after[i] = g[i] + x[i + 1] * after[i + 1]
        after = _from_the_end(xp, g, lambda i: x[i + 1, ...])
        before = xp.concat([xp.ones_like(out[:1, ...]), out[:-1, ...]], axis=0)
        return self.end(before * after)


class _CumExtremum(_Scan):
    """Running maximum or minimum and where it was found (``self.indices``, for the caller).

    As in PyTorch, a tie moves the position to the later element, and a NaN, once met, is the
    value from there on (each later NaN taking over the position). The gradient of each value
    goes to its position.
    """
    saved_values = "constants"  # the positions


    def replaces(self, candidate: Any, best: Any) -> Any:
        raise NotImplementedError

    def forward(self, x: Any) -> Any:
        xp = self.xp
        x = self.begin(x)
        positions = xp.zeros(x.shape, dtype=xp.int64)
        values = x
        if x.shape[0]:
            best, where = x[0, ...], positions[0, ...]
            value_steps, position_steps = [best], [where]
            for i in range(1, x.shape[0]):
                candidate = x[i, ...]
                wins = xp.logical_or(xp.isnan(candidate), xp.logical_and(
                    xp.logical_not(xp.isnan(best)), self.replaces(candidate, best)))
                best, where = xp.where(wins, candidate, best), xp.where(wins, i, where)
                value_steps.append(best)
                position_steps.append(where)
            values, positions = xp.stack(value_steps), xp.stack(position_steps)
        self.save(positions)
        self.indices = self.end(positions)
        return self.end(values)

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (positions,) = self.saved
        g = self.front(grad)
        # the positions form runs that each start where positions[k] == k; walking from the end,
        # a run's gradients are summed and handed to its start
        if g.shape[0] == 0:
            return self.end(g)
        steps = []
        carry = xp.zeros_like(g[0, ...])
        for k in range(g.shape[0] - 1, -1, -1):
            carry = carry + g[k, ...]
            starts = positions[k, ...] == k
            steps.append(xp.where(starts, carry, 0.0))
            carry = xp.where(starts, 0.0, carry)
        return self.end(xp.stack(steps[::-1]))


class CumMax(_CumExtremum):
    """Running maximum along ``axis``."""

    name = "cummax"

    def replaces(self, candidate: Any, best: Any) -> Any:
        return candidate >= best


class CumMin(_CumExtremum):
    """Running minimum along ``axis``."""

    name = "cummin"

    def replaces(self, candidate: Any, best: Any) -> Any:
        return candidate <= best


class LogCumSumExp(_Scan):
    """``log(cumsum(exp(x)))``, a running ``logaddexp`` that never overflows."""

    name = "logcumsumexp"

    def forward(self, x: Any) -> Any:
        xp = self.xp
        x = self.begin(as_float(self.backend, x))
        out = running(xp, x, xp.logaddexp)
        self.save(x, out)
        return self.end(out)

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        x, out = self.saved
        g = self.front(grad)
        n = g.shape[0]
        if n == 0:
            return self.end(g)
        # d out[k] / d x[i] = exp(x[i] - out[k]) for k >= i. The gradient is
        # exp(x[i] - out[i]) * s[i] with s[i] = sum over k >= i of g[k] * exp(out[i] - out[k]),
        # so s[i] = g[i] + exp(out[i] - out[i + 1]) * s[i + 1]; out never decreases, so every
        # exponent is <= 0 and nothing overflows
        s = _from_the_end(xp, g, lambda i: xp.exp(_difference(xp, out[i, ...], out[i + 1, ...])))
        return self.end(xp.exp(_difference(xp, x, out)) * s)


def _from_the_end(xp: Any, g: Any, factor: Callable[[int], Any]) -> Any:
    """The linear recurrence of the scans' gradients, run from the end of axis 0:
    ``s[n - 1] = g[n - 1]`` and ``s[i] = g[i] + factor(i) * s[i + 1]``, stacked."""
    n = g.shape[0]
    s = [g[n - 1, ...]]
    for i in range(n - 2, -1, -1):
        s.append(g[i, ...] + factor(i) * s[-1])
    return xp.stack(s[::-1])


def _difference(xp: Any, a: Any, b: Any) -> Any:
    """``a - b``, and 0 where they are equal (``-inf - -inf`` would be NaN, with a warning)."""
    same = a == b
    return xp.where(same, 0.0, a - xp.where(same, 0.0, b))


@autocast_op("cumsum")
def cumsum(x: Tensor, axis: int | None = None) -> Tensor:
    """Running sum along ``axis`` (the array API's ``cumulative_sum``); a bool tensor counts.

    Examples:
        >>> import dparray
        >>> dparray.cumsum(dparray.tensor([[1, 2], [3, 4]]), axis=1).tolist()
        [[1, 3], [3, 7]]
    """
    return CumSum(axis)(x)


@autocast_op("cumprod")
def cumprod(x: Tensor, axis: int | None = None) -> Tensor:
    """Running product along ``axis``; its gradient is right where elements are 0.

    Examples:
        >>> import dparray
        >>> dparray.cumprod(dparray.tensor([2.0, 3.0, 4.0])).tolist()
        [2.0, 6.0, 24.0]
    """
    return CumProd(axis)(x)


def cummax(x: Tensor, axis: int | None = None) -> ValuesIndices:
    """Running maximum along ``axis`` and the position of each (``values``, ``indices``), as
    PyTorch's ``cummax``: a tie takes the later position, and NaN propagates.

    Examples:
        >>> import dparray
        >>> values, indices = dparray.cummax(dparray.tensor([1.0, 3.0, 2.0, 3.0]))
        >>> values.tolist(), indices.tolist()
        ([1.0, 3.0, 3.0, 3.0], [0, 1, 1, 3])
    """
    return _with_indices(CumMax(axis), x)


def cummin(x: Tensor, axis: int | None = None) -> ValuesIndices:
    """Running minimum along ``axis`` and the position of each, as PyTorch's ``cummin``."""
    return _with_indices(CumMin(axis), x)


@autocast_op("logcumsumexp")
def logcumsumexp(x: Tensor, axis: int | None = None) -> Tensor:
    """``log(cumsum(exp(x)))`` along ``axis``, computed without overflow.

    Examples:
        >>> import dparray
        >>> [round(v, 4) for v in dparray.logcumsumexp(dparray.tensor([0.0, 0.0, 1000.0])).tolist()]
        [0.0, 0.6931, 1000.0]
    """
    return LogCumSumExp(axis)(x)


def _with_indices(op: _CumExtremum, x: Tensor) -> ValuesIndices:
    values = op(x)
    indices = from_op(op.indices, values.backend, None)
    del op.indices  # the node keeps only what backward needs
    return ValuesIndices(values, indices)
