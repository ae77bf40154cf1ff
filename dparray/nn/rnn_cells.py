"""Recurrent cells: one time step of RNN, LSTM and GRU (``nn.RNNCell``, ``nn.LSTMCell``,
``nn.GRUCell``), with PyTorch's constructor arguments, parameter names and layouts,
initialisation, call signature and results.

A cell owns ``weight_ih`` of shape ``(gates * hidden_size, input_size)``, ``weight_hh`` of shape
``(gates * hidden_size, hidden_size)`` and, with ``bias=True``, ``bias_ih`` and ``bias_hh`` of
shape ``(gates * hidden_size,)`` (``None`` otherwise, as in PyTorch); the gates are stacked in
PyTorch's order (LSTM: input, forget, cell, output; GRU: reset, update, new), so state dicts
move between the libraries unchanged.

A step is the input projection ``x @ weight_ih.T + bias_ih`` (one product) and then the
recurrent layers' own node (``dparray.ops.recurrent``) over a sequence of one step: the same
gate maths, forward and back, as ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU``, with the backends'
kernels for it, in one graph node a step.

Under ``DataParallel``, which splits the tensor arguments along axis 0, give the cells batched
input ``(N, input_size)`` (a cell in a chunk refuses unbatched input). LSTMCell's states come
as one pair, which DataParallel passes whole to every chunk: leave them out there, or call the
cell from a module that takes ``h`` and ``c`` as two arguments.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dparray import creation, ops
from dparray._checks import check_bool, check_choice, check_int, check_tensor, describe
from dparray.nn import functional as F
from dparray.nn import init
from dparray.nn.chunks import in_chunk
from dparray.nn.module import Module
from dparray.nn.rnn import check_states
from dparray.ops import recurrent
from dparray.tensor import Tensor

__all__ = ["GRUCell", "LSTMCell", "RNNCell"]


class _Cell(Module):
    """What RNNCell, LSTMCell and GRUCell share: arguments, parameters, checks and the step.
    A subclass sets ``gates`` (how many blocks of ``hidden_size`` rows its weights stack),
    ``state_names`` (the states it takes and returns) and ``recurrence`` (its sequence node)."""

    gates: int
    state_names: tuple[str, ...]
    hidden_bias_in_node = False  # b_hh added to the input projection, unless the cell needs it

    def __init__(self, input_size: int, hidden_size: int, bias: bool, dtype: Any) -> None:
        super().__init__()
        where = type(self).__name__
        self.input_size = check_int(input_size, "input_size", where, minimum=1)
        self.hidden_size = check_int(hidden_size, "hidden_size", where, minimum=1)
        self.bias = check_bool(bias, "bias", where)
        bound = 1.0 / math.sqrt(self.hidden_size)
        rows = self.gates * self.hidden_size
        self.weight_ih = init.uniform((rows, self.input_size), bound, dtype)
        self.weight_hh = init.uniform((rows, self.hidden_size), bound, dtype)
        self.bias_ih: Tensor | None = init.uniform((rows,), bound, dtype) if self.bias else None
        self.bias_hh: Tensor | None = init.uniform((rows,), bound, dtype) if self.bias else None

    def recurrence(self, projected: Tensor, states: tuple[Tensor, ...]) -> Tensor:
        """The recurrent layer's node over ``projected`` ``(1, N, gates * H)``: the new hidden
        state in row 0, then the other new states (LSTM's ``c``)."""
        raise NotImplementedError

    def _step(self, input: Tensor, given: Sequence[Any] | None) -> tuple[Tensor, ...]:
        """The new states from ``input`` and the given states (zeros when None), checked
        first, in the input's layout (batched or not)."""
        batched = self._check_input(input)
        if given is not None:
            self._check_states(input, given, batched)
        x = input if batched else ops.unsqueeze(input, 0)
        if given is None:
            zeros = creation.zeros((x.shape[0], self.hidden_size), dtype=x.dtype,
                                   backend=x.backend)
            states = (zeros,) * len(self.state_names)
        else:
            states = tuple(given) if batched else tuple(ops.unsqueeze(s, 0) for s in given)
        projected = F.linear(x, self.weight_ih, self.bias_ih)
        if self.bias_hh is not None and not self.hidden_bias_in_node:
            projected = projected + self.bias_hh
        out = self.recurrence(ops.unsqueeze(projected, 0), states)
        return tuple(out[i] if batched else out[i, 0] for i in range(len(self.state_names)))

    # ------------------------------------------------------------------ checks
    def _check_input(self, input: Any) -> bool:
        """Whether ``input`` is batched, once it is known to fit the cell."""
        where = type(self).__name__
        check_tensor(input, "input", where)
        if not input.dtype.is_floating:
            raise TypeError(f"{where}: input must be a floating-point tensor, got "
                            f"{input.dtype.name}")
        if input.ndim == 1 and in_chunk():  # the chunk of a vector cut in pieces
            raise ValueError(f"{self!r}: DataParallel splits axis 0, which is the features "
                             f"for unbatched input (a chunk has shape {input.shape}); give "
                             f"the cell batched (N, {self.input_size}) input")
        if input.ndim not in (1, 2) or input.shape[-1] != self.input_size:
            raise ValueError(f"{self!r}: expected input of shape (N, {self.input_size}) or "
                             f"unbatched ({self.input_size},), got shape {input.shape}")
        return input.ndim == 2

    def _check_states(self, input: Tensor, given: Sequence[Any], batched: bool) -> None:
        """Each state is a floating-point tensor of shape ``(N, hidden_size)``, or
        ``(hidden_size,)`` for unbatched input."""
        expected = (input.shape[0], self.hidden_size) if batched else (self.hidden_size,)
        check_states(self, dict(zip(self.state_names, given, strict=True)), expected,
                     input.shape)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        return text if self.bias else f"{text}, bias=False"


class RNNCell(_Cell):
    """One step of an Elman network, as PyTorch's ``nn.RNNCell``:
    ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (``nonlinearity="relu"`` for ReLU).

    Called as ``cell(input, hx=None)`` it returns ``h'``: ``input`` is ``(N, input_size)`` or
    unbatched ``(input_size,)``, ``hx`` and ``h'`` are ``(N, hidden_size)`` (or
    ``(hidden_size,)``), and ``hx`` defaults to zeros. Every parameter starts from
    ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``.

    Examples:
        >>> import dparray as dp
        >>> cell = dp.nn.RNNCell(4, 6)
        >>> h = None
        >>> for x in dp.randn(5, 3, 4):   # five steps of a batch of 3
        ...     h = cell(x, h)
        >>> h.shape, [name for name, _ in cell.named_parameters()]
        ((3, 6), ['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh'])
    """

    gates = 1
    state_names = ("hx",)

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", dtype: Any = None) -> None:
        nonlinearity = check_choice(nonlinearity, "nonlinearity", "RNNCell", ("tanh", "relu"))
        super().__init__(input_size, hidden_size, bias, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        (h,) = self._step(input, None if hx is None else (hx,))
        return h

    def recurrence(self, projected: Tensor, states: tuple[Tensor, ...]) -> Tensor:
        return recurrent.rnn_sequence(projected, states[0], self.weight_hh, self.nonlinearity)

    def extra_repr(self) -> str:
        text = super().extra_repr()
        return text if self.nonlinearity == "tanh" else f"{text}, nonlinearity={self.nonlinearity}"


class LSTMCell(_Cell):
    """One step of long short-term memory, as PyTorch's ``nn.LSTMCell``: from the gates
    ``i, f, g, o`` (stacked in that order in the weights' rows),
    ``c' = sigmoid(f) * c + sigmoid(i) * tanh(g)`` and ``h' = sigmoid(o) * tanh(c')``.

    Called as ``cell(input, hx=None)`` with ``hx = (h, c)`` (zeros when None), it returns
    ``(h', c')``; shapes are those of ``RNNCell``.

    Examples:
        >>> import dparray as dp
        >>> cell = dp.nn.LSTMCell(4, 6)
        >>> h, c = cell(dp.randn(3, 4))
        >>> h, c = cell(dp.randn(3, 4), (h, c))
        >>> h.shape, c.shape, cell.weight_ih.shape
        ((3, 6), (3, 6), (24, 4))
    """

    gates = 4
    state_names = ("h_0", "c_0")

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, Tensor]:
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError(f"LSTMCell: hx must be a pair (h_0, c_0) of tensors, got "
                            f"{describe(hx)}")
        h, c = self._step(input, hx)
        return h, c

    def recurrence(self, projected: Tensor, states: tuple[Tensor, ...]) -> Tensor:
        return recurrent.lstm_sequence(projected, states[0], states[1], self.weight_hh)


class GRUCell(_Cell):
    """One step of gated recurrent units, as PyTorch's ``nn.GRUCell``: with the gates
    ``r, z, n`` stacked in that order in the weights' rows,
    ``r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)``, ``z`` likewise,
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))`` and ``h' = (1 - z) * n + z * h``.

    Called as ``cell(input, hx=None)`` it returns ``h'``; shapes are those of ``RNNCell``.

    Examples:
        >>> import dparray as dp
        >>> cell = dp.nn.GRUCell(4, 6, bias=False)
        >>> cell(dp.randn(4)).shape   # unbatched
        (6,)
        >>> cell
        GRUCell(4, 6, bias=False)
    """

    gates = 3
    state_names = ("hx",)
    hidden_bias_in_node = True  # the new gate scales b_hn, with W_hn h, by r

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        (h,) = self._step(input, None if hx is None else (hx,))
        return h

    def recurrence(self, projected: Tensor, states: tuple[Tensor, ...]) -> Tensor:
        return recurrent.gru_sequence(projected, states[0], self.weight_hh, self.bias_hh)
