"""``unfold``: every window of ``size`` entries, ``step`` apart, along one axis, PyTorch's
``Tensor.unfold`` (the 1-D sliding window, not ``nn.functional.unfold``'s im2col).

It is one ``take`` at the windows' positions, ``(count, size)``, followed by moving the window
axis last, so the gradient adds each entry's share back through the take's adjoint (an entry in
several windows gets all of them).
"""

from __future__ import annotations

from dparray._checks import check_int, check_tensor, normalize_axis
from dparray.creation import tensor
from dparray.ops.indexing import take
from dparray.ops.shape import permute
from dparray.tensor import Tensor

__all__ = [
    "unfold",
]


def unfold(x: Tensor, axis: int, size: int, step: int) -> Tensor:
    """The windows of ``size`` entries along ``axis``, starting every ``step`` entries: axis
    ``axis`` becomes the ``(n - size) // step + 1`` windows and a new last axis holds each
    window's entries, as PyTorch's ``x.unfold(dimension, size, step)``.

    Examples:
        >>> import dparray
        >>> dparray.unfold(dparray.arange(7.0), 0, 3, 2).tolist()
        [[0.0, 1.0, 2.0], [2.0, 3.0, 4.0], [4.0, 5.0, 6.0]]
    """
    check_tensor(x, "x", "unfold")
    size = check_int(size, "size", "unfold", minimum=0)
    step = check_int(step, "step", "unfold", minimum=1)
    scalar = x.ndim == 0
    if scalar:  # PyTorch: a 0-d tensor unfolds as one entry, into a 1-D window
        x = x.reshape(1)
    a = normalize_axis(axis, x.ndim, "unfold")
    length = x.shape[a]
    if size > length:
        raise ValueError(f"unfold: size {size} is larger than axis {a} of size {length}")
    count = (length - size) // step + 1
    positions = [[start * step + i for i in range(size)] for start in range(count)]
    index = tensor(positions, dtype="int64", backend=x.backend)
    windows = take(x, index, axis=a)  # (..., count, size, ...)
    if scalar:
        return windows.reshape(size)
    order = [*range(a + 1), *range(a + 2, windows.ndim), a + 1]
    return permute(windows, order)
