"""Reductions (``sum mean prod max min var std logsumexp argmax argmin``) and the softmax family.

``axis`` is None (all axes), an int or a tuple of ints, as in the array API; ``keepdims`` keeps
reduced axes as size 1. ``var`` and ``std`` take ``correction`` with PyTorch's default, 1 (the
unbiased estimate; the array API's default is 0), or PyTorch's older ``unbiased``; ``sum`` and
``prod`` take PyTorch's ``dtype``, the dtype the elements are cast to before they are combined.

Edge cases follow PyTorch and the array API: a 0-d tensor reduced along axis 0 or -1 is its own
result (its softmax is 1); the mean over no elements is NaN, and so is a variance with no
degrees of freedom left (with a warning, as PyTorch gives); integer tensors have their mean,
variance and softmax in the default float dtype.
"""

from __future__ import annotations

import math
import os
import sys
import warnings
from types import FrameType
from typing import Any

from dparray._checks import check_bool, check_number, normalize_axes, normalize_axis
from dparray.autograd import Function
from dparray.kernels import reference, resolve
from dparray.ops._autocast import autocast_op
from dparray.ops._portable import cumulative_prod
from dparray.ops._promote import as_count, as_float, is_low_precision, wide_sum
from dparray.ops._util import as_array, expand_reduced, keepdims_shape, reduced_count
from dparray.ops.elementwise import astype
from dparray.tensor import Tensor, from_op

__all__ = [
    "all",
    "any",
    "argmax",
    "log_softmax",
    "logsumexp",
    "max",
    "mean",
    "min",
    "softmax",
    "sum",
    "var",
    "prod",
    "std",
    "argmin",
]


class _Reduction(Function):
    """Shared set-up: normalised axes and the input shape, kept for backward."""

    name = "reduction"

    def __init__(self, axis: Any = None, keepdims: bool = False) -> None:
        self.axis, self.keepdims = axis, check_bool(keepdims, "keepdims", self.name)

    def setup(self, x: Any) -> tuple[int, ...]:
        if x.ndim == 0 and self.axis is not None:
            normalize_axes(self.axis, 1, self.name)  # PyTorch takes axis 0 or -1 of a 0-d tensor
            self.axes: tuple[int, ...] = ()  # ... and reduces nothing
        else:
            self.axes = normalize_axes(self.axis, x.ndim, self.name)
        self.shape = tuple(x.shape)
        return self.axes

    def expand(self, grad: Any) -> Any:
        return expand_reduced(self.xp, grad, self.shape, self.axes, self.keepdims)

    def output_shape(self) -> tuple[int, ...]:
        if self.keepdims:
            return keepdims_shape(self.shape, self.axes)
        return _drop(self.shape, self.axes)


class Sum(_Reduction):
    """Sum over ``axis``."""

    name = "sum"

    def forward(self, x: Any) -> Any:
        axes = self.setup(x)
        x = as_count(self.xp, x)  # mask.sum() is an int64 count, as in PyTorch
        return as_array(wide_sum(self.backend, x, axes, self.keepdims))

    def backward(self, grad: Any) -> Any:
        return self.expand(grad)


class Mean(_Reduction):
    """Arithmetic mean over ``axis``; NaN over no elements (PyTorch's and the array API's)."""

    name = "mean"

    def forward(self, x: Any) -> Any:
        xp = self.xp
        x = as_float(self.backend, x)
        axes = self.setup(x)
        count = reduced_count(self.shape, axes)
        if count == 0:  # NaN without NumPy's empty-slice warning
            return xp.full(self.output_shape(), math.nan, dtype=x.dtype)
        if is_low_precision(self.backend, x):  # accumulated in float32, as sum
            total = xp.sum(x, axis=axes, keepdims=self.keepdims, dtype=xp.float32)
            return as_array(xp.astype(total / count, x.dtype))
        return as_array(xp.mean(x, axis=axes, keepdims=self.keepdims))

    def backward(self, grad: Any) -> Any:
        count = reduced_count(self.shape, self.axes)
        expanded = self.expand(grad)
        return expanded / count if count else expanded  # over no elements: an empty gradient


