"""The ranks of an MPI job and dparray's public collectives on them (mpi4py).

``world`` picks the communicator (MPI's world by default) and, from its first use with
several ranks, makes an uncaught exception on any rank end the whole job
(``dparray.distributed.failure``); ``rank``, ``world_size`` and ``shard`` say what this
process is and which items it trains on; ``barrier`` and ``all_reduce`` are collectives,
checked and bounded in time by ``dparray.distributed.channel``; ``abort_on_error`` makes a
block fail as a whole.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
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
from dparray.distributed.channel import (
    ALL_REDUCE,
    BARRIER,
    MAX_DIMS,
    OPS,
    channel_for,
    crc,
    dtype_code,
    mpi,
)
from dparray.distributed.failure import abort, abort_on_uncaught_exceptions
from dparray.tensor import Tensor

DEFAULT_TIMEOUT = 300.0
"""Seconds a rank waits for the others in one collective (and at exit) before giving up."""


# ------------------------------------------------------------------ communicator and rank
def world(comm: Any = None) -> Any:
    """The communicator to use: ``comm``, or MPI's world.

    From the first use of a communicator of several ranks on, an uncaught exception in this
    process prints its traceback marked with the rank and aborts the whole job.
    """
    return checked_world(comm, "dparray.distributed")


def checked_world(comm: Any, where: str) -> Any:
    """``world(comm)``, with errors naming ``where``: the communicator every public function
    and ``DistributedDataParallel`` use."""
    if comm is None:
        comm = mpi().COMM_WORLD
    elif not (hasattr(comm, "Get_rank") and hasattr(comm, "Get_size")):
        raise TypeError(f"{where}: comm must be an MPI communicator (mpi4py.MPI.Comm), got "
                        f"{describe(comm)}")
    abort_on_uncaught_exceptions(comm)
    return comm


def rank(comm: Any = None) -> int:
    """This process's rank (0 .. world_size - 1)."""
    return int(checked_world(comm, "rank").Get_rank())


def world_size(comm: Any = None) -> int:
    """How many processes take part."""
    return int(checked_world(comm, "world_size").Get_size())


def barrier(comm: Any = None, *, timeout: float = DEFAULT_TIMEOUT) -> None:
    """Wait until every rank gets here (at most ``timeout`` seconds: then a RuntimeError)."""
    timeout = check_timeout(timeout, "barrier")
    communicator = checked_world(comm, "barrier")
    channel_for(communicator, "barrier", timeout).begin("barrier", BARRIER, [], timeout)


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
    communicator = checked_world(comm, "shard")
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
    check_choice(op, "op", where, OPS)
    timeout = check_timeout(timeout, where)
    dtype = value.dtype
    if dtype.kind == "bool":
        raise TypeError(f"{where}: value must hold numbers, got a bool tensor")
    communicator = checked_world(comm, where)
    channel = channel_for(communicator, where, timeout)
    shape = value.shape
    channel.begin(where, ALL_REDUCE, [OPS.index(op), dtype_code(dtype.name), len(shape),
                                       value.elem_count(), crc(shape), *shape[:MAX_DIMS]],
                  timeout)
    host = value.backend.to_numpy(value.data).copy()
    channel.all_reduce(host, "sum" if op == "mean" else op, where, timeout)
    out = Tensor(value.backend.asarray(host), value.backend)
    return out / communicator.Get_size() if op == "mean" else out


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
    communicator = checked_world(comm, "abort_on_error")
    try:
        yield
    except BaseException as error:
        if isinstance(error, SystemExit) and not error.code:
            raise
        abort(communicator, error)
        raise  # only a stand-in communicator returns from abort


def check_timeout(timeout: Any, where: str) -> float:
    """A collective's ``timeout``: seconds, above zero (``inf`` waits for ever)."""
    return check_number(timeout, "timeout", where, above=0.0, finite=False)
