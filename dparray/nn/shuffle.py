"""Rearranging layers, PyTorch's ``PixelShuffle``, ``PixelUnshuffle`` and ``ChannelShuffle``,
and their functional forms (re-exported by ``dparray.nn.functional``).

Each is a reshape, a permutation of axes and a reshape back, so its gradient is the inverse
rearrangement, from those ops.
"""

from __future__ import annotations

from typing import Any

from dparray._checks import check_int, check_tensor
from dparray.nn.module import Module
from dparray.nn.unbatched import refuse_in_chunk
from dparray.ops.shape import permute, reshape
from dparray.tensor import Tensor

__all__ = [
    "ChannelShuffle", "PixelShuffle", "PixelUnshuffle", "channel_shuffle", "pixel_shuffle",
    "pixel_unshuffle",
]


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``(*, C * r**2, H, W)`` as ``(*, C, H * r, W * r)`` for ``r = upscale_factor``: each
    group of ``r * r`` channels becomes an ``r x r`` block of pixels (the sub-pixel
    convolution's upsampling). Any number of leading axes, as in PyTorch.

    Examples:
        >>> import dparray as dp
        >>> x = dp.arange(8.0).reshape(1, 8, 1, 1)
        >>> dp.nn.functional.pixel_shuffle(x, 2)[0].tolist()
        [[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]]]
    """
    return _pixel_shuffle("pixel_shuffle", input,
                          check_int(upscale_factor, "upscale_factor", "pixel_shuffle", minimum=1))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``(*, C, H * r, W * r)`` as ``(*, C * r**2, H, W)`` for ``r = downscale_factor``: the
    inverse of ``pixel_shuffle``, each ``r x r`` block of pixels becoming ``r * r`` channels.

    Examples:
        >>> import dparray as dp
        >>> x = dp.arange(4.0).reshape(1, 1, 2, 2)
        >>> dp.nn.functional.pixel_unshuffle(x, 2).flatten().tolist()
        [0.0, 1.0, 2.0, 3.0]
    """
    where = "pixel_unshuffle"
    return _pixel_unshuffle(where, input,
                            check_int(downscale_factor, "downscale_factor", where, minimum=1))


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """The channels of ``(N, C, *)`` input (at least 3-D, as in PyTorch) interleaved across
    ``groups``: seen as ``(groups, C / groups)``, transposed, so that channel ``j`` of each
    group sits beside channel ``j`` of the others (ShuffleNet's shuffle).

    Examples:
        >>> import dparray as dp
        >>> x = dp.arange(6.0).reshape(1, 6, 1)
        >>> dp.nn.functional.channel_shuffle(x, 2).flatten().tolist()
        [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    """
    return _channel_shuffle("channel_shuffle", input,
                            check_int(groups, "groups", "channel_shuffle", minimum=1))


class PixelShuffle(Module):
    """``(*, C * r**2, H, W)`` to ``(*, C, H * r, W * r)`` for ``r = upscale_factor`` (see
    ``pixel_shuffle``).

    Examples:
        >>> import dparray as dp
        >>> dp.nn.PixelShuffle(3)(dp.ones(2, 18, 4, 5)).shape
        (2, 2, 12, 15)
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = check_int(upscale_factor, "upscale_factor", "PixelShuffle",
                                        minimum=1)

    def forward(self, x: Tensor) -> Tensor:
        return _pixel_shuffle("PixelShuffle", x, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``(*, C, H * r, W * r)`` to ``(*, C * r**2, H, W)`` for ``r = downscale_factor`` (see
    ``pixel_unshuffle``).

    Examples:
        >>> import dparray as dp
        >>> dp.nn.PixelUnshuffle(2)(dp.ones(2, 3, 4, 6)).shape
        (2, 12, 2, 3)
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = check_int(downscale_factor, "downscale_factor",
                                          "PixelUnshuffle", minimum=1)

    def forward(self, x: Tensor) -> Tensor:
        return _pixel_unshuffle("PixelUnshuffle", x, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Interleaves the channels of ``(N, C, *)`` input across ``groups`` (see
    ``channel_shuffle``).

    Examples:
        >>> import dparray as dp
        >>> x = dp.arange(4.0).reshape(1, 4, 1, 1)
        >>> dp.nn.ChannelShuffle(2)(x).flatten().tolist()
        [0.0, 2.0, 1.0, 3.0]
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = check_int(groups, "groups", "ChannelShuffle", minimum=1)

    def forward(self, x: Tensor) -> Tensor:
        return _channel_shuffle("ChannelShuffle", x, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


def _pixel_shuffle(where: str, x: Any, r: int) -> Tensor:
    _check_image(where, x, f"(*, C * {r}**2, H, W)")
    refuse_in_chunk(where, x, 2)  # unbatched: a chunk's channels may cut a block of r**2
    *lead, channels, h, w = x.shape
    if channels % (r * r):
        raise ValueError(f"{where}: the channels ({channels}, axis -3) must be divisible by "
                         f"upscale_factor squared ({r * r}), got shape {x.shape}")
    c, n = channels // (r * r), len(lead)
    blocks = reshape(x, (*lead, c, r, r, h, w))
    moved = permute(blocks, (*range(n), n, n + 3, n + 1, n + 4, n + 2))  # (*, C, H, r, W, r)
    return reshape(moved, (*lead, c, h * r, w * r))


def _pixel_unshuffle(where: str, x: Any, r: int) -> Tensor:
    _check_image(where, x, f"(*, C, H * {r}, W * {r})")
    *lead, c, height, width = x.shape
    if height % r or width % r:
        raise ValueError(f"{where}: the height and width ({height}, {width}) must be "
                         f"divisible by downscale_factor ({r}), got shape {x.shape}")
    h, w, n = height // r, width // r, len(lead)
    blocks = reshape(x, (*lead, c, h, r, w, r))
    moved = permute(blocks, (*range(n), n, n + 2, n + 4, n + 1, n + 3))  # (*, C, r, r, H, W)
    return reshape(moved, (*lead, c * r * r, h, w))


def _channel_shuffle(where: str, x: Any, groups: int) -> Tensor:
    check_tensor(x, "input", where)
    if x.ndim < 3:
        raise ValueError(f"{where}: expected an input of at least 3 dimensions (N, C, *), got "
                         f"shape {x.shape}")
    n, channels, *rest = x.shape
    if channels % groups:
        raise ValueError(f"{where}: the channels ({channels}, axis 1) must be divisible by "
                         f"groups ({groups}), got shape {x.shape}")
    grouped = reshape(x, (n, groups, channels // groups, *rest))
    swapped = permute(grouped, (0, 2, 1, *range(3, x.ndim + 1)))
    return reshape(swapped, x.shape)


def _check_image(where: str, x: Any, layout: str) -> None:
    check_tensor(x, "input", where)
    if x.ndim < 3:
        raise ValueError(f"{where}: expected an input of at least 3 dimensions {layout}, got "
                         f"shape {x.shape}")
