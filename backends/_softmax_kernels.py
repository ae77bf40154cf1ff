"""Softmax and log-softmax along the last axis, by blocks of rows that stay in a core's cache.

Each is the reference's arithmetic in three steps: the shift by each row's maximum and the
exponentials are NumPy's SIMD calls (a compiled loop's test for NaN at every element kept it
from vectorising: NumPy's maximum ran 4x faster), the row sums and the normalisation one
compiled pass. Run whole, each step is a pass over memory: over 700 x 8,500 float32 scores (a
language model's logits over its vocabulary) log-softmax's forward read or wrote 24 MB arrays
seven times and made two of them, and took about twice PyTorch's time. So the rows are cut
into blocks of about ``BLOCK_BYTES`` each, and a block goes through all three steps while it
is in the cache; the blocks of each core's share of the rows (``_core_split.apply``) run on
that core. Every row gets the same calls, hence the same bits, as it got whole.

Backward is one compiled pass each. Softmax's reads its output. Log-softmax's forward, when
recorded, also keeps the exponentials and their row sums (one more array of the input's
size, as the cross-entropy kernel keeps), so backward makes the probabilities as ``e /
total``, within an ulp or two of the reference's ``exp(out)``, instead of a second exp: over
700 x 8,500 float32 that pass was about half of backward's time.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from dparray.autograd import PickGradient
from dparray.ops.reduce import LogSoftmax, Softmax

from ._core_split import apply
from ._fallback import LastAxisFallback, floating
from ._numba_setup import loops as _loops
from ._numba_setup import serial

BLOCK_BYTES = 1 << 20  # per array of a block: the two or three a step uses stay in L2 or L3


class _LastAxisSoftmax(LastAxisFallback):
    """Softmax or log-softmax along the last axis, by rows (``log`` says which)."""

    log = False

    def forward(self, x: Any) -> Any:
        if not floating(x) or not self.along_last_axis(x):
            return self.reference_forward(x)
        rows = np.ascontiguousarray(x).reshape(-1, x.shape[-1])
        self.shape = tuple(x.shape)
        if self.log and self.recording():
            out, exponentials, totals = log_softmax_rows_keeping_sums(rows)
            self.save(out, exponentials, totals)  # the output first: create_graph's
        else:
            out = softmax_rows(rows, bool(self.log))
            self.save(out)
        return out.reshape(self.shape)

    def backward(self, grad: Any) -> Any:
        if self.fallback:
            return self.reference_backward(grad.dense() if type(grad) is PickGradient else grad)
        out = self.saved[0]
        result = np.empty_like(out)
        if not self.log:
            _loops().softmax_rows_backward(_as_rows(grad, out), out, result)
        elif type(grad) is PickGradient:
            _, exponentials, totals = self.saved
            values = np.ascontiguousarray(grad.values, dtype=out.dtype)
            _loops().log_softmax_rows_backward_from_picks(exponentials, totals, grad.columns,
                                                          values, result)
        else:
            _, exponentials, totals = self.saved
            _loops().log_softmax_rows_backward_from_sums(_as_rows(grad, out), exponentials,
                                                         totals, result)
        return result.reshape(self.shape)


class SoftmaxKernel(_LastAxisSoftmax, Softmax):
    log = False


class LogSoftmaxKernel(_LastAxisSoftmax, LogSoftmax):
    log = True
    takes_pick_gradients = True  # NLL's, after it


def _as_rows(grad: Any, out: Any) -> Any:
    """The gradient as a C-contiguous array of the saved rows' shape and dtype."""
    return np.ascontiguousarray(grad, dtype=out.dtype).reshape(out.shape)


def softmax_rows(rows: Any, log: bool, keep_empty_rows: bool = False) -> Any:
    """Softmax (or log-softmax) of each row of the C-contiguous 2-d ``rows``, a new array.
    ``keep_empty_rows``: a row of -inf gives zeros (attention's safe softmax), not NaN."""
    block = _log_softmax_block if log else functools.partial(_softmax_block,
                                                             keep_empty_rows=keep_empty_rows)
    return by_row_blocks(block, rows, np.empty_like(rows))


