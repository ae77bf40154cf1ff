"""Bitwise ``& | ^ ~`` on integer and bool tensors, and the shifts ``<< >>`` on integer ones.

The results are constants. A bool tensor with an integer one counts as integers, and a Python
int beyond the tensor's dtype wraps into it (``int32_tensor | 0xFFFFFFFF`` is ``| -1``), as in
PyTorch. Shifting by a negative amount, or by the width of the dtype or
more, gives what PyTorch gives -- 0 for ``<<``, and 0 or -1 (the sign) for ``>>`` -- where the
array API leaves it undefined.
"""

from __future__ import annotations

from typing import Any

from dparray import dtypes as _dtypes
from dparray.backend import Backend
from dparray.ops._constant import constant_operands
from dparray.ops._promote import kind, promote
from dparray.tensor import Tensor, from_op

__all__ = [
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_right_shift",
]

_INTEGER = ("int", "uint")


def _operands(name: str, allow_bool: bool, *values: Any) -> tuple[Backend, list[Any]]:
    backend, arrays = constant_operands(name, *values)
    kinds = [kind(backend, x) for x in arrays]
    allowed = (*_INTEGER, "bool") if allow_bool else _INTEGER
    for k, x in zip(kinds, arrays, strict=True):
        if k not in allowed:
            what = _dtypes.dtype_of(backend, x).name if hasattr(x, "dtype") else type(x).__name__
            wanted = "integer or bool" if allow_bool else "integer"
            raise TypeError(f"{name} needs {wanted} operands, got {what}")
    if "bool" in kinds and any(k in _INTEGER for k in kinds):  # a Python bool is 0 or 1
        arrays = [int(x) if type(x) is bool else x for x in arrays]
    if len(arrays) == 2:  # a bool tensor with an integer one is an integer, as in PyTorch
        arrays = list(promote(backend, *arrays))
    return backend, arrays


def bitwise_and(a: Any, b: Any) -> Tensor:
    """Elementwise ``a & b`` (logical *and* on bool tensors)."""
    backend, (a, b) = _operands("bitwise_and", True, a, b)
    return from_op(a & b, backend, None)


def bitwise_or(a: Any, b: Any) -> Tensor:
    """Elementwise ``a | b``."""
    backend, (a, b) = _operands("bitwise_or", True, a, b)
    return from_op(a | b, backend, None)


def bitwise_xor(a: Any, b: Any) -> Tensor:
    """Elementwise ``a ^ b``."""
    backend, (a, b) = _operands("bitwise_xor", True, a, b)
    return from_op(a ^ b, backend, None)


def bitwise_invert(x: Tensor) -> Tensor:
    """Elementwise ``~x``: every bit flipped (logical *not* on a bool tensor)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"bitwise_invert needs a Tensor, got {type(x).__name__}")
    backend, (data,) = _operands("bitwise_invert", True, x)
    return from_op(backend.xp.bitwise_invert(data), backend, None)


def bitwise_left_shift(a: Any, b: Any) -> Tensor:
    """Elementwise ``a << b``; a shift by a negative amount or the bit width or more gives 0.

    Examples:
        >>> import dparray
        >>> (dparray.tensor([1, 3]) << 2).tolist()
        [4, 12]
    """
    return _shift("bitwise_left_shift", a, b, left=True)


def bitwise_right_shift(a: Any, b: Any) -> Tensor:
    """Elementwise ``a >> b`` (arithmetic: the sign is kept); a shift by a negative amount or
    the bit width or more gives 0, or -1 for negative ``a``."""
    return _shift("bitwise_right_shift", a, b, left=False)


def _shift(name: str, a: Any, b: Any, left: bool) -> Tensor:
    backend, (a, b) = _operands(name, False, a, b)
    xp = backend.xp
    arrays = [x for x in (a, b) if hasattr(x, "dtype")]
    dtype = _dtypes.from_native(backend, xp.result_type(*arrays))
    bits = int(dtype.name.removeprefix(dtype.kind))
    if hasattr(b, "dtype"):
        inside: Any = xp.logical_and(b >= 0, b < bits)
        amount = xp.clip(b, 0, bits - 1)
    else:
        inside = 0 <= b < bits
        amount = min(max(b, 0), bits - 1)
    shifted = a << amount if left else a >> amount
    if inside is True:
        return from_op(shifted, backend, None)
    # beyond the width: 0, or for >> of a signed value its sign (-1 or 0), as PyTorch gives
    beyond = 0 if left or dtype.kind == "uint" else a >> (bits - 1)
    if inside is False:
        return from_op(xp.zeros_like(shifted) + beyond, backend, None)
    return from_op(xp.where(inside, shifted, beyond), backend, None)
