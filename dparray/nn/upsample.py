"""Resampling layers for sequences, images and volumes: ``Upsample`` and PyTorch's two
fixed-mode forms, each call one graph node (``dparray.ops.interpolate``)."""

from __future__ import annotations

from typing import Any

from dparray.nn._geometry import Resize, resize
from dparray.nn.module import Module
from dparray.ops import interpolate as _interpolate
from dparray.tensor import Tensor


def resample(where: str, x: Any, spec: Resize) -> Tensor:
    """``x`` resampled as the checked ``spec`` says (the body of ``F.interpolate``)."""
    size = spec.output_size(where, x)
    return _interpolate.interpolate(x, size, spec.kernel_scales(len(size)), spec.mode,
                                    spec.align_corners)


class Upsample(Module):
    """Resample sequences ``(N, C, L)``, images ``(N, C, H, W)`` or volumes
    ``(N, C, D, H, W)`` to ``size`` or by ``scale_factor`` (one of the two; an int or float,
    or one per spatial axis), as PyTorch's ``nn.Upsample``: ``mode="nearest"`` copies the
    nearest entry (PyTorch's ``floor`` rule; ``"nearest-exact"`` rounds to the nearest centre
    instead), ``"linear"``, ``"bilinear"`` and ``"trilinear"`` interpolate between the 2, 4 or
    8 nearest, ``"bicubic"`` with cubic convolution over the 16 nearest, aligning the corner
    entries' centres (``align_corners=True``) or their outer edges (False, the default). With
    ``scale_factor``, the output size is ``floor(size * scale_factor)`` and positions follow
    the factor, unless ``recompute_scale_factor=True`` derives them from the sizes.

    Examples:
        >>> import dparray as dp
        >>> x = dp.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
        >>> dp.nn.Upsample(scale_factor=2)(x)[0, 0, 0].tolist()
        [1.0, 1.0, 2.0, 2.0]
        >>> dp.nn.Upsample(size=(2, 3), mode="bilinear", align_corners=True)(x)[0, 0].tolist()
        [[1.0, 1.5, 2.0], [3.0, 3.5, 4.0]]
    """

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self._spec = resize(type(self).__name__, size, scale_factor, mode, align_corners,
                            recompute_scale_factor)
        self.size, self.mode, self.align_corners = size, mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor
        if isinstance(scale_factor, (list, tuple)):
            self.scale_factor: Any = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = None if scale_factor is None else float(scale_factor)

    def forward(self, x: Tensor) -> Tensor:
        return resample(type(self).__name__, x, self._spec)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            return f"scale_factor={self.scale_factor!r}, mode={self.mode!r}"
        return f"size={self.size!r}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """``Upsample(size, scale_factor, mode="nearest")``, PyTorch's older name for it.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.UpsamplingNearest2d(scale_factor=3)(dp.ones(1, 2, 2, 2)).shape
        (1, 2, 6, 6)
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(size, scale_factor, mode="bilinear", align_corners=True)``, PyTorch's older
    name for it.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.UpsamplingBilinear2d(size=4)(dp.ones(1, 2, 2, 2)).shape
        (1, 2, 4, 4)
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
