"""Training on several processes or machines: DistributedDataParallel over MPI (mpi4py).

Run one process per machine (or per core group) under ``mpiexec``; each trains on its own
shard of the data. ``DistributedDataParallel`` makes every rank start from rank 0's
parameters and averages the gradients across ranks before each optimizer step, so all ranks
take the same steps -- the same steps one process would take on the union of their batches.
It composes with ``dparray.DataParallel`` inside each rank.

The all-reduce goes through flat host buffers, one per bucket of about ``bucket_mb`` megabytes
of gradients, in parameter order, so its sums are the same on every rank and every run.

A job fails as a whole, and says why, instead of hanging:

- once this module has used a communicator of several ranks, an uncaught exception on any rank
  prints its traceback marked with the rank and aborts the job (``abort_on_error`` does the
  same for one block);
- every collective first exchanges a small fixed-size header (which operation, dtype, shape,
  bucket layout): ranks that disagree all raise a ValueError naming both sides, before any
  payload moves;
- collectives are non-blocking and wait at most ``timeout`` seconds (RuntimeError);
- a rank that exits tells the others, so a rank waiting for it in a collective fails at once,
  and at exit every rank waits for the others to finish (at most ``timeout``) before leaving.

Needs the ``mpi`` extra: ``pip install "dparray[mpi]"`` (mpi4py and the ``mpich`` wheel, whose
``mpiexec`` lands next to ``python``).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import random
import sys
import time
import traceback
import zlib
from array import array
from collections.abc import Callable, Iterator
from typing import Any

from dparray._checks import (
    check_bool,
    check_choice,
    check_int,
    check_number,
    check_tensor,
    describe,
)
from dparray.creation import tensor as _to_tensor
from dparray.dtypes import ALL_DTYPES
from dparray.gradients import Gradients
from dparray.nn.module import Module
from dparray.nn.wrapper import Wrapper
from dparray.tensor import Tensor

DEFAULT_TIMEOUT = 300.0
"""Seconds a rank waits for the others in one collective (and at exit) before giving up."""

_OPS = ("sum", "mean", "max", "min")
_DTYPES = tuple(ALL_DTYPES)  # a dtype travels in a header as its index here, plus one
_ITEMSIZE = {"float16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1, "int16": 2,
             "int32": 4, "int64": 8, "bool": 1}

# The header every collective starts with: int64 [collective number, kind, call number of that
# kind, then five kind-specific fields, then up to eight dimensions].
_HEADER = 16
_MAX_DIMS = 8
_CONSTRUCT, _ALL_REDUCE, _REDUCE, _BARRIER = 1, 2, 3, 4
_LEAVING = 7  # the tag of the message a rank sends the others when it exits

# Polling (see _poll): how often to look for departed ranks and the deadline; how long a
# patient wait spins before it sleeps, and its shortest and longest sleeps.
_CHECK_S = 0.01
_SPIN_S = 0.01
_MIN_PAUSE_S = 1e-4
_MAX_PAUSE_S = 5e-3
_FORWARD_S = 0.25  # time for mpiexec to forward a failing rank's last words before the abort


# ------------------------------------------------------------------ communicator and rank
__all__ = ["DistributedDataParallel", "abort_on_error", "all_reduce", "barrier", "rank", "shard",
           "world", "world_size"]

def _mpi() -> Any:
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise ImportError(
            "dparray.distributed needs mpi4py: pip install 'dparray[mpi]'") from error
    return MPI


def world(comm: Any = None) -> Any:
    """The communicator to use: ``comm``, or MPI's world.

    From the first use of a communicator of several ranks on, an uncaught exception in this
    process prints its traceback marked with the rank and aborts the whole job.
    """
    return _world(comm, "dparray.distributed")


def _world(comm: Any, where: str) -> Any:
    if comm is None:
        comm = _mpi().COMM_WORLD
    elif not (hasattr(comm, "Get_rank") and hasattr(comm, "Get_size")):
        raise TypeError(f"{where}: comm must be an MPI communicator (mpi4py.MPI.Comm), got "
                        f"{describe(comm)}")
    _abort_on_uncaught_exceptions(comm)
    return comm


def rank(comm: Any = None) -> int:
    """This process's rank (0 .. world_size - 1)."""
    return int(_world(comm, "rank").Get_rank())


def world_size(comm: Any = None) -> int:
    """How many processes take part."""
    return int(_world(comm, "world_size").Get_size())


