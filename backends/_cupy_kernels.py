"""The CuPy backend's kernel table: CUDA versions of the fused ops that are bound by memory.

GELU is an ``ElementwiseKernel`` per direction, and so are Adam's, SGD's and Adadelta's updates
(``_cupy_updates.py``); layer norm, softmax / log-softmax along the last
axis and cross-entropy are ``RawKernel``s that give each row one thread block (a shared-memory
tree reduction, accumulating in double), so a row is read once per pass instead of once per
array-API op. They launch on the current stream, which inside a DataParallel worker is the
worker's own (``CuPyBackend.worker``). Convolution, pooling and batch norm keep their array-API
references, which on CuPy are already a handful of large vectorised kernels.

Each class subclasses the reference, keeps its constructor, inputs and outputs, and runs the
reference for what it does not cover (other dtypes, other axes, synchronised statistics).
"""

from __future__ import annotations

import functools
from typing import Any

from dparray.ops import cross_entropy as _ce
from dparray.ops import normalization as _norm
from dparray.ops.elementwise import Gelu
from dparray.ops.reduce import LogSoftmax, Softmax

from ._fallback import Fallback, LastAxisFallback, floating

THREADS = 256  # per block in the row kernels; a power of two (the tree reduction needs it)

_REDUCE = """
    buf[threadIdx.x] = acc;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) buf[threadIdx.x] += buf[threadIdx.x + k];
        __syncthreads();
    }
"""

_ROW_SOURCES = {
    "layer_norm_rows": """
extern "C" __global__ void layer_norm_rows(const T* x, const T* w, const T* b, const double eps,
        T* out, double* mean, double* rstd, const long long cols) {
    __shared__ double buf[THREADS];
    const long long row = blockIdx.x;
    const T* xr = x + row * cols;
    double acc = 0.0;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) acc += (double)xr[j];
    REDUCE
    const double mu = buf[0] / cols;
    __syncthreads();
    acc = 0.0;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
        const double d = (double)xr[j] - mu;
        acc += d * d;
    }
    REDUCE
    const double r = 1.0 / sqrt(buf[0] / cols + eps);
    if (threadIdx.x == 0) { mean[row] = mu; rstd[row] = r; }
    for (long long j = threadIdx.x; j < cols; j += blockDim.x)
        out[row * cols + j] = (T)(((double)xr[j] - mu) * r * (double)w[j] + (double)b[j]);
}
""",
    "layer_norm_rows_backward": """
extern "C" __global__ void layer_norm_rows_backward(const T* dy, const T* x, const double* mean,
        const double* rstd, const T* w, T* dx, const long long cols) {
    __shared__ double buf[THREADS];
    const long long row = blockIdx.x;
    const double mu = mean[row], r = rstd[row];
    double acc = 0.0;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x)
        acc += (double)dy[row * cols + j] * (double)w[j];
    REDUCE
    const double mean_g = buf[0] / cols;
    __syncthreads();
    acc = 0.0;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x)
        acc += (double)dy[row * cols + j] * (double)w[j] * ((double)x[row * cols + j] - mu) * r;
    REDUCE
    const double mean_gx = buf[0] / cols;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
        const double xhat = ((double)x[row * cols + j] - mu) * r;
        const double g = (double)dy[row * cols + j] * (double)w[j];
        dx[row * cols + j] = (T)(r * (g - mean_g - xhat * mean_gx));
    }
}
""",
    "softmax_rows": """
extern "C" __global__ void softmax_rows(const T* x, T* out, const int take_log,
        const long long cols) {
    __shared__ double buf[THREADS];
    const long long row = blockIdx.x;
    const T* xr = x + row * cols;
    double top = -__longlong_as_double(0x7ff0000000000000LL);  // -inf (NVRTC has no INFINITY)
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
        const double v = (double)xr[j];
        if (v > top || isnan(v)) top = v;
    }
    buf[threadIdx.x] = top;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) {
            const double other = buf[threadIdx.x + k];
            if (other > buf[threadIdx.x] || isnan(other)) buf[threadIdx.x] = other;
        }
        __syncthreads();
    }
    double shift = buf[0];
    if (isinf(shift) && shift < 0) shift = 0.0;
    __syncthreads();
    double acc = 0.0;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) acc += exp((double)xr[j] - shift);
    REDUCE
    const double total = buf[0];
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
        const double e = (double)xr[j] - shift;
        out[row * cols + j] = (T)(take_log ? e - log(total) : exp(e) / total);
    }
}
""",
    "softmax_rows_backward": """
extern "C" __global__ void softmax_rows_backward(const T* g, const T* out, T* result,
        const int take_log, const long long cols) {
    __shared__ double buf[THREADS];
    const long long row = blockIdx.x;
    double acc = 0.0;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
        const long long i = row * cols + j;
        acc += take_log ? (double)g[i] : (double)g[i] * (double)out[i];
    }
    REDUCE
    const double total = buf[0];
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
        const long long i = row * cols + j;
        result[i] = (T)(take_log ? (double)g[i] - exp((double)out[i]) * total
                            : (double)out[i] * ((double)g[i] - total));
    }
}
""",
}

