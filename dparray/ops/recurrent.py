"""An LSTM layer's recurrence over a whole sequence as one graph node.

The input projection of every time step (``x @ W_ih^T + b_ih + b_hh``) is one matrix product
before the node; the node runs the recurrence: at each step the hidden projection
``h_(t-1) @ W_hh^T`` (the one product that has to wait for the previous step), the gates
``i, f, g, o`` (PyTorch's order), ``c_t = f * c_(t-1) + i * g`` and ``h_t = o * tanh(c_t)``.
Backward is backpropagation through time in one loop: per step, the gates' gradients and one
product for ``dh_(t-1)``; the weight's gradient is one product over all steps at the end.
Per time step that is one node instead of a dozen, and no per-step Python beyond the loop.

The node's one output stacks the hidden states of every step and the final cell state,
``(L + 1, N, H)``: ``out[:L]`` is the output sequence, ``out[L]`` is ``c_n`` (``h_n`` is the
last step's row, ``out[L - 1]``, or ``out[0]`` for the reverse direction). It saves the gates
after their nonlinearities and the cell states, ``5 L N H`` values, which is what the closed
form needs.
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function
from dparray.kernels import reference, resolve
from dparray.ops.linalg import array_matmul
from dparray.tensor import Tensor


@reference("lstm_sequence")
class LSTMSequence(Function):
    """``lstm_sequence(projected, h0, c0, weight_hh)`` for ``projected`` ``(L, N, 4H)``, the
    states ``(N, H)`` and ``weight_hh`` ``(4H, H)``; ``reverse`` walks the steps from the last
    to the first."""

    def __init__(self, reverse: bool = False) -> None:
        self.reverse = reverse

    def steps(self, length: int) -> range:
        return range(length - 1, -1, -1) if self.reverse else range(length)

    def forward(self, projected: Any, h0: Any, c0: Any, weight_hh: Any) -> Any:
        xp = self.xp
        product = array_matmul(self.backend)
        length, hidden = projected.shape[0], h0.shape[-1]
        recurrent = xp.matrix_transpose(weight_hh)
        h, c = h0, c0
        hs: list[Any] = [None] * length
        cs: list[Any] = [None] * length
        gates: list[Any] = [None] * length
        for t in self.steps(length):
            z = projected[t, ...] + product(h, recurrent)
            i = _sigmoid(xp, z[:, :hidden])
            f = _sigmoid(xp, z[:, hidden:2 * hidden])
            g = xp.tanh(z[:, 2 * hidden:3 * hidden])
            o = _sigmoid(xp, z[:, 3 * hidden:])
            c = f * c + i * g
            h = o * xp.tanh(c)
            hs[t], cs[t], gates[t] = h, c, xp.concat([i, f, g, o], axis=1)
        self.save(xp.stack(gates, axis=0), xp.stack(cs, axis=0), h0, c0, weight_hh)
        return xp.concat([xp.stack(hs, axis=0), xp.reshape(c, (1, *c.shape))], axis=0)

    def backward(self, grad: Any) -> tuple[Any, Any, Any, Any]:
        xp = self.xp
        product = array_matmul(self.backend)
        gates, cs, h0, c0, weight_hh = self.saved
        length, hidden = gates.shape[0], h0.shape[-1]
        order = list(self.steps(length))
        dh = xp.zeros_like(h0)
        dc = grad[length, ...]
        dgates: list[Any] = [None] * length
        previous_h: list[Any] = [None] * length
        for k in range(length - 1, -1, -1):
            t, back = order[k], (order[k - 1] if k else None)  # this step and the one before
            c_prev = c0 if back is None else cs[back, ...]
            i, f = gates[t, :, :hidden], gates[t, :, hidden:2 * hidden]
            g, o = gates[t, :, 2 * hidden:3 * hidden], gates[t, :, 3 * hidden:]
            dh = grad[t, ...] + dh
            tanh_c = xp.tanh(cs[t, ...])
            dc = dh * o * (1.0 - tanh_c * tanh_c) + dc
            step = xp.concat([dc * g * i * (1.0 - i), dc * c_prev * f * (1.0 - f),
                              dc * i * (1.0 - g * g), dh * tanh_c * o * (1.0 - o)], axis=1)
            dgates[t] = step
            dc = dc * f
            dh = product(step, weight_hh)
            previous_h[t] = h0 if back is None else _hidden(xp, gates, cs, back)
        grad_gates = xp.stack(dgates, axis=0)
        grad_weight = None
        if self.needs_grad(3):
            rows = grad_gates.shape[0] * grad_gates.shape[1]
            grad_weight = product(xp.matrix_transpose(xp.reshape(grad_gates, (rows, -1))),
                                  xp.reshape(xp.stack(previous_h, axis=0), (rows, hidden)))
        return grad_gates, dh, dc, grad_weight


def _hidden(xp: Any, gates: Any, cs: Any, t: int) -> Any:
    """``h_t``, rebuilt from the saved gates and cell state as forward made it."""
    hidden = cs.shape[-1]
    return gates[t, :, 3 * hidden:] * xp.tanh(cs[t, ...])


def _sigmoid(xp: Any, x: Any) -> Any:
    """``1 / (1 + exp(-x))`` without overflow, as ``dparray.sigmoid`` computes it."""
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def lstm_sequence(projected: Tensor, h0: Tensor, c0: Tensor, weight_hh: Tensor,
                  reverse: bool = False) -> Tensor:
    """The ``LSTMSequence`` node (or the backend's kernel for it), for ``nn.LSTM``, which
    checks the shapes: the hidden states of every step and the final cell state,
    ``(L + 1, N, H)``."""
    return resolve(projected.backend, LSTMSequence)(reverse)(projected, h0, c0, weight_hh)
