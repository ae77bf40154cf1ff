"""Data types: dparray's own names for dtypes, mapped to each backend's dtype objects.

``dparray.float32`` is one object whatever the backend; each backend keeps a table from these
names to its native dtype objects (``numpy.dtype('float32')``, ``array_api_strict.float32``, ...),
built once, on the backend's first use. ``Tensor.dtype`` returns the dparray name, so
``t.dtype == dparray.float32`` holds on every backend.

The default floating dtype -- what Python floats become -- is float32, like PyTorch's; change
it with ``set_default_dtype``.

``bfloat16`` and ``float16`` are the low-precision floats of mixed-precision training
(``dparray.autocast``). A backend holds them where its library does: NumPy's ``float16``, and
its ``bfloat16`` through ``ml_dtypes`` (the NumPy extension JAX uses), CuPy's ``float16`` and
its ``bfloat16`` where the installed CuPy has one; ``array_api_strict`` has neither, as the
standard has neither, and refuses them with a TypeError naming the backend.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from typing import Any

from dparray._checks import check_int, check_number, describe
from dparray.backend import Backend, extra_dtypes


class DType:
    """The name and kind ("bool", "int", "uint", "float") of a dtype, shared by all backends."""

    __slots__ = ("kind", "name")

    def __init__(self, name: str, kind: str) -> None:
        self.name = name
        self.kind = kind

    def __repr__(self) -> str:
        return f"dparray.{self.name}"

    @property
    def is_floating(self) -> bool:
        return self.kind == "float"

    @property
    def is_floating_point(self) -> bool:
        """PyTorch's name for ``is_floating``."""
        return self.kind == "float"


bool_ = DType("bool", "bool")
int8 = DType("int8", "int")
int16 = DType("int16", "int")
int32 = DType("int32", "int")
int64 = DType("int64", "int")
uint8 = DType("uint8", "uint")
bfloat16 = DType("bfloat16", "float")
float16 = DType("float16", "float")
float32 = DType("float32", "float")
float64 = DType("float64", "float")

ALL_DTYPES: dict[str, DType] = {
    d.name: d for d in (bool_, int8, int16, int32, int64, uint8, bfloat16, float16, float32,
                        float64)
}
LOW_PRECISION = (bfloat16, float16)
"""The floating dtypes narrower than float32, which products accumulate in float32."""

TORCH_ALIASES: dict[str, DType] = {
    "long": int64, "int": int32, "short": int16, "half": float16, "float": float32,
    "double": float64, "bool": bool_,
}
"""PyTorch's other names for these dtypes (``torch.long`` is int64, ``torch.float`` float32,
...); ``dparray`` exports each under its PyTorch name (``dparray.long``)."""

_default_float = float32
_tables: dict[Backend, _Table] = {}
_tables_lock = threading.Lock()


