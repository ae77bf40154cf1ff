"""Recurrent layers: RNN (tanh or ReLU), LSTM and GRU, with PyTorch's constructor arguments,
parameter names and layouts, initialisation, call signature and results.

Layer ``k`` owns ``weight_ih_l{k}`` of shape ``(gates * hidden_size, layer input)``,
``weight_hh_l{k}`` of shape ``(gates * hidden_size, hidden_size)`` and, with ``bias=True``,
``bias_ih_l{k}`` and ``bias_hh_l{k}``; a bidirectional layer's backward direction has the same
names ending in ``_reverse``. The gates are stacked in PyTorch's order (LSTM: input, forget,
cell, output; GRU: reset, update, new), so state dicts move between the libraries unchanged.

The input projection ``x @ weight_ih.T + bias_ih`` of the whole sequence is one matrix product
per layer and direction, before the loop; only the hidden projection runs at every time step.
Each layer's recurrence over the sequence, in each direction, is one graph node
(``dparray.ops.recurrent``).

Under ``DataParallel``, which splits the arguments and joins the outputs along axis 0,
construct the layers with ``batch_first=True``: with time-major input, axis 0 is time. A layer
that runs in a DataParallel chunk refuses time-major and unbatched input rather than return
the results of a sequence cut in pieces. The initial and final states keep their batch in axis
1 (as in PyTorch), so a model run by DataParallel takes and returns them batch-first
(``h.transpose(0, 1)``) or leaves them out.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from dparray import creation, ops
from dparray._checks import (
    check_bool,
    check_choice,
    check_int,
    check_probability,
    check_tensor,
    describe,
)
from dparray.nn import functional as F
from dparray.nn import init
from dparray.nn.chunks import check_batch_first
from dparray.nn.module import Module
from dparray.ops import recurrent
from dparray.tensor import Tensor

_State = tuple[Tensor, ...]
"""The recurrent state of one layer and direction at one time step: ``(h,)``, or ``(h, c)``."""


class _Recurrent(Module):
    """What RNN, LSTM and GRU share: arguments, parameters, and the loop over layers,
    directions. A subclass sets ``gates`` (how many blocks of ``hidden_size`` rows its weights
    stack), ``state_names`` (the tensors it carries from step to step) and ``sequence`` (its
    recurrence over time, one node)."""

    gates: int
    state_names: tuple[str, ...]
    hidden_bias_in_node = False  # b_hh added to the input projection, unless the cell needs it

    def __init__(self, input_size: int, hidden_size: int, num_layers: int, bias: bool,
                 batch_first: bool, dropout: float, bidirectional: bool, dtype: Any) -> None:
        super().__init__()
        where = type(self).__name__
        self.input_size = check_int(input_size, "input_size", where, minimum=1)
        self.hidden_size = check_int(hidden_size, "hidden_size", where, minimum=1)
        self.num_layers = check_int(num_layers, "num_layers", where, minimum=1)
        self.bias = check_bool(bias, "bias", where)
        self.batch_first = check_bool(batch_first, "batch_first", where)
        self.dropout = check_probability(dropout, "dropout", where)
        self.bidirectional = check_bool(bidirectional, "bidirectional", where)
        if self.dropout > 0 and self.num_layers == 1:
            warnings.warn(
                f"{where}: dropout is applied between recurrent layers, so dropout={dropout} "
                "does nothing with num_layers=1", UserWarning, stacklevel=3)
        self._weight_names: list[tuple[str, ...]] = []
        bound = 1.0 / math.sqrt(self.hidden_size)
        rows = self.gates * self.hidden_size
        for layer in range(self.num_layers):
            layer_input = self.input_size if layer == 0 else self.hidden_size * self.directions
            for suffix in ("", "_reverse")[:self.directions]:
                shapes: dict[str, tuple[int, ...]] = {
                    f"weight_ih_l{layer}{suffix}": (rows, layer_input),
                    f"weight_hh_l{layer}{suffix}": (rows, self.hidden_size)}
                if self.bias:
                    shapes[f"bias_ih_l{layer}{suffix}"] = (rows,)
                    shapes[f"bias_hh_l{layer}{suffix}"] = (rows,)
                for name, shape in shapes.items():
                    setattr(self, name, init.uniform(shape, bound, dtype))
                self._weight_names.append(tuple(shapes))

    @property
    def directions(self) -> int:
        """2 for a bidirectional layer, else 1."""
        return 2 if self.bidirectional else 1

    @property
    def all_weights(self) -> list[list[Tensor]]:
        """The parameters of each layer and direction, in PyTorch's order
        (``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``)."""
        return [[getattr(self, name) for name in names] for names in self._weight_names]

    def flatten_parameters(self) -> None:
        """Does nothing: PyTorch packs the weights into one buffer for cuDNN, dparray keeps no
        such buffer. Here so that PyTorch code calling it runs unchanged."""

    def couples_rows(self) -> bool:
        # Time-major input would be split along time: running the chunks always (never the
        # whole batch at once) makes the refusal in _check_input hold for every batch size.
        dropout_masks = self.is_training() and self.dropout > 0 and self.num_layers > 1
        return not self.batch_first or dropout_masks

    def sequence(self, projected: Tensor, state: _State, weight_hh: Tensor,
                 bias_hh: Tensor | None, reverse: bool) -> Tensor:
        """The recurrence over time-major ``projected`` (``x @ weight_ih.T + bias_ih``, and
        ``bias_hh`` unless ``hidden_bias_in_node``) as one node of ``dparray.ops.recurrent``:
        the hidden states of every step, then the final states after the first (LSTM's
        ``c_n``)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ the loop
    def _run(self, input: Tensor, initial: Sequence[Any] | None) -> tuple[Tensor, _State]:
        """The output sequence and the final states (``h_n``, and ``c_n`` for LSTM), from
        ``input`` and the initial states (zeros when None), in the caller's layout."""
        batched = self._check_input(input)
        if initial is not None:
            self._check_states(input, initial, batched)
        x = input
        if not batched:
            x = ops.unsqueeze(x, 1)
            initial = None if initial is None else [ops.unsqueeze(s, 1) for s in initial]
        elif self.batch_first:
            x = ops.permute(x, (1, 0, 2))  # time-major: the loop walks axis 0
        starts = self._initial_states(x, initial)
        finals: list[_State] = []
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout > 0 and self.is_training():
                x = F.dropout(x, self.dropout)
            sequences = []
            for direction in range(self.directions):
                index = layer * self.directions + direction
                sequence, final = self._run_direction(x, starts[index], index,
                                                      reverse=direction == 1)
                sequences.append(sequence)
                finals.append(final)
            x = sequences[0] if len(sequences) == 1 else ops.cat(sequences, axis=2)
        last = tuple(ops.stack([final[i] for final in finals], axis=0)
                     for i in range(len(self.state_names)))
        if not batched:
            return ops.squeeze(x, 1), tuple(ops.squeeze(s, 1) for s in last)
        if self.batch_first:
            x = ops.permute(x, (1, 0, 2))
        return x, last

    def _run_direction(self, x: Tensor, state: _State, index: int,
                       reverse: bool) -> tuple[Tensor, _State]:
        """One layer in one direction over time-major ``x``: its output sequence and final
        state. The input projection of every step is one product, the recurrence one node."""
        weights = [getattr(self, name) for name in self._weight_names[index]]
        bias_ih, bias_hh = (weights[2], weights[3]) if self.bias else (None, None)
        projected = F.linear(x, weights[0], bias_ih)  # every time step in one product
        if bias_hh is not None and not self.hidden_bias_in_node:
            projected, bias_hh = projected + bias_hh, None
        out = self.sequence(projected, state, weights[1], bias_hh, reverse)
        length = x.shape[0]
        last = out[0] if reverse else out[length - 1]
        if len(state) == 1:
            return out, (last,)
        return out[:length], (last, *(out[length + i] for i in range(len(state) - 1)))

    def _initial_states(self, x: Tensor, initial: Sequence[Tensor] | None) -> list[_State]:
        """For each layer and direction, its initial state, for time-major ``x``."""
        count = self.num_layers * self.directions
        if initial is None:
            zeros = creation.zeros((x.shape[1], self.hidden_size), dtype=x.dtype,
                                   backend=x.backend)
            return [(zeros,) * len(self.state_names)] * count
        return [tuple(state[i] for state in initial) for i in range(count)]

    # ------------------------------------------------------------------ checks
    def _check_input(self, input: Any) -> bool:
        """Whether ``input`` is batched, once it is known to fit the layer."""
        where = type(self).__name__
        check_tensor(input, "input", where)
        if not input.dtype.is_floating:
            raise TypeError(f"{where}: input must be a floating-point tensor, got "
                            f"{input.dtype.name}")
        layout = "(N, L, {0})" if self.batch_first else "(L, N, {0})"
        expected = f"{layout.format(self.input_size)} or unbatched (L, {self.input_size})"
        if input.ndim not in (2, 3) or input.shape[-1] != self.input_size:
            raise ValueError(f"{self!r}: expected input of shape {expected}, got shape "
                             f"{input.shape}")
        batched = input.ndim == 3
        steps = input.shape[1] if batched and self.batch_first else input.shape[0]
        if steps == 0:
            raise ValueError(f"{self!r}: the sequence must have at least one time step, got "
                             f"input of shape {input.shape}")
        check_batch_first(f"{self!r}", "time", input.shape, batched, self.batch_first)
        return batched

    def _check_states(self, input: Tensor, initial: Sequence[Any], batched: bool) -> None:
        """Each initial state is a floating-point tensor of the shape ``input`` needs:
        ``(num_layers * directions, N, hidden_size)``, or without ``N`` when unbatched."""
        count = self.num_layers * self.directions
        if batched:
            batch = input.shape[0] if self.batch_first else input.shape[1]
            expected: tuple[int, ...] = (count, batch, self.hidden_size)
        else:
            expected = (count, self.hidden_size)
        check_states(self, dict(zip(self.state_names, initial, strict=True)), expected,
                     input.shape)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if not self.bias:
            text += ", bias=False"
        if self.batch_first:
            text += ", batch_first=True"
        if self.dropout:
            text += f", dropout={self.dropout}"
        if self.bidirectional:
            text += ", bidirectional=True"
        return text


