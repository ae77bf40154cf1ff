"""The compiled loops behind the NumPy backend's kernels (``_numpy_kernels.py``).

Every loop is compiled by Numba with ``nogil=True`` (DataParallel's threads run them at the
same time), ``parallel=True`` (``prange`` spreads one call over the cores; inside a
DataParallel region each worker asks for one thread, see ``_numba_setup``), ``cache=True``
(the compile cost is paid once per machine, not per process) and ``error_model="numpy"``
(IEEE results for 0/0, as the references give; it also lets LLVM vectorise divisions). The only
fast-math flag is ``reassoc``, on the loops that sum (``jit_sum``), so that sums vectorise:
float64 results agree with the array-API references to a few ulps, as any summation order
would, and NaN, inf and rounding stay IEEE. Sums accumulate in float64 whatever the input
dtype, so float32 results are as accurate as the references' or better.

Loops take contiguous arrays and write into arrays the caller allocates; the caller
(``_numpy_kernels.py``) reshapes, makes inputs contiguous and handles the rare layouts the loops
do not cover by falling back to the reference.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numba
import numpy as np
from numba import prange, types
from numba.extending import intrinsic, overload

# error_model="numpy": a division by zero gives inf or NaN, as in the references, instead of
# raising ZeroDivisionError (Numba's default follows Python)
jit = numba.njit(nogil=True, parallel=True, cache=True, error_model="numpy")
# Loops whose work is a sum may add in any order (fast-math's "reassoc" flag alone), so that
# the sums vectorise: results differ from the references' pairwise sums by a few ulps, as any
# other summation order would. No other fast-math flag: NaN, inf and rounding stay IEEE.
jit_sum = numba.njit(nogil=True, parallel=True, cache=True, error_model="numpy",
                     fastmath={"reassoc"})

# ----------------------------------------------------------------------- normalisation
# rows: x is (M, D), statistics per row, affine parameters per column.
# channels: x is (N, C, L), statistics per channel over N and L, affine parameters per channel.


@jit_sum
def sum_of_squares(x):  # pragma: no cover - compiled
    """The sum of ``x[i] ** 2`` over a 1-d ``x``, each square and the sum in float64."""
    total = 0.0
    for i in prange(x.shape[0]):
        v = np.float64(x[i])
        total += v * v
    return total


@jit_sum
def rows_forward(x, weight, bias, eps, out, mean, rstd):  # pragma: no cover - compiled
    rows, features = x.shape
    for i in prange(rows):
        total = 0.0
        for j in range(features):
            total += x[i, j]
        mu = total / features
        squares = 0.0
        for j in range(features):
            d = x[i, j] - mu
            squares += d * d
        r = 1.0 / math.sqrt(squares / features + eps)
        mean[i] = mu
        rstd[i] = r
        for j in range(features):
            out[i, j] = (x[i, j] - mu) * r * weight[j] + bias[j]


@jit_sum
def rows_backward(dy, x, mean, rstd, weight, dx, partial_w, partial_b):  # pragma: no cover
    rows, features = x.shape
    blocks = partial_w.shape[0]
    for block in prange(blocks):
        for i in range(block * rows // blocks, (block + 1) * rows // blocks):
            mu, r = mean[i], rstd[i]
            sum_g = 0.0
            sum_gx = 0.0
            for j in range(features):
                xhat = (x[i, j] - mu) * r
                g = dy[i, j] * weight[j]
                sum_g += g
                sum_gx += g * xhat
                partial_w[block, j] += dy[i, j] * xhat
                partial_b[block, j] += dy[i, j]
            mean_g = sum_g / features
            mean_gx = sum_gx / features
            for j in range(features):
                xhat = (x[i, j] - mu) * r
                dx[i, j] = r * (dy[i, j] * weight[j] - mean_g - xhat * mean_gx)


@jit_sum
def channels_forward(x, weight, bias, eps, out, mean, var, rstd):  # pragma: no cover
    batch, channels, length = x.shape
    count = batch * length
    for c in prange(channels):
        total = 0.0
        for n in range(batch):
            for j in range(length):
                total += x[n, c, j]
        mu = total / count
        squares = 0.0
        for n in range(batch):
            for j in range(length):
                d = x[n, c, j] - mu
                squares += d * d
        r = 1.0 / math.sqrt(squares / count + eps)
        mean[c] = mu
        var[c] = squares / count
        rstd[c] = r
        scale, shift = r * weight[c], bias[c]
        for n in range(batch):
            for j in range(length):
                out[n, c, j] = (x[n, c, j] - mu) * scale + shift


@jit_sum
def channels_backward(dy, x, mean, rstd, weight, dx, grad_w, grad_b):  # pragma: no cover
    batch, channels, length = x.shape
    count = batch * length
    for c in prange(channels):
        mu, r, w = mean[c], rstd[c], weight[c]
        sum_dy = 0.0
        sum_dyx = 0.0
        for n in range(batch):
            for j in range(length):
                sum_dy += dy[n, c, j]
                sum_dyx += dy[n, c, j] * (x[n, c, j] - mu) * r
        grad_w[c] = sum_dyx
        grad_b[c] = sum_dy
        mean_g = w * sum_dy / count
        mean_gx = w * sum_dyx / count
        for n in range(batch):
            for j in range(length):
                xhat = (x[n, c, j] - mu) * r
                dx[n, c, j] = r * (dy[n, c, j] * w - mean_g - xhat * mean_gx)


# columns: channels with L = 1 (batch norm of (N, C) input), the channels' arithmetic by
# blocks of COLUMN_BLOCK adjacent columns, each block one task walking the rows in order: the
# channel loops above would stride across every row for each column.
COLUMN_BLOCK = 64


@jit_sum
def columns_forward(x, weight, bias, eps, out, mean, var, rstd):  # pragma: no cover
    rows, columns = x.shape
    for block in prange((columns + COLUMN_BLOCK - 1) // COLUMN_BLOCK):
        lo = block * COLUMN_BLOCK
        width = min(columns, lo + COLUMN_BLOCK) - lo
        mu = np.zeros(width)
        squares = np.zeros(width)
        for n in range(rows):
            row = x[n, lo:lo + width]
            for k in range(width):
                mu[k] += row[k]
        for k in range(width):
            mu[k] = mu[k] / rows
        for n in range(rows):
            row = x[n, lo:lo + width]
            for k in range(width):
                d = row[k] - mu[k]
                squares[k] += d * d
        scale = np.empty(width)
        shift = bias[lo:lo + width].copy()  # (the block's own: the row loop vectorises)
        for k in range(width):
            r = 1.0 / math.sqrt(squares[k] / rows + eps)
            mean[lo + k], var[lo + k], rstd[lo + k] = mu[k], squares[k] / rows, r
            scale[k] = r * weight[lo + k]
        for n in range(rows):
            row, target = x[n, lo:lo + width], out[n, lo:lo + width]
            for k in range(width):
                target[k] = (row[k] - mu[k]) * scale[k] + shift[k]


@jit_sum
def columns_backward(dy, x, mean, rstd, weight, dx, grad_w, grad_b):  # pragma: no cover
    """The input gradient as ``a * dy - b * (x - mean) - c`` per column, its coefficients
    worked out once per block: the loops over the rows read only the block's own small
    arrays, which they vectorise (reading ``mean`` and ``rstd`` in them ran 2-3.4x slower)."""
    rows, columns = x.shape
    for block in prange((columns + COLUMN_BLOCK - 1) // COLUMN_BLOCK):
        lo = block * COLUMN_BLOCK
        width = min(columns, lo + COLUMN_BLOCK) - lo
        mu = mean[lo:lo + width].copy()
        r = rstd[lo:lo + width].copy()
        sum_dy = np.zeros(width)
        sum_dyx = np.zeros(width)
        for n in range(rows):
            row, back = x[n, lo:lo + width], dy[n, lo:lo + width]
            for k in range(width):
                sum_dy[k] += back[k]
                sum_dyx[k] += back[k] * (row[k] - mu[k]) * r[k]
        a = np.empty(width)
        b = np.empty(width)
        c = np.empty(width)
        for k in range(width):
            grad_w[lo + k], grad_b[lo + k] = sum_dyx[k], sum_dy[k]
            w = weight[lo + k]
            a[k] = r[k] * w
            b[k] = r[k] * r[k] * w * sum_dyx[k] / rows
            c[k] = r[k] * w * sum_dy[k] / rows
        for n in range(rows):
            row, back, target = x[n, lo:lo + width], dy[n, lo:lo + width], dx[n, lo:lo + width]
            for k in range(width):
                target[k] = back[k] * a[k] - (row[k] - mu[k]) * b[k] - c[k]


# groups: x is (N * G, C / G, L), statistics per (sample, group) over the group's channels and
# L, affine parameters per channel as (G, C / G); group norm, and instance norm (C / G = 1).


@jit_sum
def groups_forward(x, weight, bias, eps, out, mean, var, rstd):  # pragma: no cover
    tasks, per_group, length = x.shape
    groups = weight.shape[0]
    count = per_group * length
    for t in prange(tasks):
        g = t % groups
        total = 0.0
        for k in range(per_group):
            for j in range(length):
                total += x[t, k, j]
        mu = total / count
        squares = 0.0
        for k in range(per_group):
            for j in range(length):
                d = x[t, k, j] - mu
                squares += d * d
        r = 1.0 / math.sqrt(squares / count + eps)
        mean[t] = mu
        var[t] = squares / count
        rstd[t] = r
        for k in range(per_group):
            scale, shift = r * weight[g, k], bias[g, k]
            for j in range(length):
                out[t, k, j] = (x[t, k, j] - mu) * scale + shift


@jit_sum
def groups_backward(dy, x, mean, rstd, weight, dx, partial_w, partial_b):  # pragma: no cover
    """``partial_w`` and ``partial_b`` ``(N * G, C / G)``: each (sample, group)'s sums, which
    the caller adds over the samples."""
    tasks, per_group, length = x.shape
    groups = weight.shape[0]
    count = per_group * length
    for t in prange(tasks):
        g = t % groups
        mu, r = mean[t], rstd[t]
        sum_g = 0.0
        sum_gx = 0.0
        for k in range(per_group):
            sum_dy = 0.0
            sum_dyx = 0.0
            for j in range(length):
                d = dy[t, k, j]
                sum_dy += d
                sum_dyx += d * (x[t, k, j] - mu) * r
            partial_w[t, k] = sum_dyx
            partial_b[t, k] = sum_dy
            sum_g += weight[g, k] * sum_dy
            sum_gx += weight[g, k] * sum_dyx
        mean_g = sum_g / count
        mean_gx = sum_gx / count
        for k in range(per_group):
            w = weight[g, k]
            for j in range(length):
                xhat = (x[t, k, j] - mu) * r
                dx[t, k, j] = r * (dy[t, k, j] * w - mean_g - xhat * mean_gx)


# ----------------------------------------------------------------------- GELU
# The loops below are plain arithmetic, which LLVM vectorises; the transcendental parts that
# Numba would call one element at a time (exp, tanh) are NumPy's own SIMD ufuncs, run by the
# caller between two loops -- the same functions the array-API reference calls.
SQRT_HALF = math.sqrt(0.5)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
GELU_CUBIC = 0.044715

# erf(x) = x * P(x^2) / Q(x^2) on [-4, 4] (and +-1 beyond, to float32 precision): a rational
# fit of our own (linearised least squares, Loeb's reweighting), relative error below 5e-9,
# evaluated in float64 -- accurate to float32's last bit, and vectorisable, where math.erf is
# a library call per element. float64 input uses math.erf itself.
ERF_P = (1.1283791682412503, 0.18519289651131976, 0.05430330245986999,
         0.0038477158644439043, 0.00037907324251241467, 4.669980717415793e-06,
         -1.3121588620992851e-08)
ERF_Q = (1.0, 0.4974563343208006, 0.1139433367945979, 0.015456244787209404,
         0.0013064870477940168, 6.297343615676093e-05)
P0, P1, P2, P3, P4, P5, P6 = ERF_P
Q0, Q1, Q2, Q3, Q4, Q5 = ERF_Q


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def erf_float32_accurate(v):  # pragma: no cover - compiled
    """erf of a float32 value, computed in float64 without a library call."""
    x = min(max(float(v), -4.0), 4.0)
    t = x * x
    p = ((((((P6 * t + P5) * t + P4) * t + P3) * t + P2) * t + P1) * t + P0)
    q = (((((Q5 * t + Q4) * t + Q3) * t + Q2) * t + Q1) * t + Q0)
    return x * p / q if -4.0 < x < 4.0 else x / 4.0  # +-1 exactly beyond: float32's erf


@jit
def gelu_forward(x, out, cdf):  # pragma: no cover - compiled
    for i in prange(x.shape[0]):
        v = x[i]
        c = 0.5 * (1.0 + math.erf(v * SQRT_HALF))
        cdf[i] = c
        out[i] = v * c


@jit
def gelu_forward_float32(x, out, cdf):  # pragma: no cover - compiled
    for i in prange(x.shape[0]):
        v = x[i]
        c = 0.5 * (1.0 + erf_float32_accurate(v * SQRT_HALF))
        cdf[i] = c
        out[i] = v * c


# exp(-y) for y >= 0 without a library call, for float32 results: y = k ln2 - r with k the
# nearest integer (Cody-Waite: ln2 in two parts), 2^-k made from its bits, exp(r) by its Taylor
# series to r^7 (|r| <= ln2 / 2: relative error below 6e-9). Beyond k = 1022 (y > 708, and for
# an infinite or NaN y) exp(-y) is 0 to float32 precision, and is taken as 0.
LOG2E = 1.0 / math.log(2.0)
LN2_HI = 0.6931471803691238
LN2_LO = 1.9082149292705877e-10
LARGEST_K = 1022  # 2^-1022: the smallest normal float64


def _bit_cast(source: Any, target: Any) -> Any:
    """A compiled function from a ``source`` value to the ``target`` value of the same bits
    (IEEE-754 floats and their int64 patterns): a bit cast, not a conversion."""
    @intrinsic
    def cast(typingctx, value):  # pragma: no cover - compiled
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(target))

        return target(source), codegen

    return cast


float64_from_bits = _bit_cast(types.int64, types.float64)
bits_of_float64 = _bit_cast(types.float64, types.int64)


@jit
def gelu_forward_float32_with_derivative(x, out, derivative):  # pragma: no cover - compiled
    """GELU of float32 ``x`` and its derivative ``cdf + x * pdf``, in one pass."""
    for i in prange(x.shape[0]):
        v = np.float64(x[i])
        c = 0.5 * (1.0 + erf_float32_accurate(v * SQRT_HALF))
        out[i] = v * c
        y = 0.5 * v * v
        t = y * LOG2E + 0.5
        inside = t < LARGEST_K  # False for NaN too
        # int32, not int: AVX2 converts float64 to int32 four at a time but to int64 one
        # at a time, which kept this loop from vectorising
        k = np.int32(t) if inside else np.int32(LARGEST_K)
        r = (k * LN2_HI - y) + k * LN2_LO
        e = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (
            1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))))
        bits = np.int64(1023 - k) << 52  # 2^-k
        scaled = float64_from_bits(bits) * e if inside else 0.0
        derivative[i] = c + v * scaled * INV_SQRT_2PI


@jit
def gelu_derivative(x, cdf, density):  # pragma: no cover - compiled
    """d gelu / dx into ``density``, which holds exp(-x^2 / 2) (NumPy's exp, by the caller)."""
    for i in prange(x.shape[0]):
        density[i] = cdf[i] + x[i] * density[i] * INV_SQRT_2PI


@jit
def gelu_tanh_inner(x, inner):  # pragma: no cover - compiled
    """The argument of tanh; the caller takes tanh in place (NumPy's)."""
    for i in prange(x.shape[0]):
        v = x[i]
        inner[i] = SQRT_2_OVER_PI * (v + GELU_CUBIC * v * v * v)


@jit
def gelu_tanh_forward(x, t, out):  # pragma: no cover - compiled
    for i in prange(x.shape[0]):
        out[i] = 0.5 * x[i] * (1.0 + t[i])


@jit
def gelu_tanh_backward(grad, x, t, out):  # pragma: no cover - compiled
    for i in prange(x.shape[0]):
        v, h = x[i], t[i]
        inner = SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_CUBIC * v * v)
        out[i] = grad[i] * (0.5 * (1.0 + h) + 0.5 * v * (1.0 - h * h) * inner)