class _Table:
    """One backend's mapping between dparray dtypes and its native dtype objects.

    A dtype that the backend's library does not name itself comes from the backend's
    ``extra_dtypes``, and only when first needed: when a program names it (``native``), or
    when an array of it turns up (``dtype``: then whatever made the array has loaded it, and
    the mapping's ``loaded()`` has it). NumPy's bfloat16 is ml_dtypes', whose import costs
    0.45-0.55 s that a program without bfloat16 need not pay."""

    __slots__ = ("_extra", "_lock", "_missing", "_xp", "floating", "from_native", "low",
                 "to_native")

    def __init__(self, backend: Backend) -> None:
        self._xp = backend.xp
        self._extra = extra_dtypes(backend)
        self._lock = threading.Lock()
        self.to_native: dict[DType, Any] = {}
        self.from_native: dict[Any, DType] = {}
        self.low: tuple[Any, ...] = ()  # the natives of LOW_PRECISION, and of every float:
        self.floating: tuple[Any, ...] = ()  # tuples, whose ``in`` tests identity first
        self._missing: dict[str, DType] = {}  # not named by xp, not yet taken from _extra
        for dtype in ALL_DTYPES.values():
            native = getattr(self._xp, dtype.name, None)
            if native is None:
                self._missing[dtype.name] = dtype
            else:
                self._add(dtype, native)
        self._take_ready()

    def native(self, dtype: DType) -> Any:
        """The native dtype of ``dtype``, or None where the backend has none."""
        native = self.to_native.get(dtype)
        if native is None and dtype.name in self._missing:
            with self._lock:  # (another thread may be loading it: the name goes when done)
                if dtype.name in self._missing:  # asked for once
                    found = self._extra.get(dtype.name)
                    if found is not None:
                        self._add(dtype, found)
                    del self._missing[dtype.name]
            native = self.to_native.get(dtype)
        return native

    def dtype(self, native: Any) -> DType | None:
        """The dparray dtype of a native dtype object, or None where dparray has none."""
        dtype = self.from_native.get(native)
        if dtype is None and self._missing:
            with self._lock:
                self._take_ready()
            dtype = self.from_native.get(native)
        return dtype

    def _take_ready(self) -> None:
        """Add the missing dtypes that the backend's ``extra_dtypes`` has ready."""
        ready = _ready(self._extra)
        for name in [name for name in self._missing if name in ready]:
            self._add(self._missing[name], ready[name])
            del self._missing[name]  # after: a reader that finds it gone finds it added

    def _add(self, dtype: DType, native: Any) -> None:
        native = self._xp.empty((0,), dtype=native).dtype  # the object arrays report as .dtype
        self.to_native[dtype] = native
        self.from_native[native] = dtype
        self.low = tuple(self.to_native[d] for d in LOW_PRECISION if d in self.to_native)
        self.floating = tuple(n for d, n in self.to_native.items() if d.is_floating)


def _ready(extra: Mapping[str, Any]) -> Mapping[str, Any]:
    """The entries of a backend's ``extra_dtypes`` available without loading anything: its
    ``loaded()`` where it has one (a mapping that loads a library on first access), else all
    of it."""
    loaded = getattr(extra, "loaded", None)
    return extra if loaded is None else loaded()


def _table(backend: Backend) -> _Table:
    table = _tables.get(backend)
    if table is None:
        with _tables_lock:
            table = _tables.setdefault(backend, _Table(backend))
    return table


def to_dtype(spec: Any, backend: Backend | None = None) -> DType:
    """Normalise a dtype given as a ``DType``, a name ("float64") or a native dtype."""
    if isinstance(spec, DType):
        return spec
    if isinstance(spec, str):
        dtype = ALL_DTYPES.get(spec)
        if dtype is None:
            raise TypeError(f"unknown dtype {spec!r}; expected one of {', '.join(ALL_DTYPES)}")
        return dtype
    if backend is not None:
        table = _table(backend)
        dtype = table.dtype(spec)
        if dtype is not None:
            return dtype
        for native, dtype in table.from_native.items():
            if native == spec:
                return dtype
    name = getattr(spec, "__name__", None) or str(spec).rsplit(".", 1)[-1]
    if name in ALL_DTYPES:
        return ALL_DTYPES[name]
    raise TypeError(
        f"cannot interpret {spec!r} as a dtype; expected one of {', '.join(ALL_DTYPES)}"
    )


def native_dtype(backend: Backend, dtype: Any) -> Any:
    """The native dtype object of ``backend`` for ``dtype`` (any form ``to_dtype`` takes)."""
    dtype = to_dtype(dtype, backend)
    native = _table(backend).native(dtype)
    if native is None:
        raise TypeError(f"backend {backend.name!r} does not support dtype {dtype.name}"
                        f"{_WHY_MISSING.get(dtype.name, '')}")
    return native


def supports(backend: Backend, dtype: Any) -> bool:
    """Whether ``backend`` has ``dtype`` (``bfloat16`` and ``float16`` are not everywhere)."""
    return native_or_none(backend, dtype) is not None


def native_or_none(backend: Backend, dtype: Any) -> Any:
    """``native_dtype``, or None where the backend has no such dtype."""
    return _table(backend).native(to_dtype(dtype, backend))


def floating_natives(backend: Backend) -> tuple[Any, ...]:
    """The native dtypes of ``backend`` for its floating dtypes (bfloat16 once it is loaded:
    ``_Table``)."""
    return _table(backend).floating


def low_precision_natives(backend: Backend) -> tuple[Any, ...]:
    """The native dtypes of ``backend`` for bfloat16 and float16 (those it has)."""
    return _table(backend).low


