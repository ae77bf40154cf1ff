"""Promotion of integer and boolean operands to the default floating dtype.

PyTorch's rule, which dparray follows: an op whose result is floating -- ``int / int``,
``int ** 0.5``, ``exp(int)``, ``int + 0.5``, ``mean(int)`` -- computes in the *default* float
(``dparray.get_default_dtype()``, float32 unless changed), not in float64 as NumPy would. The
array API standard says the same for ``mean``, ``var`` and ``std`` of integers. Integer and
boolean arrays are never variables, so a promoted operand never needs a gradient.

Mixing an integer *tensor* with a floating *tensor* stays an error (``check_same_kind``).
"""

from __future__ import annotations

from typing import Any

from dparray import dtypes as _dtypes
from dparray.backend import Backend


def is_floating(backend: Backend, array: Any) -> bool:
    """Whether a backend array has a floating dtype."""
    floating = _floating.get(backend)
    if floating is None:
        floating = _floating.setdefault(backend, _floating_natives(backend))
    # a tuple's ``in`` tests identity first, and dtype objects are shared: no dtype hashing
    return array.dtype in floating


def _floating_natives(backend: Backend) -> tuple[Any, ...]:
    natives = []
    for dtype in (_dtypes.float32, _dtypes.float64, _dtypes.float16, _dtypes.bfloat16):
        try:
            natives.append(_dtypes.native_dtype(backend, dtype))
        except TypeError:  # a backend without float16 or bfloat16 (or float64)
            continue
    return tuple(natives)


_floating: dict[Backend, tuple[Any, ...]] = {}


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


def with_python_float(backend: Backend, a: Any, b: Any) -> tuple[Any, Any]:
    """``a`` and ``b`` with an integer or boolean array cast to the default float when the
    other operand is a Python float (``int_tensor + 0.5``); anything else unchanged."""
    if type(b) is float:
        return as_float(backend, a), b
    if type(a) is float:
        return a, as_float(backend, b)
    return a, b


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