@jit
def relu(x, out):  # pragma: no cover - compiled
    """``max(x, 0)`` as NumPy's ``maximum(x, 0)`` gives it: NaN stays NaN, -0.0 becomes 0."""
    for i in prange(x.shape[0]):
        value = x[i]
        out[i] = value if value > 0 or value != value else 0.0


@jit
def relu_backward(grad, x, out):  # pragma: no cover - compiled
    """``grad * not (x <= 0)``, as the reference multiplies (an infinite or NaN ``grad``
    where ``x <= 0`` gives NaN, not 0; a NaN ``x`` passes ``grad``); ``x`` may be ReLU's input
    or its output."""
    for i in prange(x.shape[0]):
        out[i] = grad[i] * (0.0 if x[i] <= 0 else 1.0)


# The sigmoid as the reference computes it (``dparray.ops.elementwise.Sigmoid``), given
# ``e = exp(-|x|)`` from NumPy's SIMD exp; ``one`` is 1 in the arrays' type, so float32 stays
# float32 arithmetic and the results are the reference's to the bit.
@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def sigmoid_of(x, e, one):  # pragma: no cover - compiled
    """The reference's stable sigmoid of ``x`` given ``e = exp(-|x|)``."""
    return one / (one + e) if x >= 0 else e / (one + e)


@jit
def negative_magnitude(x, out):  # pragma: no cover - compiled
    """``-|x|`` into ``out``: NumPy's SIMD exp of it gives the sigmoid's ``exp(-|x|)``."""
    for i in prange(x.shape[0]):
        out[i] = -abs(x[i])


@jit
def silu(x, s, one, out):  # pragma: no cover - compiled
    """``x * sigmoid(x)`` into ``out`` and the sigmoid into ``s``, which holds ``exp(-|x|)`` on
    entry: the reference's arithmetic (``dparray.ops.activations.Silu``)."""
    for i in prange(x.shape[0]):
        v = x[i]
        sig = sigmoid_of(v, s[i], one)
        s[i] = sig
        out[i] = v * sig


