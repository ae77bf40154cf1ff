"""SyncBatchNorm: batch normalisation whose statistics span all chunks of a DataParallel call.

Plain batch norm under DataParallel normalises each chunk with its own statistics (as in
PyTorch). ``SyncBatchNorm`` is a drop-in replacement for ``BatchNorm1d``/``BatchNorm2d`` whose
chunks combine their per-channel counts, means and squared deviations through a rendezvous of
the call's chunks (``dparray.nn.chunks``; Chan's parallel formula, in chunk order, so every
chunk gets the same bitwise result); its backward combines the two per-channel sums of the
closed-form gradient the same way. Training under DataParallel then equals training on the
unsplit batch. Outside DataParallel it is plain batch norm. It is the same graph node as batch
norm (``dparray.ops.normalization``): only where the statistics come from differs.

DataParallel runs a module holding SyncBatchNorm on threads always (its chunks must meet), and
refuses it in a nested DataParallel (whose chunks run one after another).
"""

from __future__ import annotations

from typing import Any

from dparray.nn.chunks import Rendezvous, joined_group
from dparray.nn.module import Module
from dparray.nn.normalization import BatchNorm1d, BatchNorm2d, _BatchNorm
from dparray.ops.normalization import LOCAL, Statistics


class SyncStatistics(Statistics):
    """Statistics over every chunk of a DataParallel call, exchanged through ``group``."""

    def __init__(self, group: Rendezvous, index: int) -> None:
        self.group, self.index = group, index

    def moments(self, xp: Any, x: Any, axes: tuple[int, ...]) -> tuple[Any, Any, int]:
        mean, var, count = LOCAL.moments(xp, x, axes)
        parts = self.group.exchange(self.index, (count, mean, var * count))
        total = sum(n for n, _, _ in parts)
        if total == 0:
            return mean, var, 0
        combined = sum_in_order([m * (n / total) for n, m, _ in parts if n])
        squares = sum_in_order([s + n * (m - combined) * (m - combined)
                                for n, m, s in parts if n])
        return combined, squares / total, total

    def sums(self, xp: Any, values: list[Any], axes: tuple[int, ...]) -> list[Any]:
        local = LOCAL.sums(xp, values, axes)
        parts = self.group.exchange(self.index, local)
        return [sum_in_order([part[i] for part in parts]) for i in range(len(values))]


def sum_in_order(values: list[Any]) -> Any:
    """``values[0] + values[1] + ...`` left to right: the same bits on every chunk."""
    total = values[0]
    for value in values[1:]:
        total = total + value
    return total


class SyncBatchNorm(_BatchNorm):
    """Batch norm of ``(N, C, ...)`` input with statistics shared by all chunks of a
    DataParallel call (PyTorch's ``SyncBatchNorm``, for DataParallel's threads)."""

    dims = (2, 3, 4, 5)
    shapes = "(N, C, ...)"

    def synchronizes_chunks(self) -> bool:
        return self.uses_batch_statistics()

    def statistics(self) -> Statistics:
        joined = joined_group()
        if joined is None:
            return LOCAL
        return SyncStatistics(*joined)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module) -> Module:
        """``module`` with every ``BatchNorm1d``/``BatchNorm2d`` inside replaced by a
        SyncBatchNorm holding the same parameter and buffer tensors (PyTorch's helper)."""
        if isinstance(module, (BatchNorm1d, BatchNorm2d)):
            converted = cls.__new__(cls)
            converted.__dict__.update(module.__dict__)
            return converted
        for name, child in list(module.named_children()):
            replacement = cls.convert_sync_batchnorm(child)
            if replacement is not child:
                setattr(module, name, replacement)
        return module
