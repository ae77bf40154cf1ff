"""dparray's collectives on one MPI communicator: numbered, checked, bounded in time.

Every operation starts with an all-gather of a fixed-size header (which operation, dtype,
shape, bucket layout), so ranks that disagree all raise a ValueError naming both sides before
any payload moves; waits poll non-blocking requests against a deadline; a rank that exits
tells the others, so a rank waiting for it fails at once. ``dparray.distributed`` builds its
public collectives and ``DistributedDataParallel`` on ``channel_for(comm, ...)``.
"""

from __future__ import annotations

import atexit
import json
import time
import zlib
from array import array
from collections.abc import Callable
from typing import Any

from dparray.distributed.failure import abort_with
from dparray.dtypes import ALL_DTYPES


def mpi() -> Any:
    """mpi4py's ``MPI`` module, or an ImportError saying how to install it."""
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise ImportError(
            "dparray.distributed needs mpi4py: pip install 'dparray[mpi]'") from error
    return MPI


OPS = ("sum", "mean", "max", "min")
DTYPES = tuple(ALL_DTYPES)  # a dtype travels in a header as its index here, plus one

# The header every collective starts with: int64 [collective number, kind, call number of that
# kind, then five kind-specific fields, then up to eight dimensions].
_HEADER = 16
MAX_DIMS = 8
CONSTRUCT, ALL_REDUCE, REDUCE, BARRIER = 1, 2, 3, 4
_LEAVING = 7  # the tag of the message a rank sends the others when it exits

# Polling (see _poll): how often to look for departed ranks and the deadline; how long a
# patient wait spins before it sleeps, and its shortest and longest sleeps.
_CHECK_S = 0.01
_SPIN_S = 0.01
_MIN_PAUSE_S = 1e-4
_MAX_PAUSE_S = 5e-3


channels: list[Channel] = []


def channel_for(comm: Any, where: str, timeout: float) -> Channel:
    """The ``Channel`` of ``comm``, made (collectively) on its first collective."""
    for channel in channels:
        if channel.comm is comm or channel.comm == comm:
            return channel
    control, request = comm.Idup()
    if not _poll(request, timeout, lambda: None, patient=True):
        raise RuntimeError(f"{where}: the other ranks did not join within the timeout of "
                           f"{timeout:g} s (setting up dparray's collectives)")
    channel = Channel(comm, control, timeout)
    channels.append(channel)
    if channel.size > 1:
        atexit.register(channel.leave)
    return channel