@jit
def silu_backward(grad, x, s, one, out):  # pragma: no cover - compiled
    """``grad * s * (1 + x * (1 - s))`` in the reference's order."""
    for i in prange(x.shape[0]):
        sig = s[i]
        out[i] = grad[i] * sig * (one + x[i] * (one - sig))


@jit
def sigmoid(x, e, one):  # pragma: no cover - compiled
    """``sigmoid(x)`` into ``e``, which holds ``exp(-|x|)`` on entry."""
    for i in prange(x.shape[0]):
        e[i] = sigmoid_of(x[i], e[i], one)


@jit
def sigmoid_backward(grad, out, one, result):  # pragma: no cover - compiled
    """``grad * out * (1 - out)`` in the reference's order, from the sigmoid's output."""
    for i in prange(out.shape[0]):
        o = out[i]
        result[i] = grad[i] * o * (one - o)


@jit
def tanh_backward(grad, out, one, result):  # pragma: no cover - compiled
    """``grad * (1 - out * out)`` in the reference's order, from tanh's output."""
    for i in prange(out.shape[0]):
        o = out[i]
        result[i] = grad[i] * (one - o * o)


@jit
def cube(x, out):  # pragma: no cover - compiled
    """``x * x * x``: PyTorch's ``x ** 3``."""
    for i in prange(x.shape[0]):
        v = x[i]
        out[i] = v * v * v


@jit
def scale_kept(x, keep, scale, out):  # pragma: no cover - compiled
    """``where(keep, x * scale, 0)``, dropout's forward and backward, in ``x``'s type."""
    for i in prange(x.shape[0]):
        out[i] = x[i] * scale if keep[i] else 0.0


# ----------------------------------------------------------------------- binary cross-entropy
# The reference's arithmetic (``dparray.ops.binary_cross_entropy``) in the arrays' type, the
# logarithms being NumPy's, computed by the caller: ``floor``, ``one`` and ``epsilon`` come in
# that type.


@jit
def outside_unit_interval(x):  # pragma: no cover - compiled
    """How many of ``x`` are not in ``[0, 1]`` (NaN included)."""
    count = 0
    for i in prange(x.shape[0]):
        v = x[i]
        if not (v >= 0 and v <= 1):
            count += 1
    return count


@jit
def binary_cross_entropy(t, log_x, log_rest, floor, one, out):  # pragma: no cover - compiled
    """``-(t * max(log x, floor) + (1 - t) * max(log(1 - x), floor))``."""
    for i in prange(t.shape[0]):
        a, b, w = log_x[i], log_rest[i], t[i]
        out[i] = -(w * (a if a > floor else floor) + (one - w) * (b if b > floor else floor))


# log(1 + y) of a float32 y, in float64, without a library call: libm's float32 log1p runs one
# element at a time (18 ns an element on an AVX2 EPYC; NumPy's log, 2 ns). u = 1 + y is exact
# in float64 for |y| >= 2^-29 up to 2^29 (float32's 24 bits, and the 1, fit in float64's 53;
# beyond, u's rounding moves log u by 2^-53 at most); u = m 2^k with m in [sqrt(1/2), sqrt(2))
# taken from u's bits; log m = 2 atanh(s), s = (m - 1) / (m + 1), by its series to s^17
# (|s| <= 0.1716: relative error below 1e-15). Below 2^-29, log(1 + y) rounds to y in
# float32. Rounded once to float32, the result was the correctly rounded one for each of ten
# million float32 values in [-1, 0] (libm's float32 log1p: 4.8% of them an ulp away).
SQRT_2 = math.sqrt(2.0)
LN2 = math.log(2.0)
EXACT_FROM = 2.0 ** -29
A0, A1, A2, A3, A4, A5, A6, A7, A8 = (2.0 / (2 * i + 1) for i in range(9))
MANTISSA = 0x000FFFFFFFFFFFFF
EXPONENT_OF_ONE = 0x3FF0000000000000


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def log_one_plus_float64(y):  # pragma: no cover - compiled
    """``log(1 + y)`` of a float64 ``y`` that holds a float32 value, to float32's precision
    and beyond (``-inf`` at -1, NaN below it or for NaN, ``inf`` at ``inf``)."""
    u = 1.0 + y
    bits = bits_of_float64(u)
    k = np.int32((bits >> 52) & 0x7FF) - 1023
    m = float64_from_bits((bits & MANTISSA) | EXPONENT_OF_ONE)
    above = m > SQRT_2
    m = m * 0.5 if above else m
    k = k + 1 if above else k
    f = m - 1.0
    t = f / (2.0 + f)
    z = t * t
    r = k * LN2 + t * (A0 + z * (A1 + z * (A2 + z * (A3 + z * (A4 + z * (A5 + z * (
        A6 + z * (A7 + z * A8))))))))
    r = y if abs(y) < EXACT_FROM else r
    r = -math.inf if u == 0.0 else (math.inf if u == math.inf else r)
    return math.nan if u < 0.0 or y != y else r


@jit
def log_one_minus_float32(x, out):  # pragma: no cover - compiled
    """``log(1 - x)`` for float32 ``x`` (``-inf`` at 1, NaN above it or for NaN, ``inf`` at
    ``-inf``)."""
    for i in prange(x.shape[0]):
        out[i] = log_one_plus_float64(-np.float64(x[i]))


def log_one_plus(v: Any) -> Any:
    """``log(1 + v)`` in ``v``'s type, inside compiled loops: float32 from the series above,
    rounded once (within an ulp of libm's float32 ``log1p``, usually its bits); float64 is
    libm's ``log1p``, the function NumPy calls, to the bit."""
    raise NotImplementedError("log_one_plus runs only inside compiled loops")


@overload(log_one_plus, inline="always")
def _log_one_plus_typed(v):  # pragma: no cover - compiled
    if v == types.float32:
        return lambda v: np.float32(log_one_plus_float64(np.float64(v)))
    return lambda v: math.log1p(v)


@jit
def binary_cross_entropy_backward(grad, x, t, one, epsilon,
                                  out):  # pragma: no cover - compiled
    """``grad * (x - t) / max(x * (1 - x), epsilon)``."""
    for i in prange(x.shape[0]):
        v = x[i]
        d = v * (one - v)
        out[i] = grad[i] * (v - t[i]) / (d if d > epsilon else epsilon)


# ----------------------------------------------------------------------- softplus family
# Softplus, log-sigmoid and Mish as their references compute them (``dparray.ops``'
# ``elementwise.Softplus``, ``activations.Softplus``, ``LogSigmoid``, ``Mish``), given
# ``e = exp(-|z|)`` from NumPy's SIMD exp (by the caller, between the loops), in the arrays'
# type: ``beta``, ``threshold`` and ``one`` come in it. The logarithm is ``log_one_plus``.


@jit
def scale_and_negative_magnitude(x, beta, z, out):  # pragma: no cover - compiled
    """``z = beta * x`` and ``-|z|`` into ``out``, whose exp is the softplus's ``e``."""
    for i in prange(x.shape[0]):
        v = beta * x[i]
        z[i] = v
        out[i] = -abs(v)


@jit
def softplus(x, e, beta, one, out):  # pragma: no cover - compiled
    """``max(x, 0) + log(1 + e) / beta``: ``elementwise.Softplus``, no threshold."""
    zero = one - one
    for i in prange(x.shape[0]):
        v = x[i]
        out[i] = (v if v > zero else zero) + log_one_plus(e[i]) / beta


@jit
def softplus_with_threshold(x, z, e, beta, threshold, one,
                            out):  # pragma: no cover - compiled
    """``x`` where ``z > threshold``, else ``(max(z, 0) + log(1 + e)) / beta``:
    ``activations.Softplus``, PyTorch's form."""
    zero = one - one
    for i in prange(x.shape[0]):
        w = z[i]
        soft = ((w if w > zero else zero) + log_one_plus(e[i])) / beta
        out[i] = x[i] if w > threshold else soft


@jit
def softplus_backward(grad, z, e, threshold, one, out):  # pragma: no cover - compiled
    """``grad`` where ``z > threshold``, else ``grad * sigmoid(z)`` (no threshold: ``inf``)."""
    for i in prange(z.shape[0]):
        g, w = grad[i], z[i]
        out[i] = g if w > threshold else g * sigmoid_of(w, e[i], one)


@jit
def log_sigmoid(x, e, one, out):  # pragma: no cover - compiled
    """``min(x, 0) - log(1 + e)``."""
    zero = one - one
    for i in prange(x.shape[0]):
        v = x[i]
        out[i] = (v if v < zero else zero) - log_one_plus(e[i])


@jit
def log_sigmoid_backward(grad, x, e, one, out):  # pragma: no cover - compiled
    """``grad * sigmoid(-x)``."""
    for i in prange(x.shape[0]):
        out[i] = grad[i] * sigmoid_of(-x[i], e[i], one)


@jit
def binary_cross_entropy_with_logits(x, t, e, one, out):  # pragma: no cover - compiled
    """``(max(x, 0) + log(1 + e)) - x * t``."""
    zero = one - one
    for i in prange(x.shape[0]):
        v = x[i]
        out[i] = ((v if v > zero else zero) + log_one_plus(e[i])) - v * t[i]


@jit
def binary_cross_entropy_with_logits_backward(grad, x, t, e, one,
                                              out):  # pragma: no cover - compiled
    """``grad * (sigmoid(x) - t)``."""
    for i in prange(x.shape[0]):
        out[i] = grad[i] * (sigmoid_of(x[i], e[i], one) - t[i])


