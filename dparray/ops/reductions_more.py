"""PyTorch's reductions beyond the array API's: ``amax``, ``amin``, ``aminmax``, ``nansum``,
``nanmean``, ``count_nonzero``, ``median`` and ``norm``.

``amax`` and ``amin`` are ``max`` and ``min`` under PyTorch's names (ties share the gradient
equally, as PyTorch's ``amax`` shares it; ``dim=()`` reduces every axis, as in PyTorch).
``median`` is the lower of the two middle values, never their mean, as in PyTorch; NaN is the
median of anything that holds one. ``norm`` is PyTorch's ``torch.norm``: vector norms over
the axes given (all by default); its gradients are PyTorch's, 0 where the norm is 0.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from dparray._checks import check_bool, check_tensor, describe, normalize_axes, normalize_axis
from dparray.ops._portable import take_along_axis
from dparray.ops.arithmetic import div, mul, pow
from dparray.ops.elementwise import abs, astype, sqrt, where
from dparray.ops.indexing import gather
from dparray.ops.reduce import Max, Min, _Extremum
from dparray.ops.reduce import sum as _sum
from dparray.ops.shape import reshape, squeeze
from dparray.ops.sorting import ValuesIndices
from dparray.tensor import Tensor, from_op

__all__ = [
    "amax",
    "amin",
    "aminmax",
    "MinMax",
    "nansum",
    "nanmean",
    "count_nonzero",
    "median",
    "norm",
]


class MinMax(NamedTuple):
    """The smallest and the largest values (PyTorch's ``return_types.aminmax``)."""

    min: Tensor
    max: Tensor


class Amax(Max):
    """``max`` under PyTorch's name (its errors name ``amax``)."""

    name = "amax"


class Amin(Min):
    """``min`` under PyTorch's name."""

    name = "amin"


def amax(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """The largest values over ``axis`` (all axes when None or ``()``), PyTorch's ``amax``;
    tied maxima share the gradient equally, as in PyTorch. A NaN is the maximum and takes the
    gradient (as ``max``'s; PyTorch's ``amax`` gives NaN gradients to that whole slice).

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([[1.0, 5.0, 5.0], [2.0, 0.0, 1.0]], requires_grad=True)
        >>> dparray.amax(x, dim=1).tolist()
        [5.0, 2.0]
        >>> dparray.amax(x, dim=1).sum().backward()[x].tolist()
        [[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]]
    """
    return Amax(_all_when_empty(axis), keepdims)(x)


def amin(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """The smallest values over ``axis`` (all axes when None or ``()``), PyTorch's ``amin``;
    tied minima share the gradient equally.

    Examples:
        >>> import dparray
        >>> dparray.amin(dparray.tensor([[1.0, 5.0], [2.0, 0.0]]), dim=0).tolist()
        [1.0, 0.0]
    """
    return Amin(_all_when_empty(axis), keepdims)(x)


def aminmax(x: Tensor, *, axis: Any = None, keepdims: bool = False) -> MinMax:
    """``(amin(x), amax(x))`` over ``axis`` (all axes when None), as a named pair ``(min,
    max)``: PyTorch's ``aminmax``, whose ``dim`` is one axis or None.

    Examples:
        >>> import dparray
        >>> low, high = dparray.aminmax(dparray.tensor([[3.0, 1.0], [2.0, 7.0]]), dim=1)
        >>> low.tolist(), high.tolist()
        ([1.0, 2.0], [3.0, 7.0])
    """
    if axis is not None:
        check_tensor(x, "x", "aminmax")
        axis = normalize_axis(axis, x.ndim or 1, "aminmax")  # one axis, as in PyTorch
    return MinMax(amin(x, axis, keepdims), amax(x, axis, keepdims))


def nansum(x: Tensor, axis: Any = None, keepdims: bool = False, *, dtype: Any = None) -> Tensor:
    """The sum over ``axis`` with NaNs counted as zero (PyTorch's ``nansum``); a NaN entry
    gets no gradient. ``dtype`` casts the elements first, as ``sum``'s.

    Examples:
        >>> import dparray
        >>> dparray.nansum(dparray.tensor([1.0, float("nan"), 2.0])).item()
        3.0
    """
    x = _cast(x, dtype, "nansum")
    return _sum(_nan_as_zero(x), axis, keepdims)


def nanmean(x: Tensor, axis: Any = None, keepdims: bool = False, *, dtype: Any = None) -> Tensor:
    """The mean over ``axis`` of the entries that are not NaN (NaN where all are), PyTorch's
    ``nanmean``; floating tensors only, as in PyTorch.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([[1.0, float("nan")], [2.0, 4.0]])
        >>> dparray.nanmean(x, dim=1).tolist()
        [1.0, 3.0]
    """
    check_tensor(x, "x", "nanmean")
    if not x.dtype.is_floating:
        raise TypeError(f"nanmean: needs a floating tensor, got {x.dtype.name}")
    x = _cast(x, dtype, "nanmean")
    xp = x.backend.xp
    present = from_op(xp.logical_not(xp.isnan(x.data)), x.backend, None)
    count = astype(_sum(present, axis, keepdims), x.dtype)
    return div(_sum(_nan_as_zero(x), axis, keepdims), count)


def count_nonzero(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """How many entries over ``axis`` (all axes when None) are not zero, as a constant int64
    tensor (PyTorch's ``count_nonzero``; NaN counts, being non-zero).

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([[0, 1, 2], [0, 0, 3]])
        >>> dparray.count_nonzero(x).item(), dparray.count_nonzero(x, dim=0).tolist()
        (3, [0, 1, 2])
    """
    check_tensor(x, "x", "count_nonzero")
    check_bool(keepdims, "keepdims", "count_nonzero")
    xp = x.backend.xp
    axes = normalize_axes(axis, x.ndim, "count_nonzero")
    nonzero = xp.astype(xp.astype(x.data, xp.bool), xp.int64)
    return from_op(xp.sum(nonzero, axis=axes, keepdims=keepdims)[...], x.backend, None)


def median(x: Tensor, axis: int | None = None, keepdims: bool = False
           ) -> Tensor | ValuesIndices:
    """The median: the lower of the two middle values for an even count, as PyTorch's
    ``median`` (which never averages them), and NaN where a NaN is present.

    Without ``axis``, the median of all elements (NaN for none); equal elements share its
    gradient, as in PyTorch. With ``axis``, ``(values, indices)`` along it, as PyTorch's
    ``median(x, dim)`` returns them; the gradient goes to the position in ``indices`` (among
    equal values PyTorch does not say which position it reports, nor does dparray).

    Examples:
        >>> import dparray
        >>> dparray.median(dparray.tensor([4.0, 1.0, 3.0, 2.0])).item()
        2.0
        >>> values, indices = dparray.median(dparray.tensor([[5.0, 1.0, 3.0]]), dim=1)
        >>> values.tolist(), indices.tolist()
        ([3.0], [2])
    """
    check_tensor(x, "x", "median")
    check_bool(keepdims, "keepdims", "median")
    if axis is None:
        if x.elem_count() == 0:
            if not x.dtype.is_floating:  # PyTorch: the smallest int64, which means nothing
                raise ValueError(f"median: an empty {x.dtype.name} tensor has no median")
            out = x.backend.xp.full((1,) * x.ndim if keepdims else (), math.nan,
                                    dtype=x.data.dtype)
            return from_op(out, x.backend, None)  # NaN, as in PyTorch
        return MedianOfAll(None, keepdims)(x)
    return _median_along(x, normalize_axis(axis, x.ndim or 1, "median"), keepdims)


class MedianOfAll(_Extremum):
    """The lower median of all elements (NaN if one is NaN); like ``max``, elements equal to
    it (the NaNs, for a NaN) share its gradient equally."""

    name = "median"

    def reduce(self, x: Any, **kwargs: Any) -> Any:
        xp = self.xp
        flat = xp.reshape(x, (-1,))
        n = flat.shape[0]
        order = xp.argsort(flat, stable=True)  # NaN sorts last
        out = xp.take(flat, order[(n - 1) // 2:(n - 1) // 2 + 1], axis=0)
        if xp.isdtype(x.dtype, "real floating"):
            last = xp.take(flat, order[n - 1:], axis=0)
            out = xp.where(xp.isnan(last), last, out)
        return xp.reshape(out, (1,) * x.ndim)


def _median_along(x: Tensor, axis: int, keepdims: bool) -> ValuesIndices:
    """``median(x, axis)``: the position of each lower median (of the first NaN where there is
    one, as PyTorch reports it) from a stable sort, and the values gathered there."""
    xp = x.backend.xp
    if x.ndim == 0:  # PyTorch: axis 0 or -1 of a 0-d tensor is the tensor, at position 0
        return ValuesIndices(reshape(x, ()), from_op(xp.zeros((), dtype=xp.int64), x.backend,
                                                     None))
    n = x.shape[axis]
    if n == 0:
        raise ValueError(f"median: axis {axis} of shape {x.shape} has no elements")
    order = xp.argsort(x.data, axis=axis, stable=True)  # NaN sorts last, in order
    kept = tuple(1 if i == axis else size for i, size in enumerate(x.shape))
    middle = xp.full(kept, (n - 1) // 2, dtype=xp.int64)
    if x.dtype.is_floating:
        nans = xp.sum(xp.astype(xp.isnan(x.data), xp.int64), axis=axis, keepdims=True)
        middle = xp.where(nans > 0, n - nans, middle)
    index = from_op(take_along_axis(xp, order, middle, axis), x.backend, None)
    values = gather(x, axis, index)
    if not keepdims:
        values, index = squeeze(values, axis), squeeze(index, axis)
    return ValuesIndices(values, index)


def norm(x: Tensor, p: Any = "fro", axis: Any = None, keepdims: bool = False,
         dtype: Any = None) -> Tensor:
    """PyTorch's ``torch.norm``: the vector ``p``-norm of the entries over ``axis`` (all axes
    when None; one axis or several), on floating tensors (``dtype`` casts them first).

    ``p`` is a number -- ``(sum |x|^p)^(1/p)``; ``inf`` the largest magnitude (ties share the
    gradient), ``-inf`` the smallest, ``0`` the count of non-zero entries (a constant) -- or
    ``"fro"`` (the default), the 2-norm over at most two axes. The gradient is 0 where the
    norm is 0, and at zero entries for ``p < 1``, as PyTorch's. ``"nuc"``, the nuclear norm,
    needs a singular value decomposition, which dparray does not have.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([[3.0, -4.0], [0.0, 0.0]], dtype="float64")
        >>> dparray.norm(x).item(), dparray.norm(x, dim=1).tolist()
        (5.0, [5.0, 0.0])
        >>> dparray.norm(x, p=1, dim=1).tolist(), dparray.norm(x, float("inf")).item()
        ([7.0, 0.0], 4.0)
    """
    check_tensor(x, "x", "norm")
    if not x.dtype.is_floating:
        raise TypeError(f"norm: needs a floating tensor, got {x.dtype.name}")
    axes = normalize_axes(axis, x.ndim, "norm")
    order = _order(p, axes, axis)
    keepdims = check_bool(keepdims, "keepdims", "norm")
    return _vector_norm(_cast(x, dtype, "norm"), order, axes, keepdims)


def _order(p: Any, axes: tuple[int, ...], axis: Any) -> float:
    """``norm``'s ``p`` as a number (``"fro"`` and None are 2)."""
    if isinstance(p, str):
        if p == "nuc":
            raise ValueError("norm: p='nuc' (the nuclear norm) needs a singular value "
                             "decomposition, which dparray does not have")
        if p != "fro":
            raise ValueError(f"norm: p must be a number, 'fro' or 'nuc', got {p!r}")
        if len(axes) > 2:
            raise ValueError(f"norm: p='fro' takes at most 2 axes, got {len(axes)} "
                             f"(dim={axis!r}); give a number for p")
        return 2.0
    if p is None:
        return 2.0
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise TypeError(f"norm: p must be a number, 'fro' or 'nuc', got {describe(p)}")
    if math.isnan(p):
        raise ValueError("norm: p must be a number, not NaN")
    return float(p)


def _vector_norm(x: Tensor, p: float, axes: tuple[int, ...], keepdims: bool) -> Tensor:
    """``(sum |x|^p)^(1/p)`` over ``axes``, its limits at ``p = 0, inf, -inf``, with
    PyTorch's gradients: 0 where the norm is 0 (and at zero entries for ``p < 1``)."""
    magnitude = abs(x)
    if p == math.inf:
        return Max(axes, keepdims)(magnitude)
    if p == -math.inf:
        return Min(axes, keepdims)(magnitude)
    if p == 0:
        xp = x.backend.xp
        nonzero = from_op(xp.astype(x.data != 0, x.data.dtype), x.backend, None)
        return _sum(nonzero, axes, keepdims)
    if p == 1:
        return _sum(magnitude, axes, keepdims)
    if p == 2:
        return _away_from_zero(_sum(mul(x, x), axes, keepdims), sqrt)  # 0: no gradient
    # below p = 1 the slope of |x|^p at 0 is infinite: PyTorch gives zero entries none
    powers = _away_from_zero(magnitude, lambda m: pow(m, p)) if p > 0 else pow(magnitude, p)
    root = 1.0 / p
    return _away_from_zero(_sum(powers, axes, keepdims), lambda total: pow(total, root))


def _away_from_zero(t: Tensor, function: Any) -> Tensor:
    """``function(t)`` where ``t`` is not 0, and 0 (without gradient) where it is: for the
    roots and powers whose slope at 0 is infinite."""
    zero = from_op(t.data == 0, t.backend, None)
    return where(zero, 0.0, function(where(zero, 1.0, t)))


def _nan_as_zero(x: Tensor) -> Tensor:
    if not x.dtype.is_floating:
        return x
    xp = x.backend.xp
    return where(from_op(xp.isnan(x.data), x.backend, None), 0.0, x)


def _cast(x: Any, dtype: Any, where_: str) -> Any:
    check_tensor(x, "x", where_)
    return x if dtype is None else astype(x, dtype)


def _all_when_empty(axis: Any) -> Any:
    """PyTorch's ``amax``/``amin`` reduce every axis for ``dim=()`` (``max`` reduces none)."""
    return None if isinstance(axis, (list, tuple)) and len(axis) == 0 else axis

