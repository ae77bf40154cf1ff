"""Depthwise convolution on NumPy (``groups`` equal to the input channels, one input channel
per group: MobileNet's, EfficientNet's, ConvNeXt's), in direct compiled loops.

The general kernel (``ConvKernel``) copies every window into a ``(C * kh * kw, N * OH * OW)``
array and multiplies one group at a time; with one input channel per group that product has
one row, so the copy is most of the work and BLAS has nothing to block. A 3 x 3 depthwise
layer over 32 x 64 x 32 x 32 float32, forward and backward, took 68 ms that way against
PyTorch's 11. Here each image plane is its own task, split into its stride phases so that
each tap is one long loop at unit stride (``_numba_loops``), and the weight's gradient sums
each tap over images and positions, one output channel per task (``python -m bench.layers``
has the times beside PyTorch's). Each output sums its taps in the arrays' type, as the
reference's product does, so results agree with the reference's to float32's precision, not
to the bit; the weight's and bias's gradients sum in float64, in any order (``jit_sum``). The
node saves the input rather than its windows: ``kh * kw`` times less memory until backward.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._numba_setup import loops as _loops


def is_depthwise(x: Any, weight: Any, groups: int) -> bool:
    """Whether the convolution has one input channel per group, more than one group."""
    return groups > 1 and groups == x.shape[1] and weight.shape[1] == 1


def _geometry(windows: Any) -> tuple[int, ...]:
    (kh, kw), (sh, sw) = windows.kernel, windows.stride
    (ph, pw), (dh, dw) = windows.padding, windows.dilation
    return kh, kw, sh, sw, ph, pw, dh, dw


def forward(x: Any, weight: Any, bias: Any, windows: Any) -> Any:
    """``(N, OC, OH, OW)``: the convolution of ``x`` (contiguous) by ``weight`` ``(OC, 1, kh,
    kw)``."""
    n, _, h, w = x.shape
    oc = weight.shape[0]
    oh, ow = windows.output_size((h, w))
    out = np.empty((n, oc, oh, ow), x.dtype)
    if out.size == 0:
        return out
    flat_bias = np.zeros(oc, x.dtype) if bias is None else np.ascontiguousarray(bias).ravel()
    kernel = np.ascontiguousarray(weight).reshape(oc, -1)
    _loops().depthwise_conv(x, kernel, flat_bias, *_geometry(windows), out)
    return out


def backward(grad: Any, x: Any, weight: Any, windows: Any,
             wanted: tuple[bool, bool, bool]) -> tuple[Any, Any, Any]:
    """The gradients by input, weight and bias that ``wanted`` asks for (None for the
    others)."""
    oc = weight.shape[0]
    if grad.size == 0:
        return (np.zeros(x.shape, x.dtype) if wanted[0] else None,
                np.zeros(weight.shape, x.dtype) if wanted[1] else None,
                np.zeros(oc, x.dtype) if wanted[2] else None)
    grad = np.ascontiguousarray(grad)
    kernel = np.ascontiguousarray(weight).reshape(oc, -1)
    geometry = _geometry(windows)
    grad_x = grad_weight = grad_bias = None
    loops = _loops()
    if wanted[0]:
        grad_x = np.empty(x.shape, x.dtype)
        loops.depthwise_conv_input_gradient(grad, kernel, *geometry, grad_x)
    if wanted[1] or wanted[2]:
        taps, sums = np.empty(kernel.shape, np.float64), np.empty(oc, np.float64)
        loops.depthwise_conv_weight_gradient(grad, x, *geometry, taps, sums)
        grad_weight = taps.astype(x.dtype).reshape(weight.shape) if wanted[1] else None
        grad_bias = sums.astype(x.dtype) if wanted[2] else None
    return grad_x, grad_weight, grad_bias