def check_states(module: Module, states: dict[str, Any], expected: tuple[int, ...],
                 input_shape: tuple[int, ...]) -> None:
    """Each of a recurrent module's given ``states`` (by name) is a floating-point tensor of
    the ``expected`` shape for its input's."""
    where = type(module).__name__
    for name, state in states.items():
        check_tensor(state, name, where)
        if not state.dtype.is_floating:
            raise TypeError(f"{where}: {name} must be a floating-point tensor, got "
                            f"{state.dtype.name}")
        if state.shape != expected:
            raise ValueError(f"{module!r}: {name} must have shape {expected} for input of "
                             f"shape {input_shape}, got shape {state.shape}")


class RNN(_Recurrent):
    """An Elman recurrent network: ``h_t = tanh(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh)``
    (``nonlinearity="relu"`` for ReLU), over ``num_layers`` stacked layers.

    Called as ``rnn(input, hx=None)`` it returns ``(output, h_n)``, as PyTorch's ``nn.RNN``:
    ``input`` is ``(L, N, input_size)`` (``(N, L, input_size)`` with ``batch_first=True``) or
    unbatched ``(L, input_size)``; ``hx`` and ``h_n`` are ``(num_layers * directions, N,
    hidden_size)`` whatever ``batch_first`` says (``(num_layers * directions, hidden_size)``
    unbatched); ``output`` holds the last layer's ``h_t`` for every step, both directions
    side by side in its last axis. ``dropout`` applies to every layer's output but the last,
    in training. Every parameter starts from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``.
    Under DataParallel, use ``batch_first=True`` and move the states' batch to axis 0 (see
    the module's documentation).

    Examples:
        >>> import dparray as dp
        >>> rnn = dp.nn.RNN(4, 6, num_layers=2, batch_first=True)
        >>> output, h_n = rnn(dp.randn(3, 5, 4))
        >>> output.shape, h_n.shape
        ((3, 5, 6), (2, 3, 6))
        >>> [name for name, _ in rnn.named_parameters()][:4]
        ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']
    """

    gates = 1
    state_names = ("hx",)

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, dtype: Any = None) -> None:
        nonlinearity = check_choice(nonlinearity, "nonlinearity", "RNN", ("tanh", "relu"))
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        output, (h_n,) = self._run(input, None if hx is None else (hx,))
        return output, h_n

    def sequence(self, projected: Tensor, state: _State, weight_hh: Tensor,
                 bias_hh: Tensor | None, reverse: bool) -> Tensor:
        return recurrent.rnn_sequence(projected, state[0], weight_hh, self.nonlinearity, reverse)

    def extra_repr(self) -> str:
        text = super().extra_repr()
        return text if self.nonlinearity == "tanh" else f"{text}, nonlinearity='relu'"


