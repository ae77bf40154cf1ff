"""``dparray.nn.utils.rnn``: PyTorch's ``pad_sequence``, which batches sequences of different
lengths for a recurrent layer or a collate function.

PyTorch's packed sequences (``pack_padded_sequence`` and its kin) are not here: dparray's
recurrent layers take padded batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dparray._checks import check_bool, check_choice, check_number, check_tensor, describe
from dparray.ops.pad import pad
from dparray.ops.shape import stack
from dparray.ops.shape_more import unbind
from dparray.tensor import Tensor

__all__ = ["pad_sequence"]

_WHERE = "pad_sequence"


def pad_sequence(sequences: Sequence[Tensor] | Tensor, batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """The ``(L_i, *)`` tensors of ``sequences`` padded with ``padding_value`` to the longest
    length ``L`` and stacked: ``(L, B, *)``, or ``(B, L, *)`` with ``batch_first``, as
    PyTorch's ``pad_sequence``; ``padding_side="left"`` pads before each sequence. One padding
    node per sequence and a stack, so gradients reach every sequence.

    The sequences must share a dtype (PyTorch casts them all to the first one's) and their
    trailing shape; a tensor is taken as the sequence of its rows, as in PyTorch.

    Examples:
        >>> import dparray as dp
        >>> from dparray.nn.utils.rnn import pad_sequence
        >>> pad_sequence([dp.tensor([1, 2, 3]), dp.tensor([4])], batch_first=True).tolist()
        [[1, 2, 3], [4, 0, 0]]
    """
    if isinstance(sequences, Tensor) and sequences.ndim >= 2:
        sequences = unbind(sequences, axis=0)  # its rows, as PyTorch takes a tensor
    elif isinstance(sequences, Tensor) or not isinstance(sequences, Sequence):
        raise TypeError(f"{_WHERE}: sequences must be a list or tuple of tensors (or a tensor "
                        f"of at least 2 dimensions), got {describe(sequences)}")
    if not sequences:
        raise ValueError(f"{_WHERE}: sequences must not be empty")
    for i, sequence in enumerate(sequences):
        check_tensor(sequence, f"sequences[{i}]", _WHERE)
    check_bool(batch_first, "batch_first", _WHERE)
    check_number(padding_value, "padding_value", _WHERE)
    check_choice(padding_side, "padding_side", _WHERE, ("right", "left"))
    first = sequences[0]
    for i, sequence in enumerate(sequences):
        if sequence.ndim == 0:
            raise ValueError(f"{_WHERE}: sequences[{i}] is 0-D; each sequence must have a "
                             f"length axis first, (L, *)")
        if sequence.shape[1:] != first.shape[1:]:
            raise ValueError(f"{_WHERE}: every sequence must have the first one's trailing "
                             f"shape {first.shape[1:]}, got shape {sequence.shape} at index "
                             f"{i}")
        if sequence.dtype != first.dtype:
            raise TypeError(f"{_WHERE}: every sequence must be {first.dtype.name} like the "
                            f"first, got {sequence.dtype.name} at index {i}")
    value = _fitting(padding_value, first)
    longest = max(sequence.shape[0] for sequence in sequences)
    padded = [_padded(sequence, longest - sequence.shape[0], value, padding_side)
              for sequence in sequences]
    return stack(padded, axis=0 if batch_first else 1)


def _padded(sequence: Tensor, missing: int, value: Any, side: str) -> Tensor:
    if not missing:
        return sequence
    widths = [0, 0] * (sequence.ndim - 1) + ([missing, 0] if side == "left" else [0, missing])
    return pad(sequence, widths, value=value)


def _fitting(value: Any, sequence: Tensor) -> Any:
    """The padding value in the sequences' kind: the default ``0.0`` pads integer sequences
    with ``0``; a fraction cannot pad them."""
    if sequence.dtype.kind in ("int", "uint", "bool") and not isinstance(value, bool):
        if not float(value).is_integer():
            raise TypeError(f"{_WHERE}: padding_value {value!r} does not fit "
                            f"{sequence.dtype.name} sequences")
        value = int(value)
        return bool(value) if sequence.dtype.kind == "bool" else value
    return value
