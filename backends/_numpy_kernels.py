"""The NumPy backend's kernel table: Numba-compiled versions of the fused ops.

Each class subclasses the array-API reference it replaces (``dparray.ops...``), keeps its
constructor, inputs and outputs, and overrides ``forward`` and ``backward`` with compiled loops
(``_numba_loops.py``) or NumPy's own fast paths (a strided window view for im2col). Where a
kernel does not cover a case (a layout, a dtype other than float32/float64, synchronised
statistics), it runs the reference's forward and, remembering that, its backward.

``table()`` returns the mapping. Without Numba, or without a threading layer that is safe for
several threads launching kernels at once (``omp`` or ``tbb``), it holds only ``"matmul"``, the
array product every product-based op calls, and only when MKL is installed (``_mkl``): every
other op then runs its reference.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from dparray.autograd import PickGradient
from dparray.ops import attention as _attention
from dparray.ops import conv_transpose as _transpose
from dparray.ops import cross_entropy as _ce
from dparray.ops import embedding as _embedding
from dparray.ops import normalization as _norm
from dparray.ops import pooling as _pool
from dparray.ops import sum_of_squares as _squares
from dparray.ops.conv import Conv1d, Conv2d
from dparray.ops.elementwise import Gelu, Relu
from dparray.ops.squared_error import SquaredError

from . import _depthwise_conv as depthwise
from ._adaptive_pool_kernel import AdaptiveAvgPoolKernel, AdaptiveMaxPoolKernel
from ._binary_cross_entropy_kernel import BinaryCrossEntropyKernel
from ._core_split import apply, exp
from ._dropout_kernel import DropoutKernel
from ._elu_kernel import EluKernel
from ._fallback import Fallback, floating
from ._interpolate_kernel import InterpolateKernel
from ._low_precision import table as low_precision_table
from ._mkl import matmul
from ._mkl import status as mkl_status
from ._numba_setup import loops as _loops
from ._numba_setup import serial, sized
from ._piecewise_kernels import (
    HardsigmoidKernel,
    HardswishKernel,
    HardtanhKernel,
    LeakyReluKernel,
)
from ._pow_kernel import PowKernel
from ._recurrence_kernels import (
    GRUSequenceKernel,
    LSTMSequenceKernel,
    RNNSequenceKernel,
)
from ._sigmoid_kernels import SigmoidKernel, SiluKernel, TanhKernel
from ._softmax_kernels import (
    LogSoftmaxKernel,
    SoftmaxKernel,
    exponentials_with_picks,
    log_softmax_rows_keeping_sums,
    softmax_rows,
)
from ._softplus_kernels import (
    BinaryCrossEntropyWithLogitsKernel,
    LogSigmoidKernel,
    MishKernel,
    SoftplusKernel,
    SoftplusWithThresholdKernel,
)
from ._update_kernels import (
    adadelta_update,
    adagrad_update,
    adam_update,
    adamax_update,
    nadam_update,
    rmsprop_update,
    sgd_update,
)


class NormalizationKernel(Fallback, _norm.Normalization):
    """Layer, batch, group and instance norm by their own statistics in one pass each way
    (given statistics, evaluation's running ones, and synchronised batch norm take the
    reference); the table holds it as the classes below, one per reference."""

    def forward(self, x: Any, weight: Any = None, bias: Any = None, mean: Any = None,
                var: Any = None) -> Any:
        loops = _loops()
        synced = self.statistics is not None and self.statistics is not _norm.LOCAL
        if synced or self.statistics is None or not floating(x, weight, bias) or x.size == 0:
            return self.reference_forward(x, weight, bias, mean, var)
        self.input_shape = tuple(x.shape)
        view = np.ascontiguousarray(np.reshape(x, self._kernel_view()))
        affine = self._affine_shape(view)
        w = np.ones(affine, x.dtype) if weight is None else weight.reshape(affine)
        b = np.zeros(affine, x.dtype) if bias is None else bias.reshape(affine)
        out = np.empty_like(view)
        statistics = view.shape[1] if self.layout == "channels" else view.shape[0]
        mean_out = np.empty(statistics, np.float64)
        rstd_out = np.empty(statistics, np.float64)
        if self.layout == "rows":
            loops.rows_forward(view, w, b, self.eps, out, mean_out, rstd_out)
        else:
            var_out = np.empty(statistics, np.float64)
            if self.layout == "channels" and view.shape[2] == 1:  # (N, C): by columns
                rows = view.shape[:2]
                loops.columns_forward(view.reshape(rows), w, b, self.eps, out.reshape(rows),
                                      mean_out, var_out, rstd_out)
                self.batch_count = view.shape[0]
            elif self.layout == "channels":
                loops.channels_forward(view, w, b, self.eps, out, mean_out, var_out, rstd_out)
                self.batch_count = view.shape[0] * view.shape[2]
            else:
                loops.groups_forward(view, w, b, self.eps, out, mean_out, var_out, rstd_out)
                self.batch_count = view.shape[1] * view.shape[2]
            self.batch_mean = mean_out.astype(x.dtype)
            self.batch_var = var_out.astype(x.dtype)
        self.has_bias = bias is not None
        self.bias_shape = tuple(bias.shape) if bias is not None else ()
        self.save(view, mean_out, rstd_out, weight)
        return np.reshape(out, self.input_shape)

    def _kernel_view(self) -> tuple[int, ...]:
        """The loops' view of ``x``: the reference's, with groups as ``(N * G, C / G, L)``."""
        shape = self.view_shape(self.input_shape)
        return shape if self.layout != "groups" else (shape[0] * shape[1], *shape[2:])

    def _affine_shape(self, view: Any) -> tuple[int, ...]:
        """The parameters' shape for the loops: one per column, channel, or ``(G, C / G)``."""
        if self.layout == "groups":
            return (self.groups, view.shape[1])
        return (view.shape[1],)

    def backward(self, grad: Any) -> tuple[Any, ...]:
        if self.fallback:
            return self.reference_backward(grad)
        loops = _loops()
        view, mean, rstd, weight = self.saved
        dy = np.ascontiguousarray(np.reshape(grad, view.shape), dtype=view.dtype)
        affine = self._affine_shape(view)
        w = np.ones(affine, view.dtype) if weight is None else weight.reshape(affine)
        dx = np.empty_like(view)
        if self.layout == "rows":
            blocks = min(16, view.shape[0])
            partial_w = np.zeros((blocks, *affine), np.float64)
            partial_b = np.zeros((blocks, *affine), np.float64)
            loops.rows_backward(dy, view, mean, rstd, w, dx, partial_w, partial_b)
            grad_w, grad_b = partial_w.sum(axis=0), partial_b.sum(axis=0)
        elif self.layout == "channels":
            grad_w = np.empty(affine, np.float64)
            grad_b = np.empty(affine, np.float64)
            if view.shape[2] == 1:
                rows = view.shape[:2]
                loops.columns_backward(dy.reshape(rows), view.reshape(rows), mean, rstd, w,
                                       dx.reshape(rows), grad_w, grad_b)
            else:
                loops.channels_backward(dy, view, mean, rstd, w, dx, grad_w, grad_b)
        else:
            partial_w = np.empty(view.shape[:2], np.float64)
            partial_b = np.empty(view.shape[:2], np.float64)
            loops.groups_backward(dy, view, mean, rstd, w, dx, partial_w, partial_b)
            samples = self.input_shape[0]
            grad_w = partial_w.reshape(samples, -1).sum(axis=0)
            grad_b = partial_b.reshape(samples, -1).sum(axis=0)
        grads: list[Any] = [np.reshape(dx, self.input_shape) if self.needs_grad(0) else None]
        if len(self.parents or ()) > 1:
            grads.append(None if weight is None or not self.needs_grad(1) else
                         grad_w.astype(view.dtype).reshape(weight.shape))
        if len(self.parents or ()) > 2:
            grads.append(grad_b.astype(view.dtype).reshape(self.bias_shape)
                         if self.has_bias and self.needs_grad(2) else None)
        return tuple(grads)


