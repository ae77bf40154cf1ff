"""Random numbers drawn on the host by NumPy's PCG64 and moved to any backend.

The array API has no random numbers. Drawing on the host is portable to every array library
(it needs only ``asarray``) and reproducible across them: the same seed gives the same numbers
on NumPy, array-api-strict or any other backend, at the price of a host-to-device copy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


class HostRandom:
    """A seeded ``dparray.backend.RandomGenerator`` whose samples come from NumPy."""

    def __init__(self, seed: int, asarray: Callable[[Any], Any]) -> None:
        self._generator = np.random.Generator(np.random.PCG64(seed))
        self._asarray = asarray

    def normal(self, shape: tuple[int, ...], dtype: Any) -> Any:
        samples = self._generator.standard_normal(shape)
        return self._asarray(samples.astype(_numpy_dtype(dtype)))

    def uniform(self, shape: tuple[int, ...], dtype: Any, low: float = 0.0,
                high: float = 1.0) -> Any:
        samples = self._generator.uniform(low, high, shape)
        return self._asarray(samples.astype(_numpy_dtype(dtype)))

    def bernoulli(self, shape: tuple[int, ...], p: float) -> Any:
        return self._asarray(self._generator.random(shape) < p)

    def permutation(self, n: int) -> Any:
        return self._asarray(self._generator.permutation(n).astype(np.int64))

    def get_state(self) -> dict[str, Any]:
        """NumPy's own description of the PCG64 state (ints and strings: JSON-able)."""
        return dict(self._generator.bit_generator.state)

    def set_state(self, state: Any) -> None:
        """Continue from ``state`` (what ``get_state`` returned); checked in full first."""
        _check_pcg64_state(state)
        bit_generator = np.random.PCG64(0)  # its seed is overwritten next line
        bit_generator.state = state
        self._generator = np.random.Generator(bit_generator)


def _check_pcg64_state(state: Any) -> None:
    """A ValueError unless ``state`` is NumPy's PCG64 state dict, with every number in range
    (NumPy itself would accept some wrong ones, or fail with other errors)."""

    def natural(value: Any, bits: int) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**bits

    keys = {"bit_generator", "state", "has_uint32", "uinteger"}
    valid = isinstance(state, dict) and set(state) == keys and state["bit_generator"] == "PCG64"
    if valid:
        inner = state["state"]
        valid = (isinstance(inner, dict) and set(inner) == {"state", "inc"}
                 and natural(inner["state"], 128) and natural(inner["inc"], 128)
                 and natural(state["has_uint32"], 1) and natural(state["uinteger"], 32))
    if not valid:
        raise ValueError(f"not the state of a PCG64 random generator: {state!r:.200}")


def _numpy_dtype(dtype: Any) -> np.dtype:
    """NumPy's dtype of the same name as a backend's dtype object."""
    try:
        return np.dtype(dtype)
    except TypeError:
        return np.dtype(str(dtype).rsplit(".", 1)[-1])
