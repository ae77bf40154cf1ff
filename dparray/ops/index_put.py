"""Item assignment: ``x[key] = value`` as a new value of ``x``, one graph node.

Tensors stay immutable values: ``x[key] = value`` (``index_put_``) computes a copy of ``x``
with the selected entries replaced -- PyTorch's ``index_put`` -- and rebinds ``x`` to it.
Tensors computed from ``x`` before keep the values they had (there are no views to write
through), and the graph records the assignment like any op, differentiable in both ``x``
(zero at the replaced entries) and ``value`` (the gradient at its entries).

The key means what it means in ``x[key]``: its positions are found by indexing an array of
the flat positions of ``x`` with ``getitem`` (``dparray/ops/indexing.py``), so every key
``x[key]`` takes -- ints, slices, ``None``, ``...``, integer tensors, bool masks -- writes the
entries ``x[key]`` reads. A basic key (ints, slices, ``...``) is written through the array
API's own ``__setitem__`` on the copy; a bool mask of ``x``'s shape with one value is a
``where``. Where an advanced key names one entry twice, the last write wins (NumPy's rule;
PyTorch leaves it undefined), or with ``accumulate=True`` every write adds.
"""

from __future__ import annotations

import math
from typing import Any

from dparray._checks import check_bool, check_tensor
from dparray.autograd import Function, is_grad_enabled
from dparray.creation import arange, tensor
from dparray.ops._util import PYTHON_SCALARS, broadcast_shapes
from dparray.ops.elementwise import where
from dparray.ops.indexing import fill_value, getitem, last_writes
from dparray.ops.shape import reshape
from dparray.tensor import Tensor

__all__ = [
    "index_put",
    "index_put_",
]

LEAF_HINT = (
    "assign into a trainable leaf only under `with dparray.no_grad():` (as PyTorch requires), "
    "or assign into a copy: y = x.clone(); y[key] = value"
)


class PutBasic(Function):
    """``x`` with ``values`` written at a basic key (ints, slices, ``...``), through the
    array's ``__setitem__`` on a copy: the positions are distinct."""

    def __init__(self, key: Any) -> None:
        self.key = key

    def forward(self, x: Any, values: Any) -> Any:
        out = self.xp.asarray(x, copy=True)
        out[self.key] = values
        return out

    def backward(self, grad: Any) -> tuple[Any, Any]:
        grad_x = grad_values = None
        if self.needs_grad(0):
            grad_x = self.xp.asarray(grad, copy=True)
            grad_x[self.key] = 0
        if self.needs_grad(1):
            grad_values = grad[self.key]
        return grad_x, grad_values


class PutAt(Function):
    """``x`` with ``values`` (broadcast to the shape of ``positions``) written at the flat
    positions ``positions``: the last write wins where one repeats, or every write adds with
    ``accumulate``."""

    def __init__(self, accumulate: bool) -> None:
        self.accumulate = accumulate

    def forward(self, x: Any, positions: Any, values: Any) -> Any:
        xp = self.xp
        flat = xp.reshape(positions, (-1,))
        if isinstance(values, PYTHON_SCALARS):
            values = xp.full(positions.shape, values, dtype=x.dtype)
        written = xp.reshape(xp.broadcast_to(values, positions.shape), (-1,))
        base = xp.reshape(x, (-1,))
        self.shape, self.selection = tuple(x.shape), tuple(positions.shape)
        if self.accumulate:
            out = self.backend.scatter_add(base, flat, written) if flat.shape[0] else base
            self.save(flat)
        elif flat.shape[0]:
            hit, source = last_writes(xp, flat, math.prod(self.shape))
            out = xp.where(hit, xp.take(written, source, axis=0), base)
            self.save(flat, hit)
        else:
            out = base
            self.save(flat, xp.zeros(base.shape, dtype=xp.bool))
        return xp.reshape(out, self.shape)

    def backward(self, grad: Any) -> tuple[Any, None, Any]:
        xp = self.xp
        flat = self.saved[0]
        grad_x = grad_values = None
        if self.needs_grad(0):
            grad_x = grad if self.accumulate else xp.reshape(
                xp.where(self.saved[1], 0.0, xp.reshape(grad, (-1,))), self.shape)
        if self.needs_grad(2):
            picked = xp.take(xp.reshape(grad, (-1,)), flat, axis=0)
            grad_values = xp.reshape(picked, self.selection)
        return grad_x, None, grad_values


