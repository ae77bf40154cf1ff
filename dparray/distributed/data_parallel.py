"""DistributedDataParallel: a module trained by every rank of an MPI job in step.

Every rank starts from rank 0's parameters (broadcast at construction, after every rank's
parameter names, shapes and dtypes were compared), and ``reduce`` averages the gradients
across ranks before each optimizer step, so all ranks take the same steps -- the steps one
process would take on the union of their batches. The all-reduce goes through flat host
buffers, one per bucket of about ``bucket_mb`` megabytes of gradients, in parameter order, so
its sums are the same on every rank and every run.
"""

from __future__ import annotations

import json
from typing import Any

from dparray._checks import check_bool, check_number, check_tensor, describe
from dparray.distributed.channel import CONSTRUCT, DTYPES, REDUCE, channel_for, crc
from dparray.distributed.collectives import DEFAULT_TIMEOUT, check_timeout, checked_world
from dparray.gradients import Gradients
from dparray.nn.module import Module
from dparray.nn.wrapper import Wrapper
from dparray.tensor import Tensor

_ITEMSIZE = {"float16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1, "int16": 2,
             "int32": 4, "int64": 8, "bool": 1}


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
        timeout = check_timeout(timeout, where)
        super().__init__(module)
        communicator = checked_world(comm, where)
        object.__setattr__(self, "comm", communicator)
        self.bucket_bytes = int(bucket_mb * 2**20)
        self.timeout = timeout
        channel = channel_for(communicator, where, timeout)
        object.__setattr__(self, "_channel", channel)
        channel.begin(where, CONSTRUCT, [], timeout)
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
            dtypes |= 1 << DTYPES.index(p.dtype.name)
        self._channel.begin(where, REDUCE, [len(buckets), dtypes, len(params),
                                             sum(p.elem_count() for p in params),
                                             crc([layout, bounds])], self.timeout)
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
