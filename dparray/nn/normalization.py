"""Normalisation layers: LayerNorm, BatchNorm1d/2d/3d, GroupNorm, InstanceNorm1d/2d/3d and RMSNorm,
with PyTorch's arguments, parameters, buffers and names. Each call is one graph node
(``dparray.ops.normalization``).

Only batch norm in training couples the rows of a batch (its statistics span them). Group,
instance and RMS norm normalise each sample by itself, so DataParallel may split them freely --
except instance norm in training with ``track_running_stats=True``, whose running statistics
depend on the split (see ``_InstanceNorm``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dparray import creation
from dparray._checks import check_bool, check_int, check_number, check_tensor
from dparray.nn import functional as F
from dparray.nn import init
from dparray.nn.chunks import chunk_index
from dparray.nn.module import Module
from dparray.nn.unbatched import refuse_in_chunk
from dparray.ops.normalization import LOCAL, Statistics, normalized_shape_of
from dparray.tensor import Tensor


class LayerNorm(Module):
    """Normalises the last ``len(normalized_shape)`` axes of each sample, then applies an
    elementwise affine map (weight ones, bias zeros at start).

    Examples:
        >>> import dparray as dp
        >>> norm = dp.nn.LayerNorm(4)
        >>> y = norm(dp.tensor([[1.0, 2.0, 3.0, 4.0]]))
        >>> round(y.mean().item(), 6), round(y.var(correction=0).item(), 3)
        (0.0, 1.0)
    """

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, dtype: Any = None) -> None:
        super().__init__()
        where = "LayerNorm"
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(
            normalized_shape)
        self.normalized_shape = tuple(check_int(n, "normalized_shape", where, minimum=1)
                                      for n in shape)
        self.eps = check_number(eps, "eps", where, above=0.0)
        check_bool(elementwise_affine, "elementwise_affine", where)
        check_bool(bias, "bias", where)
        shape = self.normalized_shape
        self.weight = init.constant(shape, 1.0, dtype) if elementwise_affine else None
        self.bias = init.constant(shape, 0.0, dtype) if elementwise_affine and bias else None

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.weight is not None}, bias={self.bias is not None}")


class _NormBase(Module):
    """What batch and instance norm share: ``num_features`` channels, optional affine
    parameters (``weight`` ones, ``bias`` zeros at start) and, with ``track_running_stats``,
    PyTorch's buffers ``running_mean``, ``running_var`` and ``num_batches_tracked``."""

    running_mean: Tensor | None
    running_var: Tensor | None
    num_batches_tracked: Tensor | None

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        where = type(self).__name__
        self.num_features = check_int(num_features, "num_features", where, minimum=1)
        self.eps = check_number(eps, "eps", where, above=0.0)
        self.momentum = None if momentum is None else check_number(
            momentum, "momentum", where, minimum=0.0, maximum=1.0)
        check_bool(affine, "affine", where)
        check_bool(track_running_stats, "track_running_stats", where)
        check_bool(bias, "bias", where)
        self.weight = init.constant((num_features,), 1.0, dtype) if affine else None
        self.bias = init.constant((num_features,), 0.0, dtype) if affine and bias else None
        if track_running_stats:
            self.register_buffer("running_mean", creation.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", creation.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", creation.tensor(0))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def updates_running_statistics(self) -> bool:
        """Under DataParallel only chunk 0 moves the running statistics (PyTorch's
        DataParallel likewise keeps replica 0's buffers), so they never race."""
        return chunk_index() in (None, 0)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.weight is not None}, bias={self.bias is not None}, "
                f"track_running_stats={self.running_mean is not None}")