def index_put(x: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """PyTorch's ``index_put``, out of place: a copy of ``x`` with ``values`` written at
    ``x[indices]`` (any key ``x[...]`` takes: a tuple of integer tensors as in PyTorch, but
    also ints, slices and masks), or added there with ``accumulate=True``. ``values`` (a
    tensor, or a Python number that fits ``x``'s dtype) broadcasts to the selection's shape
    and is cast to ``x``'s dtype. Differentiable in ``x`` and ``values``.

    Examples:
        >>> import dparray
        >>> x = dparray.zeros(2, 3)
        >>> dparray.index_put(x, (dparray.tensor([0, 1]), dparray.tensor([2, 0])),
        ...                   dparray.tensor([5.0, 7.0])).tolist()
        [[0.0, 0.0, 5.0], [7.0, 0.0, 0.0]]
    """
    check_tensor(x, "x", "index_put")
    accumulate = check_bool(accumulate, "accumulate", "index_put")
    return _put(x, indices, values, accumulate, "index_put")


def index_put_(x: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """``index_put`` in PyTorch's place: ``x`` is rebound to the result and returned; what
    ``x[key] = values`` runs. Tensors computed from ``x`` earlier keep their values.

    A trainable leaf (a variable) may be assigned into only under ``no_grad`` -- an
    initialisation, which keeps it the same variable -- as in PyTorch; elsewhere it is a
    RuntimeError. Under ``no_grad`` a computed tensor keeps its place in the graph, as
    PyTorch's in-place ops under ``no_grad`` go unrecorded.

    Examples:
        >>> import dparray
        >>> pe = dparray.zeros(2, 4)
        >>> pe[:, 0::2] = dparray.ones(2, 2)
        >>> pe.tolist()
        [[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, 0.0]]
    """
    check_tensor(x, "x", "index_put_")
    accumulate = check_bool(accumulate, "accumulate", "index_put_")
    recording = is_grad_enabled()
    if x.is_variable and recording:
        raise RuntimeError(f"a leaf tensor that requires grad cannot be assigned into: "
                           f"{LEAF_HINT}")
    result = _put(x, indices, values, accumulate, "index_put_")
    x.rebind(result, keep_graph=not recording)
    return x


def _put(x: Tensor, key: Any, values: Any, accumulate: bool, where_: str) -> Tensor:
    value = _value(values, x, where_)
    if not accumulate and _is_full_mask(key, x) and not (isinstance(value, Tensor)
                                                         and value.ndim):
        return where(key, value, x)
    if not accumulate and _is_basic(key):
        selected = getitem(x.detach(), key)  # checks the key; a view, no copy
        return PutBasic(_spelled_out(key))(x, _fitted(value, selected.shape, where_))
    flat = arange(math.prod(x.shape), backend=x.backend, device=x.device)
    positions = getitem(reshape(flat, x.shape), key)
    return PutAt(accumulate)(x, positions, _fitted(value, positions.shape, where_))


def _value(values: Any, x: Tensor, where_: str) -> Any:
    """``values`` as a tensor of ``x``'s dtype and backend, or a Python scalar fitting it."""
    if isinstance(values, PYTHON_SCALARS):
        return fill_value(values, x, where_)
    if not isinstance(values, Tensor):
        values = tensor(values, backend=x.backend)
    elif values.backend is not x.backend:
        raise ValueError(f"{where_}: the values are on backend {values.backend.name!r}, the "
                         f"tensor on {x.backend.name!r}; move one with .to(...)")
    return values if values.dtype is x.dtype else values.astype(x.dtype)


def _fitted(value: Any, shape: tuple[int, ...], where_: str) -> Any:
    """``value`` with the leading size-1 axes that the selection lacks dropped (as PyTorch
    and NumPy do), checked to broadcast to the selection's ``shape``."""
    if not isinstance(value, Tensor):
        return value
    fitted = value
    while fitted.ndim > len(shape) and fitted.shape[0] == 1:
        fitted = reshape(fitted, fitted.shape[1:])
    try:
        fits = fitted.ndim <= len(shape) and broadcast_shapes(where_, fitted.shape,
                                                               shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{where_}: values of shape {value.shape} cannot be broadcast to the "
                         f"selection's shape {shape}")
    return fitted


def _is_basic(key: Any) -> bool:
    """Whether ``key`` holds only ints, slices and ``...`` (what every array-API namespace's
    ``__setitem__`` takes)."""
    parts = key if isinstance(key, tuple) else (key,)
    return all(type(k) is int or type(k) is slice or k is Ellipsis for k in parts)


def _spelled_out(key: Any) -> tuple[Any, ...]:
    """A basic key as a tuple that names every axis, as the array API requires (a trailing
    ``...`` where the key has none)."""
    parts = key if isinstance(key, tuple) else (key,)
    return parts if any(k is Ellipsis for k in parts) else (*parts, Ellipsis)


def _is_full_mask(key: Any, x: Tensor) -> bool:
    return isinstance(key, Tensor) and key.dtype.kind == "bool" and key.shape == x.shape
