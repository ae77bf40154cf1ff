"""Training on several processes or machines: DistributedDataParallel over MPI (mpi4py).

Run one process per machine (or per core group) under ``mpiexec``; each trains on its own
shard of the data. ``DistributedDataParallel`` makes every rank start from rank 0's
parameters and averages the gradients across ranks before each optimizer step, so all ranks
take the same steps -- the same steps one process would take on the union of their batches.
It composes with ``dparray.DataParallel`` inside each rank.

The all-reduce goes through flat host buffers, one per bucket of about ``bucket_mb`` megabytes
of gradients, in parameter order, so its sums are the same on every rank and every run.
Needs the ``mpi`` extra: ``pip install "dparray[mpi]"`` (mpi4py and the ``mpich`` wheel, whose
``mpiexec`` lands next to ``python``).
"""

from __future__ import annotations

import contextlib
import random
import sys
import traceback
from collections.abc import Iterator
from typing import Any

from dparray.creation import tensor as _to_tensor
from dparray.gradients import Gradients
from dparray.nn.module import Module
from dparray.nn.wrapper import Wrapper
from dparray.tensor import Tensor

_OPS = ("sum", "mean", "max", "min")
_ITEMSIZE = {"float16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1, "int16": 2,
             "int32": 4, "int64": 8, "bool": 1}


def world(comm: Any = None) -> Any:
    """The communicator to use: ``comm``, or MPI's world."""
    if comm is not None:
        return comm
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise ImportError(
            "dparray.distributed needs mpi4py: pip install 'dparray[mpi]'") from error
    return MPI.COMM_WORLD


def rank(comm: Any = None) -> int:
    """This process's rank (0 .. world_size - 1)."""
    return world(comm).Get_rank()


def world_size(comm: Any = None) -> int:
    """How many processes take part."""
    return world(comm).Get_size()


