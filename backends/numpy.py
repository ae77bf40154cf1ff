"""The NumPy backend, the embedded default: ``array_api_compat.numpy`` plus NumPy's fast paths."""

from __future__ import annotations

from typing import Any

import array_api_compat.numpy as xp
import numpy as np

from ._host_random import HostRandom
from .array_api import ArrayAPIBackend


class NumPyBackend(ArrayAPIBackend):
    """NumPy on the CPU; ``scatter_add`` through ``np.add.at`` instead of a one-hot matmul."""

    def __init__(self) -> None:
        super().__init__(xp, "numpy")

    def asarray(self, data: Any, dtype: Any = None) -> np.ndarray:
        return np.asarray(data, dtype=dtype)

    def random(self, seed: int) -> HostRandom:
        return HostRandom(seed, np.asarray)

    def scatter_add(self, target: Any, index: Any, values: Any) -> np.ndarray:
        out = np.array(target, copy=True)
        np.add.at(out, index, values)
        return out


def create() -> NumPyBackend:
    return NumPyBackend()
