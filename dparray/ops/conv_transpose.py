"""Transposed convolution (PyTorch's ``conv_transpose1d``/``conv_transpose2d``), one graph node.

A transposed convolution is the gradient of a convolution with respect to its input, so the two
share their pieces (``dparray.ops._windows``) in the other order. Forward multiplies the weight
``(C, OC/groups, kh, kw)``, per group, into columns ``(N, OC, kh*kw, H, W)`` and adds them back
into the output by col2im; backward reads the output gradient's windows by im2col and makes the
input's gradient (a convolution of it) and the weight's from them, in the convolution's layout
(``dparray.ops.conv.to_groups``). Backward keeps the input and the weight; the output's spatial
size is PyTorch's, ``(H - 1) * stride - 2 * padding + dilation * (kh - 1) + output_padding + 1``.
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function
from dparray.kernels import reference, resolve
from dparray.ops._autocast import autocast_op
from dparray.ops._one_d import OnHeightOne
from dparray.ops._promote import wide_sum
from dparray.ops._util import check_same_kind
from dparray.ops._windows import Pair, Sizes, Windows, col2im, im2col
from dparray.ops.conv import from_groups, to_groups
from dparray.ops.linalg import array_matmul
from dparray.tensor import Tensor


def transposed_size(size: Sizes, kernel: Sizes, stride: Sizes, padding: Sizes,
                    output_padding: Sizes, dilation: Sizes) -> Sizes:
    """The output's spatial size of a transposed convolution, PyTorch's formula."""
    return tuple((n - 1) * s - 2 * p + d * (k - 1) + o + 1 for n, k, s, p, o, d in zip(
        size, kernel, stride, padding, output_padding, dilation, strict=True))


@reference("conv_transpose2d")
class ConvTranspose2d(Function):
    """``conv_transpose2d(x, weight, bias)`` for ``x`` ``(N, C, H, W)``, ``weight``
    ``(C, OC / groups, kh, kw)`` and an optional ``bias`` ``(OC,)``; the caller checks shapes
    (``dparray.nn.functional.conv_transpose2d``)."""

    def __init__(self, stride: Pair, padding: Pair, output_padding: Pair, dilation: Pair,
                 groups: int) -> None:
        self.stride, self.padding, self.dilation = stride, padding, dilation
        self.output_padding, self.groups = output_padding, groups

    def windows(self, weight_shape: tuple[int, ...]) -> Windows:
        return Windows((weight_shape[2], weight_shape[3]), self.stride, self.padding,
                       self.dilation)

    def forward(self, x: Any, weight: Any, bias: Any = None) -> Any:
        xp = self.xp
        check_same_kind("conv_transpose2d", self.backend, x, weight)
        windows = self.windows(tuple(weight.shape))
        n, c, h, w = x.shape
        g = self.groups
        oc = weight.shape[1] * g
        size = transposed_size((h, w), windows.kernel, self.stride, self.padding,
                               self.output_padding, self.dilation)
        kernel = xp.reshape(weight, (g, c // g, (oc // g) * windows.count))
        columns = array_matmul(self.backend)(xp.matrix_transpose(kernel), self._input_rows(x))
        y = col2im(xp, from_groups(xp, columns, (n, oc, windows.count, h, w)), windows, size,
                   (h, w))
        if bias is not None:
            y = y + xp.reshape(bias, (1, oc, 1, 1))
        self.has_bias = bias is not None
        self.save(x, weight)
        return y

    def backward(self, grad: Any) -> tuple[Any, ...]:
        xp = self.xp
        x, weight = self.saved
        n, c, h, w = x.shape
        g = self.groups
        oc = weight.shape[1] * g
        windows = self.windows(tuple(weight.shape))
        rows = to_groups(xp, im2col(xp, grad, windows, (h, w)), g)  # (g, OC/g * K, N * H*W)
        grad_x = grad_weight = grad_bias = None
        product = array_matmul(self.backend)
        if self.needs_grad(0):
            kernel = xp.reshape(weight, (g, c // g, (oc // g) * windows.count))
            grad_x = xp.reshape(from_groups(xp, product(kernel, rows), (n, c, 1, h, w)),
                                (n, c, h, w))
        if self.needs_grad(1):
            grad_weight = xp.reshape(product(self._input_rows(x), xp.matrix_transpose(rows)),
                                     tuple(weight.shape))
        if self.has_bias and self.needs_grad(2):
            grad_bias = wide_sum(self.backend, grad, (0, 2, 3))
        return (grad_x, grad_weight, grad_bias) if self.has_bias else (grad_x, grad_weight)

    def _input_rows(self, x: Any) -> Any:
        """``x`` as one matrix per group, ``(groups, C/groups, N * H*W)``."""
        n, c, h, w = x.shape
        return to_groups(self.xp, self.xp.reshape(x, (n, c, 1, h, w)), self.groups)


@reference("conv_transpose1d")
class ConvTranspose1d(OnHeightOne, ConvTranspose2d):
    """``conv_transpose1d(x, weight, bias)`` for ``x`` ``(N, C, L)`` and ``weight``
    ``(C, OC / groups, k)``: the 2-D node on a height of one (its constructor takes the 2-D
    geometry)."""


@autocast_op("conv_transpose")
def conv_transpose(x: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple[int, ...],
                   padding: tuple[int, ...], output_padding: tuple[int, ...],
                   dilation: tuple[int, ...], groups: int) -> Tensor:
    """The ``ConvTranspose1d`` or ``ConvTranspose2d`` node (by the number of spatial axes of
    the geometry, already checked), or the backend's kernel for it."""
    if len(stride) == 1:
        node = resolve(x.backend, ConvTranspose1d)
        op: ConvTranspose2d = node((1, stride[0]), (0, padding[0]), (0, output_padding[0]),
                                   (1, dilation[0]), groups)
    else:
        op = resolve(x.backend, ConvTranspose2d)(
            (stride[0], stride[1]), (padding[0], padding[1]),
            (output_padding[0], output_padding[1]), (dilation[0], dilation[1]), groups)
    return op(x, weight) if bias is None else op(x, weight, bias)