def barrier(comm: Any = None) -> None:
    """Wait until every rank gets here."""
    world(comm).Barrier()


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
    if isinstance(n_items, bool) or not isinstance(n_items, int) or n_items < 1:
        raise ValueError(f"shard: n_items must be a positive int, got {n_items!r}")
    communicator = world(comm)
    me, size = communicator.Get_rank(), communicator.Get_size()
    order = list(range(n_items))
    random.Random(f"dparray.shard:{seed}:{epoch}").shuffle(order)
    if pad and n_items % size:
        extra = size - n_items % size
        order += (order * (extra // n_items + 1))[:extra]
    return _to_tensor(order[me::size], dtype="int64")


def all_reduce(value: Tensor, op: str = "sum", comm: Any = None) -> Tensor:
    """``value`` combined over all ranks with ``op`` (sum, mean, max or min): for metrics.

    The result is a constant on ``value``'s backend; every rank gets the same one.
    """
    if op not in _OPS:
        raise ValueError(f"all_reduce: op must be one of {_OPS}, got {op!r}")
    if not isinstance(value, Tensor):
        raise TypeError(f"all_reduce takes a Tensor, got {type(value).__name__}")
    communicator = world(comm)
    from mpi4py import MPI

    mpi_op = {"sum": MPI.SUM, "mean": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}[op]
    host = value.backend.to_numpy(value.data).copy()
    communicator.Allreduce(MPI.IN_PLACE, host, op=mpi_op)
    out = Tensor(value.backend.asarray(host), value.backend)
    return out / communicator.Get_size() if op == "mean" else out


@contextlib.contextmanager
def abort_on_error(comm: Any = None) -> Iterator[None]:
    """Within the block, an exception on any rank prints its traceback (marked with the rank)
    and aborts the whole job, instead of leaving the other ranks waiting in a collective.

    Examples:
        >>> with abort_on_error():
        ...     pass
    """
    communicator = world(comm)
    try:
        yield
    except BaseException as error:
        if isinstance(error, SystemExit) and not error.code:
            raise
        lines = traceback.format_exception(type(error), error, error.__traceback__)
        marked = "".join(f"[rank {communicator.Get_rank()}] {line}"
                         for line in "".join(lines).splitlines(keepends=True))
        sys.stderr.write(marked)
        sys.stderr.flush()
        communicator.Abort(1)
        raise  # Abort does not return where MPI is real; a stand-in communicator may


class DistributedDataParallel(Wrapper):
    """``module`` trained by every rank of ``comm`` (MPI's world by default) in step.

    At construction every rank's parameter and buffer names, shapes and dtypes are compared
    (a mismatch is a ValueError naming the rank, raised on every rank) and rank 0's values are
    broadcast. ``reduce`` averages a ``Gradients`` across ranks. Names, state dicts and
    modes are the wrapped module's, as with DataParallel.

    Examples:
        >>> import dparray as dp
        >>> model = DistributedDataParallel(dp.nn.Linear(3, 1))  # one process here
        >>> grads = model.reduce(model(dp.ones(4, 3)).sum().backward())
        >>> sorted(grads[model.module.weight].tolist()[0])
        [4.0, 4.0, 4.0]
    """

    def __init__(self, module: Module, comm: Any = None, bucket_mb: float = 25.0) -> None:
        if not bucket_mb > 0:
            raise ValueError(f"DistributedDataParallel: bucket_mb must be positive, got "
                             f"{bucket_mb!r}")
        super().__init__(module)
        object.__setattr__(self, "comm", world(comm))
        self.bucket_bytes = int(bucket_mb * 2**20)
        self._check_same_layout()
        self._broadcast_from_rank_0()

    # -------------------------------------------------------------- the rank's view
    @property
    def rank(self) -> int:
        return self.comm.Get_rank()

    @property
    def world_size(self) -> int:
        return self.comm.Get_size()

    def extra_repr(self) -> str:
        return f"rank={self.rank}, world_size={self.world_size}"

    # -------------------------------------------------------------- gradients
    def reduce(self, grads: Gradients, *, bucketed: bool = True) -> Gradients:
        """The average over all ranks of ``grads``, for every trainable parameter, in
        parameter order. A parameter without a gradient on some rank counts as zero there.
        ``bucketed=False`` all-reduces one parameter at a time (for comparison)."""
        if not isinstance(grads, Gradients):
            raise TypeError(f"reduce needs the Gradients that backward() returns, got "
                            f"{type(grads).__name__}")
        params = [p for p in self.parameters() if p.is_variable]
        mine = {id(p) for p in params}
        strangers = [v.shape for v in grads if id(v) not in mine]
        if strangers:
            raise ValueError(f"reduce: gradients for {len(strangers)} tensor(s) that are not "
                             f"trainable parameters of this model (shapes {strangers})")
        size = self.world_size
        averaged: dict[Tensor, Tensor] = {}
        for bucket in self._buckets(params, bucketed):
            for p, total in zip(bucket, self._all_reduce_bucket(bucket, grads), strict=True):
                averaged[p] = Tensor(total / size, p.backend)
        return Gradients(averaged)

    def backward(self, loss: Tensor) -> Gradients:
        """``loss.backward()``, averaged over all ranks: what the optimizer should take."""
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
        from mpi4py import MPI

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
        self.comm.Allreduce(MPI.IN_PLACE, host, op=MPI.SUM)
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

    def _check_same_layout(self) -> None:
        layout = [(name, t.shape, t.dtype.name) for name, t in self._state()]
        layouts = self.comm.allgather(layout)
        reference = layouts[0]
        for other_rank, other in enumerate(layouts[1:], start=1):
            if other != reference:
                difference = _first_difference(reference, other)
                raise ValueError(
                    f"DistributedDataParallel: rank {other_rank}'s model differs from rank 0's: "
                    f"{difference}"
                )

    def _broadcast_from_rank_0(self) -> None:
        for _, t in self._state():
            host = t.backend.to_numpy(t.data).copy()
            self.comm.Bcast(host, root=0)
            t.data = t.backend.asarray(host)


def _first_difference(reference: list[tuple[Any, ...]], other: list[tuple[Any, ...]]) -> str:
    for mine, theirs in zip(reference, other, strict=False):
        if mine != theirs:
            return (f"{theirs[0]} is {theirs[1]} {theirs[2]} there, rank 0 has {mine[0]} "
                    f"{mine[1]} {mine[2]}")
    return f"{len(other)} tensors there, {len(reference)} on rank 0"

