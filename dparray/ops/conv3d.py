"""3-D convolution and transposed convolution over volumes ``(N, C, D, H, W)``, each one graph
node, built like the 2-D ones (``dparray.ops.conv``, ``dparray.ops.conv_transpose``) from the
same pieces: the windows of ``dparray.ops._windows`` (for any number of spatial axes) and one
matrix product per group in the convolution's layout (``conv.to_groups``: the output's spatial
axes flattened into one, so the batch joins the columns as it does in 2-D).

``convolve`` and ``conv_transpose`` here take any number of spatial axes: three run these
nodes, one and two the 1-D and 2-D nodes (and the backends' kernels for them).
"""

from __future__ import annotations

import math
from typing import Any

from dparray.autograd import Function
from dparray.kernels import reference, resolve
from dparray.ops import conv as _conv
from dparray.ops import conv_transpose as _conv_transpose
from dparray.ops._autocast import autocast_op
from dparray.ops._promote import wide_sum
from dparray.ops._util import check_same_kind
from dparray.ops._windows import Sizes, Windows, col2im, im2col
from dparray.ops.conv import from_groups, to_groups
from dparray.ops.conv_transpose import transposed_size
from dparray.ops.linalg import array_matmul
from dparray.tensor import Tensor


def _as_rows(xp: Any, columns: Any, groups: int) -> Any:
    """Windows ``(N, C, K, *spatial)`` as one matrix per group, ``(groups, C/groups * K,
    N * prod(spatial))``: ``to_groups`` on the spatial axes flattened."""
    n, c, k = columns.shape[:3]
    flat = xp.reshape(columns, (n, c, k, math.prod(columns.shape[3:]), 1))
    return to_groups(xp, flat, groups)


def _from_rows(xp: Any, m: Any, shape: tuple[int, ...]) -> Any:
    """The inverse of ``_as_rows``: the matrices back as ``(N, C, K, *spatial)`` ``shape``."""
    n, c, k = shape[:3]
    return xp.reshape(from_groups(xp, m, (n, c, k, math.prod(shape[3:]), 1)), shape)


class _Volume(Function):
    """What the 3-D nodes share: their geometry and the windows of a weight's kernel."""

    def __init__(self, stride: Sizes, padding: Sizes, dilation: Sizes, groups: int) -> None:
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups

    def windows(self, weight_shape: tuple[int, ...]) -> Windows:
        return Windows(tuple(weight_shape[2:]), self.stride, self.padding, self.dilation)

    def bias_gradient(self, grad: Any) -> Any:
        return wide_sum(self.backend, grad, (0, *range(2, grad.ndim)))