class LayerNormKernel(NormalizationKernel, _norm.LayerNorm):
    """Layer norm in one pass each way."""


class BatchNormKernel(NormalizationKernel, _norm.BatchNorm):
    """Batch norm by the batch's statistics in one pass each way."""


class GroupNormKernel(NormalizationKernel, _norm.GroupNorm):
    """Group norm in one pass each way, one (sample, group) per task."""


class InstanceNormKernel(NormalizationKernel, _norm.InstanceNorm):
    """Instance norm by its own statistics (given ones: the reference) in one pass each way."""


class GeluKernel(Fallback, Gelu):
    """GELU, exact or tanh-approximated: vectorised loops, NumPy's SIMD exp and tanh. The exact
    form computes its derivative in forward (when recorded) and keeps only that, so backward is
    one product."""

    def forward(self, x: Any) -> Any:
        if not floating(x):
            return self.reference_forward(x)
        loops = _loops()
        flat = x.ravel()
        out, kept = np.empty_like(flat), np.empty_like(flat)
        self.shape = tuple(x.shape)
        if self.approximate == "tanh":
            loops.gelu_tanh_inner(flat, kept)
            apply(np.tanh, kept, kept)
            loops.gelu_tanh_forward(flat, kept, out)
            self.save(flat, kept)
            return out.reshape(self.shape)
        if flat.dtype == np.float32 and self.recording():
            loops.gelu_forward_float32_with_derivative(flat, out, kept)
            self.save(kept)
            return out.reshape(self.shape)
        if flat.dtype == np.float32:
            loops.gelu_forward_float32(flat, out, kept)
        else:
            loops.gelu_forward(flat, out, kept)
        if self.recording():
            density = np.multiply(flat, -0.5)  # as the reference: exp(-0.5 * x * x)
            np.multiply(density, flat, out=density)
            np.exp(density, out=density)
            loops.gelu_derivative(flat, kept, density)
            self.save(density)
        return out.reshape(self.shape)

    def backward(self, grad: Any) -> Any:
        if self.fallback:
            return self.reference_backward(grad)
        if self.approximate == "tanh":
            flat, kept = self.saved
            g = np.ascontiguousarray(grad, dtype=flat.dtype).reshape(-1)
            out = np.empty_like(flat)
            _loops().gelu_tanh_backward(g, flat, kept, out)
            return out.reshape(self.shape)
        (derivative,) = self.saved
        return np.multiply(np.reshape(grad, self.shape), derivative.reshape(self.shape),
                           dtype=derivative.dtype)


