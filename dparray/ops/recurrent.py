"""A recurrent layer's recurrence over a whole sequence as one graph node: LSTM, GRU and the
Elman RNN (tanh or ReLU).

The input projection of every time step (``x @ W_ih^T + b_ih``, and for LSTM and RNN
``+ b_hh`` too) is one matrix product before the node; the node runs the recurrence: at each
step the hidden projection ``h_(t-1) @ W_hh^T`` (the one product that has to wait for the
previous step; GRU adds ``b_hh`` to it, since its new gate scales that part by ``r``), then
the cell's gate math. Backward is backpropagation through time in one loop: per step, the
cell's gradients and one product for ``dh_(t-1)``; the weight's gradient is one product over
all steps at the end. Per time step that is one node instead of a dozen, and no per-step
Python beyond the loop.

``RecurrentSequence`` is that loop, written once; a cell (``LSTMSequence``, ``GRUSequence``,
``RNNSequence``) gives one step forward and back. A node's inputs are ``(projected, weight_hh,
bias_hh, *initial)``: ``projected`` ``(L, N, G H)`` for ``G`` gates, ``weight_hh`` ``(G H, H)``,
``bias_hh`` ``(G H,)`` or None (added to the hidden projection inside the node), the initial
states ``(N, H)`` (``h_0``, and ``c_0`` for LSTM). Its one output stacks the hidden states of
every step and the final states after the first, ``(L + S - 1, N, H)`` for ``S`` states:
``out[:L]`` is the output sequence (``h_n`` its last step's row, ``out[L - 1]``, or ``out[0]``
for the reverse direction), ``out[L]`` is LSTM's ``c_n``. It saves the output and what the
cell's closed form needs (LSTM: its gates after their nonlinearities and the cell states; GRU:
its gates and the new gate's hidden projection; RNN: nothing more).
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function
from dparray.kernels import reference, resolve
from dparray.ops.linalg import array_matmul
from dparray.tensor import Tensor

State = tuple[Any, ...]
"""The arrays carried from one step to the next: ``(h,)``, or ``(h, c)``."""


class RecurrentSequence(Function):
    """The loop over time, forward and back, for a cell given by the subclass (see the module's
    documentation); ``reverse`` walks the steps from the last to the first."""

    state_count = 1  # h alone

    def __init__(self, reverse: bool = False) -> None:
        self.reverse = reverse

    def steps(self, length: int) -> range:
        return range(length - 1, -1, -1) if self.reverse else range(length)

    # ------------------------------------------------------------------ the cell
    def cell_forward(self, projected: Any, hidden: Any, state: State) -> tuple[State, Any]:
        """One step: the new state from this step's input projection ``(N, G H)``, the hidden
        projection ``hidden`` (``h_(t-1) @ W_hh^T + b_hh``) and the previous state; with what
        backward needs of this step (None: nothing beyond the output)."""
        raise NotImplementedError

    def cell_backward(self, dh: Any, carried: State, cache: Any, h: Any,
                      previous: State) -> tuple[Any, Any, Any, State]:
        """One step back, from ``dh`` (the loss's gradient by this step's ``h``) and
        ``carried`` (by the states after ``h``): the gradients by the step's input projection
        and by its hidden projection (often the same array), the part of ``dh_(t-1)`` that
        does not pass through ``W_hh`` (None if none), and the gradients by the previous
        states after ``h``."""
        raise NotImplementedError

    def carried_at(self, cache: Any, t: int) -> State:
        """The states after ``h`` at step ``t`` (LSTM: ``c_t``), from what forward saved."""
        return ()

    # ------------------------------------------------------------------ the loop
    def forward(self, projected: Any, weight_hh: Any, bias_hh: Any, *initial: Any) -> Any:
        xp = self.xp
        product = array_matmul(self.backend)
        length = projected.shape[0]
        recurrent = xp.matrix_transpose(weight_hh)
        state: State = initial
        hs: list[Any] = [None] * length
        caches: list[Any] = [None] * length
        for t in self.steps(length):
            hidden = product(state[0], recurrent)
            if bias_hh is not None:
                hidden = hidden + bias_hh
            state, caches[t] = self.cell_forward(projected[t, ...], hidden, state)
            hs[t] = state[0]
        out = xp.stack(hs, axis=0)
        cache = None if caches[0] is None else xp.stack(caches, axis=0)
        self.save(out, cache, weight_hh, bias_hh, *initial)
        if len(state) == 1:
            return out
        return xp.concat([out, *(xp.reshape(s, (1, *s.shape)) for s in state[1:])], axis=0)

    def backward(self, grad: Any) -> tuple[Any, ...]:
        xp = self.xp
        product = array_matmul(self.backend)
        out, cache, weight_hh, bias_hh, *initial = self.saved
        length = out.shape[0]
        order = list(self.steps(length))
        dh = xp.zeros_like(initial[0])
        carried = tuple(grad[length + i, ...] for i in range(len(initial) - 1))
        d_projected: list[Any] = [None] * length
        d_hidden: list[Any] = [None] * length
        previous_h: list[Any] = [None] * length
        for k in range(length - 1, -1, -1):
            t, back = order[k], (order[k - 1] if k else None)  # this step and the one before
            previous = tuple(initial) if back is None else \
                (out[back, ...], *self.carried_at(cache, back))
            step_cache = None if cache is None else cache[t, ...]
            d_projected[t], d_hidden[t], direct, carried = self.cell_backward(
                grad[t, ...] + dh, carried, step_cache, out[t, ...], previous)
            dh = product(d_hidden[t], weight_hh)
            if direct is not None:
                dh = dh + direct
            previous_h[t] = previous[0]
        grad_projected = xp.stack(d_projected, axis=0)
        grad_hidden = grad_projected if d_hidden[0] is d_projected[0] else \
            xp.stack(d_hidden, axis=0)
        grad_weight = grad_bias = None
        rows = length * out.shape[1]
        flat_hidden = xp.reshape(grad_hidden, (rows, grad_hidden.shape[-1]))
        if self.needs_grad(1):
            grad_weight = product(xp.matrix_transpose(flat_hidden),
                                  xp.reshape(xp.stack(previous_h, axis=0),
                                             (rows, weight_hh.shape[-1])))
        if bias_hh is not None and self.needs_grad(2):
            grad_bias = xp.sum(flat_hidden, axis=0)
        return (grad_projected, grad_weight, grad_bias, dh, *carried)


@reference("lstm_sequence")
class LSTMSequence(RecurrentSequence):
    """LSTM's cell, gates ``i, f, g, o`` in PyTorch's order: ``c_t = f * c_(t-1) + i * g``,
    ``h_t = o * tanh(c_t)``. Saves the four gates and ``c_t``, ``(N, 5H)`` a step."""

    state_count = 2  # h, c

    def cell_forward(self, projected: Any, hidden: Any, state: State) -> tuple[State, Any]:
        xp = self.xp
        z = projected + hidden
        size = state[0].shape[-1]
        i = _sigmoid(xp, z[:, :size])
        f = _sigmoid(xp, z[:, size:2 * size])
        g = xp.tanh(z[:, 2 * size:3 * size])
        o = _sigmoid(xp, z[:, 3 * size:])
        c = f * state[1] + i * g
        h = o * xp.tanh(c)
        return (h, c), xp.concat([i, f, g, o, c], axis=1)

    def carried_at(self, cache: Any, t: int) -> State:
        return (cache[t, :, 4 * (cache.shape[-1] // 5):],)

    def cell_backward(self, dh: Any, carried: State, cache: Any, h: Any,
                      previous: State) -> tuple[Any, Any, Any, State]:
        xp = self.xp
        size = h.shape[-1]
        i, f = cache[:, :size], cache[:, size:2 * size]
        g, o, c = cache[:, 2 * size:3 * size], cache[:, 3 * size:4 * size], cache[:, 4 * size:]
        tanh_c = xp.tanh(c)
        dc = dh * o * (1.0 - tanh_c * tanh_c) + carried[0]
        step = xp.concat([dc * g * i * (1.0 - i), dc * previous[1] * f * (1.0 - f),
                          dc * i * (1.0 - g * g), dh * tanh_c * o * (1.0 - o)], axis=1)
        return step, step, None, (dc * f,)


@reference("gru_sequence")
class GRUSequence(RecurrentSequence):
    """GRU's cell, gates ``r, z, n`` in PyTorch's order, with the hidden projection ``a``
    (``b_hh`` included): ``r = sigmoid(p_r + a_r)``, ``z = sigmoid(p_z + a_z)``,
    ``n = tanh(p_n + r * a_n)``, ``h_t = (1 - z) * n + z * h_(t-1)``. Saves ``r, z, n, a_n``,
    ``(N, 4H)`` a step."""

    def cell_forward(self, projected: Any, hidden: Any, state: State) -> tuple[State, Any]:
        xp = self.xp
        size = state[0].shape[-1]
        r = _sigmoid(xp, projected[:, :size] + hidden[:, :size])
        z = _sigmoid(xp, projected[:, size:2 * size] + hidden[:, size:2 * size])
        a_n = hidden[:, 2 * size:]
        n = xp.tanh(projected[:, 2 * size:] + r * a_n)
        h = (1.0 - z) * n + z * state[0]
        return (h,), xp.concat([r, z, n, a_n], axis=1)

    def cell_backward(self, dh: Any, carried: State, cache: Any, h: Any,
                      previous: State) -> tuple[Any, Any, Any, State]:
        xp = self.xp
        size = h.shape[-1]
        r, z = cache[:, :size], cache[:, size:2 * size]
        n, a_n = cache[:, 2 * size:3 * size], cache[:, 3 * size:]
        dn = dh * (1.0 - z) * (1.0 - n * n)
        dr = dn * a_n * r * (1.0 - r)
        dz = dh * (previous[0] - n) * z * (1.0 - z)
        d_projected = xp.concat([dr, dz, dn], axis=1)
        d_hidden = xp.concat([dr, dz, dn * r], axis=1)
        return d_projected, d_hidden, dh * z, ()


@reference("rnn_sequence")
class RNNSequence(RecurrentSequence):
    """The Elman cell: ``h_t = tanh(p + a)`` (or ``relu``, ``nonlinearity="relu"``) for the
    hidden projection ``a``; its derivative comes from ``h_t`` alone."""

    def __init__(self, reverse: bool = False, nonlinearity: str = "tanh") -> None:
        super().__init__(reverse)
        self.nonlinearity = nonlinearity

    def cell_forward(self, projected: Any, hidden: Any, state: State) -> tuple[State, Any]:
        xp = self.xp
        total = projected + hidden
        if self.nonlinearity == "tanh":
            return (xp.tanh(total),), None
        return (xp.maximum(total, 0.0),), None  # as dparray.relu: NaN stays NaN

    def cell_backward(self, dh: Any, carried: State, cache: Any, h: Any,
                      previous: State) -> tuple[Any, Any, Any, State]:
        xp = self.xp
        if self.nonlinearity == "tanh":
            step = dh * (1.0 - h * h)
        else:
            step = dh * xp.astype(h > 0, dh.dtype)
        return step, step, None, ()


def _sigmoid(xp: Any, x: Any) -> Any:
    """``1 / (1 + exp(-x))`` without overflow, as ``dparray.sigmoid`` computes it."""
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _check_length(projected: Tensor, where: str) -> None:
    if projected.ndim < 1 or projected.shape[0] == 0:
        raise ValueError(f"{where}: the sequence must have at least one time step, got a "
                         f"projection of shape {projected.shape}")


def lstm_sequence(projected: Tensor, h0: Tensor, c0: Tensor, weight_hh: Tensor,
                  reverse: bool = False) -> Tensor:
    """The ``LSTMSequence`` node (or the backend's kernel for it), for ``nn.LSTM``, which
    checks the shapes: the hidden states of every step and the final cell state,
    ``(L + 1, N, H)``."""
    _check_length(projected, "lstm_sequence")
    return resolve(projected.backend, LSTMSequence)(reverse)(projected, weight_hh, None, h0, c0)


def gru_sequence(projected: Tensor, h0: Tensor, weight_hh: Tensor, bias_hh: Tensor | None,
                 reverse: bool = False) -> Tensor:
    """The ``GRUSequence`` node (or the backend's kernel for it), for ``nn.GRU``, which checks
    the shapes: the hidden states of every step, ``(L, N, H)``."""
    _check_length(projected, "gru_sequence")
    return resolve(projected.backend, GRUSequence)(reverse)(projected, weight_hh, bias_hh, h0)


def rnn_sequence(projected: Tensor, h0: Tensor, weight_hh: Tensor, nonlinearity: str = "tanh",
                 reverse: bool = False) -> Tensor:
    """The ``RNNSequence`` node (or the backend's kernel for it), for ``nn.RNN``, which checks
    the shapes: the hidden states of every step, ``(L, N, H)``."""
    _check_length(projected, "rnn_sequence")
    return resolve(projected.backend, RNNSequence)(reverse, nonlinearity)(
        projected, weight_hh, None, h0)
