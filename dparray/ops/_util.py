"""Small helpers shared by the ops: dtype-kind checks, broadcasting, re-expanding reductions."""

from __future__ import annotations

import math
from typing import Any

from dparray import dtypes as _dtypes
from dparray.backend import Backend
from dparray.creation import tensor
from dparray.tensor import Tensor

PYTHON_SCALARS = (int, float, bool)


def keepdims_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` with the reduced ``axes`` kept as size 1."""
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def expand_reduced(xp: Any, grad: Any, shape: tuple[int, ...], axes: tuple[int, ...],
                   keepdims: bool) -> Any:
    """Broadcast the gradient of a reduction back over the reduced axes."""
    if not keepdims:
        grad = xp.reshape(grad, keepdims_shape(shape, axes))
    return xp.broadcast_to(grad, shape)


def reduced_count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    """How many elements each output element of a reduction over ``axes`` combines."""
    return math.prod(shape[a] for a in axes)


def as_array(result: Any) -> Any:
    """A reduction's result as an array: NumPy returns a scalar for a full reduction, and
    ``[...]`` turns it into a 0-d array (on an array it is a free view)."""
    return result[...]


def check_same_kind(op: str, backend: Backend, a: Any, b: Any) -> None:
    """Refuse to mix dtype kinds (int with float, bool with int) in the ops PyTorch refuses to
    mix them in (``matmul``, ``linear``, the convolutions, ``lerp``, ``isclose``); every other
    op promotes (``dparray.ops._promote.promote``). Python scalars pass."""
    dtype_a = getattr(a, "dtype", None)
    dtype_b = getattr(b, "dtype", None)
    if dtype_a is None or dtype_b is None or dtype_a == dtype_b:
        return
    first = _dtypes.from_native(backend, dtype_a)
    second = _dtypes.from_native(backend, dtype_b)
    if first.kind != second.kind:
        raise TypeError(
            f"{op}: cannot mix dtypes {first.name} and {second.name} (PyTorch refuses them "
            "here too); cast one with .astype(...)"
        )


def broadcast_shapes(op: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of ``shapes``, or a ValueError naming all of them."""
    ndim = max(len(s) for s in shapes)
    result = []
    for i in range(ndim):
        size = 1
        for s in shapes:
            n = s[i - ndim + len(s)] if i - ndim + len(s) >= 0 else 1
            if n != 1:
                if size not in (1, n):
                    raise ValueError(
                        f"{op}: shapes {' and '.join(str(tuple(s)) for s in shapes)} "
                        "cannot be broadcast together"
                    )
                size = n
        result.append(size)
    return tuple(result)


def as_operands(*values: Any) -> list[Any]:
    """``values`` ready for one op: tensors and Python scalars as they are, anything else (a
    list, a NumPy array or NumPy scalar) as a tensor on the backend of the first tensor, so its
    dtype takes part in promotion and every operand lives on one backend."""
    like = next((v for v in values if isinstance(v, Tensor)), None)
    if like is None:
        return list(values)
    result = []
    for v in values:
        if not isinstance(v, Tensor) and type(v) not in PYTHON_SCALARS:
            v = tensor(v, backend=like.backend)
        result.append(v)
    return result