class _BatchNorm(_NormBase):
    """Normalises each channel (axis 1) of its input: with the batch's statistics in training
    (moving the running ones towards them by ``momentum``; ``None`` is a cumulative average),
    with the running ones in evaluation. Buffers ``running_mean``, ``running_var`` and
    ``num_batches_tracked`` are PyTorch's, so state dicts carry over.

    Under DataParallel each chunk is normalised with its own statistics, as in PyTorch; use
    ``SyncBatchNorm`` for statistics over the whole batch.
    """

    dims: tuple[int, ...] = ()  # the input ranks the layer accepts
    shapes = ""  # the same, for error messages

    def couples_rows(self) -> bool:
        return self.uses_batch_statistics()

    def uses_batch_statistics(self) -> bool:
        """True in training, and always without running statistics (as in PyTorch)."""
        return self.is_training() or self.running_mean is None

    def statistics(self) -> Statistics:
        """Where the batch statistics come from: this chunk's elements."""
        return LOCAL

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim not in self.dims or x.shape[1] != self.num_features:
            shapes = self.shapes.replace("C", str(self.num_features))
            raise ValueError(f"{type(self).__name__}({self.num_features}): expected {shapes} "
                             f"input, got shape {x.shape}")
        momentum = self.momentum
        updating = self.is_training() and self.updates_running_statistics()
        if updating and self.num_batches_tracked is not None:
            self.num_batches_tracked = self.num_batches_tracked + 1
            if momentum is None:
                momentum = 1.0 / self.num_batches_tracked.item()
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            training=self.uses_batch_statistics(),
                            momentum=momentum if updating and momentum is not None else 0.0,
                            eps=self.eps, _statistics=self.statistics())


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of ``(N, C)`` or ``(N, C, L)`` input (see ``_BatchNorm``)."""

    dims = (2, 3)
    shapes = "(N, C) or (N, C, L)"


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of ``(N, C, H, W)`` input (see ``_BatchNorm``).

    Examples:
        >>> import dparray as dp
        >>> norm = dp.nn.BatchNorm2d(3)
        >>> norm(dp.randn(4, 3, 5, 5)).shape
        (4, 3, 5, 5)
    """

    dims = (4,)
    shapes = "(N, C, H, W)"


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of ``(N, C, D, H, W)`` input: each channel over the batch and the
    volume (see ``_BatchNorm``).

    Examples:
        >>> import dparray as dp
        >>> norm = dp.nn.BatchNorm3d(2)
        >>> norm(dp.randn(3, 2, 4, 4, 4)).shape
        (3, 2, 4, 4, 4)
    """

    dims = (5,)
    shapes = "(N, C, D, H, W)"


class GroupNorm(Module):
    """Normalises each sample's ``num_channels`` channels (axis 1 of ``(N, C, ...)`` input) in
    ``num_groups`` groups of consecutive channels, each group by its own mean and variance,
    then applies a per-channel affine map (``weight`` ones, ``bias`` zeros at start). Each
    sample is normalised by itself, in training and evaluation alike: no running statistics.

    Examples:
        >>> import dparray as dp
        >>> norm = dp.nn.GroupNorm(2, 4)
        >>> y = norm(dp.tensor([[1.0, 3.0, 10.0, 50.0]]))
        >>> [round(v, 3) for v in y.tolist()[0]]
        [-1.0, 1.0, -1.0, 1.0]
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        where = "GroupNorm"
        self.num_groups = check_int(num_groups, "num_groups", where, minimum=1)
        self.num_channels = check_int(num_channels, "num_channels", where, minimum=1)
        if self.num_channels % self.num_groups:
            raise ValueError(f"{where}: num_channels must be divisible by num_groups "
                             f"({num_groups}), got {num_channels}")
        self.eps = check_number(eps, "eps", where, above=0.0)
        check_bool(affine, "affine", where)
        check_bool(bias, "bias", where)
        self.weight = init.constant((num_channels,), 1.0, dtype) if affine else None
        self.bias = init.constant((num_channels,), 0.0, dtype) if affine and bias else None

    def forward(self, x: Tensor) -> Tensor:
        check_tensor(x, "input", "GroupNorm")
        if x.ndim < 2 or x.shape[1] != self.num_channels:
            raise ValueError(f"GroupNorm({self.num_groups}, {self.num_channels}): expected "
                             f"(N, {self.num_channels}, ...) input, got shape {x.shape}")
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.weight is not None}, bias={self.bias is not None}")