class ReluKernel(Fallback, Relu):
    """ReLU on every core each way; the reference's backward makes a mask, casts it to the
    gradient's dtype and multiplies, three passes."""

    def forward(self, x: Any) -> Any:
        if not floating(x):
            return self.reference_forward(x)
        out = np.empty(x.shape, x.dtype)
        _loops().relu(x.ravel(), out.reshape(-1))
        self.save(out)  # the reference's mask source, as it keeps it
        return out

    def backward(self, grad: Any) -> Any:
        (kept,) = self.saved
        if self.fallback or not floating(kept, grad):
            return self.reference_backward(grad)
        out = np.empty(kept.shape, kept.dtype)
        _loops().relu_backward(grad.ravel(), kept.ravel(), out.reshape(-1))
        return out


class SquaredErrorKernel(Fallback, SquaredError):
    """``mse_loss`` summed or averaged: the difference and the sum of its squares in one
    compiled pass (the reference takes three), the sum accumulated in float64, so a float32
    mean is finite whenever it is representable (the reference's float32 sum may overflow
    first). Backward is the reference's, one product with the kept difference."""

    def forward(self, input: Any, target: Any) -> Any:
        count = input.size
        if self.reduction == "none" or not count or not floating(input, target):
            return self.reference_forward(input, target)  # (the shapes are one: mse_loss checks)
        difference = np.empty(input.shape, input.dtype)
        total = _loops().squared_difference_sum(input.ravel(), target.ravel(),
                                                difference.reshape(-1))
        self.save(difference)
        return np.asarray(total / count if self.reduction == "mean" else total, input.dtype)


class _AttentionSoftmax:
    """Attention's softmax over the score rows (zeros for a row that sees no key) and its
    backward, each one compiled pass (and NumPy's SIMD exp); the products stay BLAS's."""

    def softmax(self, scores: Any) -> Any:
        if not floating(scores) or scores.ndim == 0 or scores.shape[-1] == 0:
            return super().softmax(scores)  # type: ignore[misc]  # the reference's, next in MRO
        rows = np.ascontiguousarray(scores).reshape(-1, scores.shape[-1])
        return softmax_rows(rows, log=False, keep_empty_rows=True).reshape(scores.shape)

    def causal_softmax(self, scores: Any) -> Any:
        """The causal mask applied inside the softmax's first pass (no mask array, no where
        over the scores); the reference's arithmetic, so the same probabilities."""
        if not floating(scores) or scores.ndim < 2 or scores.shape[-1] == 0:
            return super().causal_softmax(scores)  # type: ignore[misc]  # the reference's
        length, width = scores.shape[-2], scores.shape[-1]
        rows = np.ascontiguousarray(scores).reshape(-1, width)
        shifted = np.empty_like(rows)
        _loops().causal_shift_rows(rows, shifted, length)
        exp(shifted, out=shifted)
        _loops().normalize_rows(shifted)
        return shifted.reshape(scores.shape)

    def softmax_backward(self, grad_probs: Any, probs: Any) -> Any:
        if not floating(grad_probs, probs) or grad_probs.shape != probs.shape \
                or probs.ndim == 0 or probs.shape[-1] == 0:
            return super().softmax_backward(grad_probs, probs)  # type: ignore[misc]  # as above
        width = probs.shape[-1]
        p = np.ascontiguousarray(probs).reshape(-1, width)
        result = np.empty_like(p)
        _loops().softmax_rows_backward(np.ascontiguousarray(grad_probs).reshape(-1, width), p,
                                       result)
        return result.reshape(probs.shape)


