"""Ops that layers are built from: the affine map and sliding windows (im2col).

``linear`` is one op rather than a matmul, a transpose and an add so that its backward is the
three products a hand-written network would compute, on contiguous arrays. ``unfold`` gathers
every sliding window of an image with strided slices and ``stack`` -- the array API has no
sliding-window view -- and scatters gradients back with strided slice assignment; convolution
and pooling are then ordinary matmuls and reductions over its output.
"""

from __future__ import annotations

import math
from typing import Any

from dparray.autograd import Function
from dparray.ops._autocast import autocast_op
from dparray.ops._promote import wide_sum
from dparray.ops._util import check_same_kind
from dparray.ops.linalg import array_matmul
from dparray.tensor import Tensor


class Linear(Function):
    """``x @ weight.T + bias`` for ``x`` of shape ``(..., in)`` and ``weight`` ``(out, in)``."""

    def forward(self, x: Any, weight: Any, bias: Any = None) -> Any:
        if weight.ndim != 2 or x.ndim == 0 or x.shape[-1] != weight.shape[1]:
            raise ValueError(
                f"linear: input of shape {tuple(x.shape)} does not fit weight of shape "
                f"{tuple(weight.shape)} (needs (..., {weight.shape[-1]}) input and a 2-d weight)"
            )
        if bias is not None and tuple(bias.shape) != (weight.shape[0],):
            raise ValueError(
                f"linear: bias of shape {tuple(bias.shape)} does not fit weight of shape "
                f"{tuple(weight.shape)}"
            )
        check_same_kind("linear", self.backend, x, weight)
        xp = self.xp
        self.has_bias = bias is not None
        self.save(x, weight)
        product = array_matmul(self.backend)
        if x.ndim > 2:  # one matrix product over all rows, not one per leading index
            rows = product(_as_rows(xp, x), weight.T)
            out = xp.reshape(rows, (*x.shape[:-1], weight.shape[0]))
        else:
            out = product(x, weight.T)  # .T of a 2-d array: standard, and cheaper than a call
        if bias is None:
            return out
        if out.dtype == bias.dtype:  # into the product, a new array of this op's own
            out += bias
            return out
        return out + bias

    def backward(self, grad: Any) -> tuple[Any, ...]:
        xp = self.xp
        x, weight = self.saved
        has_bias = self.has_bias
        grad_x = None
        product = array_matmul(self.backend)
        if self.needs_grad(0):
            if grad.ndim > 2:
                grad_x = xp.reshape(product(_as_rows(xp, grad), weight),
                                    x.shape)
            else:
                grad_x = product(grad, weight)
        grad_weight = grad_bias = None
        if self.needs_grad(1) or (has_bias and self.needs_grad(2)):
            rows = grad if grad.ndim == 2 else _as_rows(xp, grad)
            if self.needs_grad(1):
                inputs = x if x.ndim == 2 else _as_rows(xp, x)
                grad_weight = product(rows.T, inputs)
            if has_bias and self.needs_grad(2):
                grad_bias = wide_sum(self.backend, rows, 0)
        return (grad_x, grad_weight, grad_bias) if has_bias else (grad_x, grad_weight)


def _as_rows(xp: Any, a: Any) -> Any:
    """``a`` of shape ``(..., n)`` as ``(rows, n)``; the row count spelled out, since ``-1``
    cannot be inferred when ``n`` is 0 (a 0-size feature axis)."""
    return xp.reshape(a, (math.prod(a.shape[:-1]), a.shape[-1]))


class Unfold(Function):
    """Sliding windows of ``(N, C, H, W)`` as ``(N, C, kh * kw, OH, OW)``, padded with
    ``pad_value``; the gradient adds every window back where it came from."""

    def __init__(self, kernel: tuple[int, int], stride: tuple[int, int],
                 padding: tuple[int, int], dilation: tuple[int, int], pad_value: float) -> None:
        self.kernel, self.stride, self.padding, self.dilation = kernel, stride, padding, dilation
        self.pad_value = pad_value

    def forward(self, x: Any) -> Any:
        xp = self.xp
        if x.ndim != 4:
            raise ValueError(f"unfold: expected an (N, C, H, W) input, got shape {tuple(x.shape)}")
        self.input_shape, self.dtype = tuple(x.shape), x.dtype
        self.output_size = output_size(self.input_shape[2:], self.kernel, self.stride,
                                       self.padding, self.dilation)
        padded = self._pad(x)
        return xp.stack([padded[key] for key in self._window_keys()], axis=2)

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        n, c, h, w = self.input_shape
        (ph, pw) = self.padding
        total = xp.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=self.dtype)
        for k, key in enumerate(self._window_keys()):
            total[key] = total[key] + grad[:, :, k, ...]
        return total[:, :, ph:ph + h, pw:pw + w]

    def _pad(self, x: Any) -> Any:
        ph, pw = self.padding
        if ph == 0 and pw == 0:
            return x
        n, c, h, w = x.shape
        padded = self.xp.full((n, c, h + 2 * ph, w + 2 * pw), self.pad_value, dtype=x.dtype)
        padded[:, :, ph:ph + h, pw:pw + w] = x
        return padded

    def _window_keys(self) -> list[tuple[Any, ...]]:
        """For each kernel offset, the strided slice of the padded input it sees."""
        (kh, kw), (sh, sw), (dh, dw) = self.kernel, self.stride, self.dilation
        oh, ow = self.output_size
        return [
            (slice(None), slice(None),
             slice(i * dh, i * dh + sh * (oh - 1) + 1, sh),
             slice(j * dw, j * dw + sw * (ow - 1) + 1, sw))
            for i in range(kh) for j in range(kw)
        ]


def output_size(size: tuple[int, int], kernel: tuple[int, int], stride: tuple[int, int],
                padding: tuple[int, int], dilation: tuple[int, int]) -> tuple[int, int]:
    """The spatial size of a convolution or pooling output (PyTorch's formula, floor mode)."""
    out = tuple(
        (n + 2 * p - d * (k - 1) - 1) // s + 1
        for n, k, s, p, d in zip(size, kernel, stride, padding, dilation, strict=True)
    )
    if min(out) < 1:
        raise ValueError(
            f"a {kernel} window (stride {stride}, padding {padding}, dilation {dilation}) does "
            f"not fit an input of spatial size {tuple(size)}"
        )
    return out  # type: ignore[return-value]


@autocast_op("linear")
def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x @ weight.T + bias`` (PyTorch's ``F.linear``; ``weight`` is ``(out, in)``)."""
    return Linear()(x, weight) if bias is None else Linear()(x, weight, bias)


def unfold(x: Tensor, kernel: tuple[int, int], stride: tuple[int, int] = (1, 1),
           padding: tuple[int, int] = (0, 0), dilation: tuple[int, int] = (1, 1),
           pad_value: float = 0.0) -> Tensor:
    """Every sliding ``kernel`` window of an ``(N, C, H, W)`` tensor, as
    ``(N, C, kh * kw, OH, OW)``."""
    return Unfold(kernel, stride, padding, dilation, pad_value)(x)