_WHY_MISSING = {
    "bfloat16": " (NumPy's comes from ml_dtypes: pip install ml_dtypes; CuPy needs a release "
                "with bfloat16; the array API standard has no bfloat16)",
    "float16": " (the array API standard has no float16)",
}


def dtype_of(backend: Backend, array: Any) -> DType:
    """The dparray dtype of a backend array (a TypeError naming it when dparray has none)."""
    return from_native(backend, array.dtype)


def from_native(backend: Backend, native: Any) -> DType:
    """The dparray dtype of a native dtype object, as arrays of ``backend`` report it; a
    TypeError naming the dtype when dparray has no such dtype (complex, uint16, strings...)."""
    dtype = _table(backend).dtype(native)
    if dtype is None:
        name = str(native).rsplit(".", 1)[-1]
        raise TypeError(f"dparray has no dtype {name}; it has {', '.join(ALL_DTYPES)}")
    return dtype


_FLOAT_MAX = {"bfloat16": 3.3895313892515355e38, "float16": 65504.0,
              "float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}


def value_range(dtype: DType) -> tuple[int | float, int | float]:
    """The smallest and largest finite value ``dtype`` holds."""
    if dtype.kind == "bool":
        return 0, 1
    if dtype.kind == "float":
        return -_FLOAT_MAX[dtype.name], _FLOAT_MAX[dtype.name]
    bits = int(dtype.name.removeprefix(dtype.kind))
    if dtype.kind == "uint":
        return 0, 2**bits - 1
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def as_scalar(value: Any, dtype: DType, name: str, where: str) -> bool | int | float:
    """``value`` (a bool, int or float, NumPy scalars too) as the Python scalar that one
    element of ``dtype`` holds, refusing what does not fit instead of wrapping around:
    ``as_scalar(1e6, int8, ...)`` and ``as_scalar(1.5, int8, ...)`` are ValueErrors, as are
    finite values beyond a floating dtype's range (infinities and NaN fit floating dtypes)."""
    number: bool | int | float
    kind = getattr(getattr(value, "dtype", None), "kind", None)  # of NumPy scalars
    if isinstance(value, bool) or kind == "b":
        number = bool(value)
    elif isinstance(value, int) or kind in ("i", "u"):
        number = check_int(value, name, where)
    elif isinstance(value, complex) or kind == "c":
        raise TypeError(f"{where}: {name} must be a real number, got {describe(value)}")
    elif isinstance(value, float) or kind == "f":
        number = float(value)  # NaN and infinities included: floating dtypes hold them
    else:
        number = check_number(value, name, where, finite=False)
    if dtype.kind == "bool":
        return bool(number)
    low, high = value_range(dtype)
    if dtype.kind == "float":
        try:
            result = float(number)
        except OverflowError:
            raise ValueError(f"{where}: {name} {describe(number)} does not fit "
                             f"{dtype.name}") from None
        if math.isfinite(result) and not low <= result <= high:
            raise ValueError(f"{where}: {name} {number!r} does not fit {dtype.name} (largest "
                             f"magnitude {high:g})")
        return result
    if isinstance(number, float):
        if not number.is_integer():
            raise ValueError(f"{where}: {name} must be a whole number for dtype {dtype.name}, "
                             f"got {number!r}")
        number = int(number)
    if not low <= number <= high:
        raise ValueError(f"{where}: {name} {number!r} does not fit {dtype.name} ({low} to "
                         f"{high})")
    return int(number)


def set_default_dtype(dtype: Any) -> None:
    """Set the floating dtype that Python floats and float factories produce (float32 at start).

    Examples:
        >>> import dparray
        >>> dparray.set_default_dtype(dparray.float64)
        >>> dparray.tensor([1.5]).dtype
        dparray.float64
        >>> dparray.set_default_dtype(dparray.float32)
    """
    global _default_float
    dtype = to_dtype(dtype)
    if not dtype.is_floating:
        raise TypeError(f"the default dtype must be floating, got {dtype.name}")
    _default_float = dtype


def get_default_dtype() -> DType:
    """The floating dtype that Python floats and float factories produce."""
    return _default_float
