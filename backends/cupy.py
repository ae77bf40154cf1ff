"""The CuPy backend: NVIDIA (and ROCm) GPUs through ``array_api_compat.cupy``.

CuPy is imported only when this backend is first used, so users without CuPy never see an
import error: the backend is then merely unavailable. Hooks use CuPy's own kernels where the
standard has none (``cupyx.scatter_add``, ``cupyx.scipy.special.erf``, ``cupy.random``).

``scatter_add`` uses atomics on the GPU, so its sums are not bitwise repeatable run to run.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from dparray.backend import BackendUnavailableError

from ._ml_dtypes import LazyBfloat16
from .array_api import ArrayAPIBackend


class CuPyRandom:
    """A seeded ``dparray.backend.RandomGenerator`` drawing on the current GPU.

    CuPy's ``RandomState`` can be seeded but cannot report or restore where its cuRAND
    generator stands, so each draw starts it afresh from a seed derived from (this stream's
    seed, the number of draws so far) by NumPy's ``SeedSequence``. The state is then those two
    ints, which ``get_state`` and ``set_state`` save and restore exactly. The generator is
    cuRAND's Philox4x32-10: counter-based, so a new seed costs nothing (XORWOW, cuRAND's
    default, sets up its state on the device for every new seed).
    """

    KIND = "cupy.RandomState(philox4_32_10), reseeded per draw"

    def __init__(self, cupy: Any, seed: int) -> None:
        self._cupy = cupy
        self._seed = seed
        self._draws = 0
        philox = cupy.cuda.curand.CURAND_RNG_PSEUDO_PHILOX4_32_10
        self._state = cupy.random.RandomState(_draw_seed(seed, 0), method=philox)

    def _next(self) -> Any:
        """The generator, seeded for the next draw."""
        self._state.seed(_draw_seed(self._seed, self._draws))
        self._draws += 1
        return self._state

    def normal(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return self._next().standard_normal(shape, dtype=dtype)

    def uniform(self, shape: tuple[int, ...], dtype: Any, low: float = 0.0,
                high: float = 1.0) -> Any:
        return self._next().uniform(low, high, shape, dtype=dtype)

    def bernoulli(self, shape: tuple[int, ...], p: float) -> Any:
        return self._next().random_sample(shape) < p

    def permutation(self, n: int) -> Any:
        return self._next().permutation(n).astype(self._cupy.int64)

    def get_state(self) -> dict[str, Any]:
        return {"generator": self.KIND, "seed": self._seed, "draws": self._draws}

    def set_state(self, state: Any) -> None:
        """Continue from ``state`` (what ``get_state`` returned); checked in full first."""

        def natural(value: Any) -> bool:
            return isinstance(value, int) and not isinstance(value, bool) and value >= 0

        if not (isinstance(state, dict) and set(state) == {"generator", "seed", "draws"}
                and state["generator"] == self.KIND and natural(state["seed"])
                and natural(state["draws"])):
            raise ValueError(f"not the state of a CuPy random stream: {state!r:.200}")
        self._seed, self._draws = state["seed"], state["draws"]


def _draw_seed(seed: int, draw: int) -> Any:
    """The cuRAND seed of draw number ``draw`` of the stream seeded with ``seed``: a NumPy
    uint64, since ``RandomState.seed`` casts its seed to uint64 with ``casting='safe'``, which
    NumPy 2 refuses for a Python int (an int64 to it)."""
    import numpy

    return numpy.random.SeedSequence([seed, draw]).generate_state(1, numpy.uint64)[0]


class CuPyBackend(ArrayAPIBackend):
    """CuPy arrays on the current CUDA device; one reusable non-blocking stream per worker."""

    quiet_math = None  # CUDA's arithmetic never warns: nothing to silence

    def __init__(self, cupy: Any, cupyx: Any) -> None:
        import array_api_compat.cupy as xp

        super().__init__(xp, "cupy")
        self._cupy = cupy
        self._cupyx = cupyx
        self._streams: dict[tuple[int, int], Any] = {}
        self._streams_lock = threading.Lock()
        self._copies = PinnedCopies(cupy)

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        return self._cupy.asarray(data, dtype=dtype)

    @functools.cached_property
    def extra_dtypes(self) -> Mapping[str, Any]:
        """``bfloat16`` (``ml_dtypes``' NumPy dtype) where the installed CuPy makes arrays of
        it (older releases refuse it); imported when first asked for (``_ml_dtypes``)."""
        return LazyBfloat16(self._bfloat16_native)

    def _bfloat16_native(self, bfloat16: Any) -> Any:
        try:
            return self._cupy.empty((1,), dtype=bfloat16).dtype
        except (TypeError, ValueError, NotImplementedError):
            return None

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

    def to_device_async(self, host: Any) -> tuple[Any, Callable[[], None]]:
        """``host`` (a NumPy array) copied to the current device without blocking the host:
        the optional hook behind ``DataLoader(backend="cupy")``. The copy is staged in pinned
        memory and runs on a stream of its own, after the work already queued on the caller's
        stream (the new array's memory may have served it). Returns the array and ``ready``,
        to call before the array is first used: it makes the then-current stream wait for
        the copy, on the device, not the host."""
        return self._copies.copy(host)

    @functools.cached_property
    def kernels(self) -> dict[str, Any]:
        """CUDA versions of the fused ops, by op name (``_cupy_kernels.py``)."""
        from ._cupy_kernels import table

        return table()

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


class PinnedCopies:
    """Host-to-device copies from pinned memory, on one non-blocking stream per device.

    Each pinned staging buffer is kept until an event says its copy has finished: CuPy's
    pinned memory pool would otherwise hand it to the next copy while the GPU still reads it.
    The destination is allocated on the caller's stream, so the memory pool reuses it in the
    caller's order once the caller drops it.
    """

    def __init__(self, cupy: Any) -> None:
        self._cupy = cupy
        self._streams: dict[int, Any] = {}
        self._in_flight: deque[tuple[Any, Any]] = deque()  # (event, pinned buffer)
        self._lock = threading.Lock()

    def copy(self, host: Any) -> tuple[Any, Callable[[], None]]:
        import numpy

        cupy = self._cupy
        host = numpy.ascontiguousarray(host)
        if host.size == 0:
            return cupy.asarray(host), _nothing
        caller = cupy.cuda.get_current_stream()
        stream = self._stream(cupy.cuda.Device().id)
        memory = cupy.cuda.alloc_pinned_memory(host.nbytes)
        staged = numpy.frombuffer(memory, host.dtype, host.size).reshape(host.shape)
        staged[...] = host
        out = cupy.empty(host.shape, host.dtype)
        stream.wait_event(caller.record())
        out.set(staged, stream=stream)
        copied = stream.record()
        with self._lock:
            while self._in_flight and self._in_flight[0][0].done:
                self._in_flight.popleft()
            self._in_flight.append((copied, staged))
        return out, functools.partial(_wait_on_current_stream, cupy, copied)

    def _stream(self, device: int) -> Any:
        with self._lock:
            stream = self._streams.get(device)
            if stream is None:
                stream = self._cupy.cuda.Stream(non_blocking=True)
                self._streams[device] = stream
            return stream


def _wait_on_current_stream(cupy: Any, event: Any) -> None:
    cupy.cuda.get_current_stream().wait_event(event)


def _nothing() -> None:
    return None


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
