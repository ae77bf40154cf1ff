"""1-D and 2-D convolution (cross-correlation, as in every framework), each one graph node.

Forward is im2col and one matrix product per group: the windows of the zero-padded input,
``(N, C, kh*kw, OH, OW)``, laid out as ``(groups, C/groups * kh*kw, N * OH*OW)`` (the batch
joins the columns: NumPy runs one large product far faster than a broadcast batch of small
ones), multiplied by the weight ``(groups, OC/groups, C/groups * kh*kw)``. Backward is the two
products of a matmul's gradient and col2im for the input's. The windows' matrix is what backward
keeps (with the weight): it is the product's operand for the weight's gradient. The 1-D node is
the 2-D one on a height of one (``dparray.ops._one_d``).
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function
from dparray.kernels import reference, resolve
from dparray.ops._autocast import autocast_op
from dparray.ops._one_d import OnHeightOne
from dparray.ops._promote import wide_sum
from dparray.ops._util import check_same_kind
from dparray.ops._windows import Windows, col2im, im2col
from dparray.ops.linalg import array_matmul
from dparray.tensor import Tensor


def to_groups(xp: Any, a: Any, groups: int) -> Any:
    """``(N, C, K, H, W)`` as one matrix per group, ``(groups, C/groups * K, N * H*W)``."""
    n, c, k, h, w = a.shape
    return xp.reshape(xp.permute_dims(a, (1, 2, 0, 3, 4)), (groups, (c // groups) * k, n * h * w))


def from_groups(xp: Any, m: Any, shape: tuple[int, ...]) -> Any:
    """The inverse of ``to_groups``: the matrices back as an array of ``(N, C, K, H, W)``
    ``shape``."""
    n, c, k, h, w = shape
    return xp.permute_dims(xp.reshape(m, (c, k, n, h, w)), (2, 0, 1, 3, 4))


@reference("conv2d")
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
        oh, ow = windows.output_size((h, w))
        rows = to_groups(xp, im2col(xp, x, windows, (oh, ow)), g)
        kernel = xp.reshape(weight, (g, oc // g, (c // g) * windows.count))
        grouped = array_matmul(self.backend)(kernel, rows)
        y = xp.reshape(from_groups(xp, grouped, (n, oc, 1, oh, ow)), (n, oc, oh, ow))
        if bias is not None:
            y = y + xp.reshape(bias, (1, oc, 1, 1))
        self.input_shape, self.has_bias = (n, c, h, w), bias is not None
        self.save(rows, weight)
        return y

    def backward(self, grad: Any) -> tuple[Any, ...]:
        xp = self.xp
        rows, weight = self.saved
        n, c, h, w = self.input_shape
        oc, g = weight.shape[0], self.groups
        windows = self.windows(tuple(weight.shape))
        oh, ow = grad.shape[2], grad.shape[3]
        grad_rows = to_groups(xp, xp.reshape(grad, (n, oc, 1, oh, ow)), g)
        grad_x = grad_weight = grad_bias = None
        product = array_matmul(self.backend)
        if self.needs_grad(0):
            kernel = xp.reshape(weight, (g, oc // g, (c // g) * windows.count))
            columns = from_groups(xp, product(xp.matrix_transpose(kernel), grad_rows),
                                  (n, c, windows.count, oh, ow))
            grad_x = col2im(xp, columns, windows, (h, w), (oh, ow))
        if self.needs_grad(1):
            grad_weight = xp.reshape(product(grad_rows, xp.matrix_transpose(rows)),
                                     tuple(weight.shape))
        if self.has_bias and self.needs_grad(2):
            grad_bias = wide_sum(self.backend, grad, (0, 2, 3))
        return (grad_x, grad_weight, grad_bias) if self.has_bias else (grad_x, grad_weight)


@autocast_op("conv2d")
def conv2d(x: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple[int, int],
           padding: tuple[int, int], dilation: tuple[int, int], groups: int) -> Tensor:
    """The ``Conv2d`` node (or the backend's kernel for it), arguments already checked."""
    op = resolve(x.backend, Conv2d)(stride, padding, dilation, groups)
    return op(x, weight) if bias is None else op(x, weight, bias)


@reference("conv1d")
class Conv1d(OnHeightOne, Conv2d):
    """``conv1d(x, weight, bias)`` for ``x`` ``(N, C, L)``, ``weight`` ``(OC, C / groups, k)``
    and an optional ``bias`` ``(OC,)``: the 2-D node on a height of one, so its constructor
    takes the 2-D geometry (``stride=(1, s)``, ...)."""


@autocast_op("conv1d")
def conv1d(x: Tensor, weight: Tensor, bias: Tensor | None, stride: int, padding: int,
           dilation: int, groups: int) -> Tensor:
    """The ``Conv1d`` node (or the backend's kernel for it), arguments already checked."""
    op = resolve(x.backend, Conv1d)((1, stride), (0, padding), (1, dilation), groups)
    return op(x, weight) if bias is None else op(x, weight, bias)


def convolve(x: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple[int, ...],
             padding: tuple[int, ...], dilation: tuple[int, ...], groups: int) -> Tensor:
    """``conv1d`` or ``conv2d``, by the number of spatial axes of the (checked) geometry."""
    if len(stride) == 1:
        return conv1d(x, weight, bias, stride[0], padding[0], dilation[0], groups)
    return conv2d(x, weight, bias, (stride[0], stride[1]), (padding[0], padding[1]),
                  (dilation[0], dilation[1]), groups)
