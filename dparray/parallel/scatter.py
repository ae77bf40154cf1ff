"""DataParallel's first step: the call's arguments split into balanced chunks along axis 0.

The batch size is axis 0 of the first tensor argument (positional arguments first, then
keywords). Every tensor argument whose axis 0 has that size is split -- slices, so gradients
flow back to it -- and every other argument (numbers, flags, tensors of other sizes, and the
keyword arguments named in ``replicate``) is passed whole to every chunk, as PyTorch's
DataParallel does. A tensor whose first axis merely happens to equal the batch size (an
``(L, L)`` attention mask with ``L == N``) is split too: name it in ``replicate``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from dparray.tensor import Tensor


@dataclass
class Arguments:
    """A call's arguments, the batch size, and which of them are split."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    batch: int
    split_args: tuple[bool, ...]
    split_kwargs: dict[str, bool]
    first: Tensor  # the tensor that set the batch size (its backend runs the workers)

    def tensors(self) -> list[tuple[str, Tensor, bool]]:
        """Every tensor argument: its place (``"0"``, ``"mask"``), itself, whether it is split."""
        found = [(str(i), a, s) for i, (a, s) in enumerate(zip(self.args, self.split_args,
                                                               strict=True))
                 if isinstance(a, Tensor)]
        found += [(k, v, self.split_kwargs[k]) for k, v in self.kwargs.items()
                  if isinstance(v, Tensor)]
        return found

    def chunks(self, count: int) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        """The arguments of each of ``count`` balanced chunks (sizes differ by at most one)."""
        size, extra = divmod(self.batch, count)
        result, start = [], 0
        for i in range(count):
            stop = start + size + (1 if i < extra else 0)
            args = tuple(a[start:stop] if s else a
                         for a, s in zip(self.args, self.split_args, strict=True))
            kwargs = {k: v[start:stop] if self.split_kwargs[k] else v
                      for k, v in self.kwargs.items()}
            result.append((args, kwargs))
            start = stop
        return result


def arguments(args: tuple[Any, ...], kwargs: dict[str, Any],
              replicate: Collection[str]) -> Arguments:
    """Find the batch and what to split; clear errors before any work."""
    candidates = [a for a in args if isinstance(a, Tensor)]
    candidates += [v for k, v in kwargs.items() if isinstance(v, Tensor) and k not in replicate]
    if not candidates:
        given = ", ".join(type(a).__name__ for a in (*args, *kwargs.values())) or "nothing"
        raise TypeError(f"DataParallel takes a Tensor batch, got {given}")
    first = candidates[0]
    if first.ndim == 0:
        raise ValueError("DataParallel needs a batch axis (axis 0), got a 0-d tensor")
    batch = first.shape[0]
    if batch == 0:
        raise ValueError(f"DataParallel got an empty batch (shape {first.shape})")

    def splits(value: Any) -> bool:
        return isinstance(value, Tensor) and value.ndim > 0 and value.shape[0] == batch

    return Arguments(args, dict(kwargs), batch, tuple(splits(a) for a in args),
                     {k: k not in replicate and splits(v) for k, v in kwargs.items()}, first)


def signature(arguments: Arguments) -> tuple[Any, ...]:
    """What identifies a call's inputs for ``execution="auto"``: the tensors' places, shapes
    and dtypes, and the other arguments' types."""
    parts: list[Any] = []
    for i, a in enumerate(arguments.args):
        parts.append((i, a.shape, a.dtype.name) if isinstance(a, Tensor) else (i, type(a)))
    for k, v in arguments.kwargs.items():
        parts.append((k, v.shape, v.dtype.name) if isinstance(v, Tensor) else (k, type(v)))
    return tuple(parts)
