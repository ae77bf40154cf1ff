"""A meeting point for the chunks of one DataParallel call (used by SyncBatchNorm).

Each of ``size`` participants calls ``Rendezvous.exchange`` with its value and gets every
participant's value back, in participant order, once all have arrived. Participant ``i``'s
``n``-th call joins round ``n``: the chunks run the same code, so their ``n``-th exchanges
belong together. If any participant fails, ``abort`` wakes the others with an error instead
of leaving them waiting forever.
"""

from __future__ import annotations

import threading
from typing import Any

_MISSING = object()


class RendezvousAborted(RuntimeError):
    """Raised in the chunks that were waiting when another chunk of the call failed."""


def _complete(values: list[Any]) -> bool:
    return all(v is not _MISSING for v in values)  # identity: the values may be arrays


class Rendezvous:
    def __init__(self, size: int) -> None:
        self.size = size
        self._condition = threading.Condition()
        self._rounds: dict[int, list[Any]] = {}
        self._calls = [0] * size
        self._broken: str | None = None

    def exchange(self, index: int, value: Any) -> list[Any]:
        with self._condition:
            self._check()
            round_number = self._calls[index]
            self._calls[index] += 1
            values = self._rounds.setdefault(round_number, [_MISSING] * self.size)
            values[index] = value
            if _complete(values):
                self._condition.notify_all()
            while not _complete(values):
                self._condition.wait()
                self._check()
            return list(values)

    def abort(self, reason: str) -> None:
        """Wake every waiting participant with an error (the first reason given is kept)."""
        with self._condition:
            if self._broken is None:
                self._broken = reason
            self._condition.notify_all()

    def _check(self) -> None:
        if self._broken is not None:
            raise RendezvousAborted(
                f"another chunk of this DataParallel call failed: {self._broken}")
