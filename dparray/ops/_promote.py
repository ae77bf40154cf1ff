"""Dtype promotion: integer and boolean operands to the default floating dtype, and tensors of
different kinds to one dtype, as PyTorch promotes them.

PyTorch's rule, which dparray follows: an op whose result is floating -- ``int / int``,
``int ** 0.5``, ``exp(int)``, ``int + 0.5``, ``mean(int)`` -- computes in the *default* float
(``dparray.get_default_dtype()``, float32 unless changed), not in float64 as NumPy would. The
array API standard says the same for ``mean``, ``var`` and ``std`` of integers. Integer and
boolean arrays are never variables, so a promoted operand never needs a gradient.

Tensors of different kinds (bool, integer, floating) promote as PyTorch promotes them
(``promote``): to the dtype of the operand of the higher kind. The ops PyTorch refuses to mix
(``matmul``, ``linear``, the convolutions, ``lerp``, ``isclose``) refuse them here too
(``dparray.ops._util.check_same_kind``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dparray import dtypes as _dtypes
from dparray.backend import Backend


def is_floating(backend: Backend, array: Any) -> bool:
    """Whether a backend array has a floating dtype."""
    return array.dtype in _dtypes.floating_natives(backend)


def is_low_precision(backend: Backend, array: Any) -> bool:
    """Whether a backend array is bfloat16 or float16."""
    return array.dtype in _dtypes.low_precision_natives(backend)


def wide_sum(backend: Backend, x: Any, axes: Any, keepdims: bool = False) -> Any:
    """``xp.sum``, accumulated in float32 for bfloat16 and float16 and rounded back, as
    PyTorch sums them (NumPy would add bfloat16 in bfloat16: a thousand ones sum to 256)."""
    xp = backend.xp
    if is_low_precision(backend, x):
        return xp.astype(xp.sum(x, axis=axes, keepdims=keepdims, dtype=xp.float32), x.dtype)
    return xp.sum(x, axis=axes, keepdims=keepdims)


def as_float(backend: Backend, x: Any) -> Any:
    """``x`` cast to the default float when it is an integer or boolean array; floating arrays
    and Python scalars are returned unchanged. The hot path of every floating op: one lookup."""
    if not hasattr(x, "dtype") or is_floating(backend, x):
        return x
    return backend.xp.astype(x, _dtypes.native_dtype(backend, _dtypes.get_default_dtype()))


def is_integer(backend: Backend, x: Any) -> bool:
    """Whether ``x`` (an array or a Python scalar) is of an integer kind; quick for floats."""
    if hasattr(x, "dtype"):
        return not is_floating(backend, x) and kind(backend, x) in ("int", "uint")
    return isinstance(x, int) and not isinstance(x, bool)


def kind(backend: Backend, x: Any) -> str:
    """The dtype kind of an array ("bool", "int", "uint", "float"), or of a Python scalar."""
    if hasattr(x, "dtype"):
        return _dtypes.dtype_of(backend, x).kind
    if isinstance(x, bool):
        return "bool"
    return "int" if isinstance(x, int) else "float"


# --------------------------------------------------------------------- across kinds, as PyTorch
_CATEGORY = {"bool": 0, "int": 1, "uint": 1, "float": 2}


def promote(backend: Backend, a: Any, b: Any) -> tuple[Any, Any]:
    """The two operands of an op that promotes as PyTorch does, ready for the backend.

    Two arrays of different kinds -- bool, integer (signed or not), floating -- meet in the
    dtype of the higher kind's operand (``int64 + float16`` is float16, ``bool + int32`` is
    int32); within one kind the array API's rules decide (``float32 + float64`` is float64,
    ``uint8 + int8`` int16). A Python float with an integer or bool array gives the default
    float; a Python int beyond an integer array's range wraps around into it, as PyTorch
    converts it (``int32_tensor | 0xFFFFFFFF`` is ``| -1``). The hot path -- two arrays of one
    dtype -- costs two attribute reads.
    """
    dtype_a = getattr(a, "dtype", None)
    dtype_b = getattr(b, "dtype", None)
    if dtype_a is not None and dtype_b is not None:
        if dtype_a == dtype_b:
            return a, b
        return _across_kinds(backend, a, b)
    if type(b) is float:
        return as_float(backend, a), b
    if type(a) is float:
        return a, as_float(backend, b)
    if type(b) is int and dtype_a is not None:
        return a, wrapped(backend, a, b)
    if type(a) is int and dtype_b is not None:
        return wrapped(backend, b, a), b
    return a, b


def promote_all(backend: Backend, arrays: Sequence[Any]) -> list[Any]:
    """``arrays`` (all backend arrays) in one kind, as ``promote`` makes two: the arrays of a
    lower kind cast to the dtype the highest kind's arrays give together (``cat``, ``stack``)."""
    ranks = [_category(backend, x) for x in arrays]
    top = max(ranks)
    if min(ranks) == top:
        return list(arrays)
    xp = backend.xp
    target = xp.result_type(*(x for x, r in zip(arrays, ranks, strict=True) if r == top))
    return [x if r == top else xp.astype(x, target) for x, r in zip(arrays, ranks, strict=True)]


def _across_kinds(backend: Backend, a: Any, b: Any) -> tuple[Any, Any]:
    rank_a, rank_b = _category(backend, a), _category(backend, b)
    if rank_a < rank_b:
        return backend.xp.astype(a, b.dtype), b
    if rank_b < rank_a:
        return a, backend.xp.astype(b, a.dtype)
    return a, b


def _category(backend: Backend, array: Any) -> int:
    return _CATEGORY[_dtypes.dtype_of(backend, array).kind]


def wrapped(backend: Backend, array: Any, value: int) -> int:
    """``value``, a Python int meeting ``array``, wrapped into the array's integer dtype as
    PyTorch wraps it (two's complement: ``0xFFFFFFFF`` is -1 for int32, 300 is 44 for int8).
    Values within the range, and any value beside a bool or floating array, stay as they are;
    beyond 64 bits it is an OverflowError, as in PyTorch."""
    dtype = _dtypes.dtype_of(backend, array)
    if dtype.kind not in ("int", "uint"):
        return value
    low, high = _dtypes.value_range(dtype)
    if low <= value <= high:
        return value
    if not -(2**63) <= value < 2**64:
        raise OverflowError(f"the integer {value} does not fit 64 bits (the widest integer)")
    span = int(high) - int(low) + 1
    return (value - int(low)) % span + int(low)


def as_count(xp: Any, x: Any) -> Any:
    """``x`` as int64 when it is bool or uint8, for sums and products: those are int64 (as in
    PyTorch), where NumPy and the array API give uint8's the default unsigned integer dtype,
    uint64, which dparray has not. Other arrays are returned unchanged (smaller signed
    integers accumulate in int64 by the array API's own rule)."""
    if x.dtype == xp.bool or x.dtype == xp.uint8:
        return xp.astype(x, xp.int64)
    return x
