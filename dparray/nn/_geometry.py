"""Argument checks for convolution, pooling and resampling, shared by the layers and their
functional forms: a layer checks its arguments once when it is made, a functional call once per
call, and both check the input with the same function. Sizes are tuples with one entry per
spatial axis (``dims``: 1 for ``(N, C, L)`` input, 2 for ``(N, C, H, W)``, 3 for
``(N, C, D, H, W)``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dparray._checks import (
    check_bool,
    check_choice,
    check_int,
    check_int_tuple,
    check_number,
    check_tensor,
    describe,
)
from dparray.nn.unbatched import refuse_in_chunk
from dparray.ops._windows import Windows
from dparray.ops.pad import pad
from dparray.tensor import Tensor

Sizes = tuple[int, ...]
PADDING_MODES = ("zeros", "reflect", "replicate", "circular")
INTERPOLATION_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear")


def layout(dims: int, channels: Any = "C") -> str:
    """How an input of ``dims`` spatial axes is laid out, for messages."""
    return f"(N, {channels}, {_SPATIAL[dims]})"


def either_layout(dims: int, channels: Any = "C") -> str:
    """How a layer that also takes unbatched input wants it laid out, for messages."""
    return f"{layout(dims, channels)} or unbatched ({channels}, {_SPATIAL[dims]})"


_SPATIAL = {1: "L", 2: "H, W", 3: "D, H, W"}


def check_input(where: str, x: Any, dims: int) -> Tensor:
    """``x`` must be a tensor of ``dims`` spatial axes after batch and channels."""
    check_tensor(x, "input", where)
    if x.ndim != dims + 2:
        raise ValueError(f"{where}: expected an {layout(dims)} input, got shape {x.shape}")
    return x


def check_image(where: str, x: Any) -> Tensor:
    """``x`` must be an ``(N, C, H, W)`` tensor."""
    return check_input(where, x, 2)


def check_floating_input(where: str, x: Any, dims: int) -> Tensor:
    """``x`` must be a floating-point tensor of ``dims`` spatial axes (a TypeError if not
    floating)."""
    check_input(where, x, dims)
    if not x.dtype.is_floating:
        raise TypeError(f"{where}: input must be a floating-point tensor, got {x.dtype.name}")
    return x


# ----------------------------------------------------------------------------- convolution
def conv_geometry(where: str, stride: Any, dilation: Any, groups: Any,
                  dims: int) -> tuple[Sizes, Sizes, int]:
    """``(stride, dilation, groups)`` checked: one positive int per spatial axis, and an int."""
    return (check_int_tuple(stride, "stride", where, dims, minimum=1),
            check_int_tuple(dilation, "dilation", where, dims, minimum=1),
            check_int(groups, "groups", where, minimum=1))


def check_channels(where: str, in_channels: Any, out_channels: Any,
                   groups: int) -> tuple[int, int]:
    """Channel counts of a layer: positive ints divisible by ``groups``."""
    in_channels = check_int(in_channels, "in_channels", where, minimum=1)
    out_channels = check_int(out_channels, "out_channels", where, minimum=1)
    if in_channels % groups or out_channels % groups:
        raise ValueError(f"{where}: in_channels ({in_channels}) and out_channels "
                         f"({out_channels}) must be divisible by groups ({groups})")
    return in_channels, out_channels


@dataclass(frozen=True)
class ConvPadding:
    """A convolution's padding, checked. ``node`` is the symmetric zero padding the
    convolution node adds itself; ``widths`` (``F.pad``'s: last axis first), when given, pad the
    input in ``mode`` before the node runs -- for a ``padding_mode`` other than zeros, and for
    the uneven split of ``padding="same"`` (the extra entry at the end, as in PyTorch)."""

    node: Sizes
    widths: Sizes | None = None
    mode: str = "constant"

    def apply(self, x: Tensor) -> Tensor:
        """``x`` with the padding the node does not add itself."""
        return x if self.widths is None else pad(x, self.widths, self.mode)

    def totals(self) -> Sizes:
        """The padding added along each spatial axis, both sides together."""
        if self.widths is None:
            return tuple(2 * p for p in self.node)
        sums = [self.widths[i] + self.widths[i + 1] for i in range(0, len(self.widths), 2)]
        return tuple(reversed(sums))


def check_conv_padding(where: str, padding: Any, dims: int) -> str | Sizes:
    """A convolution's ``padding``: ``"valid"``, ``"same"``, or one int of at least 0 per
    spatial axis."""
    if isinstance(padding, str):
        mode: str = check_choice(padding, "padding", where, ("valid", "same"))
        return mode
    return check_int_tuple(padding, "padding", where, dims, minimum=0)


def conv_padding(where: str, padding: str | Sizes, kernel: Sizes, stride: Sizes,
                 dilation: Sizes, padding_mode: str = "zeros") -> ConvPadding:
    """The checked ``padding`` as a ``ConvPadding``. ``"same"`` keeps the input's size (stride 1
    only): ``dilation * (kernel - 1)`` entries per axis, half before and the rest after."""
    if padding == "same" and any(s != 1 for s in stride):
        raise ValueError(f"{where}: padding='same' needs stride 1, got stride={stride}")
    if isinstance(padding, str):
        totals = [d * (k - 1) if padding == "same" else 0
                  for k, d in zip(kernel, dilation, strict=True)]
        sides = [(t // 2, t - t // 2) for t in totals]
    else:
        sides = [(p, p) for p in padding]
    if padding_mode == "zeros" and all(before == after for before, after in sides):
        return ConvPadding(tuple(before for before, _ in sides))
    widths = tuple(w for side in reversed(sides) for w in side)
    if not any(widths):
        return ConvPadding((0,) * len(kernel))
    mode = "constant" if padding_mode == "zeros" else padding_mode
    return ConvPadding((0,) * len(kernel), widths, mode)


def check_padding_mode(where: str, padding_mode: Any) -> str:
    """A convolution's ``padding_mode``: how its padding is filled."""
    mode: str = check_choice(padding_mode, "padding_mode", where, PADDING_MODES)
    return mode