@jit
def mish_backward(grad, x, t, e, one, out):  # pragma: no cover - compiled
    """``grad * (t + x * (1 - t * t) * sigmoid(x))`` with ``t = tanh(softplus(x))``."""
    for i in prange(x.shape[0]):
        v, w = x[i], t[i]
        out[i] = grad[i] * (w + v * (one - w * w) * sigmoid_of(v, e[i], one))


# ----------------------------------------------------------------------- ELU, SELU, CELU
# ``expm1`` of float32 values in float64, without a library call (libm's runs one element at a
# time: 11 ns an element on an AVX2 EPYC): y = k ln2 + r with k the nearest integer
# (Cody-Waite, ln2 in two parts), |r| <= ln2 / 2, expm1(r) by its Taylor series to r^13
# (relative error below 1e-17), and expm1(y) = 2^k expm1(r) + (2^k - 1), exact enough in
# float64 at every k (k = 0 takes expm1(r) itself, keeping -0.0). Beyond [-120, 100] the result
# is -1, or overflows, in float32, as at -inf and inf.
EXPM1_TAYLOR = tuple(1.0 / math.factorial(n) for n in range(2, 14))
T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13 = EXPM1_TAYLOR


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def exp_minus_one_float64(y):  # pragma: no cover - compiled
    """``exp(y) - 1`` of a float64 ``y`` that holds a float32 value, to float32's precision and
    beyond."""
    c = min(max(y, -120.0), 100.0)
    kf = np.floor(c * LOG2E + 0.5)
    k = np.int32(kf)
    r = (c - kf * LN2_HI) - kf * LN2_LO
    q = r * (1.0 + r * (T2 + r * (T3 + r * (T4 + r * (T5 + r * (T6 + r * (T7 + r * (
        T8 + r * (T9 + r * (T10 + r * (T11 + r * (T12 + r * T13))))))))))))
    power = float64_from_bits(np.int64(k + 1023) << 52)
    result = q if k == 0 else power * q + (power - 1.0)
    return y if y != y else result


def exp_minus_one(v: Any) -> Any:
    """``exp(v) - 1`` in ``v``'s type, inside compiled loops: float32 from the series above,
    rounded once; float64 is libm's ``expm1``, the function NumPy calls, to the bit."""
    raise NotImplementedError("exp_minus_one runs only inside compiled loops")


@overload(exp_minus_one, inline="always")
def _exp_minus_one_typed(v):  # pragma: no cover - compiled
    if v == types.float32:
        return lambda v: np.float32(exp_minus_one_float64(np.float64(v)))
    return lambda v: math.expm1(v)


# The reference's arithmetic (``dparray.ops.activations.Elu``) in the arrays' type: the
# constants come in it, ``one`` is 1.


@jit
def elu(x, input_scale, scale, scale_alpha, one, out):  # pragma: no cover - compiled
    """``scale * x`` where ``x > 0``, else ``scale_alpha * expm1(input_scale * x)``."""
    zero = one - one
    for i in prange(x.shape[0]):
        v = x[i]
        negative = input_scale * (zero if v > zero else v)
        out[i] = scale * v if v > zero else scale_alpha * exp_minus_one(negative)


@jit
def elu_negative_side(x, input_scale, one, out):  # pragma: no cover - compiled
    """``input_scale * where(x > 0, 0, x)``: its exp is the backward's slope."""
    zero = one - one
    for i in prange(x.shape[0]):
        v = x[i]
        out[i] = input_scale * (zero if v > zero else v)


@jit
def elu_backward(grad, x, e, scale, slope_scale, one, out):  # pragma: no cover - compiled
    """``grad * where(x > 0, scale, slope_scale * e)``, ``e`` the negative side's exp."""
    zero = one - one
    for i in prange(x.shape[0]):
        out[i] = grad[i] * (scale if x[i] > zero else slope_scale * e[i])


# ----------------------------------------------------------------------- piecewise-linear
# Leaky ReLU, hardtanh (and ReLU6), hardswish and the hard sigmoid as their references compute
# them (``dparray.ops.activations``), in the arrays' type: the constants come in it. NumPy's
# clip keeps x where it equals a bound (-0.0 stays -0.0) and passes NaN; so does ``clip``.


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def clip(v, low, high):  # pragma: no cover - compiled
    """NumPy's ``clip(v, low, high)`` of one value."""
    return low if v < low else (high if v > high else v)


@jit
def leaky_relu(x, slope, out):  # pragma: no cover - compiled
    """``where(x > 0, x, slope * x)``."""
    for i in prange(x.shape[0]):
        v = x[i]
        out[i] = v if v > 0 else slope * v


@jit
def leaky_relu_backward(grad, x, slope, out):  # pragma: no cover - compiled
    """``where(x > 0, grad, slope * grad)``."""
    for i in prange(x.shape[0]):
        g = grad[i]
        out[i] = g if x[i] > 0 else slope * g


@jit
def hardtanh(x, low, high, out):  # pragma: no cover - compiled
    for i in prange(x.shape[0]):
        out[i] = clip(x[i], low, high)


@jit
def inside_backward(grad, x, low, high, divisor, out):  # pragma: no cover - compiled
    """``where(low < x < high, grad / divisor, 0)``: hardtanh's (``divisor`` 1: ``grad``
    itself, to the bit) and the hard sigmoid's (``grad / 6``)."""
    zero = low - low
    for i in prange(x.shape[0]):
        v = x[i]
        out[i] = grad[i] / divisor if low < v and v < high else zero


@jit
def hardswish(x, three, six, out):  # pragma: no cover - compiled
    """``x * clip(x + 3, 0, 6) / 6``."""
    zero = three - three
    for i in prange(x.shape[0]):
        v = x[i]
        out[i] = v * clip(v + three, zero, six) / six


@jit
def hardswish_backward(grad, x, three, half, out):  # pragma: no cover - compiled
    """``grad * where(x <= -3, 0, where(x >= 3, 1, x / 3 + 0.5))``."""
    zero = three - three
    one = three / three
    for i in prange(x.shape[0]):
        v = x[i]
        out[i] = grad[i] * (zero if v <= -three else (one if v >= three else v / three + half))


@jit
def hardsigmoid(x, three, six, out):  # pragma: no cover - compiled
    """``clip(x + 3, 0, 6) / 6``."""
    zero = three - three
    for i in prange(x.shape[0]):
        out[i] = clip(x[i] + three, zero, six) / six


# ----------------------------------------------------------------------- softmax, by rows
# As the references compute them: shifted = x - max(x) (NumPy's, by the caller, but under a
# causal mask), then NumPy's exp (by the caller, between the loops), then the row sums.


@jit
def causal_shift_rows(x, shifted, length):  # pragma: no cover - compiled
    """The shift by each row's maximum (keeping empty rows, ``_softmax_kernels.shift``) of
    attention's scores under a causal mask: row ``r`` is query ``r % length``, which sees the
    keys up to its own position; the keys after it become -inf (their exponentials 0), as the
    reference's where makes them."""
    rows, width = x.shape
    for r in prange(rows):
        seen = min(r % length + 1, width)
        top = x[r, 0]
        for j in range(1, seen):
            v = x[r, j]
            if v > top or (v != v and top == top):
                top = v
        shift = 0.0 if top == -math.inf else top
        for j in range(seen):
            shifted[r, j] = x[r, j] - shift
        for j in range(seen, width):
            shifted[r, j] = -math.inf


@jit_sum
def normalize_rows(exponentials):  # pragma: no cover - compiled
    """Softmax from exp(shifted): each row divided by its sum, in place. A row of zeros (an
    empty row that the shift kept) stays zeros; any other row's sum is at least 1 (its
    maximum's exp(0)) or NaN."""
    rows, width = exponentials.shape
    for i in prange(rows):
        total = 0.0
        for j in range(width):
            total += exponentials[i, j]
        if total != 0.0:
            for j in range(width):
                exponentials[i, j] = exponentials[i, j] / total


@jit_sum
def log_normalize_rows(shifted, exponentials, totals):  # pragma: no cover - compiled
    """Log-softmax from shifted and exp(shifted): shifted - log(row sum), in place; the row
    sums into ``totals``."""
    rows, width = shifted.shape
    for i in prange(rows):
        total = 0.0
        for j in range(width):
            total += exponentials[i, j]
        totals[i] = total
        shift = math.log(total)
        for j in range(width):
            shifted[i, j] = shifted[i, j] - shift


@jit_sum
def softmax_rows_backward(grad, out, result):  # pragma: no cover - compiled
    rows, width = out.shape
    for i in prange(rows):
        total = 0.0
        for j in range(width):
            total += grad[i, j] * out[i, j]
        for j in range(width):
            result[i, j] = out[i, j] * (grad[i, j] - total)


@jit_sum
def log_softmax_rows_backward_from_sums(grad, exponentials, totals, result):  # pragma: no cover
    """The log-softmax gradient ``grad - p * sum(grad)`` from forward's exponentials and row
    sums (``log_normalize_rows``): the probabilities ``p = e / total``, within an ulp or two
    of the reference's ``exp(out)``, without a second exp."""
    rows, width = grad.shape
    for i in prange(rows):
        total = 0.0
        for j in range(width):
            total += grad[i, j]
        scale = total / totals[i]
        for j in range(width):
            result[i, j] = grad[i, j] - exponentials[i, j] * scale