@reference("conv3d")
class Conv3d(_Volume):
    """``conv3d(x, weight, bias)`` for ``x`` ``(N, C, D, H, W)``, ``weight``
    ``(OC, C / groups, kd, kh, kw)`` and an optional ``bias`` ``(OC,)``; the caller checks
    shapes (``dparray.nn.functional.conv3d``). Backward keeps the windows' matrix and the
    weight, as the 2-D node does."""

    def forward(self, x: Any, weight: Any, bias: Any = None) -> Any:
        xp = self.xp
        check_same_kind("conv3d", self.backend, x, weight)
        windows = self.windows(tuple(weight.shape))
        n, c = x.shape[:2]
        oc, g = weight.shape[0], self.groups
        out = windows.output_size(tuple(x.shape[2:]))
        rows = _as_rows(xp, im2col(xp, x, windows, out), g)
        kernel = xp.reshape(weight, (g, oc // g, (c // g) * windows.count))
        y = _from_rows(xp, array_matmul(self.backend)(kernel, rows), (n, oc, 1, *out))
        y = xp.reshape(y, (n, oc, *out))
        if bias is not None:
            y = y + xp.reshape(bias, (1, oc, 1, 1, 1))
        self.input_shape, self.has_bias = tuple(x.shape), bias is not None
        self.save(rows, weight)
        return y

    def backward(self, grad: Any) -> tuple[Any, ...]:
        xp = self.xp
        rows, weight = self.saved
        n, c = self.input_shape[:2]
        oc, g = weight.shape[0], self.groups
        windows = self.windows(tuple(weight.shape))
        out = tuple(grad.shape[2:])
        grad_rows = _as_rows(xp, xp.reshape(grad, (n, oc, 1, *out)), g)
        grad_x = grad_weight = grad_bias = None
        product = array_matmul(self.backend)
        if self.needs_grad(0):
            kernel = xp.reshape(weight, (g, oc // g, (c // g) * windows.count))
            columns = _from_rows(xp, product(xp.matrix_transpose(kernel), grad_rows),
                                 (n, c, windows.count, *out))
            grad_x = col2im(xp, columns, windows, self.input_shape[2:], out)
        if self.needs_grad(1):
            grad_weight = xp.reshape(product(grad_rows, xp.matrix_transpose(rows)),
                                     tuple(weight.shape))
        if self.has_bias and self.needs_grad(2):
            grad_bias = self.bias_gradient(grad)
        return (grad_x, grad_weight, grad_bias) if self.has_bias else (grad_x, grad_weight)


@reference("conv_transpose3d")
class ConvTranspose3d(_Volume):
    """``conv_transpose3d(x, weight, bias)`` for ``x`` ``(N, C, D, H, W)``, ``weight``
    ``(C, OC / groups, kd, kh, kw)`` and an optional ``bias`` ``(OC,)``: the gradient of a 3-D
    convolution with respect to its input, as the 2-D node is (its backward keeps the input and
    the weight)."""

    def __init__(self, stride: Sizes, padding: Sizes, output_padding: Sizes, dilation: Sizes,
                 groups: int) -> None:
        super().__init__(stride, padding, dilation, groups)
        self.output_padding = output_padding

    def forward(self, x: Any, weight: Any, bias: Any = None) -> Any:
        xp = self.xp
        check_same_kind("conv_transpose3d", self.backend, x, weight)
        windows = self.windows(tuple(weight.shape))
        n, c = x.shape[:2]
        spatial = tuple(x.shape[2:])
        g = self.groups
        oc = weight.shape[1] * g
        size = transposed_size(spatial, windows.kernel, self.stride, self.padding,
                               self.output_padding, self.dilation)
        kernel = xp.reshape(weight, (g, c // g, (oc // g) * windows.count))
        columns = array_matmul(self.backend)(xp.matrix_transpose(kernel), self._input_rows(x))
        y = col2im(xp, _from_rows(xp, columns, (n, oc, windows.count, *spatial)), windows,
                   size, spatial)
        if bias is not None:
            y = y + xp.reshape(bias, (1, oc, 1, 1, 1))
        self.has_bias = bias is not None
        self.save(x, weight)
        return y

    def backward(self, grad: Any) -> tuple[Any, ...]:
        xp = self.xp
        x, weight = self.saved
        n, c = x.shape[:2]
        spatial = tuple(x.shape[2:])
        g = self.groups
        oc = weight.shape[1] * g
        windows = self.windows(tuple(weight.shape))
        rows = _as_rows(xp, im2col(xp, grad, windows, spatial), g)
        grad_x = grad_weight = grad_bias = None
        product = array_matmul(self.backend)
        if self.needs_grad(0):
            kernel = xp.reshape(weight, (g, c // g, (oc // g) * windows.count))
            grad_x = xp.reshape(_from_rows(xp, product(kernel, rows), (n, c, 1, *spatial)),
                                tuple(x.shape))
        if self.needs_grad(1):
            grad_weight = xp.reshape(product(self._input_rows(x), xp.matrix_transpose(rows)),
                                     tuple(weight.shape))
        if self.has_bias and self.needs_grad(2):
            grad_bias = self.bias_gradient(grad)
        return (grad_x, grad_weight, grad_bias) if self.has_bias else (grad_x, grad_weight)

    def _input_rows(self, x: Any) -> Any:
        """``x`` as one matrix per group, ``(groups, C/groups, N * D*H*W)``."""
        return _as_rows(self.xp, self.xp.reshape(x, (*x.shape[:2], 1, *x.shape[2:])),
                        self.groups)


def convolve(x: Tensor, weight: Tensor, bias: Tensor | None, stride: Sizes, padding: Sizes,
             dilation: Sizes, groups: int) -> Tensor:
    """The convolution node for the number of spatial axes of the (checked) geometry: 1-D,
    2-D (``dparray.ops.conv``) or 3-D."""
    if len(stride) < 3:
        return _conv.convolve(x, weight, bias, stride, padding, dilation, groups)
    return conv3d(x, weight, bias, stride, padding, dilation, groups)


@autocast_op("conv3d")
def conv3d(x: Tensor, weight: Tensor, bias: Tensor | None, stride: Sizes, padding: Sizes,
           dilation: Sizes, groups: int) -> Tensor:
    """The ``Conv3d`` node (or the backend's kernel for it), arguments already checked."""
    op = resolve(x.backend, Conv3d)(stride, padding, dilation, groups)
    return op(x, weight) if bias is None else op(x, weight, bias)


def conv_transpose(x: Tensor, weight: Tensor, bias: Tensor | None, stride: Sizes,
                   padding: Sizes, output_padding: Sizes, dilation: Sizes,
                   groups: int) -> Tensor:
    """The transposed convolution node for the number of spatial axes of the (checked)
    geometry: 1-D, 2-D (``dparray.ops.conv_transpose``) or 3-D."""
    if len(stride) < 3:
        return _conv_transpose.conv_transpose(x, weight, bias, stride, padding, output_padding,
                                              dilation, groups)
    return conv_transpose3d(x, weight, bias, stride, padding, output_padding, dilation, groups)


@autocast_op("conv_transpose3d")
def conv_transpose3d(x: Tensor, weight: Tensor, bias: Tensor | None, stride: Sizes,
                     padding: Sizes, output_padding: Sizes, dilation: Sizes,
                     groups: int) -> Tensor:
    """The ``ConvTranspose3d`` node (or the backend's kernel for it), arguments already
    checked."""
    op = resolve(x.backend, ConvTranspose3d)(stride, padding, output_padding, dilation, groups)
    return op(x, weight) if bias is None else op(x, weight, bias)