class AttentionKernel(_AttentionSoftmax, _attention.ScaledDotProductAttention):
    """Scaled dot-product attention with the compiled softmax."""


class AttentionWeightsKernel(_AttentionSoftmax, _attention.AttentionWeights):
    """The attention probabilities with the compiled softmax."""


class CrossEntropyKernel(Fallback, _ce.CrossEntropy):
    """Cross-entropy of rows. Forward: the shifted scores, their exponentials and row sums
    (by blocks of rows, ``_softmax_kernels.exponentials_with_picks``), and the
    log-probabilities of the targets alone (all of them only with label smoothing); it keeps
    the exponentials and sums, so backward needs no second exp: the probabilities are ``e /
    total``, within an ulp or two of the reference's ``exp(log_probs)``. The gradient is one
    compiled pass."""

    def forward(self, logits: Any, target: Any, weight: Any = None) -> Any:
        if not floating(logits, weight) or logits.ndim != 2:
            return self.reference_forward(logits, target, weight)
        safe, kept, row_weight = self.pick_setup(logits, target, weight)
        rows = np.ascontiguousarray(logits)
        count, classes = rows.shape
        class_weight = np.ones(classes, rows.dtype) if weight is None else \
            np.ascontiguousarray(weight)
        safe = np.ascontiguousarray(safe, dtype=np.int64)
        smoothing = self.label_smoothing
        if smoothing:
            log_probs, exponentials, totals = log_softmax_rows_keeping_sums(rows)
            picked = np.empty(count, rows.dtype)
            spread = np.empty(count, rows.dtype)
            _loops().pick_and_spread(log_probs, safe, class_weight, picked, spread)
        else:  # the spread over every class only counts with smoothing: just the picks
            exponentials, totals, logs, picked = exponentials_with_picks(rows, safe)
            picked = (picked - logs).astype(rows.dtype)  # as log_normalize_rows rounds them
        losses = np.where(kept == 0.0, 0.0, -picked * row_weight).astype(rows.dtype)
        if smoothing:
            uniform = -spread * (smoothing / classes)
            losses = losses * (1.0 - smoothing) + np.where(kept == 0.0, 0.0, uniform)
        self.save(exponentials, totals, safe, kept, row_weight, weight)
        return self.reduce(losses, row_weight)

    def backward(self, grad: Any) -> tuple[Any, None, None]:
        if self.fallback:
            return self.reference_backward(grad)
        exponentials, totals, safe, kept, row_weight, weight = self.saved
        rows, classes = exponentials.shape
        dtype = exponentials.dtype
        smoothing = self.label_smoothing
        if smoothing:
            total_w = float(classes) if weight is None else float(np.sum(weight))
            coefficient = (1.0 - smoothing) * row_weight + (smoothing / classes) * total_w
            class_mass = (smoothing / classes) * (np.ones(classes, dtype) if weight is None
                                                  else weight)
        else:
            coefficient, class_mass = row_weight, np.zeros(classes, dtype)
        pick_mass = (1.0 - smoothing) * row_weight
        share = grad if self.scale is None else grad * self.scale
        share = np.ascontiguousarray(np.broadcast_to(share * kept, (rows,)), dtype=dtype)
        out = np.empty_like(exponentials)  # not in place: retain_graph may run it again
        _loops().cross_entropy_rows_backward(
            exponentials, totals, safe, np.ascontiguousarray(coefficient, dtype=dtype),
            np.ascontiguousarray(pick_mass, dtype=dtype),
            np.ascontiguousarray(class_mass, dtype=dtype), share, out)
        return out, None, None


class NLLKernel(Fallback, _ce.NLL):
    """The negative log-likelihood's gradient as what it is, one value per row at its target
    (a ``PickGradient``): the log-softmax kernel before it takes it so, without an array of
    zeros of the scores' size, and any other node gets that array (the reference compares
    every class with the target to place its values: a one-hot mask and a where over it)."""

    def backward(self, grad: Any) -> tuple[Any, None, None]:
        safe, kept, row_weight = self.saved
        if not floating(kept, row_weight):
            return super().backward(grad)
        share = self.row_share(grad, kept).reshape(-1) * row_weight
        picks = PickGradient(np, (safe.shape[0], self.classes), kept.dtype,
                             np.ascontiguousarray(safe, dtype=np.int64), -share)
        return picks, None, None


