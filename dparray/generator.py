"""``dparray.Generator``: an independent random stream, PyTorch's ``torch.Generator``.

The random functions draw from the current streams (``dparray.random``) unless they are
given ``generator=`` (or ``seed=``, dparray's shorthand for a fresh stream). A ``Generator``
holds streams of its own, seeded by ``manual_seed``, so the draws made with it repeat whatever
else the program draws, and leave the current streams where they were.
"""

from __future__ import annotations

import secrets
from typing import Any

from dparray import random as _random
from dparray._checks import describe
from dparray.backend import Backend, RandomGenerator
from dparray.devices import as_device, device


class Generator:
    """A seeded random stream to pass as ``generator=`` (PyTorch's ``torch.Generator``).

    It draws on any backend (each from its own stream, all derived from the seed);
    ``device`` records where PyTorch code meant it to draw and changes nothing else.
    ``get_state`` returns JSON-able data (PyTorch: a byte tensor) that ``set_state`` takes.

    Examples:
        >>> import dparray as dp
        >>> g = dp.Generator().manual_seed(7)
        >>> a = dp.randn(3, generator=g)
        >>> b = dp.randn(3, generator=dp.Generator().manual_seed(7))
        >>> bool((a == b).all())
        True
    """

    def __init__(self, device: Any = "cpu") -> None:
        self._device = as_device(device, "Generator")
        self._streams = _random.RandomStreams(_random.DEFAULT_SEED)

    @property
    def device(self) -> device:
        return self._device

    def manual_seed(self, seed: int) -> Generator:
        """Restart from ``seed`` (a non-negative int); returns the generator itself."""
        self._streams = _random.RandomStreams(_random.check_seed(seed, "Generator.manual_seed"))
        return self

    def seed(self) -> int:
        """Restart from a fresh, non-deterministic seed and return it."""
        seed = secrets.randbits(63)
        self._streams = _random.RandomStreams(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed the generator started from."""
        return self._streams.seed

    def get_state(self) -> dict[str, Any]:
        """The generator's complete state as JSON-able data."""
        return self._streams.get_state()

    def set_state(self, state: Any) -> Generator:
        """Continue from ``state`` (what ``get_state`` returned); returns the generator."""
        self._streams = _random.RandomStreams.from_state(state)
        return self

    def random(self, backend: Backend) -> RandomGenerator:
        """The generator's stream for ``backend``."""
        return self._streams.generator(backend)

    def __repr__(self) -> str:
        return f"Generator(device={str(self._device)!r}, initial_seed={self.initial_seed()})"


def stream(backend: Backend, generator: Generator | None, seed: int | None,
           where: str) -> RandomGenerator:
    """The stream a random function draws from on ``backend``: ``generator``'s, a fresh one
    from ``seed``, or the current one."""
    if generator is not None:
        if seed is not None:
            raise TypeError(f"{where}: give seed= or generator=, not both")
        if not isinstance(generator, Generator):
            raise TypeError(f"{where}: generator must be a dparray.Generator, got "
                            f"{describe(generator)}")
        return generator.random(backend)
    if seed is not None:
        return backend.random(_random.check_seed(seed, where))
    return _random.generator(backend)