class _Extremum(_Reduction):
    """Max or min; the gradient is shared equally among tied extremal elements. A NaN is the
    extremum (as in PyTorch), so the NaNs share the gradient and the others get none."""

    def reduce(self, x: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def forward(self, x: Any) -> Any:
        axes = self.setup(x)
        if reduced_count(self.shape, axes) == 0:
            raise ValueError(f"{self.name}: reducing over an empty axis of shape {self.shape}")
        out = self.reduce(x, axis=axes, keepdims=True)
        self.save(x, out)
        return out if self.keepdims else self.xp.reshape(out, _drop(self.shape, axes))

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        x, out = self.saved
        # x == NaN is never true: a NaN result goes to the NaNs (else 0 / 0 everywhere)
        winners = xp.logical_or(x == out, xp.logical_and(xp.isnan(x), xp.isnan(out)))
        mask = xp.astype(winners, grad.dtype)
        count = xp.sum(mask, axis=self.axes, keepdims=True)
        return self.expand(grad) * mask / count


class Max(_Extremum):
    """Maximum over ``axis``."""

    name = "max"

    def reduce(self, x: Any, **kwargs: Any) -> Any:
        return self.xp.max(x, **kwargs)


class Min(_Extremum):
    """Minimum over ``axis``."""

    name = "min"

    def reduce(self, x: Any, **kwargs: Any) -> Any:
        return self.xp.min(x, **kwargs)


class Var(_Reduction):
    """Variance over ``axis``: ``sum((x - mean)^2) / (N - correction)``.

    With ``N - correction <= 0`` the result is NaN, as the array API specifies (PyTorch agrees
    at 0 and gives inf below), and so is the gradient; a UserWarning says so, as PyTorch's does.
    """

    name = "var"

    def __init__(self, axis: Any = None, correction: float = 1.0, keepdims: bool = False) -> None:
        super().__init__(axis, keepdims)
        self.correction = check_number(correction, "correction", self.name, minimum=0.0)

    def forward(self, x: Any) -> Any:
        xp = self.xp
        x = as_float(self.backend, x)
        axes = self.setup(x)
        count = reduced_count(self.shape, axes)
        self.divisor = count - self.correction
        if self.divisor <= 0:
            _warn_at_caller(
                f"{self.name}: {count} element(s) per result with correction "
                f"{self.correction:g} leave no degrees of freedom; the result is NaN"
            )
            return xp.full(self.output_shape(), math.nan, dtype=x.dtype)
        centred = x - wide_sum(self.backend, x, axes, keepdims=True) / count
        self.save(centred)
        squares = wide_sum(self.backend, centred * centred, axes, self.keepdims)
        return as_array(squares / self.divisor)

    def backward(self, grad: Any) -> Any:
        if self.divisor <= 0:
            return self.xp.full(self.shape, math.nan, dtype=grad.dtype)
        centred = self.saved[0]
        return self.expand(grad) * centred * (2.0 / self.divisor)


class Std(Var):
    """Standard deviation over ``axis``: ``sqrt(var)``. Where it is 0 (constant input) the
    gradient is 0, as in PyTorch, rather than the NaN of ``sqrt``'s."""

    name = "std"

    def forward(self, x: Any) -> Any:
        out = self.xp.sqrt(super().forward(x))
        self.save(*self.saved, out)
        return out

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        if self.divisor <= 0:
            return super().backward(grad)
        out = self.saved[-1]
        zero = out == 0
        return super().backward(xp.where(zero, 0.0, grad / (2.0 * xp.where(zero, 1.0, out))))


class Prod(_Reduction):
    """Product over ``axis``. Its gradient is the product of the other elements, computed
    without dividing by the elements (from the running products before and after each), so
    it is right where some of them are 0, infinite, NaN or too large for the whole product."""

    name = "prod"

    def forward(self, x: Any) -> Any:
        axes = self.setup(x)
        x = as_count(self.xp, x)
        self.save(x)
        return as_array(self.xp.prod(x, axis=axes, keepdims=self.keepdims))

    def backward(self, grad: Any) -> Any:
        (x,) = self.saved
        return self.expand(grad) * others_product(self.xp, x, self.axes)


def others_product(xp: Any, x: Any, axes: int | tuple[int, ...]) -> Any:
    """For each element, the product of the other elements reduced with it over ``axes``, from
    running products and without dividing by an element: exact beside zeros, NaN, infinities,
    subnormals and products that overflow. An empty reduction gives ones."""
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    n = math.prod(x.shape[a] for a in axes)
    if not axes or n == 0 or math.prod(x.shape) == 0:
        return xp.ones_like(x)
    # the reduced axes last, as one of n: each element's others are the product of those
    # before it times the product of those after it
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    order = (*kept, *axes)
    moved = xp.permute_dims(x, order)
    rows = xp.reshape(moved, (*moved.shape[:len(kept)], n))
    ones = xp.ones((*rows.shape[:-1], 1), dtype=x.dtype)
    before = xp.concat([ones, cumulative_prod(xp, rows[..., :-1], -1)], axis=-1)
    after = xp.flip(cumulative_prod(xp, xp.flip(rows[..., 1:], axis=-1), -1), axis=-1)
    others = xp.reshape(before * xp.concat([after, ones], axis=-1), moved.shape)
    inverse = tuple(sorted(range(x.ndim), key=order.__getitem__))
    return xp.permute_dims(others, inverse)


class LogSumExp(_Reduction):
    """``log(sum(exp(x)))`` over ``axis``, shifted by the maximum so it never overflows."""

    name = "logsumexp"

    def forward(self, x: Any) -> Any:
        xp = self.xp
        x = as_float(self.backend, x)
        axes = self.setup(x)
        if reduced_count(self.shape, axes) == 0:  # the log of an empty sum, as in PyTorch
            out = xp.full(keepdims_shape(self.shape, axes), -math.inf, dtype=x.dtype)
        else:
            shift = xp.max(x, axis=axes, keepdims=True)
            shift = xp.where(xp.isfinite(shift), shift, 0.0)  # all -inf: exp(-inf) = 0, no nan
            total = xp.sum(xp.exp(x - shift), axis=axes, keepdims=True)
            zero = total == 0  # all -inf: log(0) = -inf, without a warning; NaN stays NaN
            out = shift + xp.where(zero, -math.inf, xp.log(xp.where(zero, 1.0, total)))
        self.save(x, out)
        return out if self.keepdims else xp.reshape(out, _drop(self.shape, axes))

    def backward(self, grad: Any) -> Any:
        x, out = self.saved
        return self.expand(grad) * self.xp.exp(x - out)


@reference("softmax")
class Softmax(Function):
    """``exp(x) / sum(exp(x))`` along one axis (a 0-d tensor's softmax is 1)."""
    saved_values = "output"  # only its output, which create_graph reaches through this node


    def __init__(self, axis: int = -1) -> None:
        self.axis: int | tuple[()] = axis

    def forward(self, x: Any) -> Any:
        xp = self.xp
        x = as_float(self.backend, x)
        self.axis = _softmax_axis(self.axis, x, "softmax")
        axis = self.axis
        if _empty_along(x, axis):  # an empty softmax, as in PyTorch (no maximum to shift by)
            self.save(x)
            return x
        e = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
        out = e / xp.sum(e, axis=axis, keepdims=True)
        self.save(out)
        return out

    def backward(self, grad: Any) -> Any:
        (out,) = self.saved
        return out * (grad - self.xp.sum(grad * out, axis=self.axis, keepdims=True))


@reference("log_softmax")
class LogSoftmax(Function):
    """``x - logsumexp(x)`` along one axis (0 for a 0-d tensor)."""
    saved_values = "output"  # only its output, which create_graph reaches through this node


    def __init__(self, axis: int = -1) -> None:
        self.axis: int | tuple[()] = axis

    def forward(self, x: Any) -> Any:
        xp = self.xp
        x = as_float(self.backend, x)
        self.axis = _softmax_axis(self.axis, x, "log_softmax")
        axis = self.axis
        if _empty_along(x, axis):  # as softmax's
            self.save(x)
            return x
        shifted = x - xp.max(x, axis=axis, keepdims=True)
        out = shifted - xp.log(xp.sum(xp.exp(shifted), axis=axis, keepdims=True))
        self.save(out)
        return out

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (out,) = self.saved
        return grad - xp.exp(out) * xp.sum(grad, axis=self.axis, keepdims=True)


def _warn_at_caller(message: str) -> None:
    """A UserWarning attributed to the first caller outside dparray (``dp.var(x)`` and
    ``x.var()`` reach the op through different numbers of frames)."""
    level = 2
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, UserWarning, stacklevel=level)


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _softmax_axis(axis: Any, x: Any, name: str) -> int | tuple[()]:
    """The softmax axis, normalised; a 0-d tensor takes axis 0 or -1 and reduces nothing."""
    normalized = normalize_axis(axis, x.ndim or 1, name)
    return normalized if x.ndim else ()