@jit
def log_softmax_rows_backward_from_picks(exponentials, totals, columns, values,
                                         result):  # pragma: no cover - compiled
    """``log_softmax_rows_backward_from_sums`` for a gradient that is ``values[i]`` at column
    ``columns[i]`` of row ``i`` and zero elsewhere (NLL's): its row sum is that value. Within
    two ulps of the whole array's result (whose loop Numba may reassociate, to ``(e * sum) /
    total``: two roundings each)."""
    rows, width = exponentials.shape
    for i in prange(rows):
        value = values[i]
        scale = (0.0 + value) / totals[i]  # (the row sum: +0.0 for a -0.0, as a sum gives)
        for j in range(width):
            result[i, j] = 0.0 - exponentials[i, j] * scale
        column = columns[i]
        result[i, column] = value - exponentials[i, column] * scale


@jit_sum
def pick_and_spread(log_probs, target, class_weight, picked, spread):  # pragma: no cover
    """Each row's log-probability of its target, and its class-weighted sum."""
    rows, classes = log_probs.shape
    for i in prange(rows):
        weighted = 0.0
        for j in range(classes):
            weighted += log_probs[i, j] * class_weight[j]
        picked[i] = log_probs[i, target[i]]
        spread[i] = weighted


@jit_sum
def row_sums_and_logs(exponentials, totals, logs):  # pragma: no cover - compiled
    """Each row's sum (in float64, as ``log_normalize_rows``) and its logarithm."""
    rows, width = exponentials.shape
    for i in prange(rows):
        total = 0.0
        for j in range(width):
            total += exponentials[i, j]
        totals[i] = total
        logs[i] = math.log(total)


@jit
def cross_entropy_rows_backward(exponentials, totals, target, coefficient, pick_mass,
                                class_mass, share, out):  # pragma: no cover - compiled
    """The gradient from the softmax's numerators and row sums: each probability ``e / total``
    rounded to the arrays' type, then the reference's arithmetic in that type."""
    rows, classes = exponentials.shape
    for i in prange(rows):
        s, k = share[i], coefficient[i]
        inverse = 1.0 / totals[i]
        for j in range(classes):
            out[i, j] = exponentials[i, j] * inverse  # (the store rounds it)
            out[i, j] = (out[i, j] * k - class_mass[j]) * s
        out[i, target[i]] -= pick_mass[i] * s


# ----------------------------------------------------------------------- squared error


@jit_sum
def squared_difference_sum(x, y, difference):  # pragma: no cover - compiled
    """``difference = x - y`` (in their dtype, as the reference), and the sum of its squares,
    accumulated in float64."""
    total = 0.0
    for i in prange(x.shape[0]):
        d = x[i] - y[i]
        difference[i] = d
        total += np.float64(d) * np.float64(d)
    return total


# ----------------------------------------------------------------------- pooling
# x is (P, H, W): the N * C image planes; out and winner are (P, OH, OW). The loops are made
# per kernel size (``pooling_loops(kh, kw)``), so that the window loops have constant trip
# counts LLVM unrolls -- four times faster than loops over a runtime size. Numba caches each
# size's loops on disk like the others (the cache tells closures apart by their constants).


def pooling_loops(kh: int, kw: int) -> tuple[Any, Any, Any, Any]:
    """The four pooling loops for a ``kh x kw`` window: max forward and backward, average
    forward and backward."""
    return _pooling_loops(kh, kw)


