"""The chunk context: what a layer knows of the DataParallel chunk it runs in, and how the
chunks of one call meet.

DataParallel (``dparray.parallel``) runs the same module on chunks of a batch, on worker
threads or one after another. A layer declares what it needs from that with
``Module.couples_rows()`` and ``Module.synchronizes_chunks()``; while it runs, it may ask
``in_chunk()`` and ``chunk_index()`` (batch norm lets chunk 0 alone move the running
statistics; recurrent and attention layers refuse input whose axis 0 is not the batch), and
SyncBatchNorm exchanges its statistics with the other chunks through the ``Rendezvous`` that
``sync_group`` gives it.

This is the contract between the two: ``dparray.parallel`` imports this module and sets the
context (``enter_chunk``, ``sync_group``); ``nn`` never imports ``dparray.parallel``.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator
from typing import Any

_chunk: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "dparray_data_parallel_chunk", default=None
)
_group: contextvars.ContextVar[tuple[Rendezvous, int] | None] = contextvars.ContextVar(
    "dparray_sync_group", default=None
)
_MISSING = object()


# ------------------------------------------------------------------ which chunk runs
def in_chunk() -> bool:
    """Whether the caller is running a DataParallel chunk (so nested ones run inline)."""
    return _chunk.get() is not None


def chunk_index() -> int | None:
    """The index of the DataParallel chunk the caller runs, or None outside DataParallel."""
    return _chunk.get()


def enter_chunk(index: int) -> None:
    """Mark the current context as running chunk ``index``. The worker pool calls it first
    thing in each task's own copy of the caller's context, so it never needs undoing."""
    _chunk.set(index)


def check_batch_first(where: str, axis_0: str, shape: tuple[int, ...], batched: bool,
                      batch_first: bool) -> None:
    """In a DataParallel chunk, a ValueError unless the input is batched with its batch in
    axis 0: DataParallel splits axis 0, which for time-major or unbatched input of a sequence
    layer is ``axis_0`` ("time", "the sequence"), and joining such pieces would be wrong."""
    if not in_chunk() or (batched and batch_first):
        return
    kind, remedy = (("time-major", "construct the layer with batch_first=True and give")
                    if batched else ("unbatched", "give the layer batched"))
    raise ValueError(f"{where}: DataParallel splits axis 0, which is {axis_0} for {kind} input "
                     f"of shape {shape}; {remedy} (N, L, features) input")


# ------------------------------------------------------------------ where chunks meet
class RendezvousAborted(RuntimeError):
    """Raised in the chunks that were waiting when another chunk of the call failed."""


def _complete(values: list[Any]) -> bool:
    return all(v is not _MISSING for v in values)  # identity: the values may be arrays


class Rendezvous:
    """A meeting point for the chunks of one DataParallel call (used by SyncBatchNorm).

    Each of ``size`` participants calls ``exchange`` with its value and gets every
    participant's value back, in participant order, once all have arrived. Participant
    ``i``'s ``n``-th call joins round ``n``: the chunks run the same code, so their ``n``-th
    exchanges belong together. If any participant fails, ``abort`` wakes the others with an
    error instead of leaving them waiting forever.
    """

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


@contextlib.contextmanager
def sync_group(group: Rendezvous | None, index: int) -> Iterator[None]:
    """Within the block, SyncBatchNorm layers meet the other chunks of ``group`` as chunk
    ``index`` (no-op when ``group`` is None). A failure inside aborts the group, so the other
    chunks stop waiting."""
    if group is None:
        yield
        return
    token = _group.set((group, index))
    try:
        yield
    except BaseException as error:
        group.abort(f"chunk {index}: {type(error).__name__}: {error}")
        raise
    finally:
        _group.reset(token)


def joined_group() -> tuple[Rendezvous, int] | None:
    """The group the caller's chunk meets its siblings in, and its index there; None outside
    ``sync_group``."""
    return _group.get()