def log_softmax_rows_keeping_sums(rows: Any) -> tuple[Any, Any, Any]:
    """Log-softmax of each row of ``rows``, with the exponentials of the shifted rows and
    their row sums (float64), which backward makes the probabilities from."""
    out, exponentials = np.empty_like(rows), np.empty_like(rows)
    totals = np.empty(rows.shape[0])
    by_row_blocks(_log_softmax_keeping_block, rows, exponentials, totals, out)
    return out, exponentials, totals


def exponentials_with_picks(rows: Any, target: Any) -> tuple[Any, Any, Any, Any]:
    """Cross-entropy's forward over the rows of ``rows`` by blocks: the exponentials of the
    shifted rows, their row sums and the sums' logarithms (float64), and each row's shifted
    score at its ``target`` (int64), taken before the exp."""
    count = rows.shape[0]
    exponentials, picked = np.empty_like(rows), np.empty(count, rows.dtype)
    totals, logs = np.empty(count), np.empty(count)
    by_row_blocks(_picking_block, rows, target, picked, totals, logs, exponentials)
    return exponentials, totals, logs, picked


def by_row_blocks(function: Callable[..., None], *arrays: Any) -> Any:
    """``function(*blocks)`` for consecutive blocks of rows of ``arrays`` (one row count; the
    first 2-d), each block about ``BLOCK_BYTES`` of the first, the blocks of each core's
    share of the rows on that core; returns the last array, the output."""
    width = arrays[0].shape[1] * arrays[0].itemsize
    step = max(1, BLOCK_BYTES // max(1, width))

    def each_block(*share: Any) -> None:
        for start in range(0, share[0].shape[0], step):
            function(*(array[start:start + step] for array in share))

    return apply(each_block, *arrays)


def shift(rows: Any, out: Any, keep_empty_rows: bool) -> None:
    """``rows`` minus each row's maximum (NaN where the row has a NaN) into ``out``: NumPy's
    maximum and subtraction, as the reference's. With ``keep_empty_rows``, a row of -inf is
    kept as it is, so that its exponentials are 0."""
    top = rows.max(axis=1, keepdims=True)
    if keep_empty_rows:
        top[top == -np.inf] = 0
    with np.errstate(invalid="ignore"):  # inf - inf is NaN, as in the reference
        np.subtract(rows, top, out=out)


def _softmax_block(rows: Any, out: Any, keep_empty_rows: bool) -> None:
    shift(rows, out, keep_empty_rows)
    np.exp(out, out=out)
    _serial("normalize_rows")(out)


def _log_softmax_block(rows: Any, out: Any) -> None:
    """The keeping block, its exponentials and sums in arrays of the block's own."""
    _log_softmax_keeping_block(rows, np.empty_like(rows), np.empty(rows.shape[0]), out)


def _picking_block(rows: Any, target: Any, picked: Any, totals: Any, logs: Any,
                   exponentials: Any) -> None:
    shift(rows, exponentials, keep_empty_rows=False)
    picked[:] = exponentials[np.arange(rows.shape[0]), target]
    np.exp(exponentials, out=exponentials)
    _serial("row_sums_and_logs")(exponentials, totals, logs)


def _log_softmax_keeping_block(rows: Any, exponentials: Any, totals: Any, out: Any) -> None:
    shift(rows, out, keep_empty_rows=False)
    np.exp(out, out=exponentials)
    _serial("log_normalize_rows")(out, exponentials, totals)


@functools.cache
def _serial(name: str) -> Callable[..., Any]:
    """The serial compilation of loop ``name``: a block is one core's work."""
    from . import _numba_loops  # (compiling or loading its cache: on first use)

    return serial(getattr(_numba_loops, name))
