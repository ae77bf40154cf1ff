"""The CuPy backend: NVIDIA (and ROCm) GPUs through ``array_api_compat.cupy``.

CuPy is imported only when this backend is first used, so users without CuPy never see an
import error: the backend is then merely unavailable. Hooks use CuPy's own kernels where the
standard has none (``cupyx.scatter_add``, ``cupyx.scipy.special.erf``, ``cupy.random``).

``scatter_add`` uses atomics on the GPU, so its sums are not bitwise repeatable run to run.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from dparray.backend import BackendUnavailableError

from .array_api import ArrayAPIBackend


class CuPyRandom:
    """A seeded ``dparray.backend.RandomGenerator`` drawing on the current GPU."""

    def __init__(self, cupy: Any, seed: int) -> None:
        self._cupy = cupy
        self._state = cupy.random.RandomState(seed)

    def normal(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return self._state.standard_normal(shape, dtype=dtype)

    def uniform(self, shape: tuple[int, ...], dtype: Any, low: float = 0.0,
                high: float = 1.0) -> Any:
        return self._state.uniform(low, high, shape, dtype=dtype)

    def bernoulli(self, shape: tuple[int, ...], p: float) -> Any:
        return self._state.random_sample(shape) < p

    def permutation(self, n: int) -> Any:
        return self._state.permutation(n).astype(self._cupy.int64)


class CuPyBackend(ArrayAPIBackend):
    """CuPy arrays on the current CUDA device; one reusable non-blocking stream per worker."""

    def __init__(self, cupy: Any, cupyx: Any) -> None:
        import array_api_compat.cupy as xp

        super().__init__(xp, "cupy")
        self._cupy = cupy
        self._cupyx = cupyx
        self._streams: dict[tuple[int, int], Any] = {}
        self._streams_lock = threading.Lock()

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        return self._cupy.asarray(data, dtype=dtype)

    def to_numpy(self, array: Any) -> Any:
        return self._cupy.asnumpy(array)

    def random(self, seed: int) -> CuPyRandom:
        return CuPyRandom(self._cupy, seed)

    def scatter_add(self, target: Any, index: Any, values: Any) -> Any:
        out = target.copy()
        self._cupyx.scatter_add(out, index, values)
        return out

    def erf(self, x: Any) -> Any:
        import cupyx.scipy.special

        return cupyx.scipy.special.erf(x)

    @contextlib.contextmanager
    def worker(self, index: int, count: int) -> Iterator[None]:
        """Run on worker ``index``'s own stream, ordered after and before the caller's work.

        The worker's stream waits on an event recorded on the caller's stream, so it never reads
        an array before it is written; on exit the caller's stream waits on the worker's event.
        Neither wait blocks the host.
        """
        cupy = self._cupy
        device = cupy.cuda.Device()
        caller = cupy.cuda.get_current_stream()
        stream = self._stream(device.id, index)
        stream.wait_event(caller.record())
        with stream:
            yield
        caller.wait_event(stream.record())

    def synchronize(self) -> None:
        self._cupy.cuda.Device().synchronize()

    def describe(self) -> dict[str, str]:
        facts = {"library": "cupy", "version": self._cupy.__version__}
        runtime = self._cupy.cuda.runtime
        for index in range(runtime.getDeviceCount()):
            properties = runtime.getDeviceProperties(index)
            name = properties["name"]
            name = name.decode() if isinstance(name, bytes) else str(name)
            gib = properties["totalGlobalMem"] / 2**30
            facts[f"device {index}"] = f"{name}, {gib:.1f} GiB"
        return facts

    def _stream(self, device: int, index: int) -> Any:
        with self._streams_lock:
            stream = self._streams.get((device, index))
            if stream is None:
                stream = self._cupy.cuda.Stream(non_blocking=True)
                self._streams[(device, index)] = stream
            return stream


def is_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        create()
    except BackendUnavailableError:
        return False
    return True


def create() -> CuPyBackend:
    try:
        import cupy
        import cupyx
    except ImportError as error:
        raise BackendUnavailableError(
            f"CuPy is not installed ({error}); pip install 'dparray[cuda12]' or 'dparray[cuda13]'"
        ) from error
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CUDA raises its own runtime error types
        raise BackendUnavailableError(f"CuPy found no usable CUDA device: {error}") from error
    if count < 1:
        raise BackendUnavailableError("CuPy found no CUDA device")
    return CuPyBackend(cupy, cupyx)
