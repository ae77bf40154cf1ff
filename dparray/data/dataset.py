"""Datasets: what a DataLoader reads samples from.

A dataset is anything with ``__len__`` and ``__getitem__(index)`` (the ``Dataset`` protocol;
subclassing it is optional). dparray has no ``IterableDataset``: every dataset is indexed, so
a loader can shuffle it, shard it across ranks and name the sample that failed. A stream with
no length (lines of a growing file, a generator) is read into memory or wrapped in a class that
indexes it first.

A dataset may also offer ``batch(indices)``: the whole batch at once, as the default collate
would build it from the samples. ``DataLoader`` uses it when no ``collate_fn`` is given;
``TensorDataset`` gathers a batch with one ``take`` per tensor that way, instead of one
indexing per sample and a ``stack``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from dparray._checks import check_int, check_number, check_tensor, describe
from dparray.creation import tensor as _tensor
from dparray.data._seeds import derive_seed, fresh_seed
from dparray.data.collate import default_collate
from dparray.data.sampler import permutation
from dparray.ops.indexing import take
from dparray.random import check_seed
from dparray.tensor import Tensor

T_co = TypeVar("T_co", covariant=True)


@runtime_checkable
class Dataset(Protocol[T_co]):
    """A sized collection of samples, read by index: PyTorch's map-style ``Dataset``.

    Any class with ``__len__`` and ``__getitem__`` is one; subclass this for the reader's sake
    (or to have a type checker verify the two methods).

    Examples:
        >>> import dparray as dp
        >>> class Squares(dp.data.Dataset):
        ...     def __len__(self):
        ...         return 4
        ...     def __getitem__(self, index):
        ...         return float(index), float(index * index)
        >>> x, y = next(iter(dp.data.DataLoader(Squares(), batch_size=4)))
        >>> y.tolist()
        [0.0, 1.0, 4.0, 9.0]
    """

    def __len__(self) -> int: ...

    def __getitem__(self, index: int) -> T_co: ...


class TensorDataset:
    """Samples that are rows (axis 0) of tensors of one length: sample ``i`` is
    ``tuple(t[i] for t in tensors)``.

    ``batch(indices)`` gathers a whole batch with one ``take`` per tensor, which
    ``DataLoader`` uses when no ``collate_fn`` is given.

    Examples:
        >>> import dparray as dp
        >>> data = dp.data.TensorDataset(dp.arange(6.0).reshape(3, 2), dp.tensor([0, 1, 0]))
        >>> len(data), data[1][0].tolist(), data[1][1].item()
        (3, [2.0, 3.0], 1)
        >>> x, y = data.batch([2, 0])
        >>> x.tolist(), y.tolist()
        ([[4.0, 5.0], [0.0, 1.0]], [0, 0])
    """

    def __init__(self, *tensors: Tensor) -> None:
        where = "TensorDataset"
        if not tensors:
            raise TypeError(f"{where}: needs at least one tensor")
        for position, t in enumerate(tensors):
            check_tensor(t, f"tensor {position}", where)
            if t.ndim == 0:
                raise ValueError(f"{where}: tensor {position} must have an axis 0 to index "
                                 "samples along, got a 0-d tensor")
        lengths = [t.shape[0] for t in tensors]
        if len(set(lengths)) > 1:
            raise ValueError(f"{where}: every tensor must have the same length along axis 0, "
                             f"got {lengths}")
        self.tensors = tuple(tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def __getitem__(self, index: int) -> tuple[Tensor, ...]:
        position = _position(index, len(self), "TensorDataset")
        return tuple(t[position] for t in self.tensors)

    def batch(self, indices: Sequence[int]) -> tuple[Tensor, ...]:
        """The samples at ``indices``, each tensor's rows gathered by one ``take``."""
        positions: dict[str, Tensor] = {}  # one index tensor per backend
        rows = []
        for t in self.tensors:
            index = positions.get(t.backend.name)
            if index is None:
                index = _tensor(list(indices), dtype="int64", backend=t.backend)
                positions[t.backend.name] = index
            rows.append(take(t, index))
        return tuple(rows)

    def __repr__(self) -> str:
        shapes = ", ".join(str(t.shape) for t in self.tensors)
        return f"TensorDataset({len(self)} samples; shapes {shapes})"


