"""Random streams: one seeded generator per backend, reproducible by default.

Like PyTorch, dparray starts from a fixed seed, so a script that never seeds still repeats run
to run; ``manual_seed`` restarts every stream. Each thread's streams are its own: the main
thread's, those a thread seeds for itself (``manual_seed`` or ``set_state`` in it), and one set
that the threads which never seed share, derived from the main thread's seed. So a thread that
seeds draws the same numbers whatever runs in other threads meanwhile -- a DataParallel, another
training loop, a thread that reseeds. Within a thread the current streams are a context
variable: ``fork_rng`` gives a block (a DataParallel chunk, say) streams of its own without
disturbing anyone else's. ``get_state`` and ``set_state`` capture and restore the current
streams exactly (as plain JSON-able data), so a resumed run draws what the first would have
drawn.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from dparray._checks import check_int
from dparray.backend import Backend, BackendUnavailableError, RandomGenerator, get_backend

DEFAULT_SEED = 20261130


__all__ = ["RandomStreams", "current_streams", "fork_rng", "generator", "get_state", "initial_seed",
           "manual_seed", "set_state"]

def _mix(seed: int, index: int) -> int:
    """SplitMix64 of (seed, index): well-spread 63-bit seeds from consecutive inputs."""
    z = (seed * 0x9E3779B97F4A7C15 + (index + 1) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return (z ^ (z >> 31)) >> 1


def check_seed(seed: int, where: str = "dparray.random") -> int:
    """``seed`` itself, once checked to be a non-negative int: a TypeError for anything but an
    int (NumPy integers pass), a ValueError for a negative one."""
    return check_int(seed, "seed", where, minimum=0)


class RandomStreams:
    """One ``RandomGenerator`` per backend, all derived from one seed, made on first use."""

    def __init__(self, seed: int) -> None:
        self.seed = check_seed(seed)
        self._generators: dict[str, RandomGenerator] = {}
        self._lock = threading.Lock()
        self._spawned = 0
        # states restored for backends that cannot run here (yet): applied on first use
        self._pending: dict[str, Any] = {}

    def spawn(self, count: int) -> list[int]:
        """``count`` new seeds, different at every call and fixed by this stream's seed: the
        independent, reproducible streams of DataParallel's chunks."""
        with self._lock:
            first = self._spawned
            self._spawned += count
        return [_mix(self.seed, first + i) for i in range(count)]

    def generator(self, backend: Backend) -> RandomGenerator:
        with self._lock:
            generator = self._generators.get(backend.name)
            if generator is None:
                generator = backend.random(self.seed)
                pending = self._pending.pop(backend.name, None)
                if pending is not None:
                    generator.set_state(pending)
                self._generators[backend.name] = generator
            return generator

    def get_state(self) -> dict[str, Any]:
        """The seed, the count ``spawn`` has handed out, and the state of every generator used
        so far (by backend name), as JSON-able data; ``from_state`` rebuilds the streams."""
        with self._lock:
            generators = copy.deepcopy(self._pending)
            for name, generator in self._generators.items():
                getter = getattr(generator, "get_state", None)
                if getter is None:
                    raise TypeError(f"dparray.random.get_state: the random generator of backend "
                                    f"{name!r} ({type(generator).__name__}) has no get_state()")
                generators[name] = getter()
            return {"seed": self.seed, "spawned": self._spawned, "generators": generators}

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> RandomStreams:
        """New streams that continue exactly where those ``get_state`` described stood.

        Everything is checked first (a TypeError for a wrong type, a ValueError for a wrong
        value). A generator state for a backend that cannot run here is kept, unused, and
        applied if that backend is used later, so saving again loses nothing.
        """
        where = "dparray.random.set_state"
        if not isinstance(state, Mapping):
            raise TypeError(f"{where}: state must be what get_state() returned (a mapping), "
                            f"got {type(state).__name__}")
        expected = {"seed", "spawned", "generators"}
        if set(state) != expected:
            raise ValueError(f"{where}: state must have the keys {sorted(expected)}, got "
                             f"{sorted(map(str, state))}")
        streams = cls(check_seed(state["seed"], where))
        streams._spawned = check_int(state["spawned"], "spawned", where, minimum=0)
        saved = state["generators"]
        if not isinstance(saved, Mapping) or not all(isinstance(k, str) for k in saved):
            raise TypeError(f"{where}: generators must map backend names to states, got "
                            f"{type(saved).__name__}")
        for name, generator_state in saved.items():
            try:
                backend = get_backend(name)
            except (ValueError, TypeError, BackendUnavailableError):
                streams._pending[name] = copy.deepcopy(generator_state)
                continue
            generator = backend.random(streams.seed)
            setter = getattr(generator, "set_state", None)
            if setter is None:
                raise TypeError(f"{where}: the random generator of backend {name!r} "
                                f"({type(generator).__name__}) has no set_state()")
            setter(generator_state)
            streams._generators[name] = generator
        return streams


