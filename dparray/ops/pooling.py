"""1-D and 2-D max and average pooling, each one graph node.

Max pooling keeps, for every output element, the position of the winner within its window
(the first maximum in row-major window order, PyTorch's single-winner rule: ties give the whole
gradient to one element; a NaN in the window wins and propagates). Average pooling divides each
window's sum by PyTorch's divisor: the window's size clipped to the padded input
(``count_include_pad=True``) or to the real input (``False``), or ``divisor_override``. The
1-D nodes are the 2-D ones on a height of one (``dparray.ops._one_d``).
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function
from dparray.kernels import reference, resolve
from dparray.ops._one_d import OnHeightOne
from dparray.ops._windows import Windows, col2im, im2col
from dparray.tensor import Tensor, from_op


@reference("max_pool2d")
class MaxPool2d(Function):
    """The maximum of each window of ``(N, C, H, W)`` input. With ``return_indices`` the node
    also sets ``indices``: each winner's flat position ``h * W + w`` in its input plane (int64,
    the output's shape), as PyTorch returns them."""

    def __init__(self, windows: Windows, return_indices: bool = False) -> None:
        self.geometry, self.return_indices = windows, return_indices
        self.indices: Any = None

    def forward(self, x: Any) -> Any:
        xp = self.xp
        n, c, h, w = x.shape
        out = self.geometry.output_size((h, w))
        columns = im2col(xp, x, self.geometry, out, value=lowest(xp, x.dtype))
        winner = xp.argmax(columns, axis=2)
        y = xp.squeeze(xp.take_along_axis(columns, xp.expand_dims(winner, axis=2), axis=2), axis=2)
        self.input_shape, self.output_hw = (n, c, h, w), out
        if self.return_indices:
            self.indices = self.flat_positions(winner)
        self.save(winner)
        return y

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        (winner,) = self.saved
        positions = xp.reshape(xp.arange(self.geometry.count, dtype=winner.dtype),
                               (1, 1, -1, *(1,) * (grad.ndim - 2)))
        spread = xp.where(xp.expand_dims(winner, axis=2) == positions,
                          xp.expand_dims(grad, axis=2), 0.0)
        return col2im(xp, spread, self.geometry, self.input_shape[2:], self.output_hw)

    def flat_positions(self, winner: Any) -> Any:
        """Window positions of the winners as flat positions in the unpadded input plane."""
        xp = self.xp
        kw = self.geometry.kernel[1]
        (sh, sw), (ph, pw) = self.geometry.stride, self.geometry.padding
        dh, dw = self.geometry.dilation
        oh, ow = self.output_hw
        winner = xp.astype(winner, xp.int64)
        rows = (winner // kw) * dh + xp.reshape(xp.arange(oh, dtype=xp.int64) * sh, (oh, 1)) - ph
        cols = (winner % kw) * dw + xp.reshape(xp.arange(ow, dtype=xp.int64) * sw, (1, ow)) - pw
        return rows * self.input_shape[3] + cols


def lowest(xp: Any, dtype: Any) -> Any:
    """The value padding never wins a maximum with: ``-inf`` for floating dtypes, the dtype's
    minimum for integers (``-inf`` would be cast to 0, beating every negative entry)."""
    if xp.isdtype(dtype, "integral"):
        return int(xp.iinfo(dtype).min)
    if dtype == xp.bool:
        return False
    return -xp.inf


@reference("avg_pool2d")
class AvgPool2d(Function):
    """The mean of each window of ``(N, C, H, W)`` input, with PyTorch's divisor rules."""

    def __init__(self, windows: Windows, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        self.geometry, self.count_include_pad = windows, count_include_pad
        self.divisor_override = divisor_override

    def forward(self, x: Any) -> Any:
        xp = self.xp
        n, c, h, w = x.shape
        out = self.geometry.output_size((h, w))
        columns = im2col(xp, x, self.geometry, out)
        self.divisor = xp.asarray(self.divisors((h, w), out), dtype=x.dtype)
        self.input_shape, self.output_hw = (n, c, h, w), out
        return xp.sum(columns, axis=2) / self.divisor

    def backward(self, grad: Any) -> Any:
        xp = self.xp
        share = xp.expand_dims(grad / self.divisor, axis=2)
        spread = xp.broadcast_to(share, (*grad.shape[:2], self.geometry.count, *grad.shape[2:]))
        return col2im(xp, spread, self.geometry, self.input_shape[2:], self.output_hw)

    def divisors(self, size: tuple[int, int], out: tuple[int, int]) -> list[list[float]]:
        """Each output position's divisor for an input of spatial ``size`` and an output of
        ``out``, from PyTorch's rule (a small host computation; kernels use it too)."""
        if self.divisor_override is not None:
            return [[float(self.divisor_override)] * out[1] for _ in range(out[0])]
        spans = [self._spans(n, o, k, s, p) for n, o, k, s, p in zip(
            size, out, self.geometry.kernel, self.geometry.stride, self.geometry.padding,
            strict=True)]
        return [[float(a * b) for b in spans[1]] for a in spans[0]]

    def _spans(self, n: int, out: int, k: int, s: int, p: int) -> list[int]:
        spans = []
        for o in range(out):
            start = o * s - p
            end = min(start + k, n + p)
            if self.count_include_pad:
                spans.append(end - start)
            else:
                spans.append(min(end, n) - max(start, 0))
        return spans


@reference("max_pool1d")
class MaxPool1d(OnHeightOne, MaxPool2d):
    """The maximum of each window of ``(N, C, L)`` input: the 2-D node on a height of one (its
    ``windows`` are 2-D, ``(1, k)``); ``indices`` are positions along ``L``."""

    def forward(self, x: Any) -> Any:
        y = super().forward(x)
        if self.return_indices:
            self.indices = self.xp.squeeze(self.indices, axis=2)
        return y


@reference("avg_pool1d")
class AvgPool1d(OnHeightOne, AvgPool2d):
    """The mean of each window of ``(N, C, L)`` input: the 2-D node on a height of one."""


def max_pool(x: Tensor, windows: Windows, return_indices: bool = False, dims: int = 2) -> Any:
    """The ``MaxPool1d`` or ``MaxPool2d`` node (``windows`` are 2-D, of height one for
    ``dims=1``), or the backend's kernel for it; with ``return_indices`` also the winners'
    positions."""
    if dims == 1:
        op: MaxPool2d = resolve(x.backend, MaxPool1d)(windows, return_indices)
    else:
        op = resolve(x.backend, MaxPool2d)(windows, return_indices)
    out = op(x)
    if not return_indices:
        return out
    return out, from_op(op.indices, x.backend, None)


def avg_pool(x: Tensor, windows: Windows, count_include_pad: bool = True,
             divisor_override: int | None = None, dims: int = 2) -> Tensor:
    """The ``AvgPool1d`` or ``AvgPool2d`` node, or the backend's kernel for it."""
    if dims == 1:
        node: type[AvgPool2d] = resolve(x.backend, AvgPool1d)
    else:
        node = resolve(x.backend, AvgPool2d)
    return node(windows, count_include_pad, divisor_override)(x)