def check_conv_input(where: str, x: Any, weight: Any, bias: Any, groups: int,
                     dims: int = 2) -> None:
    """``x`` must be ``(N, C, *spatial)`` or unbatched ``(C, *spatial)`` with ``C =
    weight.shape[1] * groups``; ``weight`` ``(OC, C / groups, *kernel)`` with ``OC`` divisible
    by ``groups``; ``bias`` ``(OC,)``."""
    check_tensor(x, "input", where)
    _check_weight(where, weight, bias, dims, "(out_channels, in_channels / groups, *kernel) "
                                             "with out_channels divisible by groups", groups)
    refuse_in_chunk(where, x, dims)
    channels = weight.shape[1] * groups
    if x.ndim not in (dims + 1, dims + 2) or x.shape[-dims - 1] != channels:
        raise ValueError(f"{where}: expected {either_layout(dims, channels)} input for weight "
                         f"of shape {weight.shape} and groups={groups}, got shape {x.shape}")
    if bias is not None and bias.shape != (weight.shape[0],):
        raise ValueError(f"{where}: bias of shape {bias.shape} does not fit weight of shape "
                         f"{weight.shape}")


def check_conv_fits(where: str, x: Tensor, kernel: Sizes, dilation: Sizes,
                    padding: ConvPadding) -> None:
    """The (dilated) kernel must fit the padded input (batched or not)."""
    spatial = x.shape[x.ndim - len(kernel):]
    for n, k, d, total in zip(spatial, kernel, dilation, padding.totals(), strict=True):
        if n + total < d * (k - 1) + 1:
            raise ValueError(f"{where}: a kernel of size {tuple(kernel)} (dilation "
                             f"{tuple(dilation)}, padding {padding.totals()} in all) does not "
                             f"fit an input of spatial size {tuple(spatial)}")