class LSTM(_Recurrent):
    """Long short-term memory, as PyTorch's ``nn.LSTM``: at each step, from the gates
    ``i, f, g, o`` (stacked in that order in the weights' rows),
    ``c_t = sigmoid(f) * c_(t-1) + sigmoid(i) * tanh(g)`` and ``h_t = sigmoid(o) * tanh(c_t)``.

    Called as ``lstm(input, hx=None)`` with ``hx = (h_0, c_0)``, it returns
    ``(output, (h_n, c_n))``; shapes and arguments are those of ``RNN``. ``proj_size``
    (PyTorch's projected LSTM) is not supported: it must be 0.

    Examples:
        >>> import dparray as dp
        >>> lstm = dp.nn.LSTM(4, 6, bidirectional=True)
        >>> output, (h_n, c_n) = lstm(dp.randn(5, 3, 4))
        >>> output.shape, h_n.shape, c_n.shape
        ((5, 3, 12), (2, 3, 6), (2, 3, 6))
        >>> lstm.weight_hh_l0_reverse.shape
        (24, 6)
    """

    gates = 4
    state_names = ("h_0", "c_0")

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, dtype: Any = None) -> None:
        if check_int(proj_size, "proj_size", "LSTM", minimum=0) != 0:
            raise ValueError(f"LSTM: proj_size is not supported and must be 0, got {proj_size}")
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, dtype)
        self.proj_size = 0

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError(f"LSTM: hx must be a pair (h_0, c_0) of tensors, got "
                            f"{describe(hx)}")
        output, (h_n, c_n) = self._run(input, hx)
        return output, (h_n, c_n)

    def sequence(self, projected: Tensor, state: _State, weight_hh: Tensor,
                 bias_hh: Tensor | None, reverse: bool) -> Tensor:
        return recurrent.lstm_sequence(projected, state[0], state[1], weight_hh, reverse)


class GRU(_Recurrent):
    """Gated recurrent units, as PyTorch's ``nn.GRU``: at each step, with the gates
    ``r, z, n`` stacked in that order in the weights' rows,
    ``r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)``, ``z`` likewise,
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))`` and ``h_t = (1 - z) * n + z * h``.

    Called as ``gru(input, hx=None)`` it returns ``(output, h_n)``; shapes and arguments are
    those of ``RNN``.

    Examples:
        >>> import dparray as dp
        >>> gru = dp.nn.GRU(4, 6, num_layers=2)
        >>> output, h_n = gru(dp.randn(5, 4))   # unbatched: (L, input_size)
        >>> output.shape, h_n.shape
        ((5, 6), (2, 6))
    """

    gates = 3
    state_names = ("hx",)
    hidden_bias_in_node = True  # the new gate scales b_hn, with W_hn h, by r

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        output, (h_n,) = self._run(input, None if hx is None else (hx,))
        return output, h_n

    def sequence(self, projected: Tensor, state: _State, weight_hh: Tensor,
                 bias_hh: Tensor | None, reverse: bool) -> Tensor:
        return recurrent.gru_sequence(projected, state[0], weight_hh, bias_hh, reverse)
