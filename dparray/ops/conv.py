"""2-D convolution (cross-correlation, as in every framework) as one graph node.

Forward is im2col and a matrix product per group: the windows of the zero-padded input,
``(N, C, kh*kw, OH, OW)``, regrouped as ``(N, groups, C/groups * kh*kw, OH*OW)``, multiplied by
the weight ``(groups, OC/groups, C/groups * kh*kw)``. Backward is the two products of a matmul's
gradient and col2im for the input's. The im2col array is what backward keeps (with the
weight): it is the product's operand for the weight's gradient.
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function
from dparray.kernels import resolve
from dparray.ops._util import check_same_kind
from dparray.ops._windows import Windows, col2im, im2col
from dparray.tensor import Tensor


class Conv2d(Function):
    """``conv2d(x, weight, bias)`` for ``x`` ``(N, C, H, W)``, ``weight``
    ``(OC, C / groups, kh, kw)`` and an optional ``bias`` ``(OC,)``; the caller checks shapes
    (``dparray.nn.functional.conv2d``)."""

    def __init__(self, stride: tuple[int, int], padding: tuple[int, int],
                 dilation: tuple[int, int], groups: int) -> None:
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups

    def windows(self, weight_shape: tuple[int, ...]) -> Windows:
        kernel = (weight_shape[2], weight_shape[3])
        return Windows(kernel, self.stride, self.padding, self.dilation)

    def forward(self, x: Any, weight: Any, bias: Any = None) -> Any:
        xp = self.xp
        check_same_kind("conv2d", self.backend, x, weight)
        windows = self.windows(tuple(weight.shape))
        n, c, h, w = x.shape
        oc, g = weight.shape[0], self.groups
        out = windows.output_size((h, w))
        columns = im2col(xp, x, windows, out)
        grouped = xp.reshape(columns, (n, g, (c // g) * windows.count, out[0] * out[1]))
        kernel = xp.reshape(weight, (1, g, oc // g, (c // g) * windows.count))
        y = xp.reshape(kernel @ grouped, (n, oc, out[0], out[1]))
        if bias is not None:
            y = y + xp.reshape(bias, (1, oc, 1, 1))
        self.input_shape, self.has_bias = (n, c, h, w), bias is not None
        self.save(grouped, weight)
        return y

    def backward(self, grad: Any) -> tuple[Any, ...]:
        xp = self.xp
        grouped, weight = self.saved
        n, c, h, w = self.input_shape
        oc, g = weight.shape[0], self.groups
        windows = self.windows(tuple(weight.shape))
        out = (grad.shape[2], grad.shape[3])
        rows = xp.reshape(grad, (n, g, oc // g, out[0] * out[1]))
        grad_x = grad_weight = grad_bias = None
        if self.needs_grad(0):
            kernel = xp.reshape(weight, (1, g, oc // g, (c // g) * windows.count))
            columns = xp.matrix_transpose(kernel) @ rows
            columns = xp.reshape(columns, (n, c, windows.count, out[0], out[1]))
            grad_x = col2im(xp, columns, windows, (h, w), out)
        if self.needs_grad(1):
            per_sample = rows @ xp.matrix_transpose(grouped)
            grad_weight = xp.reshape(xp.sum(per_sample, axis=0), tuple(weight.shape))
        if self.has_bias and self.needs_grad(2):
            grad_bias = xp.sum(grad, axis=(0, 2, 3))
        return (grad_x, grad_weight, grad_bias) if self.has_bias else (grad_x, grad_weight)


def conv2d(x: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple[int, int],
           padding: tuple[int, int], dilation: tuple[int, int], groups: int) -> Tensor:
    """The ``Conv2d`` node (or the backend's kernel for it), arguments already checked."""
    op = resolve(x.backend, "conv2d", Conv2d)(stride, padding, dilation, groups)
    return op(x, weight) if bias is None else op(x, weight, bias)