_UNSEEDED_THREADS = 2**62  # the index the shared streams of unseeded threads are mixed with

_main = RandomStreams(DEFAULT_SEED)  # the main thread's streams
_unseeded = RandomStreams(_mix(DEFAULT_SEED, _UNSEEDED_THREADS))  # threads that never seeded
# a fork_rng block's streams, or those a thread other than the main one gave itself (each
# thread starts with an empty context, so a value set in one is never seen by another)
_override: contextvars.ContextVar[RandomStreams | None] = contextvars.ContextVar(
    "dparray_random_streams", default=None
)


def manual_seed(seed: int) -> None:
    """Restart the random streams of every backend from ``seed``: the calling thread's (inside
    ``fork_rng``: the block's). Other threads' streams are left alone; seeding the main thread
    also restarts the streams shared by the threads that never seed themselves (from a seed
    derived from ``seed``).

    Examples:
        >>> import dparray
        >>> dparray.manual_seed(0); a = dparray.randn(3)
        >>> dparray.manual_seed(0); b = dparray.randn(3)
        >>> bool((a == b).all())
        True
    """
    global _unseeded
    streams = RandomStreams(seed)
    if _install(streams):
        _unseeded = RandomStreams(_mix(streams.seed, _UNSEEDED_THREADS))


def _install(streams: RandomStreams) -> bool:
    """Make ``streams`` the current ones; True when they became the main thread's."""
    global _main
    if _override.get() is not None or threading.current_thread() is not threading.main_thread():
        _override.set(streams)
        return False
    _main = streams
    return True


def get_state() -> dict[str, Any]:
    """The complete state of the current random streams (inside ``fork_rng``: the block's) as
    plain JSON-able data: the seed, the count of seeds handed to DataParallel's chunks, and the
    state of each backend's generator used so far. ``set_state`` restores it.

    Examples:
        >>> import dparray as dp
        >>> dp.manual_seed(0)
        >>> state = dp.random.get_state()
        >>> first = dp.randn(3)
        >>> dp.random.set_state(state)
        >>> bool((dp.randn(3) == first).all())
        True
    """
    return current_streams().get_state()


def set_state(state: Mapping[str, Any]) -> None:
    """Make the current random streams (inside ``fork_rng``: the block's) continue from
    ``state``, what ``get_state`` returned, here or in another process: the same draws follow.
    A state that is not one is refused (TypeError or ValueError) and nothing changes."""
    _install(RandomStreams.from_state(state))


def initial_seed() -> int:
    """The seed the current streams started from."""
    return current_streams().seed


def current_streams() -> RandomStreams:
    """The streams draws come from here: the block's, the thread's own, the main thread's, or
    (in a thread that never seeded) the ones unseeded threads share."""
    streams = _override.get()
    if streams is not None:
        return streams
    return _main if threading.current_thread() is threading.main_thread() else _unseeded


def generator(backend: Backend) -> RandomGenerator:
    """The current stream's generator for ``backend``."""
    return current_streams().generator(backend)


@contextlib.contextmanager
def fork_rng(seed: int) -> Iterator[RandomStreams]:
    """Within the block, random draws come from fresh streams seeded with ``seed``."""
    streams = RandomStreams(seed)
    token = _override.set(streams)
    try:
        yield streams
    finally:
        _override.reset(token)

