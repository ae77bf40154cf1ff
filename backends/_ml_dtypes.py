"""``bfloat16`` for NumPy and CuPy, which have none of their own: ml_dtypes' type, imported
only when a program first needs it.

Importing ml_dtypes took 0.45-0.55 s on a 2-core x86-64 machine (it registers a dozen types'
casts and ufunc loops with NumPy), more than ``import dparray`` and the first op together,
and most programs never use bfloat16. ``LazyBfloat16`` is the backends' ``extra_dtypes``
mapping: asking it for ``"bfloat16"`` imports ml_dtypes; ``loaded()`` answers without
importing anything (empty until something has imported ml_dtypes, as any program holding a
bfloat16 array has). ``dparray.dtypes`` asks for the entry when a program names the dtype and
looks at ``loaded()`` when it meets an array whose dtype it does not know.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

NAME = "bfloat16"
_UNKNOWN = object()


class LazyBfloat16(Mapping[str, Any]):
    """``{"bfloat16": native_of(ml_dtypes.bfloat16)}``, made on first use; empty when
    ml_dtypes is not installed or ``native_of`` returns None (a library that cannot make
    arrays of it)."""

    def __init__(self, native_of: Callable[[Any], Any]) -> None:
        self._native_of = native_of
        self._native: Any = _UNKNOWN
        self._lock = threading.Lock()

    def _resolved(self) -> Any:
        if self._native is _UNKNOWN:
            with self._lock:
                if self._native is _UNKNOWN:
                    try:
                        import ml_dtypes
                    except ImportError:
                        self._native = None
                    else:
                        self._native = self._native_of(ml_dtypes.bfloat16)
        return self._native

    def __getitem__(self, name: str) -> Any:
        native = self._resolved() if name == NAME else None
        if native is None:
            raise KeyError(name)
        return native

    def __iter__(self) -> Iterator[str]:
        return iter([NAME] if self._resolved() is not None else [])

    def __len__(self) -> int:
        return int(self._resolved() is not None)

    def loaded(self) -> Mapping[str, Any]:
        """The entries ready without importing anything."""
        return self if "ml_dtypes" in sys.modules else {}