class MaxPoolKernel(Fallback, _pool.MaxPool2d):
    """Max pooling over image planes, with the reference's winner rule."""

    def forward(self, x: Any) -> Any:
        if not floating(x):
            return self.reference_forward(x)
        n, c, h, w = x.shape
        out_hw = self.geometry.output_size((h, w))
        planes = np.ascontiguousarray(x).reshape(n * c, h, w)
        out = np.empty((n * c, *out_hw), x.dtype)
        winner = np.empty((n * c, *out_hw), np.int64)
        g = self.geometry
        _pooling(g.kernel).max_forward(planes, *g.stride, *g.padding, *g.dilation, out, winner)
        winner = winner.reshape(n, c, *out_hw)
        self.input_shape, self.output_hw = (n, c, h, w), out_hw
        if self.return_indices:
            self.indices = self.flat_positions(winner)
        self.save(winner)
        return out.reshape(n, c, *out_hw)

    def backward(self, grad: Any) -> Any:
        if self.fallback:
            return self.reference_backward(grad)
        (winner,) = self.saved
        n, c, h, w = self.input_shape
        g = self.geometry
        out = np.zeros((n * c, h, w), grad.dtype)
        planes = np.ascontiguousarray(grad).reshape(n * c, *self.output_hw)
        winner = winner.reshape(n * c, *self.output_hw)
        _pooling(g.kernel).max_backward(planes, winner, *g.stride, *g.padding, *g.dilation, out)
        return out.reshape(n, c, h, w)


class AvgPoolKernel(Fallback, _pool.AvgPool2d):
    """Average pooling over image planes, with the reference's divisors."""

    def forward(self, x: Any) -> Any:
        if not floating(x):
            return self.reference_forward(x)
        n, c, h, w = x.shape
        out_hw = self.geometry.output_size((h, w))
        self.divisor = np.asarray(self.divisors((h, w), out_hw), dtype=np.float64)
        planes = np.ascontiguousarray(x).reshape(n * c, h, w)
        out = np.empty((n * c, *out_hw), x.dtype)
        g = self.geometry
        _pooling(g.kernel).avg_forward(planes, *g.stride, *g.padding, self.divisor, out)
        self.input_shape, self.output_hw = (n, c, h, w), out_hw
        return out.reshape(n, c, *out_hw)

    def backward(self, grad: Any) -> Any:
        if self.fallback:
            return self.reference_backward(grad)
        n, c, h, w = self.input_shape
        g = self.geometry
        out = np.zeros((n * c, h, w), grad.dtype)
        planes = np.ascontiguousarray(grad).reshape(n * c, *self.output_hw)
        _pooling(g.kernel).avg_backward(planes, *g.stride, *g.padding, self.divisor, out)
        return out.reshape(n, c, h, w)


