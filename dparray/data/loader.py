"""DataLoader: a dataset read in batches -- shuffled, sharded, prepared ahead on a thread.

Each pass (``for batch in loader``) is one epoch: the sampler's order for that epoch, cut into
``batch_size`` lists of indices, each made into a batch by the dataset's ``batch`` (when no
``collate_fn`` is given and it has one) or by reading its samples and collating them. Every
random number the loader draws comes from streams of its own, fixed by its ``seed`` (taken
from the current random streams when not given, so ``dparray.manual_seed`` fixes it): the
shuffle of each epoch, and the draws a dataset makes while batch ``b`` of epoch ``e`` is
prepared (random augmentation), which come from a stream seeded by ``(seed, e, b)``. So
batches repeat under a seed, prefetching changes nothing, and the model's own random numbers
(dropout) are the same as without a loader.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Callable, Generator, Sequence
from typing import Any

from dparray import random as _random
from dparray._checks import check_bool, check_int, describe
from dparray.backend import Backend, get_backend, use_backend
from dparray.data._seeds import derive_seed, fresh_seed
from dparray.data.collate import default_collate
from dparray.data.prefetch import Inline, Prefetcher
from dparray.data.sampler import RandomSampler, SequentialSampler
from dparray.data.transfer import ahead
from dparray.random import check_seed

HOST_BACKEND = "numpy"
"""Where batches are prepared when the loader delivers them to another ``backend``."""


class BatchError(RuntimeError):
    """Reading or collating a batch failed; the original exception is the ``__cause__``.

    ``index`` is the index of the sample whose ``dataset[index]`` raised (None when the failure
    was in ``collate_fn`` or in the dataset's ``batch``), ``batch`` the batch's position in its
    epoch and ``epoch`` the epoch. Only ``Exception``s are wrapped: a KeyboardInterrupt or
    SystemExit reaches the caller as itself.
    """

    def __init__(self, message: str, *, index: int | None, batch: int, epoch: int) -> None:
        super().__init__(message)
        self.index, self.batch, self.epoch = index, batch, epoch


class DataLoader:
    """Batches of ``dataset``, axis 0 being the batch: PyTorch's ``DataLoader``, in one
    process.

    Arguments:
        dataset: anything with ``__len__`` and ``__getitem__`` (``dparray.data.Dataset``).
        batch_size: samples per batch; the last batch may be smaller unless ``drop_last``.
        shuffle: visit the samples in a new order each epoch, fixed by ``seed`` and the epoch.
        sampler: the order of the indices instead (say a ``DistributedSampler``); excludes
            ``shuffle``. Its ``set_epoch`` is called with the epoch before each pass.
        drop_last: leave out the last batch of an epoch when it is not full.
        collate_fn: makes a list of samples into a batch (default: ``default_collate``, or the
            dataset's ``batch(indices)`` when it has one, as ``TensorDataset`` does).
        prefetch: how many batches a background thread prepares ahead of their use (PyTorch's
            ``prefetch_factor``, for the one thread dparray uses); 0 makes each batch in the
            caller's thread when it is asked for.
        seed: the seed of the loader's random streams (shuffle, and the draws a dataset makes
            while a batch is prepared); ``None`` takes a new one from the current random
            streams when the loader is made.
        backend: deliver every batch on this backend. Batches are then prepared on the host
            (NumPy) and copied over one batch ahead of their use; on CuPy the copy runs
            from pinned memory on a stream of its own. ``None``: batches stay where the dataset
            makes them.

    Each ``iter(loader)`` is the next epoch (``epoch`` says which comes next; ``set_epoch``
    chooses it); ``len(loader)`` is the number of batches per epoch.

    Examples:
        >>> import dparray as dp
        >>> data = dp.data.TensorDataset(dp.arange(10.0), dp.arange(10))
        >>> loader = dp.data.DataLoader(data, batch_size=4, shuffle=True, seed=0)
        >>> len(loader), [len(x) for x, y in loader]
        (3, [4, 4, 2])
        >>> first = [y.tolist() for x, y in loader]  # epoch 1: another order
        >>> loader.set_epoch(1)
        >>> [y.tolist() for x, y in loader] == first
        True
    """

    def __init__(self, dataset: Any, batch_size: int = 1, shuffle: bool = False,
                 sampler: Any = None, drop_last: bool = False,
                 collate_fn: Callable[[list[Any]], Any] | None = None, prefetch: int = 2,
                 seed: int | None = None, backend: str | Backend | None = None) -> None:
        where = "DataLoader"
        if not (hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")):
            raise TypeError(f"{where}: dataset must have __len__ and __getitem__, got "
                            f"{describe(dataset)}")
        self.batch_size = check_int(batch_size, "batch_size", where, minimum=1)
        shuffle = check_bool(shuffle, "shuffle", where)
        self.drop_last = check_bool(drop_last, "drop_last", where)
        self.prefetch = check_int(prefetch, "prefetch", where, minimum=0)
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError(f"{where}: collate_fn must be callable, got {describe(collate_fn)}")
        if sampler is not None:
            if shuffle:
                raise ValueError(f"{where}: sampler and shuffle exclude each other (the "
                                 "sampler sets the order; give it the shuffling)")
            if not (hasattr(sampler, "__iter__") and hasattr(sampler, "__len__")):
                raise TypeError(f"{where}: sampler must have __iter__ and __len__, got "
                                f"{describe(sampler)}")
        seed = None if seed is None else check_seed(seed, where)
        self.backend = None if backend is None else get_backend(backend)
        self.dataset = dataset
        self.collate_fn = collate_fn
        self.seed = fresh_seed() if seed is None else seed
        if sampler is None:
            sampler = (RandomSampler(dataset, seed=self.seed) if shuffle
                       else SequentialSampler(dataset))
        self.sampler = sampler
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        """Make the next pass epoch ``epoch``: its shuffle, its shards and its batches' random
        streams are those of that epoch (to resume a run, or to match PyTorch's habit of
        calling ``set_epoch`` at the top of every epoch)."""
        self.epoch = check_int(epoch, "epoch", "DataLoader.set_epoch", minimum=0)

    def __len__(self) -> int:
        """The number of batches in one epoch."""
        samples = len(self.sampler)
        if self.drop_last:
            return samples // self.batch_size
        return -(-samples // self.batch_size)

    def __iter__(self) -> LoaderIterator:
        epoch = self.epoch
        set_epoch = getattr(self.sampler, "set_epoch", None)
        if set_epoch is not None:
            set_epoch(epoch)
        order = list(self.sampler)
        size = self.batch_size
        batches = [order[start:start + size] for start in range(0, len(order), size)]
        if self.drop_last and batches and len(batches[-1]) < size:
            batches.pop()
        self.epoch = epoch + 1
        produce = functools.partial(self._make_batch, epoch, batches)  # holds no iterator
        context = contextvars.copy_context()
        if self.prefetch > 0 and batches:
            made: Prefetcher | Inline = Prefetcher(produce, len(batches), self.prefetch, context)
        else:
            made = Inline(produce, len(batches), context)
        return LoaderIterator(made, self.backend)

    def __repr__(self) -> str:
        return (f"DataLoader({type(self.dataset).__name__} of {len(self.dataset)}, "
                f"batch_size={self.batch_size}, sampler={type(self.sampler).__name__}, "
                f"drop_last={self.drop_last}, prefetch={self.prefetch}, seed={self.seed})")

    def _make_batch(self, epoch: int, batches: Sequence[list[int]], number: int) -> Any:
        """Batch ``number`` of ``epoch``, with its own random stream (on the host when the
        loader delivers to another backend)."""
        indices = batches[number]
        host = use_backend(HOST_BACKEND) if self.backend is not None else contextlib.nullcontext()
        with _random.fork_rng(derive_seed(self.seed, "batch", epoch, number)), host:
            whole = getattr(self.dataset, "batch", None) if self.collate_fn is None else None
            if whole is not None:
                try:
                    return whole(indices)
                except Exception as error:
                    raise _failure(error, None, number, epoch, indices) from error
            samples = []
            for index in indices:
                try:
                    samples.append(self.dataset[index])
                except Exception as error:
                    raise _failure(error, index, number, epoch, indices) from error
            collate = default_collate if self.collate_fn is None else self.collate_fn
            try:
                return collate(samples)
            except Exception as error:
                raise _failure(error, None, number, epoch, indices) from error


def _failure(error: Exception, index: int | None, number: int, epoch: int,
             indices: list[int]) -> BatchError:
    """The BatchError for ``error``, naming the sample (or the batch, when ``index`` is None)."""
    if index is not None:
        what = f"sample {index} (batch {number} of epoch {epoch})"
    else:
        shown = indices if len(indices) <= 8 else [*indices[:8], "..."]
        what = f"batch {number} of epoch {epoch} (samples {shown})"
    return BatchError(f"DataLoader: {what} failed: {type(error).__name__}: {error}",
                      index=index, batch=number, epoch=epoch)


class LoaderIterator:
    """One epoch of a ``DataLoader``: an iterator of batches that can be closed early.

    Leaving a ``for`` loop (``break``, an exception, Ctrl-C) or dropping the iterator stops
    its prefetch thread; ``close()`` or ``with iter(loader) as batches:`` does so at once. None
    of them waits for the batch the thread is making: the thread finishes that batch, drops it
    and ends by itself (so a dataset that stalls never holds up Ctrl-C or a ``break``; its
    ``__getitem__`` may still run a moment after the loop is left).
    """

    def __init__(self, made: Prefetcher | Inline, target: Backend | None) -> None:
        self._made = made
        self._batches: Generator[Any, None, None] | None = None
        if target is not None:
            self._batches = ahead(made.next, target)

    def __iter__(self) -> LoaderIterator:
        return self

    def __next__(self) -> Any:
        if self._batches is not None:
            return next(self._batches)
        return self._made.next()

    def close(self) -> None:
        """Stop preparing batches, at once; the prefetch thread ends after the batch it is
        making, if any, which nobody receives."""
        if self._batches is not None:
            self._batches.close()
        self._made.close()

    def __enter__(self) -> LoaderIterator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
