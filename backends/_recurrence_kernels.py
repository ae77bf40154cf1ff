"""The NumPy backend's recurrences: LSTM, GRU and the Elman RNN over a whole sequence, the
loop of ``dparray.ops.recurrent.RecurrentSequence`` with its buffers made once.

Each step is the hidden product (BLAS, into a preallocated buffer), NumPy's SIMD loops for the
step's exponentials and tanh, and one or two compiled passes (``_numba_loops``) for the rest of
the cell's arithmetic, written as the reference writes it. Exponential and tanh are NumPy's,
as the reference's are, so a step gives the reference's values to the bit; only the
products' summation order may differ. Numba's own exp and tanh call libm one element at a
time (without Intel's SVML): a whole LSTM step of batch 20 x 200 units in one compiled loop
took 185 us, 14 us this way.

The hidden products run on one BLAS thread (the backend's budget for as many workers as there
are cores, unless a DataParallel region's already holds): OpenBLAS splits even these small
products over its threads, which must all be scheduled for each of them -- on a busy machine
10-50x slower at the tail than one thread, for little gain on a quiet one (20 x 200 by
200 x 800: 45 us on one thread, 39 us on two).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dparray._system import available_cores
from dparray.ops import recurrent as _recurrent

from ._fallback import Fallback, floating
from ._mkl import matmul
from ._numba_setup import loops as _loops


class _RecurrenceKernel(Fallback, _recurrent.RecurrentSequence):
    """The loop over time with a subclass's ``buffers``, ``step_forward`` and
    ``step_backward``, and the hidden states kept from forward."""

    state_count: int
    hidden_gradient_differs = False  # whether d(hidden projection) != d(input projection)

    def buffers(self, length: int, batch: int, hidden: int, dtype: Any) -> tuple[Any, ...]:
        """What forward keeps of every step for backward, beyond the output."""
        return ()

    def step_forward(self, t: int, projected: Any, hidden: Any, state: list[Any],
                     buffers: tuple[Any, ...], h_out: Any) -> list[Any]:
        """Step ``t``'s cell: ``h_out`` and ``buffers[...][t]`` written; the new state.
        ``hidden`` is the step's hidden projection, which the step may overwrite."""
        raise NotImplementedError

    def step_backward(self, t: int, back: int | None, grad: Any, dh: Any, carried: list[Any],
                      saved: tuple[Any, ...], d_projected: Any, d_hidden: Any,
                      direct: Any) -> None:
        """Step ``t``'s gradients into ``d_projected`` (and ``d_hidden``, ``direct``), the
        carried states' gradients updated in place; ``back`` is the step before, None for the
        first. ``saved``: the output, the buffers and the initial states."""
        raise NotImplementedError

    def forward(self, projected: Any, weight_hh: Any, bias_hh: Any, *initial: Any) -> Any:
        if (not floating(projected, weight_hh, bias_hh, *initial) or projected.ndim != 3
                or any(s.ndim != 2 for s in initial)):
            return self.reference_forward(projected, weight_hh, bias_hh, *initial)
        length, batch, width = projected.shape
        hidden = weight_hh.shape[1]
        dtype = projected.dtype
        self.one = dtype.type(1)  # the loops' 1, in the arrays' type
        projected = np.ascontiguousarray(projected)
        out = np.empty((length + self.state_count - 1, batch, hidden), dtype)
        buffers = self.buffers(length, batch, hidden, dtype)
        product = np.empty((batch, width), dtype)
        recurrent = weight_hh.T
        starts = [np.ascontiguousarray(s) for s in initial]
        state = starts
        with self.backend.parallel_region(available_cores()):
            for t in self.steps(length):
                np.matmul(state[0], recurrent, out=product)
                if bias_hh is not None:
                    product += bias_hh
                state = self.step_forward(t, projected[t], product, state, buffers, out[t])
        for i, carried in enumerate(state[1:]):
            out[length + i] = carried
        self.save(out, buffers, weight_hh, bias_hh, *starts)
        return out

    def backward(self, grad: Any) -> tuple[Any, ...]:
        if self.fallback:
            return self.reference_backward(grad)
        out, buffers, weight_hh, bias_hh, *initial = self.saved
        length = out.shape[0] - self.state_count + 1
        batch, hidden = initial[0].shape
        dtype = out.dtype
        grad = np.ascontiguousarray(grad, dtype=dtype)
        dh = np.zeros((batch, hidden), dtype)
        carried = [grad[length + i].copy() for i in range(self.state_count - 1)]
        d_projected = np.empty((length, batch, weight_hh.shape[0]), dtype)
        differs = self.hidden_gradient_differs
        d_hidden = np.empty_like(d_projected) if differs else d_projected
        direct = np.empty((batch, hidden), dtype) if differs else None
        order = list(self.steps(length))
        saved = (out, *buffers, *initial)
        with self.backend.parallel_region(available_cores()):
            for k in range(length - 1, -1, -1):
                t = order[k]
                self.step_backward(t, order[k - 1] if k else None, grad[t], dh, carried, saved,
                                   d_projected[t], d_hidden[t], direct)
                np.matmul(d_hidden[t], weight_hh, out=dh)
                if direct is not None:
                    dh += direct
        rows = length * batch
        flat_hidden = d_hidden.reshape(rows, d_hidden.shape[-1])  # (-1 fails on an empty batch)
        grad_weight = grad_bias = None
        if self.needs_grad(1):
            start = initial[0][np.newaxis]
            previous = np.concatenate([out[1:length], start] if self.reverse else
                                      [start, out[:length - 1]])
            grad_weight = matmul(flat_hidden.T, previous.reshape(rows, hidden))
        if bias_hh is not None and self.needs_grad(2):
            grad_bias = flat_hidden.sum(axis=0)
        return (d_projected, grad_weight, grad_bias, dh, *carried)