_GELU = {
    "none": ("T x", "T out, T cdf",
             "cdf = (T)(0.5 * (1.0 + erf((double)x * 0.70710678118654752440))); out = x * cdf;",
             "T grad, T x, T cdf", "T out",
             "out = (T)((double)grad * ((double)cdf + (double)x * exp(-0.5 * (double)x * "
             "(double)x) * 0.39894228040143267794));"),
    "tanh": ("T x", "T out, T t",
             "t = (T)tanh(0.79788456080286535588 * ((double)x + 0.044715 * (double)x * "
             "(double)x * (double)x)); out = (T)(0.5 * (double)x * (1.0 + (double)t));",
             "T grad, T x, T t", "T out",
             "out = (T)((double)grad * (0.5 * (1.0 + (double)t) + 0.5 * (double)x * (1.0 - "
             "(double)t * (double)t) * 0.79788456080286535588 * (1.0 + 3.0 * 0.044715 * "
             "(double)x * (double)x)));"),
}


def _cupy() -> Any:
    import cupy

    return cupy


def row_source(name: str, c_type: str) -> str:
    """The CUDA source of row kernel ``name`` for elements of C type ``c_type``."""
    source = _ROW_SOURCES[name].replace("REDUCE", _REDUCE)
    return f"#define THREADS {THREADS}\ntypedef {c_type} T;\n" + source


@functools.cache
def _row_kernel(name: str, dtype: str) -> Any:
    return _cupy().RawKernel(row_source(name, dtype), name)


def _rows(name: str, rows: int, dtype: Any, *args: Any) -> None:
    c_type = "float" if _cupy().dtype(dtype) == _cupy().dtype("float32") else "double"
    if rows:
        _row_kernel(name, c_type)((rows,), (THREADS,), args)


@functools.cache
def _gelu_kernels(approximate: str) -> tuple[Any, Any]:
    cupy = _cupy()
    fin, fout, fbody, bin_, bout, bbody = _GELU[approximate]
    return (cupy.ElementwiseKernel(fin, fout, fbody, f"dparray_gelu_{approximate}"),
            cupy.ElementwiseKernel(bin_, bout, bbody, f"dparray_gelu_{approximate}_backward"))


class GeluKernel(Fallback, Gelu):
    """GELU (exact or tanh) as one elementwise kernel each way."""

    def forward(self, x: Any) -> Any:
        if not floating(x):
            return self.reference_forward(x)
        forward, _ = _gelu_kernels(self.approximate)
        out, kept = forward(x)
        self.save(x, kept)
        return out

    def backward(self, grad: Any) -> Any:
        if self.fallback:
            return self.reference_backward(grad)
        x, kept = self.saved
        _, backward = _gelu_kernels(self.approximate)
        return backward(grad.astype(x.dtype, copy=False), x, kept)


class LayerNormKernel(Fallback, _norm.LayerNorm):
    """Layer norm (rows layout): one block per row each way; parameter gradients by CuPy's
    reductions."""

    def forward(self, x: Any, weight: Any = None, bias: Any = None, mean: Any = None,
                var: Any = None) -> Any:
        cupy = _cupy()
        if self.layout != "rows" or self.statistics is not _norm.LOCAL \
                or not floating(x, weight, bias):
            return self.reference_forward(x, weight, bias, mean, var)
        self.input_shape = tuple(x.shape)
        view = cupy.ascontiguousarray(x.reshape(self.view_shape(self.input_shape)))
        rows, cols = view.shape
        w = cupy.ones(cols, x.dtype) if weight is None else cupy.ascontiguousarray(weight).ravel()
        b = cupy.zeros(cols, x.dtype) if bias is None else cupy.ascontiguousarray(bias).ravel()
        out = cupy.empty_like(view)
        mean_out = cupy.empty(rows, cupy.float64)
        rstd_out = cupy.empty(rows, cupy.float64)
        _rows("layer_norm_rows", rows, x.dtype, view, w, b, cupy.float64(self.eps), out,
              mean_out, rstd_out, cupy.int64(cols))
        self.has_bias = bias is not None
        self.bias_shape = tuple(bias.shape) if bias is not None else ()
        self.save(view, mean_out, rstd_out, weight)
        return out.reshape(self.input_shape)

    def backward(self, grad: Any) -> tuple[Any, ...]:
        if self.fallback:
            return self.reference_backward(grad)
        cupy = _cupy()
        view, mean, rstd, weight = self.saved
        rows, cols = view.shape
        dy = cupy.ascontiguousarray(grad.reshape(view.shape), dtype=view.dtype)
        w = cupy.ones(cols, view.dtype) if weight is None else \
            cupy.ascontiguousarray(weight).ravel()
        grads: list[Any] = [None, None, None][:len(self.parents or ())]
        if self.needs_grad(0):
            dx = cupy.empty_like(view)
            _rows("layer_norm_rows_backward", rows, view.dtype, dy, view, mean, rstd, w, dx,
                  cupy.int64(cols))
            grads[0] = dx.reshape(self.input_shape)
        if len(grads) > 1 and weight is not None and self.needs_grad(1):
            xhat = (view - mean[:, None]) * rstd[:, None]
            grads[1] = (dy * xhat).sum(axis=0).astype(view.dtype).reshape(weight.shape)
        if len(grads) > 2 and self.has_bias and self.needs_grad(2):
            grads[2] = dy.sum(axis=0).reshape(self.bias_shape)
        return tuple(grads)