class Channel:
    """dparray's collectives on one communicator: numbered, checked, bounded in time.

    Every operation (an all-reduce, a gradient reduce, a barrier, a construction) starts with
    ``begin``: an all-gather of a fixed-size header, so ranks that are not in the same
    operation, or disagree on its dtype or shape, all raise the same ValueError before any
    payload moves. Waits poll a non-blocking request against a deadline. A duplicate of the
    communicator carries the one message a rank sends each other rank when it exits (its last
    header), so that a rank waiting for it in a collective it never joined fails at once.
    """

    def __init__(self, comm: Any, control: Any, timeout: float) -> None:
        self.comm = comm
        self.control = control
        self.rank = int(comm.Get_rank())
        self.size = int(comm.Get_size())
        self.count = 0  # operations begun on comm
        self.calls: dict[int, int] = {}  # operations that ran (headers agreed), per kind
        self.last = array("q", bytes(8 * _HEADER))  # the header of the latest operation
        self.departed: dict[int, list[int]] = {}  # rank -> its last header, for ranks gone
        self.broken: str | None = None  # why the ranks may be out of step
        self.patience = timeout  # how long a rank waits for the others at exit: the longest
        # timeout its collectives were given

    def begin(self, where: str, kind: int, fields: list[int], timeout: float) -> None:
        """Start operation ``kind``: exchange headers; a ValueError if the ranks differ."""
        if self.broken is not None:
            raise RuntimeError(f"{where}: an earlier collective on this communicator failed "
                               f"({self.broken}); the ranks are out of step, end the job")
        self.patience = max(self.patience, timeout)
        self.count += 1
        call = self.calls.get(kind, 0) + 1
        values = [self.count, kind, call, *fields]
        self.last = array("q", values + [0] * (_HEADER - len(values)))
        headers = array("q", bytes(8 * _HEADER * self.size))
        self.wait(self.comm.Iallgather(self.last, headers), where, timeout, patient=True)
        rows = [headers[r * _HEADER:(r + 1) * _HEADER].tolist() for r in range(self.size)]
        check_same_operation(rows, where)
        self.calls[kind] = call  # only operations that ran count: after a refusal, all agree

    def all_reduce(self, host: Any, op: str, where: str, timeout: float) -> None:
        """Combine the host array ``host`` over the ranks, in place."""
        MPI = mpi()
        mpi_op = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}[op]
        self.wait(self.comm.Iallreduce(MPI.IN_PLACE, host, op=mpi_op), where, timeout)

    def broadcast(self, host: Any, where: str, timeout: float) -> None:
        """Replace the host array ``host`` with rank 0's, in place."""
        self.wait(self.comm.Ibcast(host, root=0), where, timeout)

    def all_gather_bytes(self, data: bytes, where: str, timeout: float) -> list[bytes]:
        """Every rank's ``data``, in rank order: lengths first, then the bytes."""
        MPI = mpi()
        mine = array("q", [len(data)])
        lengths = array("q", bytes(8 * self.size))
        self.wait(self.comm.Iallgather(mine, lengths), where, timeout)
        counts = lengths.tolist()
        if min(counts) < 0:
            raise ValueError(f"{where}: a rank sent a negative length ({counts})")
        offsets = [sum(counts[:r]) for r in range(self.size)]
        gathered = bytearray(sum(counts))
        self.wait(self.comm.Iallgatherv([data, MPI.BYTE],
                                        [gathered, (counts, offsets), MPI.BYTE]), where, timeout)
        return [bytes(gathered[o:o + n]) for o, n in zip(offsets, counts, strict=True)]

    def wait(self, request: Any, where: str, timeout: float, *, patient: bool = False) -> None:
        """Until ``request`` completes; a RuntimeError when a rank it needs has left, or
        after ``timeout`` seconds. A wait that does not complete leaves the ranks out of
        step: later operations then fail at once. ``patient``: see ``_poll``."""
        try:
            done = _poll(request, timeout, lambda: self._check_departures(where), patient)
            if not done:
                raise RuntimeError(
                    f"{where}: not every rank joined {_describe(self.last.tolist())} within the "
                    f"timeout of {timeout:g} s (a rank is stuck, dead, or busy elsewhere; raise "
                    "the timeout argument if that is expected)")
        except BaseException as error:
            self.broken = f"{type(error).__name__}: {error}"
            raise

    def _check_departures(self, where: str) -> None:
        MPI = mpi()
        status = MPI.Status()
        while self.control.Iprobe(MPI.ANY_SOURCE, _LEAVING, status):
            source = status.Get_source()
            message = array("q", bytes(8 * _HEADER))
            self.control.Recv(message, source, _LEAVING)
            self.departed[source] = message.tolist()
        for other, last in sorted(self.departed.items()):
            if last[0] < self.count:  # it left before this operation
                before = f"after {_describe(last)}" if last[0] else "before any collective"
                raise RuntimeError(
                    f"{where}: rank {other} has exited ({before}) while this rank waits for it "
                    f"in {_describe(self.last.tolist())}")

    def leave(self) -> None:
        """At exit: tell the other ranks, then wait (at most ``patience``) for all to finish;
        abort the job instead if that takes too long or the ranks are out of step."""
        MPI = mpi()
        if MPI.Is_finalized():
            return
        if self.broken is not None:
            abort_with(self.comm, f"dparray.distributed: exiting after a failed collective "
                                   f"({self.broken}); aborting the job")
            return
        others = [r for r in range(self.size) if r != self.rank]
        sends = [self.control.Isend(self.last, dest=r, tag=_LEAVING) for r in others]
        if not _poll(self.control.Ibarrier(), self.patience, lambda: None, patient=True):
            abort_with(self.comm, f"dparray.distributed: this rank has exited, and the others "
                                   f"did not finish within {self.patience:g} s; aborting the job")
            return
        for other in others:  # each sent its message before joining the barrier
            if other not in self.departed:
                self.control.Recv(array("q", bytes(8 * _HEADER)), other, _LEAVING)
        MPI.Request.Waitall(sends)