def _empty_along(x: Any, axis: int | tuple[()]) -> bool:
    """Whether the softmax axis of ``x`` has no entries (its softmax is then empty too)."""
    return isinstance(axis, int) and x.shape[axis] == 0


def _drop(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(n for i, n in enumerate(shape) if i not in axes)


@autocast_op("sum")
def sum(x: Tensor, axis: Any = None, keepdims: bool = False, *, dtype: Any = None) -> Tensor:
    """Sum of the elements over ``axis`` (all when None); with ``dtype`` (PyTorch's), the
    elements are cast to it first (``ints.sum(dtype="float64")``, differentiable between
    floating dtypes)."""
    return Sum(axis, keepdims)(_cast(x, dtype, "sum"))


@autocast_op("mean")
def mean(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Mean of the elements over ``axis`` (all when None)."""
    return Mean(axis, keepdims)(x)


def max(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Maximum over ``axis``; ties share the gradient equally."""
    return Max(axis, keepdims)(x)


def min(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Minimum over ``axis``; ties share the gradient equally."""
    return Min(axis, keepdims)(x)


@autocast_op("var")
def var(x: Tensor, axis: Any = None, correction: float | bool | None = None,
        keepdims: bool = False, *, unbiased: bool | None = None) -> Tensor:
    """Variance over ``axis``: the squared deviations' sum divided by ``N - correction``.

    ``correction`` defaults to 1, PyTorch's unbiased estimate (the array API's default is 0,
    the population variance); PyTorch's ``unbiased=True``/``False`` is ``correction=1``/``0``,
    and a bool in ``correction``'s place (``x.var(1, False)``) means the same.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([1.0, 2.0, 3.0, 4.0])
        >>> round(x.var().item(), 6), x.var(correction=0).item(), x.var(unbiased=False).item()
        (1.666667, 1.25, 1.25)
    """
    return Var(axis, _correction(correction, unbiased, "var"), keepdims)(x)


@autocast_op("std")
def std(x: Tensor, axis: Any = None, correction: float | bool | None = None,
        keepdims: bool = False, *, unbiased: bool | None = None) -> Tensor:
    """Standard deviation over ``axis``, the square root of ``var`` with the same
    ``correction`` (1 by default, as in PyTorch; 0: of the population) or ``unbiased``.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([1.0, 2.0, 3.0, 4.0])
        >>> round(x.std().item(), 6), round(x.std(correction=0).item(), 6)
        (1.290994, 1.118034)
    """
    return Std(axis, _correction(correction, unbiased, "std"), keepdims)(x)


def _correction(correction: Any, unbiased: Any, where: str) -> float:
    """``var``'s and ``std``'s degrees-of-freedom correction from either spelling."""
    if unbiased is not None:
        if correction is not None:
            raise TypeError(f"{where}: give correction or unbiased, not both")
        correction = check_bool(unbiased, "unbiased", where)
    if correction is None:
        return 1.0
    if isinstance(correction, bool):  # PyTorch's positional unbiased
        return 1.0 if correction else 0.0
    return check_number(correction, "correction", where, minimum=0.0)


@autocast_op("prod")
def prod(x: Tensor, axis: Any = None, keepdims: bool = False, *, dtype: Any = None) -> Tensor:
    """Product of the elements over ``axis`` (all when None); with ``dtype`` (PyTorch's), the
    elements are cast to it first.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([2.0, 0.0, 3.0], requires_grad=True)
        >>> x.prod().backward()[x].tolist()  # the product of the others, zero or not
        [0.0, 6.0, 0.0]
    """
    return Prod(axis, keepdims)(_cast(x, dtype, "prod"))


def _cast(x: Any, dtype: Any, where: str) -> Any:
    """``x`` cast to ``dtype`` for a reduction in it (``x`` itself when None)."""
    if dtype is None:
        return x
    if not isinstance(x, Tensor):
        raise TypeError(f"{where} needs a Tensor, got {type(x).__name__}")
    return astype(x, dtype)


@autocast_op("logsumexp")
def logsumexp(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """``log(sum(exp(x)))`` over ``axis``, computed stably."""
    return LogSumExp(axis, keepdims)(x)


@autocast_op("softmax")
def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """Softmax along ``axis``."""
    return resolve(x.backend, Softmax)(axis)(x)


@autocast_op("log_softmax")
def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """Logarithm of the softmax along ``axis``, computed stably."""
    return resolve(x.backend, LogSoftmax)(axis)(x)


def all(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Whether every element over ``axis`` is true (a constant bool tensor)."""
    return _logical(x, "all", axis, keepdims)


def any(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Whether some element over ``axis`` is true (a constant bool tensor)."""
    return _logical(x, "any", axis, keepdims)


def argmax(x: Tensor, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """Position of the largest element along ``axis`` (of the flattened tensor when None), as
    a constant int64 tensor; the first one wins ties, and NaN counts as the largest."""
    return _position("argmax", x, axis, keepdims)


def argmin(x: Tensor, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """Position of the smallest element along ``axis`` (of the flattened tensor when None), as
    a constant int64 tensor; the first one wins ties, and NaN counts as the smallest.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([[3.0, 1.0], [0.0, 2.0]])
        >>> x.argmin().item(), x.argmin(axis=1).tolist()
        (2, [1, 0])
    """
    return _position("argmin", x, axis, keepdims)


def _position(name: str, x: Tensor, axis: int | None, keepdims: bool) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} needs a Tensor, got {type(x).__name__}")
    check_bool(keepdims, "keepdims", name)
    xp = x.backend.xp
    if axis is None:
        if x.elem_count() == 0:
            raise ValueError(f"{name}: the tensor of shape {x.shape} has no elements")
        out = getattr(xp, name)(xp.reshape(x.data, (-1,)), axis=0)
        if keepdims:
            out = xp.reshape(out, (1,) * x.ndim)
    else:
        axis = normalize_axis(axis, x.ndim or 1, name)
        if x.ndim == 0:  # PyTorch: axis 0 or -1 of a 0-d tensor, whose only position is 0
            out = xp.zeros((), dtype=xp.int64)
        elif x.shape[axis] == 0:
            raise ValueError(f"{name}: axis {axis} of shape {x.shape} has no elements")
        else:
            out = getattr(xp, name)(x.data, axis=axis, keepdims=keepdims)
    return from_op(as_array(out), x.backend, None)


def _logical(x: Tensor, name: str, axis: Any, keepdims: bool) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} needs a Tensor, got {type(x).__name__}")
    xp = x.backend.xp
    axes = normalize_axes(axis, x.ndim, name)
    out = getattr(xp, name)(x.data, axis=axes, keepdims=keepdims)
    return from_op(as_array(out), x.backend, None)