def check_transposed_input(where: str, x: Any, weight: Any, bias: Any, groups: int,
                           dims: int) -> None:
    """``x`` must be ``(N, C, *spatial)`` or unbatched ``(C, *spatial)`` with ``C =
    weight.shape[0]``; ``weight`` ``(C, OC / groups, *kernel)`` with ``C`` divisible by
    ``groups``; ``bias`` ``(OC,)``."""
    check_tensor(x, "input", where)
    _check_weight(where, weight, bias, dims, "(in_channels, out_channels / groups, *kernel) "
                                             "with in_channels divisible by groups", groups)
    refuse_in_chunk(where, x, dims)
    channels = weight.shape[0]
    if x.ndim not in (dims + 1, dims + 2) or x.shape[-dims - 1] != channels:
        raise ValueError(f"{where}: expected {either_layout(dims, channels)} input for weight "
                         f"of shape {weight.shape}, got shape {x.shape}")
    if bias is not None and bias.shape != (weight.shape[1] * groups,):
        raise ValueError(f"{where}: bias of shape {bias.shape} does not fit weight of shape "
                         f"{weight.shape} and groups={groups}")


def _check_weight(where: str, weight: Any, bias: Any, dims: int, expected: str,
                  groups: int) -> None:
    """``weight`` must be a tensor of ``dims + 2`` axes whose first is divisible by
    ``groups``; ``bias`` a tensor or None."""
    check_tensor(weight, "weight", where)
    if bias is not None:
        check_tensor(bias, "bias", where)
    if weight.ndim != dims + 2 or weight.shape[0] % groups:
        raise ValueError(f"{where}: weight of shape {weight.shape} must be {expected} "
                         f"({groups})")


def transposed_geometry(where: str, stride: Any, padding: Any, output_padding: Any,
                        dilation: Any, groups: Any,
                        dims: int) -> tuple[Sizes, Sizes, Sizes, Sizes, int]:
    """``(stride, padding, output_padding, dilation, groups)`` of a transposed convolution,
    checked: ``output_padding`` must be smaller than the stride or the dilation, as in
    PyTorch."""
    strides, dilations, groups = conv_geometry(where, stride, dilation, groups, dims)
    pads = check_int_tuple(padding, "padding", where, dims, minimum=0)
    extras = check_int_tuple(output_padding, "output_padding", where, dims, minimum=0)
    for o, s, d in zip(extras, strides, dilations, strict=True):
        if o >= max(s, d):
            raise ValueError(f"{where}: output_padding must be smaller than either stride or "
                             f"dilation, got output_padding={extras}, stride={strides}, "
                             f"dilation={dilations}")
    return strides, pads, extras, dilations, groups


def requested_size(where: str, output_size: Any, dims: int) -> list[int]:
    """A forward's ``output_size=``: the spatial sizes, or the whole shape (batch and channels
    first), as the spatial sizes."""
    if not isinstance(output_size, (list, tuple)):
        raise TypeError(f"{where}: output_size must be a sequence of ints, got "
                        f"{describe(output_size)}")
    sizes = [check_int(n, "output_size", where) for n in output_size]
    if len(sizes) == dims + 2:
        sizes = sizes[2:]
    if len(sizes) != dims:
        raise ValueError(f"{where}: for {dims + 2}-D input, output_size must have {dims} or "
                         f"{dims + 2} elements, got {len(sizes)}")
    return sizes