@functools.cache
def _pooling_loops(kh, kw):
    @jit
    def max_forward(x, sh, sw, ph, pw, dh, dw, out, winner):  # pragma: no cover - compiled
        # A candidate replaces the best so far only when larger (the first maximum wins) or
        # when it is the first NaN, by selects rather than jumps (random data would
        # mispredict every other jump). Positions in the padding are skipped: as -inf in the
        # reference, they never beat a real value.
        planes, height, width = x.shape
        _, out_h, out_w = out.shape
        for p in prange(planes):
            for oh in range(out_h):
                h0 = oh * sh - ph
                rows_inside = h0 >= 0 and h0 + (kh - 1) * dh < height
                for ow in range(out_w):
                    w0 = ow * sw - pw
                    inside = rows_inside and w0 >= 0 and w0 + (kw - 1) * dw < width
                    best = -np.inf
                    best_k = 0
                    for i in range(kh):
                        for j in range(kw):
                            h = h0 + i * dh
                            w = w0 + j * dw
                            if inside or (0 <= h < height and 0 <= w < width):
                                v = x[p, h, w]
                                take = (v > best) | ((v != v) & (best == best))
                                best = v if take else best
                                best_k = i * kw + j if take else best_k
                    out[p, oh, ow] = best
                    winner[p, oh, ow] = best_k

    @jit
    def max_backward(grad, winner, sh, sw, ph, pw, dh, dw, out):  # pragma: no cover
        planes, out_h, out_w = grad.shape
        _, height, width = out.shape
        for p in prange(planes):
            for oh in range(out_h):
                for ow in range(out_w):
                    k = winner[p, oh, ow]
                    h = oh * sh - ph + (k // kw) * dh
                    w = ow * sw - pw + (k % kw) * dw
                    if 0 <= h < height and 0 <= w < width:  # a window of padding only: nowhere
                        out[p, h, w] += grad[p, oh, ow]

    @jit
    def avg_forward(x, sh, sw, ph, pw, divisor, out):  # pragma: no cover - compiled
        planes, height, width = x.shape
        _, out_h, out_w = out.shape
        for p in prange(planes):
            for oh in range(out_h):
                h0 = oh * sh - ph
                for ow in range(out_w):
                    w0 = ow * sw - pw
                    total = 0.0
                    for i in range(kh):
                        for j in range(kw):
                            h = h0 + i
                            w = w0 + j
                            if 0 <= h < height and 0 <= w < width:
                                total += x[p, h, w]
                    out[p, oh, ow] = total / divisor[oh, ow]

    @jit
    def avg_backward(grad, sh, sw, ph, pw, divisor, out):  # pragma: no cover - compiled
        planes, out_h, out_w = grad.shape
        _, height, width = out.shape
        for p in prange(planes):
            for oh in range(out_h):
                h0 = oh * sh - ph
                for ow in range(out_w):
                    w0 = ow * sw - pw
                    share = grad[p, oh, ow] / divisor[oh, ow]
                    for i in range(kh):
                        for j in range(kw):
                            h = h0 + i
                            w = w0 + j
                            if 0 <= h < height and 0 <= w < width:
                                out[p, h, w] += share

    return max_forward, max_backward, avg_forward, avg_backward


# ----------------------------------------------------------------------- convolution
@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def window_range(size, out_size, stride, start):  # pragma: no cover - compiled
    """``(lo, hi)``: the outputs ``o`` whose input ``o * stride + start`` is in ``[0, size)``
    (they are consecutive), so a loop over them needs no bounds test."""
    lo = max(0, -(start // stride))  # the ceiling of -start / stride
    hi = min(out_size, -((start - size) // stride))
    return lo, max(lo, hi)


@jit
def im2col(x, kh, kw, sh, sw, ph, pw, dh, dw, out):  # pragma: no cover - compiled
    """Every window of ``x`` ``(N, C, H, W)`` into ``out`` ``(C * kh * kw, N, OH, OW)``, zero
    where a window reaches into the padding: the operand of the convolution's product. A row
    of windows wholly inside the image is a plain copy (stride 1)."""
    batch, channels, height, width = x.shape
    _, _, out_h, out_w = out.shape
    for row in prange(channels * kh * kw):
        c = row // (kh * kw)
        i = (row // kw) % kh
        j = row % kw
        offset = j * dw - pw
        lo, hi = window_range(width, out_w, sw, offset)
        inside = sw == 1 and lo == 0 and hi == out_w
        for n in range(batch):
            for oh in range(out_h):
                h = oh * sh - ph + i * dh
                if h < 0 or h >= height:
                    for ow in range(out_w):
                        out[row, n, oh, ow] = 0.0
                elif inside:
                    for ow in range(out_w):
                        out[row, n, oh, ow] = x[n, c, h, ow + offset]
                else:
                    for ow in range(out_w):
                        w = ow * sw + offset
                        out[row, n, oh, ow] = x[n, c, h, w] if 0 <= w < width else 0.0


@jit
def col2im(columns, channels, kh, kw, sh, sw, ph, pw, dh, dw, out):  # pragma: no cover
    """``columns`` is ``(C * kh * kw, N, OH, OW)``; adds each into ``out`` ``(N, C, H, W)``,
    over only the outputs whose window column is inside the image (``window_range``): no
    bounds test in the inner loop, which then vectorises at stride 1. Each element of ``out``
    receives its terms in the same order as a loop over every output would add them."""
    batch, _, height, width = out.shape
    _, _, out_h, out_w = columns.shape
    for c in prange(channels):
        for i in range(kh):
            for j in range(kw):
                row = (c * kh + i) * kw + j
                offset = j * dw - pw
                lo, hi = window_range(width, out_w, sw, offset)
                first = lo * sw + offset
                for n in range(batch):
                    for oh in range(out_h):
                        h = oh * sh - ph + i * dh
                        if h < 0 or h >= height:
                            continue
                        if sw == 1:
                            for k in range(hi - lo):
                                out[n, c, h, first + k] += columns[row, n, oh, lo + k]
                        else:
                            for k in range(hi - lo):
                                out[n, c, h, first + k * sw] += columns[row, n, oh, lo + k]


# A convolution's product comes out channel-major, (C, N, P) for P output positions per image,
# and its result is image-major, (N, C, P); its output gradient goes the other way. NumPy's
# strided copies between the two run on one thread and several times slower than these.


# ----------------------------------------------------------------------- adaptive pooling
# Average pooling over PyTorch's adaptive windows (``dparray.ops.adaptive_pool``), given each
# output row's and column's [start, end) bounds, one image plane per task; sums in float64,
# in any order (``jit_sum``), divided once by the window's size.


@jit_sum
def adaptive_avg_pool(x, row_starts, row_ends, col_starts, col_ends,
                      out):  # pragma: no cover - compiled
    """``out`` ``(P, OH, OW)``: each window's mean of ``x`` ``(P, H, W)``."""
    for p in prange(x.shape[0]):
        plane, target = x[p], out[p]
        for oy in range(row_starts.shape[0]):
            r0, r1 = row_starts[oy], row_ends[oy]
            for ox in range(col_starts.shape[0]):
                c0, c1 = col_starts[ox], col_ends[ox]
                total = 0.0
                for y in range(r0, r1):
                    row = plane[y]
                    for xx in range(c0, c1):
                        total += row[xx]
                target[oy, ox] = total / ((r1 - r0) * (c1 - c0))


@jit
def adaptive_avg_pool_backward(grad, row_starts, row_ends, col_starts, col_ends,
                               dx):  # pragma: no cover - compiled
    """``dx`` ``(P, H, W)``: each output's gradient shared out over its window (windows that
    overlap add), in float64, rounded once."""
    height, width = dx.shape[1], dx.shape[2]
    for p in prange(grad.shape[0]):
        plane = np.zeros((height, width))
        for oy in range(row_starts.shape[0]):
            r0, r1 = row_starts[oy], row_ends[oy]
            for ox in range(col_starts.shape[0]):
                c0, c1 = col_starts[ox], col_ends[ox]
                share = np.float64(grad[p, oy, ox]) / ((r1 - r0) * (c1 - c0))
                for y in range(r0, r1):
                    row = plane[y]
                    for xx in range(c0, c1):
                        row[xx] += share
        target = dx[p]
        for y in range(height):
            for xx in range(width):
                target[y, xx] = plane[y, xx]


@jit
def adaptive_max_pool(x, row_starts, row_ends, col_starts, col_ends, table_width, out, winner,
                      position):  # pragma: no cover - compiled
    """``out`` ``(P, OH, OW)``: each window's maximum of ``x`` ``(P, H, W)``, the first in
    row-major order, a NaN beating every number and the first NaN winning (NumPy's ``argmax``);
    ``winner``: its offset ``r * table_width + s`` in the window, ``position``: ``y * W + x``."""
    width = x.shape[2]
    for p in prange(x.shape[0]):
        plane = x[p]
        for oy in range(row_starts.shape[0]):
            r0, r1 = row_starts[oy], row_ends[oy]
            for ox in range(col_starts.shape[0]):
                c0, c1 = col_starts[ox], col_ends[ox]
                best, by, bx = plane[r0, c0], r0, c0
                y = r0
                while y < r1 and not np.isnan(best):
                    row = plane[y]
                    for xx in range(c0, c1):
                        v = row[xx]
                        if v > best or np.isnan(v):
                            best, by, bx = v, y, xx
                            if np.isnan(v):
                                break
                    y += 1
                out[p, oy, ox] = best
                winner[p, oy, ox] = (by - r0) * table_width + (bx - c0)
                position[p, oy, ox] = by * width + bx


@jit
def adaptive_max_pool_backward(grad, position, dx):  # pragma: no cover - compiled
    """``dx`` ``(P, H * W)``: each output's gradient ``grad`` ``(P, O)`` added at its winner's
    ``position`` ``(P, O)``, outputs in order."""
    for p in prange(grad.shape[0]):
        target = dx[p]
        for i in range(target.shape[0]):
            target[i] = 0.0
        for o in range(grad.shape[1]):
            target[position[p, o]] += grad[p, o]


# ----------------------------------------------------------------------- interpolation
# Resampling along one axis as ``dparray.ops.interpolate.Interpolate`` computes it, the array
# viewed as (outer, size, inner) around the axis: output i is the sum over taps j, in order,
# of x[taps[j, i]] * weights[j, i]; the adjoint adds each grad[i] * weights[j, i] back into
# entry taps[j, i], taps in order and each tap's outputs in order -- the order of the
# reference's sums (``_take_axis.take_adjoint``), so the results are its bits. Sums start
# from -0.0, which adds as nothing; the reference adds a +0.0 for each reading depth an entry
# lacks, which turns a -0.0 sum (or none) into +0.0, and so do the loops for those entries.


@jit
def resample_axis(x, taps, weights, out):  # pragma: no cover - compiled
    """``out`` ``(outer, out_size, inner)`` from ``x`` ``(outer, size, inner)``."""
    outer, _, inner = x.shape
    count, out_size = taps.shape
    for o in prange(outer):
        source, target = x[o], out[o]
        if inner == 1:
            for i in range(out_size):
                total = source[taps[0, i], 0] * weights[0, i]
                for j in range(1, count):
                    total += source[taps[j, i], 0] * weights[j, i]
                target[i, 0] = total
        else:
            for i in range(out_size):
                row, read, w = target[i], source[taps[0, i]], weights[0, i]
                for k in range(inner):
                    row[k] = read[k] * w
                for j in range(1, count):
                    read, w = source[taps[j, i]], weights[j, i]
                    for k in range(inner):
                        row[k] += read[k] * w


@jit
def resample_axis_adjoint(grad, taps, weights, shallow, out):  # pragma: no cover - compiled
    """``out`` ``(outer, size, inner)`` from ``grad`` ``(outer, out_size, inner)``; ``shallow``:
    the entries fewer outputs read than the most read one."""
    outer, _, inner = out.shape
    count, out_size = taps.shape
    for o in prange(outer):
        source, target = grad[o], out[o]
        target[:] = -0.0
        for j in range(count):
            for i in range(out_size):
                row, read, w = target[taps[j, i]], source[i], weights[j, i]
                for k in range(inner):
                    row[k] += read[k] * w
        for e in shallow:
            row = target[e]
            for k in range(inner):
                row[k] += 0.0


# ----------------------------------------------------------------------- depthwise convolution
# groups == input channels (MobileNet's, ConvNeXt's): each output channel oc reads input
# channel oc // multiplier through its own kh x kw taps, weight (OC, kh * kw). One image plane
# per task, no window copies. The padded plane is split into its sh x sw stride phases
# (``to_phases``: phase (a, b) holds the padded rows a, a + sh, ... and columns b, b + sw, ...),
# so that every tap reads one phase at unit stride; each tap is then one loop over the whole
# phase, flattened with the phase's width as the row pitch: output (oy, ox) sits at
# oy * pitch + ox, and tap (i, j) reads its phase ((i dh) % sh, (j dw) % sw) at
# ((i dh) // sh) * pitch + (j dw) // sw further on. The columns past the output's width are
# computed and dropped (a few percent); no loop is as short as a row. Each output sums its
# taps in the arrays' type, as the reference's product does; the weight's and bias's gradients
# sum in float64, in any order (``jit_sum``).


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def to_phases(source, sh, sw, ph, pw, phases):  # pragma: no cover - compiled
    """The plane ``source`` ``(H, W)``, padded by ``(ph, pw)``, as its stride phases
    ``(sh, sw, rows, pitch)``; zeros in the padding and past the plane."""
    phases[:] = 0.0
    height, width = source.shape
    rows, pitch = phases.shape[2], phases.shape[3]
    for a in range(sh):
        for b in range(sw):
            lo, hi = window_range(width, pitch, sw, b - pw)
            for r in range(rows):
                y = r * sh + a - ph
                if 0 <= y < height:
                    read, written = source[y], phases[a, b, r]
                    for q in range(lo, hi):
                        written[q] = read[q * sw + b - pw]


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def from_phases(phases, sh, sw, ph, pw, target):  # pragma: no cover - compiled
    """``to_phases`` undone: the plane ``target`` ``(H, W)`` from its padded stride phases."""
    height, width = target.shape
    rows, pitch = phases.shape[2], phases.shape[3]
    for a in range(sh):
        for b in range(sw):
            lo, hi = window_range(width, pitch, sw, b - pw)
            for r in range(rows):
                y = r * sh + a - ph
                if 0 <= y < height:
                    read, written = phases[a, b, r], target[y]
                    for q in range(lo, hi):
                        written[q * sw + b - pw] = read[q]


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def phase_shape(height, width, sh, sw, ph, pw):  # pragma: no cover - compiled
    """``(rows, pitch)``: each stride phase's size, the padded plane's divided up."""
    return -(-(height + 2 * ph) // sh), -(-(width + 2 * pw) // sw)


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def tap_start(i, j, sh, sw, dh, dw, pitch):  # pragma: no cover - compiled
    """Tap (i, j)'s phase and where in it, flattened, output (0, 0) reads."""
    return (i * dh) % sh, (j * dw) % sw, ((i * dh) // sh) * pitch + (j * dw) // sw


@jit
def depthwise_conv(x, weight, bias, kh, kw, sh, sw, ph, pw, dh, dw,
                   out):  # pragma: no cover - compiled
    """``out`` ``(N, OC, OH, OW)`` of ``x`` ``(N, C, H, W)``, plus ``bias`` ``(OC,)``."""
    batch, channels, height, width = x.shape
    _, planes, out_h, out_w = out.shape
    multiplier = planes // channels
    rows, pitch = phase_shape(height, width, sh, sw, ph, pw)
    span = (out_h - 1) * pitch + out_w
    for task in prange(batch * planes):
        n, oc = task // planes, task % planes
        phases = np.empty((sh, sw, rows, pitch), x.dtype)
        to_phases(x[n, oc // multiplier], sh, sw, ph, pw, phases)
        full = np.empty(span, out.dtype)
        full[:] = bias[oc]
        for i in range(kh):
            for j in range(kw):
                a, b, start = tap_start(i, j, sh, sw, dh, dw, pitch)
                tap, read = weight[oc, i * kw + j], phases[a, b].reshape(-1)[start:start + span]
                for p in range(span):
                    full[p] += tap * read[p]
        plane = out[n, oc]
        for oy in range(out_h):
            row, kept = plane[oy], full[oy * pitch:oy * pitch + out_w]
            for ox in range(out_w):
                row[ox] = kept[ox]


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def at_pitch(grad_plane, pitch, spread):  # pragma: no cover - compiled
    """An output plane ``(OH, OW)`` laid out at the phases' pitch, into ``spread``."""
    out_h, out_w = grad_plane.shape
    for oy in range(out_h):
        row, target = grad_plane[oy], spread[oy * pitch:oy * pitch + out_w]
        for ox in range(out_w):
            target[ox] = row[ox]


@jit
def depthwise_conv_input_gradient(grad, weight, kh, kw, sh, sw, ph, pw, dh, dw,
                                  dx):  # pragma: no cover - compiled
    """``dx`` ``(N, C, H, W)`` from ``grad`` ``(N, OC, OH, OW)``: each tap's product added back
    into the phase it read."""
    batch, channels, height, width = dx.shape
    _, planes, out_h, out_w = grad.shape
    multiplier = planes // channels
    rows, pitch = phase_shape(height, width, sh, sw, ph, pw)
    span = (out_h - 1) * pitch + out_w
    for task in prange(batch * channels):
        n, c = task // channels, task % channels
        phases = np.zeros((sh, sw, rows, pitch), dx.dtype)
        spread = np.zeros(span, grad.dtype)  # zeros past the output's width stay zeros
        for oc in range(c * multiplier, (c + 1) * multiplier):
            at_pitch(grad[n, oc], pitch, spread)
            for i in range(kh):
                for j in range(kw):
                    a, b, start = tap_start(i, j, sh, sw, dh, dw, pitch)
                    tap = weight[oc, i * kw + j]
                    written = phases[a, b].reshape(-1)[start:start + span]
                    for p in range(span):
                        written[p] += tap * spread[p]
        from_phases(phases, sh, sw, ph, pw, dx[n, c])


@jit_sum
def depthwise_conv_weight_gradient(grad, x, kh, kw, sh, sw, ph, pw, dh, dw, dweight,
                                   dbias):  # pragma: no cover - compiled
    """``dweight`` ``(OC, kh * kw)`` and ``dbias`` ``(OC,)``, float64: each tap one dot
    product per image over the flattened phase it reads."""
    batch, channels, height, width = x.shape
    _, planes, out_h, out_w = grad.shape
    multiplier = planes // channels
    rows, pitch = phase_shape(height, width, sh, sw, ph, pw)
    span = (out_h - 1) * pitch + out_w
    for oc in prange(planes):
        taps = np.zeros(kh * kw, np.float64)
        total = 0.0
        phases = np.empty((sh, sw, rows, pitch), x.dtype)
        spread = np.zeros(span, grad.dtype)
        for n in range(batch):
            to_phases(x[n, oc // multiplier], sh, sw, ph, pw, phases)
            at_pitch(grad[n, oc], pitch, spread)
            for p in range(span):
                total += spread[p]
            for i in range(kh):
                for j in range(kw):
                    a, b, start = tap_start(i, j, sh, sw, dh, dw, pitch)
                    read = phases[a, b].reshape(-1)[start:start + span]
                    acc = 0.0
                    for p in range(span):
                        acc += np.float64(spread[p]) * read[p]
                    taps[i * kw + j] += acc
        for k in range(kh * kw):
            dweight[oc, k] = taps[k]
        dbias[oc] = total


@jit
def swap_leading_axes(x, bias, out):  # pragma: no cover - compiled
    """``out[j, i] = x[i, j]`` for ``x`` of shape ``(A, B, P)``, plus ``bias[i]`` unless
    ``bias`` is None (Numba compiles each case apart): a convolution's product as its
    result."""
    a, b, p = x.shape
    for j in prange(b):
        for i in range(a):
            if bias is None:
                for k in range(p):
                    out[j, i, k] = x[i, j, k]
            else:
                shift = bias[i]
                for k in range(p):
                    out[j, i, k] = x[i, j, k] + shift


@jit_sum
def swap_leading_axes_sum(x, out, sums):  # pragma: no cover - compiled
    """``out[i, j] = x[j, i]`` for ``x`` of shape ``(B, A, P)``, and ``sums[i]`` the sum of
    ``x[:, i]``: a convolution's output gradient as its products' operand, and the bias's
    gradient."""
    b, a, p = x.shape
    for i in prange(a):
        total = 0.0
        for j in range(b):
            for k in range(p):
                v = x[j, i, k]
                out[i, j, k] = v
                total += v
        sums[i] = total


# ----------------------------------------------------------------------- scatter-add
@jit
def scatter_add_rows(out, index, values, shares):  # pragma: no cover - compiled
    """``out[index[i], :] += values[i, :]`` for every ``i``, in order (a negative index counts
    from the end). The rows of ``out`` are split in ``shares`` (one a thread): each reads every
    index and adds the rows that fall in its share, whole rows at a time (vectorised), so no
    two threads touch one element and every element's terms add in index order, bitwise the
    same for any thread count."""
    rows, columns = values.shape
    targets = out.shape[0]
    for share in prange(shares):
        low, high = share * targets // shares, (share + 1) * targets // shares
        for i in range(rows):
            r = index[i]
            if r < 0:
                r += targets
            if low <= r < high:
                row, added = out[r], values[i]
                for j in range(columns):
                    row[j] += added[j]


# ----------------------------------------------------------------------- optimizer updates
# The references' arithmetic, in their order, one pass over the parameter; the state arrays
# are new arrays (the optimizer's state is never changed in place). Every scalar comes in the
# parameter's dtype, already combined as the reference combines it in Python floats
# (``1 - beta1``, ...): so float32 parameters are updated in float32, as NumPy updates them,
# and the result is the reference's bit for bit (but for a NaN's sign: LLVM may swap the
# operands of an addition, and x86 returns the first operand's NaN).


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def decayed(p, g, with_decay, decoupled, decay):  # pragma: no cover - compiled
    """``(p, g)`` after weight decay: ``p * decay`` when ``decoupled`` (``decay`` is then the
    factor ``1 - lr * weight_decay``), else ``g + decay * p``."""
    if with_decay:
        if decoupled:
            return p * decay, g
        return p, g + decay * p
    return p, g


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def lerp(start, end, near, weight, far):  # pragma: no cover - compiled
    """``dparray.optim._shared.lerp``: from ``start`` when ``near`` (a weight below 0.5), else
    from ``end`` (``far`` is ``1 - weight``)."""
    return start + weight * (end - start) if near else end - (end - start) * far


@jit
def adam_update(param, grad, m, v, first, with_decay, decoupled, decay, beta1, keep1, beta2,
                keep2, step_size, inverse_bias2, eps, out, m_out, v_out):  # pragma: no cover
    """``decay``: the weight decay added to the gradient, or with ``decoupled`` the
    parameter's factor ``1 - lr * weight_decay``; ``keep1``, ``keep2``: ``1 - beta1``,
    ``1 - beta2``."""
    for i in prange(param.shape[0]):
        p, g = decayed(param[i], grad[i], with_decay, decoupled, decay)
        if first:
            mi = keep1 * g
            vi = keep2 * g * g
        else:
            mi = beta1 * m[i] + keep1 * g
            vi = beta2 * v[i] + keep2 * g * g
        m_out[i] = mi
        v_out[i] = vi
        out[i] = p - step_size * (mi / (math.sqrt(vi) * inverse_bias2 + eps))


@jit
def sgd_update(param, grad, buffer, first, lr, with_decay, decay, with_momentum, momentum, keep,
               nesterov, out, buffer_out):  # pragma: no cover - compiled
    """``keep``: ``1 - dampening``."""
    for i in prange(param.shape[0]):
        g = grad[i] + decay * param[i] if with_decay else grad[i]
        if with_momentum:
            b = g if first else momentum * buffer[i] + keep * g
            buffer_out[i] = b
            g = g + momentum * b if nesterov else b
        out[i] = param[i] - lr * g


@jit
def adadelta_update(param, grad, square, accumulated, first, with_decay, decay, rho, keep, eps,
                    lr, zero, out, square_out, accumulated_out):  # pragma: no cover - compiled
    """``keep``: ``1 - rho``; ``zero``: 0 in the parameter's dtype, the state before the first
    step (the reference starts from zeros and computes with them)."""
    for i in prange(param.shape[0]):
        g = grad[i] + decay * param[i] if with_decay else grad[i]
        s = zero if first else square[i]
        a = zero if first else accumulated[i]
        s = rho * s + keep * g * g
        d = math.sqrt(a + eps) / math.sqrt(s + eps) * g
        square_out[i] = s
        accumulated_out[i] = rho * a + keep * d * d
        out[i] = param[i] - lr * d


@jit
def rmsprop_update(param, grad, square, average, buffer, first_square, first_average,
                   first_buffer, with_decay, centered, with_momentum, near, decay, alpha, keep,
                   far, eps, momentum, lr, zero, out, square_out, average_out,
                   buffer_out):  # pragma: no cover - compiled
    """``keep``: ``1 - alpha``, the gradient average's lerp weight; ``far``: ``1 - keep``, its
    other factor when ``near`` is False; ``zero``: the states' start."""
    for i in prange(param.shape[0]):
        p = param[i]
        g = grad[i] + decay * p if with_decay else grad[i]
        s = zero if first_square else square[i]
        s = alpha * s + keep * g * g
        square_out[i] = s
        if centered:
            a = lerp(zero if first_average else average[i], g, near, keep, far)
            average_out[i] = a
            divisor = math.sqrt(s - a * a) + eps
        else:
            divisor = math.sqrt(s) + eps
        if with_momentum:
            b = g / divisor if first_buffer else momentum * buffer[i] + g / divisor
            buffer_out[i] = b
            out[i] = p - lr * b
        else:
            out[i] = p - (lr * g) / divisor


@jit
def adagrad_update(param, grad, total, with_decay, decay, step_size, eps, out,
                   total_out):  # pragma: no cover - compiled
    for i in prange(param.shape[0]):
        p = param[i]
        g = grad[i] + decay * p if with_decay else grad[i]
        t = total[i] + g * g
        total_out[i] = t
        out[i] = p - (step_size * g) / (math.sqrt(t) + eps)


@jit
def adamax_update(param, grad, average, infinity, first, with_decay, near, decay, weight, far,
                  beta2, eps, step_size, zero, out, average_out,
                  infinity_out):  # pragma: no cover - compiled
    """``weight``: ``1 - beta1``, the first moment's lerp weight; ``far``: ``1 - weight``; the
    infinity norm ``max(beta2 * u, |g| + eps)`` NaN wherever either side is, as NumPy's."""
    for i in prange(param.shape[0]):
        p = param[i]
        g = grad[i] + decay * p if with_decay else grad[i]
        m = lerp(zero if first else average[i], g, near, weight, far)
        u = beta2 * (zero if first else infinity[i])
        v = abs(g) + eps
        u = u if u > v or u != u else v
        average_out[i] = m
        infinity_out[i] = u
        out[i] = p - (step_size * m) / u


@jit
def nadam_update(param, grad, average, square, first, with_decay, decoupled, near, decay,
                 weight, far, beta2, keep2, correction, eps, grad_weight, avg_weight, zero, out,
                 average_out, square_out):  # pragma: no cover - compiled
    """``decay``: the decoupled factor or the L2 weight decay; ``keep2``: ``1 - beta2``;
    ``correction``: ``1 - beta2^step``."""
    for i in prange(param.shape[0]):
        p, g = decayed(param[i], grad[i], with_decay, decoupled, decay)
        m = lerp(zero if first else average[i], g, near, weight, far)
        s = zero if first else square[i]
        s = beta2 * s + keep2 * g * g
        average_out[i] = m
        square_out[i] = s
        d = math.sqrt(s / correction) + eps
        p = p + (grad_weight * g) / d
        out[i] = p + (avg_weight * m) / d


# ----------------------------------------------------------------------- recurrences
# One time step of a cell of ``dparray.ops.recurrent`` for a batch, gates in PyTorch's order
# (LSTM i, f, g, o; GRU r, z, n), each ``hidden`` columns. The caller
# (``_recurrence_kernels``) has NumPy compute the exponentials and tanh: its loops are SIMD,
# and without Intel's SVML Numba's calls to libm run one element at a time (an LSTM step of
# 20 x 200 took 185 us that way, 14 us with NumPy's). What remains is the arithmetic, the
# reference's in its order and in the arrays' type (``one`` is 1 of that type: a literal 1.0
# would make float32 arithmetic float64), so the results are the reference's to the bit.


@jit
def lstm_gates(z, gates, c_prev, one, c_out):  # pragma: no cover - compiled
    """``z`` is the step's pre-activations; ``gates`` holds ``exp(-|z|)`` in the i, f and o
    columns and ``tanh(z)`` in g's on entry, the four gates on return; ``c_out`` gets the new
    cell state ``f * c_prev + i * g``."""
    batch, hidden = c_prev.shape
    for n in prange(batch):
        for j in range(hidden):
            i = sigmoid_of(z[n, j], gates[n, j], one)
            f = sigmoid_of(z[n, hidden + j], gates[n, hidden + j], one)
            g = gates[n, 2 * hidden + j]
            o = sigmoid_of(z[n, 3 * hidden + j], gates[n, 3 * hidden + j], one)
            gates[n, j] = i
            gates[n, hidden + j] = f
            gates[n, 3 * hidden + j] = o
            c_out[n, j] = f * c_prev[n, j] + i * g


@jit
def lstm_cell_backward(grad, dh, dc, gates, tanh_c, c_prev, one,
                       dgates):  # pragma: no cover - compiled
    """The step's gate gradients into ``dgates``; ``dh`` (in: from the next step) and ``dc``
    (in and out: this step's cell gradient times ``f``) are updated in place."""
    batch, hidden = tanh_c.shape
    for n in prange(batch):
        for j in range(hidden):
            i = gates[n, j]
            f = gates[n, hidden + j]
            g = gates[n, 2 * hidden + j]
            o = gates[n, 3 * hidden + j]
            h_grad = grad[n, j] + dh[n, j]
            t = tanh_c[n, j]
            c_grad = h_grad * o * (one - t * t) + dc[n, j]
            dgates[n, j] = c_grad * g * i * (one - i)
            dgates[n, hidden + j] = c_grad * c_prev[n, j] * f * (one - f)
            dgates[n, 2 * hidden + j] = c_grad * i * (one - g * g)
            dgates[n, 3 * hidden + j] = h_grad * t * o * (one - o)
            dc[n, j] = c_grad * f


@jit
def gru_gates(z, e, projected, a, one, cache):  # pragma: no cover - compiled
    """``z`` is the r and z gates' pre-activations and ``e`` their ``exp(-|z|)``; writes
    ``r, z``, the new gate's pre-activation ``p_n + r * a_n`` (its tanh is the caller's) and
    ``a_n`` into ``cache``."""
    batch, hidden = z.shape[0], z.shape[1] // 2
    for n in prange(batch):
        for j in range(hidden):
            r = sigmoid_of(z[n, j], e[n, j], one)
            cache[n, j] = r
            cache[n, hidden + j] = sigmoid_of(z[n, hidden + j], e[n, hidden + j], one)
            a_n = a[n, 2 * hidden + j]
            cache[n, 2 * hidden + j] = projected[n, 2 * hidden + j] + r * a_n
            cache[n, 3 * hidden + j] = a_n


@jit
def gru_output(cache, h_prev, one, h_out):  # pragma: no cover - compiled
    """``h = (1 - z) * n + z * h_prev`` from the step's cache."""
    batch, hidden = h_prev.shape
    for n in prange(batch):
        for j in range(hidden):
            z = cache[n, hidden + j]
            h_out[n, j] = (one - z) * cache[n, 2 * hidden + j] + z * h_prev[n, j]


@jit
def gru_cell_backward(grad, dh, cache, h_prev, one, d_projected, d_hidden,
                      direct):  # pragma: no cover - compiled
    """The step's gradients by its input projection and by its hidden projection, and
    ``direct``, the part of ``dh_(t-1)`` that bypasses ``W_hh``; ``dh`` is the gradient from
    the next step."""
    batch, hidden = h_prev.shape
    for n in prange(batch):
        for j in range(hidden):
            r = cache[n, j]
            z = cache[n, hidden + j]
            new = cache[n, 2 * hidden + j]
            h_grad = grad[n, j] + dh[n, j]
            d_new = h_grad * (one - z) * (one - new * new)
            d_r = d_new * cache[n, 3 * hidden + j] * r * (one - r)
            d_z = h_grad * (h_prev[n, j] - new) * z * (one - z)
            d_projected[n, j] = d_r
            d_projected[n, hidden + j] = d_z
            d_projected[n, 2 * hidden + j] = d_new
            d_hidden[n, j] = d_r
            d_hidden[n, hidden + j] = d_z
            d_hidden[n, 2 * hidden + j] = d_new * r
            direct[n, j] = h_grad * z


@jit
def rnn_cell_backward(grad, dh, h, relu, one, d_step):  # pragma: no cover - compiled
    batch, hidden = h.shape
    for n in prange(batch):
        for j in range(hidden):
            h_grad = grad[n, j] + dh[n, j]
            if relu:
                d_step[n, j] = h_grad * (one if h[n, j] > 0 else one - one)
            else:
                d_step[n, j] = h_grad * (one - h[n, j] * h[n, j])
