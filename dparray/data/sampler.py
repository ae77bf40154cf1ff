"""Samplers: the order in which a DataLoader visits a dataset's indices, epoch by epoch.

A sampler is anything with ``__len__`` and ``__iter__`` (yielding ints); one that also has
``set_epoch(epoch)`` is told the epoch before each pass. The samplers here are pure functions
of their seed and the epoch: the same ``(seed, epoch)`` gives the same order in every process,
and ``DataLoader`` moves to the next epoch on each pass (``set_epoch`` chooses it, as with
PyTorch's ``DistributedSampler``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sized
from typing import Any, Protocol, runtime_checkable

from dparray._checks import check_bool, check_int, describe
from dparray.creation import randperm
from dparray.data._seeds import derive_seed, fresh_seed
from dparray.random import check_seed


@runtime_checkable
class Sampler(Protocol):
    """What ``DataLoader(sampler=...)`` takes: ``len()`` indices, yielded by ``iter()``.

    An optional ``set_epoch(epoch)`` is called by the loader before each pass.
    """

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[int]: ...


def permutation(n: int, seed: int, epoch: int) -> list[int]:
    """A shuffle of ``range(n)`` fixed by ``(seed, epoch)``, drawn from a dparray random stream
    of its own (on the host), so it moves no other stream.

    Examples:
        >>> permutation(5, seed=0, epoch=0) == permutation(5, seed=0, epoch=0)
        True
        >>> sorted(permutation(5, seed=0, epoch=1))
        [0, 1, 2, 3, 4]
    """
    order: list[int] = randperm(n, seed=derive_seed(seed, "shuffle", epoch),
                                backend="numpy").tolist()
    return order


class SequentialSampler:
    """The indices ``0, 1, ..., len(data_source) - 1``, in order, every epoch."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = _sized(data_source, "SequentialSampler")

    def __len__(self) -> int:
        return len(self.data_source)

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))


class RandomSampler:
    """Every index of ``data_source`` once per epoch, in an order fixed by ``(seed, epoch)``.

    ``seed=None`` takes a new seed from the current random streams (so ``dparray.manual_seed``
    fixes it). Iterating twice without ``set_epoch`` repeats the order; ``DataLoader`` moves to
    the next epoch on each pass.

    Examples:
        >>> sampler = RandomSampler(range(6), seed=1)
        >>> first = list(sampler)
        >>> sorted(first), list(sampler) == first
        ([0, 1, 2, 3, 4, 5], True)
        >>> sampler.set_epoch(1)
        >>> list(sampler) != first
        True
    """

    def __init__(self, data_source: Sized, seed: int | None = None) -> None:
        self.data_source = _sized(data_source, "RandomSampler")
        self.seed = fresh_seed() if seed is None else check_seed(seed, "RandomSampler")
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        """Make the next pass epoch ``epoch`` (its order is fixed by the seed and ``epoch``)."""
        self.epoch = check_int(epoch, "epoch", "RandomSampler.set_epoch", minimum=0)

    def __len__(self) -> int:
        return len(self.data_source)

    def __iter__(self) -> Iterator[int]:
        return iter(permutation(len(self.data_source), self.seed, self.epoch))


class DistributedSampler:
    """This rank's share of every epoch, for ``DistributedDataParallel``: PyTorch's sampler.

    All ranks compute one order of the dataset from ``(seed, epoch)`` (shuffled unless
    ``shuffle=False``) and rank ``r`` takes every ``num_replicas``-th index from ``r`` on. By
    default the shares are disjoint and together cover every sample exactly once per epoch;
    their lengths then differ by at most one. ``pad=True`` is PyTorch's default rule instead:
    the order is extended by its own first indices until it divides evenly, so every rank gets
    ``ceil(n / num_replicas)`` indices and a few samples are seen twice. ``drop_last=True``
    drops the last ``n % num_replicas`` indices of the order, so every rank gets
    ``n // num_replicas``. Ranks that must take the same number of steps (every all-reduce of
    ``DistributedDataParallel`` waits for all of them) need equal shares: use ``pad`` or
    ``drop_last`` unless ``num_replicas`` divides the dataset (and the loader's batches).

    ``num_replicas`` and ``rank`` default to ``dparray.distributed.world_size()`` and
    ``rank()``; MPI is imported only when one of them is left out. ``seed`` must be the same on
    every rank (PyTorch's default 0). Like PyTorch's, the order changes with ``set_epoch``;
    ``DataLoader`` calls it before each pass with the loader's epoch.

    Examples:
        >>> shards = [list(DistributedSampler(range(10), num_replicas=3, rank=r))
        ...           for r in range(3)]
        >>> [len(s) for s in shards], sorted(sum(shards, []))
        ([4, 3, 3], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    """

    def __init__(self, dataset: Sized, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False, *,
                 pad: bool = False) -> None:
        where = "DistributedSampler"
        self.dataset = _sized(dataset, where)
        self.shuffle = check_bool(shuffle, "shuffle", where)
        self.seed = check_seed(seed, where)
        self.drop_last = check_bool(drop_last, "drop_last", where)
        self.pad = check_bool(pad, "pad", where)
        if self.pad and self.drop_last:
            raise ValueError(f"{where}: pad and drop_last exclude each other (pad repeats "
                             "samples to even the shares, drop_last leaves some out)")
        if num_replicas is not None:
            num_replicas = check_int(num_replicas, "num_replicas", where, minimum=1)
        if rank is not None:
            rank = check_int(rank, "rank", where, minimum=0)
        if num_replicas is None or rank is None:
            from dparray import distributed

            num_replicas = distributed.world_size() if num_replicas is None else num_replicas
            rank = distributed.rank() if rank is None else rank
        if rank >= num_replicas:
            raise ValueError(f"{where}: rank must be less than num_replicas ({num_replicas}), "
                             f"got {rank}")
        self.num_replicas, self.rank = num_replicas, rank
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        """Make the next pass epoch ``epoch``; call it with the same value on every rank."""
        self.epoch = check_int(epoch, "epoch", "DistributedSampler.set_epoch", minimum=0)

    def __len__(self) -> int:
        n, replicas = len(self.dataset), self.num_replicas
        if self.drop_last:
            return n // replicas
        if self.pad:
            return -(-n // replicas)
        return len(range(self.rank, n, replicas))

    def __iter__(self) -> Iterator[int]:
        n, replicas = len(self.dataset), self.num_replicas
        order = permutation(n, self.seed, self.epoch) if self.shuffle else list(range(n))
        if self.drop_last:
            order = order[:n - n % replicas]
        elif self.pad and n % replicas and n:
            missing = replicas - n % replicas
            order += (order * (missing // n + 1))[:missing]
        return iter(order[self.rank::replicas])


def _sized(value: Any, where: str) -> Sized:
    if not hasattr(value, "__len__"):
        raise TypeError(f"{where}: the dataset must have a length (len()), got {describe(value)}")
    return value
