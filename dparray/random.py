"""Random streams: one seeded generator per backend, reproducible by default.

Like PyTorch, dparray starts from a fixed seed, so a script that never seeds still repeats run
to run; ``manual_seed`` restarts every stream. The current set of streams is a context
variable: ``fork_rng`` gives a block (a DataParallel worker, say) streams of its own
without disturbing anyone else's.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator

from dparray.backend import Backend, RandomGenerator

DEFAULT_SEED = 20261130


def _mix(seed: int, index: int) -> int:
    """SplitMix64 of (seed, index): well-spread 63-bit seeds from consecutive inputs."""
    z = (seed * 0x9E3779B97F4A7C15 + (index + 1) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return (z ^ (z >> 31)) >> 1


def check_seed(seed: int) -> int:
    """``seed`` itself, once checked to be a non-negative int."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"a seed must be a non-negative int, got {seed!r}")
    return seed


class RandomStreams:
    """One ``RandomGenerator`` per backend, all derived from one seed, made on first use."""

    def __init__(self, seed: int) -> None:
        self.seed = check_seed(seed)
        self._generators: dict[str, RandomGenerator] = {}
        self._lock = threading.Lock()
        self._spawned = 0

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
                self._generators[backend.name] = generator
            return generator


_global = RandomStreams(DEFAULT_SEED)
_override: contextvars.ContextVar[RandomStreams | None] = contextvars.ContextVar(
    "dparray_random_streams", default=None
)


def manual_seed(seed: int) -> None:
    """Restart the random streams of every backend from ``seed`` (inside ``fork_rng``: its own).

    Examples:
        >>> import dparray
        >>> dparray.manual_seed(0); a = dparray.randn(3)
        >>> dparray.manual_seed(0); b = dparray.randn(3)
        >>> bool((a == b).all())
        True
    """
    global _global
    streams = RandomStreams(seed)
    if _override.get() is not None:
        _override.set(streams)
    else:
        _global = streams


def initial_seed() -> int:
    """The seed the current streams started from."""
    return current_streams().seed


def current_streams() -> RandomStreams:
    streams = _override.get()
    return _global if streams is None else streams


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