class Subset:
    """The samples of ``dataset`` at ``indices``, in that order: sample ``i`` is
    ``dataset[indices[i]]``. It keeps the dataset's ``batch`` fast path when it has one.

    Examples:
        >>> import dparray as dp
        >>> part = dp.data.Subset(dp.data.TensorDataset(dp.arange(5.0)), [4, 0])
        >>> len(part), part[0][0].item()
        (2, 4.0)
    """

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        where = "Subset"
        if not (hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")):
            raise TypeError(f"{where}: dataset must have __len__ and __getitem__, got "
                            f"{describe(dataset)}")
        if isinstance(indices, (str, bytes)) or not isinstance(indices, Sequence):
            raise TypeError(f"{where}: indices must be a sequence of ints, got "
                            f"{describe(indices)}")
        size = len(dataset)
        self.dataset = dataset
        self.indices = [_position(i, size, where) for i in indices]

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, index: int) -> Any:
        return self.dataset[self.indices[_position(index, len(self), "Subset")]]

    def batch(self, indices: Sequence[int]) -> Any:
        """The samples at ``indices``: the dataset's own ``batch`` if it has one, else the
        default collate of the samples."""
        chosen = [self.indices[i] for i in indices]
        gather = getattr(self.dataset, "batch", None)
        if gather is not None:
            return gather(chosen)
        return default_collate([self.dataset[i] for i in chosen])


def random_split(dataset: Any, lengths: Sequence[int | float],
                 seed: int | None = None) -> list[Subset]:
    """``dataset`` split at random into non-overlapping ``Subset``s: PyTorch's ``random_split``.

    ``lengths`` are the subsets' sizes (summing to ``len(dataset)``) or fractions summing to 1;
    fractions are floored and the samples left over go one each to the first subsets, as in
    PyTorch. The split is fixed by ``seed`` (``None``: a new seed from the current random
    streams, so ``dparray.manual_seed`` fixes it).

    Examples:
        >>> import dparray as dp
        >>> train, test = dp.data.random_split(range(10), [0.8, 0.2], seed=0)
        >>> len(train), len(test), sorted(train.indices + test.indices) == list(range(10))
        (8, 2, True)
    """
    where = "random_split"
    if not hasattr(dataset, "__len__"):
        raise TypeError(f"{where}: dataset must have a length, got {describe(dataset)}")
    if isinstance(lengths, (str, bytes)) or not isinstance(lengths, Sequence) or not lengths:
        raise TypeError(f"{where}: lengths must be a non-empty sequence of ints or fractions, "
                        f"got {describe(lengths)}")
    n = len(dataset)
    sizes = _split_sizes(lengths, n, where)
    seed = fresh_seed() if seed is None else check_seed(seed, where)
    order = permutation(n, derive_seed(seed, "random_split"), 0)
    subsets, start = [], 0
    for size in sizes:
        subsets.append(Subset(dataset, order[start:start + size]))
        start += size
    return subsets


def _split_sizes(lengths: Sequence[int | float], n: int, where: str) -> list[int]:
    if all(isinstance(length, int) and not isinstance(length, bool) for length in lengths):
        sizes = [check_int(length, "each length", where, minimum=0) for length in lengths]
        if sum(sizes) != n:
            raise ValueError(f"{where}: lengths {sizes} must add up to the dataset's length "
                             f"{n}")
        return sizes
    fractions = [check_number(f, "each fraction", where, minimum=0.0, maximum=1.0)
                 for f in lengths]
    if not math.isclose(sum(fractions), 1.0, abs_tol=1e-9):
        raise ValueError(f"{where}: fractions {list(lengths)} must add up to 1, got "
                         f"{sum(fractions)}")
    sizes = [math.floor(n * f) for f in fractions]
    for i in range(n - sum(sizes)):
        sizes[i % len(sizes)] += 1
    return sizes


def _position(index: Any, size: int, where: str) -> int:
    """``index`` as a position in ``range(size)`` (negative ones count from the end); an
    IndexError outside it, so iterating a dataset with ``for`` stops at its end."""
    index = check_int(index, "index", where)
    if not -size <= index < size:
        raise IndexError(f"{where}: index {index} is out of range for {size} samples")
    return index + size if index < 0 else index