def transposed_output_padding(where: str, x: Tensor, kernel: Sizes, stride: Sizes,
                              padding: Sizes, output_padding: Sizes, dilation: Sizes,
                              output_size: Any) -> Sizes:
    """The output padding that gives ``output_size`` (PyTorch's ``output_size=`` of a
    transposed convolution's forward: the spatial sizes, optionally after batch and channels,
    or after the channels for unbatched ``x``), or ``output_padding`` when it is None; the
    output must not be empty."""
    dims = len(kernel)
    spatial = x.shape[x.ndim - dims:]
    if isinstance(output_size, (list, tuple)) and x.ndim == dims + 1 \
            and len(output_size) == dims + 1:
        output_size = output_size[1:]
    smallest = [(n - 1) * s - 2 * p + d * (k - 1) + 1 for n, k, s, p, d in zip(
        spatial, kernel, stride, padding, dilation, strict=True)]
    if output_size is None:
        extras = output_padding
    else:
        sizes = requested_size(where, output_size, dims)
        largest = [n + s - 1 for n, s in zip(smallest, stride, strict=True)]
        if any(not lo <= n <= hi for n, lo, hi in zip(sizes, smallest, largest, strict=True)):
            raise ValueError(f"{where}: requested an output size of {sizes}, but valid sizes "
                             f"range from {smallest} to {largest} (for an input of "
                             f"{list(spatial)})")
        extras = tuple(n - lo for n, lo in zip(sizes, smallest, strict=True))
    if any(lo + o < 1 for lo, o in zip(smallest, extras, strict=True)):
        raise ValueError(f"{where}: the output would be empty for an input of spatial size "
                         f"{tuple(spatial)} (kernel {tuple(kernel)}, stride {tuple(stride)}, "
                         f"padding {tuple(padding)})")
    return tuple(extras)