def exp_of_minus_magnitude(x: Any, out: Any) -> Any:
    """``exp(-|x|)`` into ``out``, as the reference's stable sigmoid computes it."""
    np.abs(x, out=out)
    np.negative(out, out=out)
    return np.exp(out, out=out)


class LSTMSequenceKernel(_RecurrenceKernel, _recurrent.LSTMSequence):
    """LSTM: keeps its gates, its cell states and their tanh (backward's, computed once)."""

    def buffers(self, length: int, batch: int, hidden: int, dtype: Any) -> tuple[Any, ...]:
        return (np.empty((length, batch, 4 * hidden), dtype),
                np.empty((length, batch, hidden), dtype),
                np.empty((length, batch, hidden), dtype))

    def step_forward(self, t: int, projected: Any, hidden: Any, state: list[Any],
                     buffers: tuple[Any, ...], h_out: Any) -> list[Any]:
        gates, cells, tanh_cells = (buffer[t] for buffer in buffers)
        size = h_out.shape[-1]
        z = np.add(projected, hidden, out=hidden)
        exp_of_minus_magnitude(z, gates)  # the sigmoids' exponentials (g's columns unused)
        np.tanh(z[:, 2 * size:3 * size], out=gates[:, 2 * size:3 * size])
        _loops().lstm_gates(z, gates, state[1], self.one, cells)
        np.tanh(cells, out=tanh_cells)
        np.multiply(gates[:, 3 * size:], tanh_cells, out=h_out)
        return [h_out, cells]

    def step_backward(self, t: int, back: int | None, grad: Any, dh: Any, carried: list[Any],
                      saved: tuple[Any, ...], d_projected: Any, d_hidden: Any,
                      direct: Any) -> None:
        _, gates, cells, tanh_cells, _, c0 = saved
        c_prev = c0 if back is None else cells[back]
        _loops().lstm_cell_backward(grad, dh, carried[0], gates[t], tanh_cells[t], c_prev,
                                    self.one, d_projected)


class GRUSequenceKernel(_RecurrenceKernel, _recurrent.GRUSequence):
    """GRU: keeps ``r, z, n`` and the new gate's hidden projection."""

    hidden_gradient_differs = True

    def buffers(self, length: int, batch: int, hidden: int, dtype: Any) -> tuple[Any, ...]:
        return (np.empty((length, batch, 4 * hidden), dtype),)

    def step_forward(self, t: int, projected: Any, hidden: Any, state: list[Any],
                     buffers: tuple[Any, ...], h_out: Any) -> list[Any]:
        cache = buffers[0][t]
        size = h_out.shape[-1]
        z = np.add(projected[:, :2 * size], hidden[:, :2 * size], out=cache[:, :2 * size])
        e = exp_of_minus_magnitude(z, hidden[:, :2 * size])  # those columns are used up
        _loops().gru_gates(z, e, projected, hidden, self.one, cache)
        new = cache[:, 2 * size:3 * size]
        np.tanh(new, out=new)
        _loops().gru_output(cache, state[0], self.one, h_out)
        return [h_out]

    def step_backward(self, t: int, back: int | None, grad: Any, dh: Any, carried: list[Any],
                      saved: tuple[Any, ...], d_projected: Any, d_hidden: Any,
                      direct: Any) -> None:
        out, cache, h0 = saved
        h_prev = h0 if back is None else out[back]
        _loops().gru_cell_backward(grad, dh, cache[t], h_prev, self.one, d_projected,
                                   d_hidden, direct)


class RNNSequenceKernel(_RecurrenceKernel, _recurrent.RNNSequence):
    """The Elman cell: its forward is NumPy's alone; its derivative comes from the output."""

    def step_forward(self, t: int, projected: Any, hidden: Any, state: list[Any],
                     buffers: tuple[Any, ...], h_out: Any) -> list[Any]:
        total = np.add(projected, hidden, out=hidden)
        if self.nonlinearity == "tanh":
            np.tanh(total, out=h_out)
        else:
            np.maximum(total, 0.0, out=h_out)  # as the reference: NaN stays NaN
        return [h_out]

    def step_backward(self, t: int, back: int | None, grad: Any, dh: Any, carried: list[Any],
                      saved: tuple[Any, ...], d_projected: Any, d_hidden: Any,
                      direct: Any) -> None:
        _loops().rnn_cell_backward(grad, dh, saved[0][t], self.nonlinearity == "relu",
                                   self.one, d_projected)