class _LastAxisSoftmax(LastAxisFallback):
    """Softmax or log-softmax along the last axis: one block per row each way."""

    log = 0

    def forward(self, x: Any) -> Any:
        cupy = _cupy()
        if not floating(x) or not self.along_last_axis(x):
            return self.reference_forward(x)
        rows = cupy.ascontiguousarray(x).reshape(-1, x.shape[-1])
        out = cupy.empty_like(rows)
        _rows("softmax_rows", rows.shape[0], x.dtype, rows, out, cupy.int32(self.log),
              cupy.int64(rows.shape[1]))
        self.shape = tuple(x.shape)
        self.save(out)
        return out.reshape(self.shape)

    def backward(self, grad: Any) -> Any:
        if self.fallback:
            return self.reference_backward(grad)
        cupy = _cupy()
        (out,) = self.saved
        g = cupy.ascontiguousarray(grad.reshape(out.shape), dtype=out.dtype)
        result = cupy.empty_like(out)
        _rows("softmax_rows_backward", out.shape[0], out.dtype, g, out, result,
              cupy.int32(self.log), cupy.int64(out.shape[1]))
        return result.reshape(self.shape)


class SoftmaxKernel(_LastAxisSoftmax, Softmax):
    log = 0


class LogSoftmaxKernel(_LastAxisSoftmax, LogSoftmax):
    log = 1


class CrossEntropyKernel(Fallback, _ce.CrossEntropy):
    """Cross-entropy whose log-softmax is the row kernel; the pick and the closed-form
    gradient are CuPy's own vectorised operations."""

    def forward(self, logits: Any, target: Any, weight: Any = None) -> Any:
        cupy = _cupy()
        if not floating(logits, weight) or logits.ndim != 2 or logits.shape[1] == 0:
            return self.reference_forward(logits, target, weight)
        safe, kept, row_weight = self.pick_setup(logits, target, weight)
        rows = cupy.ascontiguousarray(logits)
        log_probs = cupy.empty_like(rows)
        _rows("softmax_rows", rows.shape[0], rows.dtype, rows, log_probs, cupy.int32(1),
              cupy.int64(rows.shape[1]))
        picked = cupy.take_along_axis(log_probs, safe.reshape(-1, 1), axis=1).ravel()
        losses = cupy.where(kept == 0.0, 0.0, -picked * row_weight)
        smoothing = self.label_smoothing
        if smoothing:
            spread = log_probs if weight is None else log_probs * weight
            uniform = -spread.sum(axis=1) * (smoothing / rows.shape[1])
            losses = losses * (1.0 - smoothing) + cupy.where(kept == 0.0, 0.0, uniform)
        self.save(log_probs, safe, kept, row_weight, weight)
        return self.reduce(losses.astype(rows.dtype), row_weight)

    def backward(self, grad: Any) -> tuple[Any, None, None]:
        if self.fallback:
            return self.reference_backward(grad)
        return super().backward(grad)  # the reference's closed form, on the kernel's values


def table() -> dict[str, Any]:
    """The kernels, by op name."""
    from ._cupy_low_precision import low_precision_matmul
    from ._cupy_updates import adadelta_update, adam_update, sgd_update

    return {
        "low_precision_matmul": low_precision_matmul,
        "adam_update": adam_update,
        "sgd_update": sgd_update,
        "adadelta_update": adadelta_update,
        "gelu": GeluKernel,
        "layer_norm": LayerNormKernel,
        "softmax": SoftmaxKernel,
        "log_softmax": LogSoftmaxKernel,
        "cross_entropy": CrossEntropyKernel,
    }
