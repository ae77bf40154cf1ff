"""PyTorch's unbatched input for the convolution and pooling layers: ``(C, *spatial)`` runs as
a batch of one, and the result comes back without that axis, as PyTorch's layers return it.

Inside a DataParallel chunk a convolution refuses unbatched input (``refuse_in_chunk``), as do
the other layers that read an image's channels together (pixel shuffle, fold, instance norm):
DataParallel splits axis 0, which for such input is the channels, and a layer given some of
an image's channels would compute something else. (DataParallel runs a call whole when it
has a single row to split or runs inline, so the refusal shows under threads; batched input
works under every plan.) A pool treats each channel on its own, so pooling the pieces is
pooling the whole: the pools take unbatched input everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from dparray.nn.chunks import in_chunk
from dparray.ops.shape import reshape
from dparray.tensor import Tensor

Result = TypeVar("Result")


def refuse_in_chunk(where: str, x: Tensor, dims: int) -> None:
    """A ValueError for unbatched ``x`` (``dims`` spatial axes after the channels) in a
    DataParallel chunk, whose axis 0 is some of the image's channels, not a batch."""
    if x.ndim == dims + 1 and in_chunk():
        raise ValueError(f"{where}: DataParallel splits axis 0, which is the channels for "
                         f"unbatched input of shape {x.shape}; give the layer batched "
                         f"(N, C, ...) input")


def as_batch_of_one(where: str, x: Tensor, dims: int,
                    run: Callable[[Tensor], Result]) -> Result:
    """``run(x)``; for unbatched ``x`` (checked already) ``run`` of ``x`` with a batch axis of
    one, and that axis taken off every tensor it returns (a pool's output and its indices)."""
    if x.ndim != dims + 1:
        return run(x)
    out: Any = run(reshape(x, (1, *x.shape)))
    if isinstance(out, tuple):
        return cast(Result, tuple(reshape(t, t.shape[1:]) for t in out))
    return cast(Result, reshape(out, out.shape[1:]))