def barrier(comm: Any = None, *, timeout: float = DEFAULT_TIMEOUT) -> None:
    """Wait until every rank gets here (at most ``timeout`` seconds: then a RuntimeError)."""
    timeout = _check_timeout(timeout, "barrier")
    communicator = _world(comm, "barrier")
    _channel(communicator, "barrier", timeout).begin("barrier", _BARRIER, [], timeout)


def shard(n_items: int, seed: int, epoch: int, comm: Any = None, *,
          pad: bool = True) -> Tensor:
    """This rank's share of a shuffle of ``range(n_items)``, as an int64 tensor.

    Every rank computes the same shuffle from ``(seed, epoch)`` and takes every
    ``world_size``-th item from its rank on, as PyTorch's DistributedSampler does; each epoch
    covers every item. With ``pad`` the shuffle is first extended by its own first items until
    it divides evenly, so that all ranks get the same number of items (a few items then appear
    twice in an epoch); without it the shares are disjoint and differ by at most one.

    Examples:
        >>> shard(10, seed=0, epoch=0).shape  # one process: all ten
        (10,)
    """
    n_items = check_int(n_items, "n_items", "shard", minimum=1)
    seed = check_int(seed, "seed", "shard")
    epoch = check_int(epoch, "epoch", "shard")
    check_bool(pad, "pad", "shard")
    communicator = _world(comm, "shard")
    me, size = communicator.Get_rank(), communicator.Get_size()
    order = list(range(n_items))
    random.Random(f"dparray.shard:{seed}:{epoch}").shuffle(order)
    if pad and n_items % size:
        extra = size - n_items % size
        order += (order * (extra // n_items + 1))[:extra]
    return _to_tensor(order[me::size], dtype="int64")


def all_reduce(value: Tensor, op: str = "sum", comm: Any = None, *,
               timeout: float = DEFAULT_TIMEOUT) -> Tensor:
    """``value`` combined over all ranks with ``op`` (sum, mean, max or min): for metrics.

    The result is a constant on ``value``'s backend; every rank gets the same one. Ranks whose
    values differ in dtype or shape (or that are in another collective) all raise a ValueError
    naming both; a rank that does not join within ``timeout`` seconds makes it a RuntimeError.

    Examples:
        >>> import dparray as dp
        >>> all_reduce(dp.tensor([1.0, 2.0]), "mean").tolist()  # one process here
        [1.0, 2.0]
    """
    where = "all_reduce"
    check_tensor(value, "value", where)
    check_choice(op, "op", where, _OPS)
    timeout = _check_timeout(timeout, where)
    dtype = value.dtype
    if dtype.kind == "bool":
        raise TypeError(f"{where}: value must hold numbers, got a bool tensor")
    communicator = _world(comm, where)
    channel = _channel(communicator, where, timeout)
    shape = value.shape
    channel.begin(where, _ALL_REDUCE, [_OPS.index(op), _dtype_code(dtype.name), len(shape),
                                       value.elem_count(), _crc(shape), *shape[:_MAX_DIMS]],
                  timeout)
    host = value.backend.to_numpy(value.data).copy()
    channel.all_reduce(host, "sum" if op == "mean" else op, where, timeout)
    out = Tensor(value.backend.asarray(host), value.backend)
    return out / communicator.Get_size() if op == "mean" else out


# ------------------------------------------------------------------ failing as a whole
@contextlib.contextmanager
def abort_on_error(comm: Any = None) -> Iterator[None]:
    """Within the block, an exception on any rank prints its traceback (marked with the rank)
    and aborts the whole job, instead of leaving the other ranks waiting in a collective.

    Uncaught exceptions do the same once this module has used the communicator; the block
    makes it explicit, and covers ``SystemExit`` with a non-zero code too.

    Examples:
        >>> with abort_on_error():
        ...     pass
    """
    communicator = _world(comm, "abort_on_error")
    try:
        yield
    except BaseException as error:
        if isinstance(error, SystemExit) and not error.code:
            raise
        _abort(communicator, error)
        raise  # only a stand-in communicator returns from _abort


_excepthook_comm: list[Any] = []  # the communicator an uncaught exception aborts, once set


def _abort_on_uncaught_exceptions(comm: Any) -> None:
    """Chain a ``sys.excepthook`` that aborts the job, the first time ``comm`` has several
    ranks (one process keeps Python's usual behaviour, interactive sessions included)."""
    if _excepthook_comm or not _is_mpi(comm) or comm.Get_size() < 2:
        return
    _excepthook_comm.append(comm)
    previous = sys.excepthook

    def abort_the_job(kind: type[BaseException], error: BaseException, tb: Any) -> None:
        if previous is not sys.__excepthook__:
            previous(kind, error, tb)  # the user's own hook still runs
        _abort(comm, error)

    sys.excepthook = abort_the_job


def _abort(comm: Any, error: BaseException) -> None:
    """Print ``error``'s traceback, each line marked with the rank, and abort the job."""
    lines = traceback.format_exception(type(error), error, error.__traceback__)
    _abort_with(comm, "".join(lines), _exit_status(error))


def _abort_with(comm: Any, text: str, status: int = 1) -> None:
    marked = "".join(f"[rank {comm.Get_rank()}] {line}" for line in text.splitlines(True))
    sys.stdout.flush()
    sys.stderr.write(marked if marked.endswith("\n") else marked + "\n")
    sys.stderr.flush()
    if _is_mpi(comm):
        time.sleep(_FORWARD_S)  # the launcher drops output it has not forwarded when aborting
    comm.Abort(status)
    if _is_mpi(comm):
        os._exit(status)  # MPICH's Abort may return before the launcher ends this process


def _is_mpi(comm: Any) -> bool:
    MPI = sys.modules.get("mpi4py.MPI")
    return MPI is not None and isinstance(comm, MPI.Comm)


def _exit_status(error: BaseException) -> int:
    if isinstance(error, KeyboardInterrupt):
        return 130  # what a shell reports for Ctrl-C
    if isinstance(error, SystemExit) and isinstance(error.code, int) and error.code > 0:
        return error.code
    return 1


# ------------------------------------------------------------------ guarded collectives
_channels: list[_Channel] = []


def _channel(comm: Any, where: str, timeout: float) -> _Channel:
    """The ``_Channel`` of ``comm``, made (collectively) on its first collective."""
    for channel in _channels:
        if channel.comm is comm or channel.comm == comm:
            return channel
    control, request = comm.Idup()
    if not _poll(request, timeout, lambda: None, patient=True):
        raise RuntimeError(f"{where}: the other ranks did not join within the timeout of "
                           f"{timeout:g} s (setting up dparray's collectives)")
    channel = _Channel(comm, control, timeout)
    _channels.append(channel)
    if channel.size > 1:
        atexit.register(channel.leave)
    return channel


class _Channel:
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
        _check_same_operation(rows, where)
        self.calls[kind] = call  # only operations that ran count: after a refusal, all agree

    def all_reduce(self, host: Any, op: str, where: str, timeout: float) -> None:
        """Combine the host array ``host`` over the ranks, in place."""
        MPI = _mpi()
        mpi_op = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}[op]
        self.wait(self.comm.Iallreduce(MPI.IN_PLACE, host, op=mpi_op), where, timeout)

    def broadcast(self, host: Any, where: str, timeout: float) -> None:
        """Replace the host array ``host`` with rank 0's, in place."""
        self.wait(self.comm.Ibcast(host, root=0), where, timeout)

    def all_gather_bytes(self, data: bytes, where: str, timeout: float) -> list[bytes]:
        """Every rank's ``data``, in rank order: lengths first, then the bytes."""
        MPI = _mpi()
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
        MPI = _mpi()
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
        MPI = _mpi()
        if MPI.Is_finalized():
            return
        if self.broken is not None:
            _abort_with(self.comm, f"dparray.distributed: exiting after a failed collective "
                                   f"({self.broken}); aborting the job")
            return
        others = [r for r in range(self.size) if r != self.rank]
        sends = [self.control.Isend(self.last, dest=r, tag=_LEAVING) for r in others]
        if not _poll(self.control.Ibarrier(), self.patience, lambda: None, patient=True):
            _abort_with(self.comm, f"dparray.distributed: this rank has exited, and the others "
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


def _check_same_operation(rows: list[list[int]], where: str) -> None:
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
    if kind == _ALL_REDUCE:
        shape = tuple(dims[:max(0, min(c, _MAX_DIMS))])
        more = "..." if c > _MAX_DIMS else ""
        return (f"all_reduce #{call} ({_lookup(_OPS, a)} of {_lookup(_DTYPES, b - 1)} values, "
                f"shape {shape}{more})")
    if kind == _REDUCE:
        dtypes = "+".join(name for i, name in enumerate(_DTYPES) if b >> i & 1) or "no"
        return (f"DistributedDataParallel.reduce #{call} ({c} gradients, {d} {dtypes} values "
                f"in {a} bucket(s))")
    if kind == _BARRIER:
        return f"barrier #{call}"
    if kind == _CONSTRUCT:
        return f"DistributedDataParallel() #{call}"
    return f"collective {number} of an unknown kind {kind}"


def _lookup(names: tuple[str, ...], index: int) -> str:
    return names[index] if 0 <= index < len(names) else f"unknown({index})"


def _dtype_code(name: str) -> int:
    return _DTYPES.index(name) + 1


def _crc(value: Any) -> int:
    return zlib.crc32(json.dumps(value).encode())


def _check_timeout(timeout: Any, where: str) -> float:
    return check_number(timeout, "timeout", where, above=0.0, finite=False)


# ------------------------------------------------------------------ DistributedDataParallel
class DistributedDataParallel(Wrapper):
    """``module`` trained by every rank of ``comm`` (MPI's world by default) in step.

    At construction every rank's parameter and buffer names, shapes and dtypes (and
    ``bucket_mb``) are compared (a mismatch is a ValueError naming the rank, raised on every
    rank) and rank 0's values are broadcast. ``reduce`` averages a ``Gradients`` across ranks.
    Names, state dicts and modes are the wrapped module's, as with DataParallel.

    Each collective waits at most ``timeout`` seconds for the other ranks (a RuntimeError
    naming the operation); a rank that raises or exits early ends the job with its reason.

    Examples:
        >>> import dparray as dp
        >>> model = DistributedDataParallel(dp.nn.Linear(3, 1))  # one process here
        >>> grads = model.reduce(model(dp.ones(4, 3)).sum().backward())
        >>> sorted(grads[model.module.weight].tolist()[0])
        [4.0, 4.0, 4.0]
    """

    def __init__(self, module: Module, comm: Any = None, bucket_mb: float = 25.0, *,
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        where = "DistributedDataParallel"
        bucket_mb = check_number(bucket_mb, "bucket_mb", where, above=0.0)
        timeout = _check_timeout(timeout, where)
        super().__init__(module)
        communicator = _world(comm, where)
        object.__setattr__(self, "comm", communicator)
        self.bucket_bytes = int(bucket_mb * 2**20)
        self.timeout = timeout
        channel = _channel(communicator, where, timeout)
        object.__setattr__(self, "_channel", channel)
        channel.begin(where, _CONSTRUCT, [], timeout)
        self._check_same_layout(bucket_mb)
        self._broadcast_from_rank_0()

    # -------------------------------------------------------------- the rank's view
    @property
    def rank(self) -> int:
        return int(self.comm.Get_rank())

    @property
    def world_size(self) -> int:
        return int(self.comm.Get_size())

    def extra_repr(self) -> str:
        return f"rank={self.rank}, world_size={self.world_size}"

    # -------------------------------------------------------------- gradients
    def reduce(self, grads: Gradients, *, bucketed: bool = True) -> Gradients:
        """The average over all ranks of ``grads``, for every trainable parameter, in
        parameter order. A parameter without a gradient on some rank counts as zero there.
        ``bucketed=False`` all-reduces one parameter at a time (for comparison)."""
        where = "DistributedDataParallel.reduce"
        if not isinstance(grads, Gradients):
            raise TypeError(f"{where}: grads must be the Gradients that backward() returns, "
                            f"got {describe(grads)}")
        check_bool(bucketed, "bucketed", where)
        params = [p for p in self.parameters() if p.is_variable]
        _check_gradients(params, grads, where)
        buckets = self._buckets(params, bucketed)
        layout = [[p.dtype.name, p.shape] for p in params]
        bounds = [len(bucket) for bucket in buckets]
        dtypes = 0
        for p in params:
            dtypes |= 1 << _DTYPES.index(p.dtype.name)
        self._channel.begin(where, _REDUCE, [len(buckets), dtypes, len(params),
                                             sum(p.elem_count() for p in params),
                                             _crc([layout, bounds])], self.timeout)
        size = self.world_size
        averaged: dict[Tensor, Tensor] = {}
        for bucket in buckets:
            for p, total in zip(bucket, self._all_reduce_bucket(bucket, grads), strict=True):
                averaged[p] = Tensor(total / size, p.backend)
        return Gradients(averaged)

    def backward(self, loss: Tensor) -> Gradients:
        """``loss.backward()``, averaged over all ranks: what the optimizer should take."""
        check_tensor(loss, "loss", "DistributedDataParallel.backward")
        return self.reduce(loss.backward())

    def _buckets(self, params: list[Tensor], bucketed: bool) -> list[list[Tensor]]:
        """Consecutive parameters of one dtype and backend, about ``bucket_bytes`` each."""
        buckets: list[list[Tensor]] = []
        size = 0
        for p in params:
            nbytes = p.elem_count() * _ITEMSIZE.get(p.dtype.name, 8)
            last = buckets[-1] if buckets else None
            if (bucketed and last is not None and size + nbytes <= self.bucket_bytes
                    and last[0].dtype == p.dtype and last[0].backend is p.backend):
                last.append(p)
                size += nbytes
            else:
                buckets.append([p])
                size = nbytes
        return buckets

    def _all_reduce_bucket(self, bucket: list[Tensor], grads: Gradients) -> list[Any]:
        """Sum this bucket's gradients over the ranks through one flat host buffer."""
        backend = bucket[0].backend
        xp = backend.xp
        pieces = []
        for p in bucket:
            g = grads.get(p)
            pieces.append(xp.reshape(g.data if g is not None else xp.zeros_like(p.data), (-1,)))
        flat = xp.concat(pieces) if len(pieces) > 1 else pieces[0]
        host = backend.to_numpy(flat)
        if len(pieces) == 1:  # a view of the gradient itself: MPI must not write into it
            host = host.copy()
        self._channel.all_reduce(host, "sum", "DistributedDataParallel.reduce", self.timeout)
        summed = backend.asarray(host)
        out, start = [], 0
        for p in bucket:
            count = p.elem_count()
            out.append(xp.reshape(summed[start:start + count], p.shape))
            start += count
        return out

    # -------------------------------------------------------------- construction
    def _state(self) -> list[tuple[str, Tensor]]:
        return [*self.named_parameters(), *self.named_buffers()]

    def _check_same_layout(self, bucket_mb: float) -> None:
        """Compare every rank's names, shapes and dtypes with rank 0's, through JSON bytes
        (nothing from another process is unpickled)."""
        where = "DistributedDataParallel"
        layout = {"state": [[name, list(t.shape), t.dtype.name] for name, t in self._state()],
                  "bucket_mb": bucket_mb}
        raw = self._channel.all_gather_bytes(json.dumps(layout).encode(), where, self.timeout)
        layouts = [_parse_layout(data, r) for r, data in enumerate(raw)]
        reference = layouts[0]
        for other_rank, other in enumerate(layouts[1:], start=1):
            if other["state"] != reference["state"]:
                difference = _first_difference(reference["state"], other["state"])
                raise ValueError(f"{where}: rank {other_rank}'s model differs from rank 0's: "
                                 f"{difference}")
            if other["bucket_mb"] != reference["bucket_mb"]:
                raise ValueError(f"{where}: bucket_mb is {other['bucket_mb']!r} on rank "
                                 f"{other_rank}, {reference['bucket_mb']!r} on rank 0")

    def _broadcast_from_rank_0(self) -> None:
        for _, t in self._state():
            host = t.backend.to_numpy(t.data).copy()
            self._channel.broadcast(host, "DistributedDataParallel", self.timeout)
            t.data = t.backend.asarray(host)


def _check_gradients(params: list[Tensor], grads: Gradients, where: str) -> None:
    """Every gradient belongs to a trainable parameter and has its shape and dtype."""
    mine = {id(p): p for p in params}
    strangers = [v.shape for v in grads if id(v) not in mine]
    if strangers:
        raise ValueError(f"{where}: gradients for {len(strangers)} tensor(s) that are not "
                         f"trainable parameters of this model (shapes {strangers})")
    for p in params:
        g = grads.get(p)
        if g is not None and (g.shape != p.shape or g.dtype != p.dtype):
            raise ValueError(f"{where}: a gradient is {g.shape} {g.dtype.name} for a parameter "
                             f"of {p.shape} {p.dtype.name}")


def _parse_layout(data: bytes, sender: int) -> dict[str, Any]:
    """Rank ``sender``'s layout from its JSON bytes; a ValueError if it is not one."""
    try:
        layout = json.loads(data.decode())
        state = [(str(name), tuple(int(n) for n in shape), str(dtype))
                 for name, shape, dtype in layout["state"]]
        return {"state": state, "bucket_mb": float(layout["bucket_mb"])}
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise ValueError(f"DistributedDataParallel: rank {sender} sent a malformed model "
                         f"layout ({error})") from None


def _first_difference(reference: list[tuple[Any, ...]], other: list[tuple[Any, ...]]) -> str:
    for mine, theirs in zip(reference, other, strict=False):
        if mine != theirs:
            return (f"{theirs[0]} is {theirs[1]} {theirs[2]} there, rank 0 has {mine[0]} "
                    f"{mine[1]} {mine[2]}")
    return f"{len(other)} tensors there, {len(reference)} on rank 0"
