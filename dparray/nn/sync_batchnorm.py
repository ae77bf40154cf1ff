"""SyncBatchNorm: batch normalisation whose statistics span all chunks of a DataParallel call.

Plain ``BatchNorm1d`` under DataParallel normalises each chunk with its own statistics (as in
PyTorch). ``SyncBatchNorm`` is a drop-in replacement whose chunks add up their per-channel sums,
sums of squares and counts through the worker pool -- a differentiable all-reduce, so the
backward pass exchanges gradients the same way -- and training under DataParallel then equals
training on the unsplit batch. Outside DataParallel it is ``BatchNorm1d``.

DataParallel runs a module holding SyncBatchNorm on threads always (its chunks must meet), and
refuses it in a nested DataParallel (whose chunks run one after another).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

from dparray import creation, ops
from dparray.autograd import Function, no_grad
from dparray.nn.module import Module
from dparray.nn.normalization import BatchNorm1d
from dparray.tensor import Tensor

_group: contextvars.ContextVar[tuple[Any, int] | None] = contextvars.ContextVar(
    "dparray_sync_group", default=None
)


@contextlib.contextmanager
def sync_group(group: Any, index: int) -> Iterator[None]:
    """Within the block, SyncBatchNorm layers meet the other chunks of ``group`` as chunk
    ``index`` (no-op when ``group`` is None)."""
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


class AllReduceSum(Function):
    """The sum of every chunk's ``x``, in chunk order; its gradient is summed the same way."""

    def __init__(self, group: Any, index: int) -> None:
        self.group, self.index = group, index

    def forward(self, x: Any) -> Any:
        return _ordered_sum(self.group.exchange(self.index, x))

    def backward(self, grad: Any) -> Any:
        try:
            return _ordered_sum(self.group.exchange(self.index, grad))
        except BaseException as error:
            self.group.abort(f"chunk {self.index} backward: {error}")
            raise


def _ordered_sum(values: list[Any]) -> Any:
    total = values[0]
    for value in values[1:]:
        total = total + value
    return total


class SyncBatchNorm(BatchNorm1d):
    """``BatchNorm1d`` with statistics shared by all chunks of a DataParallel call."""

    def forward(self, x: Tensor) -> Tensor:
        joined = _group.get()
        if joined is None or not self.is_training():
            return super().forward(x)
        group, index = joined
        if x.ndim not in (2, 3) or x.shape[1] != self.num_features:
            return super().forward(x)  # the same clear error as BatchNorm1d's
        axes = (0,) if x.ndim == 2 else (0, 2)
        view = (1, self.num_features) + ((1,) if x.ndim == 3 else ())
        count = x.elem_count() // self.num_features
        local = ops.stack([x.sum(axis=axes), (x * x).sum(axis=axes),
                           creation.full((self.num_features,), float(count), dtype=x.dtype,
                                         backend=x.backend)])
        total = AllReduceSum(group, index)(local)
        n = total[2]
        mean = total[0] / n
        variance = total[1] / n - mean * mean
        if index == 0 and self.running_mean is not None:
            self._update_running(mean, variance, n)
        out = (x - mean.reshape(view)) / (variance.reshape(view) + self.eps).sqrt()
        if self.weight is not None:
            out = out * self.weight.reshape(view)
        if self.bias is not None:
            out = out + self.bias.reshape(view)
        return out

    def _update_running(self, mean: Tensor, variance: Tensor, n: Tensor) -> None:
        assert self.running_mean is not None and self.running_var is not None
        assert self.num_batches_tracked is not None  # all three exist when tracking
        with no_grad():
            total = n[0].item()
            if total < 2:
                raise ValueError("SyncBatchNorm: training needs more than one value per channel")
            self.num_batches_tracked = self.num_batches_tracked + 1
            momentum = self.momentum if self.momentum is not None else (
                1.0 / self.num_batches_tracked.item())
            unbiased = variance * (total / (total - 1))
            self.running_mean.data = ((1 - momentum) * self.running_mean + momentum * mean).data
            self.running_var.data = ((1 - momentum) * self.running_var + momentum * unbiased).data

    @classmethod
    def convert_sync_batchnorm(cls, module: Module) -> Module:
        """``module`` with every ``BatchNorm1d`` inside replaced by a SyncBatchNorm holding the
        same parameter and buffer tensors (PyTorch's helper of the same name)."""
        if isinstance(module, BatchNorm1d) and not isinstance(module, SyncBatchNorm):
            converted = cls.__new__(cls)
            converted.__dict__.update(module.__dict__)
            return converted
        for name, child in list(module.named_children()):
            replacement = cls.convert_sync_batchnorm(child)
            if replacement is not child:
                setattr(module, name, replacement)
        return module