class _InstanceNorm(_NormBase):
    """Normalises each channel of each sample by its own mean and variance (over the spatial
    axes), then applies an optional per-channel affine map (``affine=False`` by default).

    With ``track_running_stats=True`` it keeps PyTorch's buffers: in training the running mean
    moves towards the batch's mean of the per-sample means, and the running variance towards
    that of the per-sample unbiased variances, by ``momentum`` (``None``: they stay as they
    are, as in PyTorch, and ``num_batches_tracked`` stays 0 either way); in evaluation the
    running statistics normalise. Without it, the input's own statistics are used always.

    Unbatched input (no ``N`` axis) is normalised as a batch of one. Under DataParallel each
    sample is normalised by itself, so the rows are not coupled -- but in training with running
    statistics the layer declares them coupled, so that the chunks always run and only chunk 0
    moves the running statistics (PyTorch's DataParallel keeps replica 0's buffers): the state
    after a call then never depends on how DataParallel chose to run it.
    """

    spatial = 0  # how many axes follow the channels
    shapes = ""  # the input shapes, for error messages

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype,
                         bias=bias)

    def couples_rows(self) -> bool:
        return self.is_training() and self.running_mean is not None

    def uses_input_statistics(self) -> bool:
        """True in training, and always without running statistics (as in PyTorch)."""
        return self.is_training() or self.running_mean is None

    def forward(self, x: Tensor) -> Tensor:
        where = type(self).__name__
        check_tensor(x, "input", where)
        refuse_in_chunk(where, x, self.spatial)  # unbatched: a chunk holds some channels
        batched = self.spatial + 2
        if x.ndim not in (batched - 1, batched) or \
                x.shape[x.ndim - self.spatial - 1] != self.num_features:
            shapes = self.shapes.replace("C", str(self.num_features))
            raise ValueError(f"{where}({self.num_features}): expected {shapes} input, got "
                             f"shape {x.shape}")
        if x.ndim < batched:
            return self.forward(x.reshape(1, *x.shape)).reshape(*x.shape)
        updating = self.is_training() and self.updates_running_statistics()
        momentum = self.momentum if updating and self.momentum is not None else 0.0
        return F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                               use_input_stats=self.uses_input_statistics(),
                               momentum=momentum, eps=self.eps)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of ``(N, C, L)`` or unbatched ``(C, L)`` input (see
    ``_InstanceNorm``)."""

    spatial = 1
    shapes = "(N, C, L) or (C, L)"


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of ``(N, C, H, W)`` or unbatched ``(C, H, W)`` input: each
    channel of each image by its own mean and variance (see ``_InstanceNorm``).

    Examples:
        >>> import dparray as dp
        >>> norm = dp.nn.InstanceNorm2d(3)
        >>> y = norm(dp.randn(2, 3, 4, 4))
        >>> round(y[1, 2].mean().item(), 5) + 0.0, round(y[1, 2].var(correction=0).item(), 3)
        (0.0, 1.0)
    """

    spatial = 2
    shapes = "(N, C, H, W) or (C, H, W)"


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of ``(N, C, D, H, W)`` or unbatched ``(C, D, H, W)`` input: each
    channel of each volume by its own mean and variance (see ``_InstanceNorm``).

    Examples:
        >>> import dparray as dp
        >>> dp.nn.InstanceNorm3d(3, affine=True)(dp.randn(2, 3, 2, 4, 4)).shape
        (2, 3, 2, 4, 4)
    """

    spatial = 3
    shapes = "(N, C, D, H, W) or (C, D, H, W)"


class RMSNorm(Module):
    """Divides each sample by the root mean square of its last ``len(normalized_shape)`` axes,
    ``x / sqrt(mean(x * x) + eps)``, then scales elementwise by ``weight`` (ones at start; no
    bias), as PyTorch's ``RMSNorm``. ``eps=None`` is the machine epsilon of the input's dtype.

    Examples:
        >>> import dparray as dp
        >>> norm = dp.nn.RMSNorm(2)
        >>> [round(v, 4) for v in norm(dp.tensor([[3.0, 4.0]])).tolist()[0]]
        [0.8485, 1.1314]
    """

    def __init__(self, normalized_shape: int | Sequence[int], eps: float | None = None,
                 elementwise_affine: bool = True, dtype: Any = None) -> None:
        super().__init__()
        where = "RMSNorm"
        self.normalized_shape = normalized_shape_of(normalized_shape, where)
        self.eps = None if eps is None else check_number(eps, "eps", where, above=0.0)
        check_bool(elementwise_affine, "elementwise_affine", where)
        self.weight = init.constant(self.normalized_shape, 1.0, dtype) \
            if elementwise_affine else None

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.weight is not None}")