def _poll(request: Any, timeout: float, check: Callable[[], None], patient: bool) -> bool:
    """Whether ``request`` completed within ``timeout`` seconds; ``check()`` runs every
    ``_CHECK_S`` seconds meanwhile (it may raise).

    A ``patient`` wait is one where ranks arrive (a header, a barrier): it may last long, so
    after a short spin it sleeps, ever longer, between tests. Otherwise every rank is known to
    be there and a payload is moving, which MPI advances only while this rank tests: keep
    testing, only yielding the core, as a blocking MPI call would.
    """
    if request.Test():
        return True
    start = time.monotonic()
    next_check = start + _CHECK_S
    pause = 0.0
    while not request.Test():
        now = time.monotonic()
        if now >= next_check:
            check()
            if now - start > timeout:
                return False
            next_check = now + _CHECK_S
        if patient and now - start > _SPIN_S:
            time.sleep(pause)
            pause = min(max(2 * pause, _MIN_PAUSE_S), _MAX_PAUSE_S)
        else:
            time.sleep(0)
    return True


def check_same_operation(rows: list[list[int]], where: str) -> None:
    """A ValueError naming rank 0's operation and each differing rank's, if any differs."""
    differing = [r for r in range(1, len(rows)) if rows[r] != rows[0]]
    if not differing:
        return
    descriptions = {r: _describe(rows[r]) for r in (0, *differing)}
    if any(descriptions[r] == descriptions[0] for r in differing):
        descriptions = {r: f"{text} (layout {rows[r][7]:08x})" for r, text in descriptions.items()}
    parts = [f"rank {r} is in {descriptions[r]}" for r in (0, *differing[:3])]
    if len(differing) > 3:
        parts.append(f"{len(differing) - 3} more ranks differ")
    raise ValueError(f"{where}: the ranks are not in the same collective: " + "; ".join(parts))


def _describe(header: list[int]) -> str:
    """A header in words, for error messages. Other ranks' headers come from the network, so
    any value must give a description rather than an exception."""
    number, kind, call, a, b, c, d, _crc_value, *dims = header
    if kind == ALL_REDUCE:
        shape = tuple(dims[:max(0, min(c, MAX_DIMS))])
        more = "..." if c > MAX_DIMS else ""
        return (f"all_reduce #{call} ({_lookup(OPS, a)} of {_lookup(DTYPES, b - 1)} values, "
                f"shape {shape}{more})")
    if kind == REDUCE:
        dtypes = "+".join(name for i, name in enumerate(DTYPES) if b >> i & 1) or "no"
        return (f"DistributedDataParallel.reduce #{call} ({c} gradients, {d} {dtypes} values "
                f"in {a} bucket(s))")
    if kind == BARRIER:
        return f"barrier #{call}"
    if kind == CONSTRUCT:
        return f"DistributedDataParallel() #{call}"
    return f"collective {number} of an unknown kind {kind}"


def _lookup(names: tuple[str, ...], index: int) -> str:
    return names[index] if 0 <= index < len(names) else f"unknown({index})"


def dtype_code(name: str) -> int:
    return DTYPES.index(name) + 1


def crc(value: Any) -> int:
    return zlib.crc32(json.dumps(value).encode())