class ConvKernel(Fallback, Conv2d):
    """Convolution as one matrix product per group over the input's windows (im2col,
    compiled), ``(C * kh * kw, N * OH * OW)``; its input gradient a block of images at a time
    (``_input_gradient``, col2im compiled)."""

    def forward(self, x: Any, weight: Any, bias: Any = None) -> Any:
        if not floating(x, weight, bias):
            return self.reference_forward(x, weight, bias)
        n, c, h, w = x.shape
        oc, g = weight.shape[0], self.groups
        windows = self.windows(tuple(weight.shape))
        self.input_shape, self.has_bias = (n, c, h, w), bias is not None
        if depthwise.is_depthwise(x, weight, g):
            x = np.ascontiguousarray(x)
            self.save(x, weight)
            return depthwise.forward(x, weight, bias, windows)
        out = windows.output_size((h, w))
        columns = _im2col(x, windows, out)  # (C * K, N, OH, OW)
        k = (c // g) * windows.count
        grouped = columns.reshape(g, k, n * out[0] * out[1])
        kernel = weight.reshape(g, oc // g, k)
        y = matmul(kernel, grouped).reshape(oc, n, out[0] * out[1])
        result = np.empty((n, oc, out[0], out[1]), y.dtype)
        image_major = result.reshape(n, oc, out[0] * out[1])  # (not -1: n may be 0)
        flat_bias = None if bias is None else bias.ravel()
        _loops().swap_leading_axes(y, flat_bias, image_major)  # images first, bias added
        self.save(grouped, weight)
        return result

    def backward(self, grad: Any) -> tuple[Any, ...]:
        if self.fallback:
            return self.reference_backward(grad)
        grouped, weight = self.saved
        n, c, h, w = self.input_shape
        oc, g = weight.shape[0], self.groups
        windows = self.windows(tuple(weight.shape))
        if grouped.ndim == 4:  # the depthwise path saved the input itself
            wanted = (self.needs_grad(0), self.needs_grad(1), self.has_bias and self.needs_grad(2))
            grads = depthwise.backward(grad, grouped, weight, windows, wanted)
            return grads if self.has_bias else grads[:2]
        oh, ow = grad.shape[2], grad.shape[3]
        image_major = np.ascontiguousarray(grad).reshape(n, oc, oh * ow)
        channel_major = np.empty((oc, n, oh * ow), grad.dtype)
        grad_x = grad_weight = grad_bias = None
        if self.has_bias and self.needs_grad(2):
            sums = np.empty(oc, np.float64)
            _loops().swap_leading_axes_sum(image_major, channel_major, sums)
            grad_bias = sums.astype(grad.dtype)
        else:
            _loops().swap_leading_axes(image_major, None, channel_major)
        rows = channel_major.reshape(g, oc // g, n * oh * ow)
        if self.needs_grad(0):
            grad_x = _input_gradient(channel_major, weight, g, windows, (n, c, h, w), (oh, ow))
        if self.needs_grad(1):
            grad_weight = _long_product(rows, grouped).reshape(weight.shape)
        return (grad_x, grad_weight, grad_bias) if self.has_bias else (grad_x, grad_weight)


def _input_gradient(channel_major: Any, weight: Any, groups: int, windows: Any,
                    shape: tuple[int, int, int, int], out: tuple[int, int]) -> Any:
    """A convolution's gradient by its input, ``(N, C, H, W)``, from its output gradient
    ``(OC, N, OH * OW)``: the columns ``W^T @ dY`` added back into their windows (col2im), a few
    images at a time, so that each block of columns is read back from the cache it was
    written to rather than from memory (a 64-image MNIST convolution's columns are 42 MB)."""
    n, c = shape[:2]
    oc = channel_major.shape[0]
    (kh, kw), (sh, sw) = windows.kernel, windows.stride
    (ph, pw), (dh, dw) = windows.padding, windows.dilation
    kernel = weight.reshape(groups, oc // groups, -1).transpose(0, 2, 1)
    rows = c * windows.count
    grad_x = np.zeros(shape, channel_major.dtype)
    image_bytes = rows * out[0] * out[1] * channel_major.itemsize
    step = max(1, COLUMN_BLOCK_BYTES // max(1, image_bytes))
    for start in range(0, n, step):
        stop = min(n, start + step)
        block = channel_major[:, start:stop].reshape(groups, oc // groups, -1)
        columns = matmul(kernel, block).reshape(rows, stop - start, *out)
        _loops().col2im(np.ascontiguousarray(columns), c, kh, kw, sh, sw, ph, pw, dh, dw,
                        grad_x[start:stop])
    return grad_x


class ConvTransposeKernel(Fallback, _transpose.ConvTranspose2d):
    """Transposed convolution, the convolution's pieces in the other order: forward is a
    convolution's input gradient (``W^T @ x`` per group, added back into the output's windows
    by the compiled col2im, a block of images at a time), backward the convolution itself
    (the output gradient's windows by the compiled im2col, one product per group) and the
    weight's gradient one more product. The reference takes NumPy's strided windows and adds
    them back one kernel position at a time (a DCGAN-style 4 x 4, stride-2 layer over 64 x 128
    x 16 x 16 float32: 239 ms forward and backward, PyTorch's 131)."""

    def forward(self, x: Any, weight: Any, bias: Any = None) -> Any:
        if not floating(x, weight, bias):
            return self.reference_forward(x, weight, bias)
        n, c, h, w = x.shape
        g = self.groups
        oc = weight.shape[1] * g
        windows = self.windows(tuple(weight.shape))
        size = _transpose.transposed_size((h, w), windows.kernel, self.stride, self.padding,
                                          self.output_padding, self.dilation)
        channel_major = np.empty((c, n, h * w), x.dtype)
        _loops().swap_leading_axes(np.ascontiguousarray(x).reshape(n, c, h * w), None,
                                   channel_major)
        y = _input_gradient(channel_major, weight, g, windows, (n, oc, *size), (h, w))
        if bias is not None:
            y += bias.reshape(1, oc, 1, 1)
        self.has_bias = bias is not None
        self.save(channel_major, weight)
        self.input_shape = (n, c, h, w)
        return y

    def backward(self, grad: Any) -> tuple[Any, ...]:
        if self.fallback:
            return self.reference_backward(grad)
        channel_major, weight = self.saved
        n, c, h, w = self.input_shape
        if not floating(grad, weight):  # the reference's arrays, for its backward
            self.saved = (channel_major.reshape(c, n, h, w).transpose(1, 0, 2, 3), weight)
            return self.reference_backward(grad)
        g = self.groups
        oc = weight.shape[1] * g
        windows = self.windows(tuple(weight.shape))
        columns = _im2col(grad, windows, (h, w))  # (OC * K, N, H, W)
        grouped = columns.reshape(g, (oc // g) * windows.count, n * h * w)
        grad_x = grad_weight = grad_bias = None
        if self.needs_grad(0):
            kernel = weight.reshape(g, c // g, (oc // g) * windows.count)
            product = matmul(kernel, grouped).reshape(c, n, h * w)
            grad_x = np.empty((n, c, h, w), grad.dtype)
            _loops().swap_leading_axes(product, None, grad_x.reshape(n, c, h * w))
        if self.needs_grad(1):
            rows = channel_major.reshape(g, c // g, n * h * w)
            grad_weight = _long_product(rows, grouped).reshape(weight.shape)
        if self.has_bias and self.needs_grad(2):
            grad_bias = grad.sum(axis=(0, 2, 3), dtype=np.float64).astype(grad.dtype)
        return (grad_x, grad_weight, grad_bias) if self.has_bias else (grad_x, grad_weight)


class ConvTranspose1dKernel(_transpose.ConvTranspose1d, ConvTransposeKernel):
    """1-D transposed convolution: the 2-D kernel on a height of one."""


# Each block's columns: a share of the last-level cache. The MNIST CNN's step (W11) took 7.5%
# less time with 4 or 8 MB than in one block, 3.5% less with 16 MB, 12% more with 1 MB (more,
# smaller products); ResNet-18's (W8), whose columns are smaller, the same (2-core AMD EPYC,
# 32 MB L3; blocks of steps alternated in one process).
COLUMN_BLOCK_BYTES = 4 << 20


class Conv1dKernel(Conv1d, ConvKernel):
    """1-D convolution: the 2-D kernel on a height of one."""


class MaxPool1dKernel(_pool.MaxPool1d, MaxPoolKernel):
    """1-D max pooling: the 2-D kernel on a height of one."""


class AvgPool1dKernel(_pool.AvgPool1d, AvgPoolKernel):
    """1-D average pooling: the 2-D kernel on a height of one."""


def _im2col(x: Any, windows: Any, out: tuple[int, int]) -> Any:
    """The windows of ``x`` as ``(C * kh * kw, N, OH, OW)``, contiguous, in one compiled pass
    (no padded copy of the input)."""
    n, c = x.shape[:2]
    (kh, kw), (sh, sw) = windows.kernel, windows.stride
    (ph, pw), (dh, dw) = windows.padding, windows.dilation
    columns = np.empty((c * kh * kw, n, out[0], out[1]), x.dtype)
    _loops().im2col(np.ascontiguousarray(x), kh, kw, sh, sw, ph, pw, dh, dw, columns)
    return columns


def _long_product(a: Any, b: Any) -> Any:
    """``a @ b^T`` per group for ``a`` ``(G, M, K)`` and ``b`` ``(G, N, K)``: a convolution's
    weight gradient, ``K`` its output positions. Multiplied as it is asked for, ``b``'s
    transpose a BLAS flag (no copy), the result in the weight's layout. Only when ``K`` is
    long next to the result's sides (``K >= LONG_SIDE * max(M, N)``) is the larger side made
    the product's rows and the small result transposed: OpenBLAS ran those up to twice as fast
    on two threads (32 x 144 over 31 000: 4.2 vs 2.5 ms), and the copy is small. Elsewhere the
    result is as large as the weight and its transposed copy costs more than the product
    (ResNet-18's last stage, 512 x 4608 over 32: 3.3 ms direct, 62 ms swapped and copied)."""
    rows, columns, inner = a.shape[1], b.shape[1], a.shape[2]
    if columns > rows and inner >= LONG_SIDE * columns:
        return np.ascontiguousarray(matmul(b, a.transpose(0, 2, 1)).transpose(0, 2, 1))
    if a.shape[0] == 1:  # one group: a 2-D product, which NumPy hands to BLAS with its flags
        return matmul(a[0], b[0].T)[np.newaxis]
    return matmul(a, b.transpose(0, 2, 1))


LONG_SIDE = 8


class EmbeddingKernel(Fallback, _embedding.Embedding):
    """The embedding's backward adds the rows' gradients straight into a table of zeros
    (compiled, ``scatter_add_rows``); the reference's ``scatter_add`` copies the zeros first,
    and masks the padding row's gradients with a where rather than zeroing its one row."""

    def backward(self, grad: Any) -> tuple[Any, None]:
        (flat,) = self.saved
        table = np.zeros(self.table_shape, self.dtype)
        if not floating(table, grad) or not flat.shape[0] or not table.size:
            return super().backward(grad)
        rows = np.ascontiguousarray(grad).reshape(flat.shape[0], self.table_shape[1])
        scatter_add_rows(table, flat, rows)
        if self.padding_idx is not None:
            table[self.padding_idx] = 0.0
        return table, None


def scatter_add_rows(out: Any, index: Any, rows: Any) -> None:
    """``out[index[i]] += rows[i]`` in place, compiled (``NumPyBackend.scatter_add``): the
    rows of ``out`` in one share per thread this call may use -- one when there are fewer than
    ``SCATTER_SERIAL_BELOW`` values to add, whatever the table's size (an embedding's backward:
    700 rows of 200 into 8 500 x 200 took 4.7 ms on threads under load, 0.1 ms on one)."""
    import numba

    from . import _numba_loops

    if rows.size < SCATTER_SERIAL_BELOW:
        serial(_numba_loops.scatter_add_rows)(out, index, rows, 1)
        return
    shares = max(1, min(numba.get_num_threads(), out.shape[0]))
    _loops().scatter_add_rows(out, index, rows, shares)


SCATTER_SERIAL_BELOW = 1 << 18


def sum_of_squares(backend: Any, x: Any) -> Any:
    """``ops.sum_of_squares`` in one compiled pass without the array of squares: summed in
    float64, so the float32 result is the exact sum rounded once, where the reference's sum
    of rounded squares is within a few ulps of it."""
    if not floating(x):
        return _squares.sum_of_squares(backend, x)
    return np.asarray(_loops().sum_of_squares(x.ravel()), dtype=x.dtype)


class PoolingLoops(NamedTuple):
    """The compiled pooling loops of one window size."""

    max_forward: Callable[..., Any]
    max_backward: Callable[..., Any]
    avg_forward: Callable[..., Any]
    avg_backward: Callable[..., Any]


@functools.cache
def _pooling(kernel: tuple[int, int]) -> PoolingLoops:
    """The pooling loops for one window size, each launched as its size is worth."""
    from . import _numba_loops

    return PoolingLoops(*(sized(loop) for loop in _numba_loops.pooling_loops(*kernel)))


def table() -> dict[str, Any]:
    """The kernels, by op name: ``"matmul"`` when MKL is installed (``_mkl``: it hands each
    product to MKL or OpenBLAS, whichever won this process's race), and the compiled ops when
    Numba can run them here (``_numba_setup``)."""
    from ._numba_setup import usable

    products = {} if mkl_status()[0] is None else {"matmul": matmul}
    products.update(low_precision_table())  # bfloat16 and float16 (_low_precision)
    if not usable():
        return products
    return {
        **products,
        "layer_norm": LayerNormKernel,
        "batch_norm": BatchNormKernel,
        "group_norm": GroupNormKernel,
        "instance_norm": InstanceNormKernel,
        "gelu": GeluKernel,
        "relu": ReluKernel,
        "sigmoid": SigmoidKernel,
        "silu": SiluKernel,
        "tanh": TanhKernel,
        "softplus": SoftplusKernel,
        "softplus_with_threshold": SoftplusWithThresholdKernel,
        "logsigmoid": LogSigmoidKernel,
        "mish": MishKernel,
        "elu": EluKernel,
        "leaky_relu": LeakyReluKernel,
        "hardtanh": HardtanhKernel,
        "hardswish": HardswishKernel,
        "hardsigmoid": HardsigmoidKernel,
        "mse_loss": SquaredErrorKernel,
        "binary_cross_entropy": BinaryCrossEntropyKernel,
        "binary_cross_entropy_with_logits": BinaryCrossEntropyWithLogitsKernel,
        "dropout": DropoutKernel,
        "softmax": SoftmaxKernel,
        "log_softmax": LogSoftmaxKernel,
        "cross_entropy": CrossEntropyKernel,
        "nll_loss": NLLKernel,
        "embedding": EmbeddingKernel,
        "scaled_dot_product_attention": AttentionKernel,
        "attention_weights": AttentionWeightsKernel,
        "max_pool2d": MaxPoolKernel,
        "avg_pool2d": AvgPoolKernel,
        "conv2d": ConvKernel,
        "lstm_sequence": LSTMSequenceKernel,
        "gru_sequence": GRUSequenceKernel,
        "rnn_sequence": RNNSequenceKernel,
        "conv1d": Conv1dKernel,
        "conv_transpose2d": ConvTransposeKernel,
        "conv_transpose1d": ConvTranspose1dKernel,
        "interpolate": InterpolateKernel,
        "adaptive_avg_pool2d": AdaptiveAvgPoolKernel,
        "adaptive_max_pool2d": AdaptiveMaxPoolKernel,
        "pow": PowKernel,
        "max_pool1d": MaxPool1dKernel,
        "avg_pool1d": AvgPool1dKernel,
        "sum_of_squares": sum_of_squares,
        "adam_update": adam_update,
        "sgd_update": sgd_update,
        "adadelta_update": adadelta_update,
        "rmsprop_update": rmsprop_update,
        "adagrad_update": adagrad_update,
        "adamax_update": adamax_update,
        "nadam_update": nadam_update,
    }
