"""The convolution's compiled im2col and col2im against windows cut out by NumPy.

Both loops skip the bounds test where a row of windows is known to be inside the image
(``window_range``); these cases put windows across every edge: padding wider than the kernel,
strides and dilations that step over the input, one-pixel images, a window larger than the
image. The values are small integers, so col2im's sums are exact in any order and must equal
the reference's bit for bit.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from dparray.backends._numba_setup import usable

pytestmark = pytest.mark.skipif(not usable(), reason="needs Numba's compiled kernels")

# (N, C, H, W), (kh, kw), (sh, sw), (ph, pw), (dh, dw)
CASES = [((2, 3, 7, 9), (3, 2), (2, 1), (2, 3), (2, 1)),
         ((1, 2, 5, 5), (5, 5), (3, 3), (4, 4), (1, 1)),
         ((3, 1, 1, 1), (3, 3), (1, 1), (1, 1), (1, 1)),
         ((2, 4, 6, 8), (3, 3), (1, 1), (1, 1), (1, 1)),
         ((2, 4, 6, 8), (3, 3), (1, 1), (0, 0), (1, 2)),
         ((1, 2, 4, 11), (2, 4), (1, 3), (0, 5), (2, 2)),
         ((64, 2, 26, 26), (3, 3), (1, 1), (0, 0), (1, 1))]  # above the serial threshold


def output_size(size, kernel, stride, pad, dilation):
    return (size + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1


def reference_columns(x, kernel, stride, pad, dilation):
    """``(C * kh * kw, N, OH, OW)``: each window position read from the zero-padded input."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, pad, dilation
    oh, ow = output_size(h, kh, sh, ph, dh), output_size(w, kw, sw, pw, dw)
    padded = np.zeros((n, c, h + 2 * ph, w + 2 * pw), x.dtype)
    padded[:, :, ph:ph + h, pw:pw + w] = x
    out = np.empty((c, kh, kw, n, oh, ow), x.dtype)
    for i, j in itertools.product(range(kh), range(kw)):
        rows = padded[:, :, i * dh: i * dh + sh * (oh - 1) + 1: sh,
                      j * dw: j * dw + sw * (ow - 1) + 1: sw]
        out[:, i, j] = rows.transpose(1, 0, 2, 3)
    return out.reshape(c * kh * kw, n, oh, ow)


def reference_col2im(columns, shape, kernel, stride, pad, dilation):
    n, c, h, w = shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, pad, dilation
    oh, ow = columns.shape[2:]
    padded = np.zeros((n, c, h + 2 * ph, w + 2 * pw), columns.dtype)
    blocks = columns.reshape(c, kh, kw, n, oh, ow)
    for i, j in itertools.product(range(kh), range(kw)):
        padded[:, :, i * dh: i * dh + sh * (oh - 1) + 1: sh,
               j * dw: j * dw + sw * (ow - 1) + 1: sw] += blocks[:, i, j].transpose(1, 0, 2, 3)
    return padded[:, :, ph:ph + h, pw:pw + w]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=lambda case: "x".join(map(str, case[0])))
def test_im2col_and_col2im_equal_numpys_windows(case, dtype, rng):
    from dparray.backends import _numba_loops as loops

    shape, kernel, stride, pad, dilation = case
    x = rng.integers(-8, 9, shape).astype(dtype)
    expected = reference_columns(x, kernel, stride, pad, dilation)
    columns = np.full(expected.shape, np.nan, dtype)
    loops.im2col(x, *kernel, *stride, *pad, *dilation, columns)
    np.testing.assert_array_equal(columns, expected)

    gradient = rng.integers(-8, 9, expected.shape).astype(dtype)
    out = np.zeros(shape, dtype)
    loops.col2im(gradient, shape[1], *kernel, *stride, *pad, *dilation, out)
    np.testing.assert_array_equal(out, reference_col2im(gradient, shape, kernel, stride, pad,
                                                        dilation))
