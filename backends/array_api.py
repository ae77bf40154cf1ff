"""The generic adapter: any array-API namespace, with every hook written in ``xp`` alone.

It is the fallback the NumPy and CuPy adapters inherit from, and a backend of its own for any
library array-api-compat knows. ``array_api_strict`` is registered through it, so the test suite
proves the core backend-neutral: the strict namespace rejects anything outside the standard.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import array_api_compat
import numpy as np

from dparray.backend import BackendUnavailableError, RandomGenerator

from ._erf import erf as _generic_erf
from ._host_random import HostRandom
from ._quiet import silencer


class ArrayAPIBackend:
    """A ``dparray.backend.Backend`` over the array-API namespace ``xp``.

    Example:
        >>> import array_api_strict
        >>> backend = ArrayAPIBackend(array_api_strict, "strict")
        >>> backend.to_numpy(backend.asarray([1.0, 2.0])).tolist()
        [1.0, 2.0]
    """

    quiet_math: Any = silencer()
    """NumPy's floating-point warnings off during dparray's ops: namespaces that compute with
    NumPy underneath (NumPy's, array_api_strict) warn through it."""

    def __init__(self, xp: Any, name: str) -> None:
        self.xp = xp
        self.name = name

    def __repr__(self) -> str:
        return f"<dparray backend {self.name!r}>"

    def describe(self) -> dict[str, str]:
        """Facts for ``python -m dparray info``: the array library and its version."""
        library = self.xp.__name__.rsplit(".", 1)[-1]
        module = __import__(library) if library.isidentifier() else None
        return {"library": library, "version": str(getattr(module, "__version__", "?"))}

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        return self.xp.asarray(data, dtype=dtype)

    def to_numpy(self, array: Any) -> np.ndarray:
        try:
            return np.asarray(array)
        except RuntimeError:  # on a device NumPy cannot read (array_api_strict's "device1"):
            info = self.xp.__array_namespace_info__()  # through the default one
            return np.asarray(self.xp.asarray(array, device=info.default_device()))

    def random(self, seed: int) -> RandomGenerator:
        return HostRandom(seed, self.asarray)

    def scatter_add(self, target: Any, index: Any, values: Any) -> Any:
        """Generic scatter-add as one matmul with a one-hot matrix: O(rows x len(index))."""
        xp = self.xp
        rows = xp.arange(target.shape[0], dtype=index.dtype)
        one_hot = xp.astype(index[:, None] == rows[None, :], values.dtype)
        flat_values = xp.reshape(values, (values.shape[0], -1))
        added = xp.matrix_transpose(one_hot) @ flat_values
        return target + xp.reshape(added, target.shape)

    def erf(self, x: Any) -> Any:
        return _generic_erf(self.xp, x)

    @contextlib.contextmanager
    def worker(self, index: int, count: int) -> Iterator[None]:
        yield

    @contextlib.contextmanager
    def parallel_region(self, count: int) -> Iterator[None]:
        """Entered once around a data-parallel region of ``count`` workers (an optional hook:
        the NumPy backend splits the BLAS threads among the workers here)."""
        yield

    def synchronize(self) -> None:
        return None


def create_strict() -> ArrayAPIBackend:
    """The ``array_api_strict`` backend: the standard and nothing more, for testing the core."""
    try:
        import array_api_strict
    except ImportError as error:
        raise BackendUnavailableError(
            "array_api_strict is not installed (pip install array-api-strict)"
        ) from error
    return ArrayAPIBackend(array_api_compat.array_namespace(array_api_strict.asarray(0)),
                           "array_api_strict")