# ----------------------------------------------------------------------------- pooling
def pool_geometry(where: str, kernel_size: Any, stride: Any, padding: Any, dilation: Any = 1,
                  ceil_mode: Any = False, dims: int = 2) -> Windows:
    """The windows of a pooling layer, checked as PyTorch does (the padding at most half the
    kernel size), as the windows of its node: 2-D for ``dims`` 1 (of height one) and 2, 3-D
    for ``dims=3``."""
    kernel = check_int_tuple(kernel_size, "kernel_size", where, dims, minimum=1)
    strides = kernel if stride is None or stride == [] else check_int_tuple(
        stride, "stride", where, dims, minimum=1)
    pads = check_int_tuple(padding, "padding", where, dims, minimum=0)
    dilations = check_int_tuple(dilation, "dilation", where, dims, minimum=1)
    if any(p > k // 2 for k, p in zip(kernel, pads, strict=True)):
        raise ValueError(f"{where}: padding {padding!r} must be at most half of kernel_size "
                         f"{kernel_size!r}")
    ceil = check_bool(ceil_mode, "ceil_mode", where)
    if dims == 1:
        return Windows((1, kernel[0]), (1, strides[0]), (0, pads[0]), (1, dilations[0]), ceil)
    return Windows(kernel, strides, pads, dilations, ceil)


def check_pool_input(where: str, x: Any, windows: Windows, dims: int) -> Tensor:
    """``x`` must be a tensor of ``dims`` spatial axes, batched or not, that ``windows``
    fit."""
    check_batched_or_not(where, x, dims)
    spatial = (1, x.shape[-1]) if dims == 1 else tuple(x.shape[x.ndim - dims:])
    try:
        windows.output_size(spatial)
    except ValueError:
        last = slice(len(windows.kernel) - dims, None)
        raise ValueError(
            f"{where}: a kernel of size {windows.kernel[last]} (stride {windows.stride[last]}, "
            f"padding {windows.padding[last]}, dilation {windows.dilation[last]}) does not fit "
            f"an input of spatial size {tuple(x.shape[x.ndim - dims:])}") from None
    return x


def check_batched_or_not(where: str, x: Any, dims: int) -> Tensor:
    """``x`` must be a tensor of ``dims`` spatial axes after the channels, with or without a
    batch axis before them (PyTorch's unbatched input)."""
    check_tensor(x, "input", where)
    if x.ndim not in (dims + 1, dims + 2):
        raise ValueError(f"{where}: expected an {either_layout(dims)} input, got shape "
                         f"{x.shape}")
    return x


def unpool_size(where: str, x: Any, indices: Any, kernel_size: Any, stride: Any, padding: Any,
                output_size: Any) -> tuple[int, int]:
    """The output planes' size of a 2-D max unpool, checked as PyTorch checks it: ``x`` and
    ``indices`` of one ``(N, C, H, W)`` shape (the indices integers); the size
    ``(H - 1) * stride - 2 * padding + kernel_size``, or ``output_size`` (spatial, or the whole
    shape) strictly within one stride of it."""
    kernel = check_int_tuple(kernel_size, "kernel_size", where, 2, minimum=1)
    strides = kernel if stride is None else check_int_tuple(stride, "stride", where, 2,
                                                             minimum=1)
    pads = check_int_tuple(padding, "padding", where, 2, minimum=0)
    check_floating_input(where, x, 2)
    check_tensor(indices, "indices", where)
    if indices.dtype.kind not in ("int", "uint"):
        raise TypeError(f"{where}: indices must be an integer tensor, got {indices.dtype.name}")
    if indices.shape != x.shape:
        raise ValueError(f"{where}: indices of shape {indices.shape} must have the input's "
                         f"shape {x.shape}")
    default = [(n - 1) * s - 2 * p + k for n, s, p, k in zip(x.shape[2:], strides, pads, kernel,
                                                              strict=True)]
    if output_size is None:
        sizes = default
    else:
        sizes = requested_size(where, output_size, 2)
        for n, d, s in zip(sizes, default, strides, strict=True):
            if not d - s < n < d + s:
                raise ValueError(f"{where}: output_size {tuple(sizes)} must lie strictly "
                                 f"within one stride {strides} of {tuple(default)}")
    if min(sizes) < 1:
        raise ValueError(f"{where}: the output would be empty ({tuple(sizes)}) for an input of "
                         f"spatial size {tuple(x.shape[2:])}")
    return sizes[0], sizes[1]


def adaptive_output_size(where: str, output_size: Any) -> tuple[int | None, int | None]:
    """An adaptive pool's ``output_size``: an int or two, each at least 1 or None (keep the
    input's size)."""
    sizes = tuple(output_size) if isinstance(output_size, (list, tuple)) else (output_size,) * 2
    if len(sizes) != 2:
        raise ValueError(f"{where}: output_size must be an int or 2 ints (or None), got "
                         f"{output_size!r}")
    first, second = (None if n is None else check_int(n, "output_size", where, minimum=1)
                     for n in sizes)
    return first, second


def check_nonempty_image(where: str, x: Any, floating: bool) -> Tensor:
    """``x`` must be an ``(N, C, H, W)`` tensor (floating-point if ``floating``) with ``H`` and
    ``W`` at least 1."""
    if floating:
        check_floating_input(where, x, 2)
    else:
        check_image(where, x)
    if min(x.shape[2:]) < 1:
        raise ValueError(f"{where}: expected an input with non-empty spatial axes, got shape "
                         f"{x.shape}")
    return x


def resolve_output_size(output_size: tuple[int | None, int | None], x: Tensor) -> tuple[int, int]:
    """``output_size`` with each None replaced by the input's size along that axis."""
    first, second = (x.shape[2 + i] if n is None else n for i, n in enumerate(output_size))
    return first, second


# ----------------------------------------------------------------------------- resampling
LINEAR_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


@dataclass(frozen=True)
class Resize:
    """The checked arguments of ``interpolate`` and ``Upsample``: exactly one of ``size`` and
    ``scale_factor``, each one number for every spatial axis or a sequence of one per axis
    (whose length the input is checked against)."""

    size: int | Sizes | None
    scale_factor: float | tuple[float, ...] | None
    mode: str
    align_corners: bool
    recompute_scale_factor: bool

    def dims(self, where: str, x: Any) -> int:
        """The number of spatial axes of ``x``, checked against the mode (``linear`` needs
        ``(N, C, L)``, ``bilinear`` and ``bicubic`` ``(N, C, H, W)``, ``trilinear``
        ``(N, C, D, H, W)``; ``nearest`` takes any of them) and the argument's length; a
        floating input for the interpolating modes, spatial axes of at least 1."""
        check_tensor(x, "input", where)
        wanted = LINEAR_DIMS.get(self.mode)
        dims = x.ndim - 2
        if wanted is not None and dims != wanted:
            raise ValueError(f"{where}: mode {self.mode!r} needs an {layout(wanted)} input, got "
                             f"shape {x.shape}")
        if wanted is None and dims not in _SPATIAL:
            raise ValueError(f"{where}: expected an (N, C, L), (N, C, H, W) or (N, C, D, H, W) "
                             f"input, got shape {x.shape}")
        if wanted is not None and not x.dtype.is_floating:
            raise TypeError(f"{where}: input must be a floating-point tensor, got "
                            f"{x.dtype.name}")
        if min(x.shape[2:]) < 1:
            raise ValueError(f"{where}: expected an input with non-empty spatial axes, got "
                             f"shape {x.shape}")
        given = self.size if self.size is not None else self.scale_factor
        if isinstance(given, tuple) and len(given) != dims:
            name = "size" if self.size is not None else "scale_factor"
            raise ValueError(f"{where}: {name} {given} has {len(given)} entries for an input "
                             f"of {dims} spatial axes, shape {x.shape}")
        return dims

    def output_size(self, where: str, x: Tensor) -> Sizes:
        """The output's spatial size for ``x``: ``size``, or ``floor(input * scale_factor)``."""
        dims = self.dims(where, x)
        if self.size is not None:
            return self.size if isinstance(self.size, tuple) else (self.size,) * dims
        sizes = tuple(math.floor(float(n) * f)
                      for n, f in zip(x.shape[2:], self.factors(dims), strict=True))
        if min(sizes) < 1:
            raise ValueError(f"{where}: scale_factor {self.factors(dims)} gives an empty output "
                             f"{sizes} for an input of spatial size {tuple(x.shape[2:])}")
        return sizes

    def factors(self, dims: int) -> tuple[float, ...]:
        """``scale_factor``, one per spatial axis (given as one or per axis)."""
        assert self.scale_factor is not None
        if isinstance(self.scale_factor, tuple):
            return self.scale_factor
        return (self.scale_factor,) * dims

    def kernel_scales(self, dims: int) -> tuple[float | None, ...]:
        """The scale factors the resampling rule uses: the caller's, unless it gave a size or
        asked for them to be recomputed from the sizes."""
        if self.scale_factor is None or self.recompute_scale_factor:
            return (None,) * dims
        return self.factors(dims)


def resize(where: str, size: Any, scale_factor: Any, mode: Any, align_corners: Any,
           recompute_scale_factor: Any = None) -> Resize:
    """``interpolate``'s arguments checked as PyTorch checks them (the input's own checks come
    with ``Resize.output_size``)."""
    mode = check_choice(mode, "mode", where, INTERPOLATION_MODES)
    if align_corners is not None:
        check_bool(align_corners, "align_corners", where)
        if mode not in LINEAR_DIMS:
            raise ValueError(f"{where}: align_corners can only be set with the interpolating "
                             "modes: linear, bilinear, bicubic or trilinear")
    if recompute_scale_factor is not None:
        check_bool(recompute_scale_factor, "recompute_scale_factor", where)
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{where}: exactly one of size and scale_factor must be given")
    sizes: int | Sizes | None = None
    factors: float | tuple[float, ...] | None = None
    if size is not None:
        if recompute_scale_factor:
            raise ValueError(f"{where}: recompute_scale_factor needs scale_factor, not size")
        if isinstance(size, (list, tuple)):
            sizes = tuple(check_int(n, "size", where, minimum=1) for n in size)
        else:
            sizes = check_int(size, "size", where, minimum=1)
    elif isinstance(scale_factor, (list, tuple)):
        factors = tuple(check_number(f, "scale_factor", where, above=0.0) for f in scale_factor)
    else:
        factors = check_number(scale_factor, "scale_factor", where, above=0.0)
    return Resize(sizes, factors, mode, bool(align_corners), bool(recompute_scale_factor))

