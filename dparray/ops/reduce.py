"""Reductions (``sum mean max min var logsumexp``) and the softmax family.

``axis`` is None (all axes), an int or a tuple of ints, as in the array API; ``keepdims`` keeps
reduced axes as size 1. ``var`` takes the array API's ``correction`` (0 by default: the
population variance; PyTorch's ``torch.var`` defaults to 1).
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function
from dparray.ops._util import (
    as_array,
    expand_reduced,
    normalize_axes,
    normalize_axis,
    reduced_count,
)
from dparray.tensor import Tensor, from_op


class _Reduction(Function):
    """Shared set-up: normalised axes and the input shape, kept for backward."""

    name = "reduction"

    def __init__(self, axis: Any = None, keepdims: bool = False) -> None:
        self.axis, self.keepdims = axis, keepdims

    def setup(self, x: Any) -> tuple[int, ...]:
        self.axes = normalize_axes(self.axis, x.ndim, self.name)
        self.shape = tuple(x.shape)
        return self.axes

    def expand(self, grad: Any) -> Any:
        return expand_reduced(self.xp, grad, self.shape, self.axes, self.keepdims)


class Sum(_Reduction):
    """Sum over ``axis``."""

    name = "sum"

    def forward(self, x: Any) -> Any:
        axes = self.setup(x)
        return as_array(self.xp.sum(x, axis=axes, keepdims=self.keepdims))

    def backward(self, grad: Any) -> Any:
        return self.expand(grad)


class Mean(_Reduction):
    """Arithmetic mean over ``axis``."""

    name = "mean"

    def forward(self, x: Any) -> Any:
        axes = self.setup(x)
        if reduced_count(self.shape, axes) == 0:
            raise ValueError(f"mean: reducing over an empty axis of shape {self.shape}")
        return as_array(self.xp.mean(x, axis=axes, keepdims=self.keepdims))

    def backward(self, grad: Any) -> Any:
        return self.expand(grad) / reduced_count(self.shape, self.axes)


class _Extremum(_Reduction):
    """Max or min; the gradient is shared equally among tied extremal elements."""

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
        mask = xp.astype(x == out, grad.dtype)
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
    """Variance over ``axis``: ``sum((x - mean)^2) / (N - correction)``."""

    name = "var"

    def __init__(self, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> None:
        super().__init__(axis, keepdims)
        self.correction = correction

    def forward(self, x: Any) -> Any:
        xp = self.xp
        axes = self.setup(x)
        self.divisor = reduced_count(self.shape, axes) - self.correction
        if self.divisor <= 0:
            raise ValueError(
                f"var: {reduced_count(self.shape, axes)} elements per output with correction "
                f"{self.correction} leave no degrees of freedom"
            )
        centred = x - xp.mean(x, axis=axes, keepdims=True)
        self.save(centred)
        return as_array(xp.sum(centred * centred, axis=axes, keepdims=self.keepdims) / self.divisor)

    def backward(self, grad: Any) -> Any:
        (centred,) = self.saved
        return self.expand(grad) * centred * (2.0 / self.divisor)


class LogSumExp(_Reduction):
    """``log(sum(exp(x)))`` over ``axis``, shifted by the maximum so it never overflows."""

    name = "logsumexp"

    def forward(self, x: Any) -> Any:
        xp = self.xp
        axes = self.setup(x)
        shift = xp.max(x, axis=axes, keepdims=True)
        shift = xp.where(xp.isfinite(shift), shift, 0.0)  # all -inf: exp(-inf) = 0, no nan
        out = shift + xp.log(xp.sum(xp.exp(x - shift), axis=axes, keepdims=True))
        self.save(x, out)
        return out if self.keepdims else xp.reshape(out, _drop(self.shape, axes))

    def backward(self, grad: Any) -> Any:
        x, out = self.saved
        return self.expand(grad) * self.xp.exp(x - out)


class Softmax(Function):
    """``exp(x) / sum(exp(x))`` along one axis."""

    def __init__(self, axis: int = -1) -> None:
        self.axis = axis

    def forward(self, x: Any) -> Any:
        xp = self.xp
        axis = normalize_axis(self.axis, x.ndim, "softmax")
        self.axis = axis
        e = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
        out = e / xp.sum(e, axis=axis, keepdims=True)
        self.save(out)
        return out

    def backward(self, grad: Any) -> Any:
        (out,) = self.saved
        return out * (grad - self.xp.sum(grad * out, axis=self.axis, keepdims=True))


class LogSoftmax(Function):
    """``x - logsumexp(x)`` along one axis."""

    def __init__(self, axis: int = -1) -> None:
        self.axis = axis

    def forward(self, x: Any) -> Any:
        xp = self.xp
        axis = normalize_axis(self.axis, x.ndim, "log_softmax")
        self.axis = axis
        shifted = x - xp.max(x, axis=axis, keepdims=True)
        out = shifted - xp.log(xp.sum(xp.exp(shifted), axis=axis, keepdims=True))
        self.save(out)
        return out

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (out,) = self.saved
        return grad - xp.exp(out) * xp.sum(grad, axis=self.axis, keepdims=True)


def _drop(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def sum(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Sum of the elements over ``axis`` (all when None)."""
    return Sum(axis, keepdims)(x)


def mean(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Mean of the elements over ``axis`` (all when None)."""
    return Mean(axis, keepdims)(x)


def max(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Maximum over ``axis``; ties share the gradient equally."""
    return Max(axis, keepdims)(x)


def min(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Minimum over ``axis``; ties share the gradient equally."""
    return Min(axis, keepdims)(x)


def var(x: Tensor, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Tensor:
    """Variance over ``axis`` with the array API's ``correction`` (0: population variance)."""
    return Var(axis, correction, keepdims)(x)


def logsumexp(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """``log(sum(exp(x)))`` over ``axis``, computed stably."""
    return LogSumExp(axis, keepdims)(x)


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """Softmax along ``axis``."""
    return Softmax(axis)(x)


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """Logarithm of the softmax along ``axis``, computed stably."""
    return LogSoftmax(axis)(x)


def all(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Whether every element over ``axis`` is true (a constant bool tensor)."""
    return _logical(x, "all", axis, keepdims)


def any(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Whether some element over ``axis`` is true (a constant bool tensor)."""
    return _logical(x, "any", axis, keepdims)


def argmax(x: Tensor, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """Position of the largest element along ``axis`` (of the flattened tensor when None), as
    a constant int64 tensor; the first one wins ties."""
    if not isinstance(x, Tensor):
        raise TypeError(f"argmax needs a Tensor, got {type(x).__name__}")
    xp = x.backend.xp
    data = x.data
    if axis is None:
        data, axis = xp.reshape(data, (-1,)), 0
    else:
        axis = normalize_axis(axis, x.ndim, "argmax")
    return from_op(as_array(xp.argmax(data, axis=axis, keepdims=keepdims)), x.backend, None)


def _logical(x: Tensor, name: str, axis: Any, keepdims: bool) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} needs a Tensor, got {type(x).__name__}")
    xp = x.backend.xp
    axes = normalize_axes(axis, x.ndim, name)
    out = getattr(xp, name)(x.data, axis=axes, keepdims=keepdims)
    return from_op(as_array(out), x.backend, None)


