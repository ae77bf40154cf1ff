"""Bags of embeddings, PyTorch's ``nn.EmbeddingBag`` and ``F.embedding_bag``: the rows of a table
at the indices of each bag, reduced by sum, mean or maximum -- ``Embedding`` followed by a
reduction, for bags of any lengths. The functional form is re-exported by
``dparray.nn.functional``.

Bags are the rows of 2-D input (bags of one length), or stretches of 1-D input that start at
``offsets``. Entries equal to ``padding_idx`` take no part (nor count in a mean), and a bag
with nothing left -- empty, or only padding -- gives zeros, as in PyTorch.

Composed of graph nodes that have gradients: the lookup (``dparray.ops.embedding``, whose
gradient adds into the table with the backend's ``scatter_add``), a product with the
per-entry factors (``per_sample_weights``, ``1 / count`` for a mean, 0 for padding), and a
``scatter_add`` of the entries into their bags, so the memory is the entries' (``T * dim``)
whatever the bags' lengths. The maximum reads the bags as a table of the longest bag's length
(padding the shorter ones: ``B * longest * dim``, which very uneven bags make larger than the
entries), and each output element is the first maximum of its bag, which alone takes the
gradient, as in PyTorch.

Not supported, each a ValueError: ``max_norm`` (PyTorch renormalises the looked-up rows in
place; dparray never writes into a tensor), ``scale_grad_by_freq=True`` and ``sparse=True``.
Where PyTorch's result is undefined (decreasing offsets; with ``include_last_offset`` a last
offset other than the input's length, which PyTorch on CPU ignores) dparray refuses the
offsets, and a ``(B, 0)`` input (which PyTorch refuses) gives ``B`` empty bags.
"""

from __future__ import annotations

from typing import Any

from dparray import creation
from dparray._checks import (
    check_bool,
    check_choice,
    check_embedding_table,
    check_int,
    check_number,
    check_tensor,
)
from dparray.nn import init
from dparray.nn.module import Module, Parameter
from dparray.ops import embedding as _embedding
from dparray.ops.elementwise import where as _where
from dparray.ops.indexing import gather, scatter_add
from dparray.tensor import Tensor, from_op

__all__ = ["EmbeddingBag", "embedding_bag"]

MODES = ("sum", "mean", "max")


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """The ``mode`` (``"sum"``, ``"mean"`` or ``"max"``) of the rows of ``weight``
    ``(num_embeddings, dim)`` in each bag of ``input``, as ``F.embedding_bag``: ``(B, dim)``.

    ``input`` is ``(B, L)`` (each row a bag, ``offsets`` None) or ``(T,)`` with ``offsets``
    ``(B,)``: bag ``b`` runs from ``offsets[b]`` to the next offset (the last to the end); with
    ``include_last_offset``, ``offsets`` has ``B + 1`` entries, the last ``T`` (CSR's layout).
    ``per_sample_weights`` (``input``'s shape, mode ``"sum"`` only) scales each entry's row.
    Entries equal to ``padding_idx`` (negative counts from the end) are left out; empty bags
    give zeros. Differentiable in ``weight`` and ``per_sample_weights``.

    Examples:
        >>> import dparray as dp
        >>> weight = dp.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]])
        >>> bags = dp.tensor([0, 2, 1, 1, 2])
        >>> dp.nn.functional.embedding_bag(bags, weight, dp.tensor([0, 2]), mode="sum").tolist()
        [[3.0, 2.0], [2.0, 4.0]]
        >>> dp.nn.functional.embedding_bag(dp.tensor([[0, 1], [2, 1]]), weight,
        ...                                padding_idx=1).tolist()
        [[1.0, 0.0], [2.0, 2.0]]
    """
    where = "embedding_bag"
    _refuse_unsupported(where, max_norm, norm_type, scale_grad_by_freq, sparse)
    mode = check_choice(mode, "mode", where, MODES)
    check_bool(include_last_offset, "include_last_offset", where)
    check_tensor(weight, "weight", where)
    if weight.ndim != 2:
        raise ValueError(f"{where}: weight must be 2-D (num_embeddings, embedding_dim), got "
                         f"shape {weight.shape}")
    if not weight.dtype.is_floating:
        raise TypeError(f"{where}: weight must be a floating-point tensor, got "
                        f"{weight.dtype.name}")
    row = _padding_row(where, padding_idx, weight.shape[0])
    bags = _Bags(where, input, offsets, include_last_offset, weight.shape[0])
    if per_sample_weights is not None:
        _check_per_sample_weights(where, per_sample_weights, input, weight, mode)
    return bags.reduce(weight, mode, per_sample_weights, row)


def _refuse_unsupported(where: str, max_norm: Any, norm_type: Any, scale_grad_by_freq: Any,
                       sparse: Any) -> None:
    """PyTorch's arguments that dparray does not support: a ValueError unless left as they
    are by default (``norm_type`` only matters with ``max_norm``)."""
    if max_norm is not None:
        raise ValueError(f"{where}: max_norm is not supported (PyTorch renormalises the "
                         f"looked-up rows in place; dparray never writes into a tensor), got "
                         f"{max_norm!r}")
    check_number(norm_type, "norm_type", where, finite=False)
    if check_bool(scale_grad_by_freq, "scale_grad_by_freq", where):
        raise ValueError(f"{where}: scale_grad_by_freq=True is not supported")
    if check_bool(sparse, "sparse", where):
        raise ValueError(f"{where}: sparse=True is not supported (dparray's gradients are "
                         "dense)")


def _padding_row(where: str, padding_idx: Any, rows: int) -> int | None:
    """``padding_idx`` as a row number in ``[0, rows)`` (a negative one counts from the end)."""
    if padding_idx is None:
        return None
    return check_int(padding_idx, "padding_idx", where, minimum=-rows, maximum=rows - 1) % rows


def _check_per_sample_weights(where: str, per_sample_weights: Any, input: Tensor,
                              weight: Tensor, mode: str) -> None:
    check_tensor(per_sample_weights, "per_sample_weights", where)
    if mode != "sum":
        raise ValueError(f"{where}: per_sample_weights is only supported with mode='sum', got "
                         f"mode={mode!r}")
    if per_sample_weights.shape != input.shape:
        raise ValueError(f"{where}: per_sample_weights of shape {per_sample_weights.shape} "
                         f"must have the input's shape {input.shape}")
    if per_sample_weights.dtype is not weight.dtype:
        raise TypeError(f"{where}: per_sample_weights must have the weight's dtype "
                        f"{weight.dtype.name}, got {per_sample_weights.dtype.name}")


class _Bags:
    """Where the bags of ``input`` start and end (``starts``, ``ends``: ``(B,)`` int64 arrays)
    over its flat entries ``indices`` (``(T,)``), all checked: integer input of 1 or 2 axes,
    entries in ``[0, rows)``; offsets (for 1-D input only) of one axis, starting at 0,
    non-decreasing, within the input (with ``include_last_offset``: ending at its length)."""

    def __init__(self, where: str, input: Any, offsets: Any, include_last_offset: bool,
                 rows: int) -> None:
        check_tensor(input, "input", where)
        if input.dtype.kind not in ("int", "uint"):
            raise TypeError(f"{where}: input must be an integer tensor of indices, got "
                            f"{input.dtype.name}")
        self.backend = input.backend
        xp = self.xp = input.backend.xp
        self.indices = xp.astype(xp.reshape(input.data, (-1,)), xp.int64)
        count = self.indices.shape[0]
        low, high = (int(xp.min(self.indices)), int(xp.max(self.indices))) if count else (0, 0)
        if low < 0 or high >= rows:
            raise IndexError(f"{where}: input holds indices from {low} to {high}, outside "
                             f"[0, {rows}) for a weight of {rows} rows")
        if input.ndim == 2:
            if offsets is not None:
                raise ValueError(f"{where}: offsets must be None for 2-D input (each row is a "
                                 f"bag), got {type(offsets).__name__}")
            bags, length = input.shape
            self.starts = xp.arange(bags, dtype=xp.int64) * length
            self.ends = self.starts + length
        elif input.ndim == 1:
            self.starts, self.ends = self._from_offsets(where, offsets, include_last_offset,
                                                        count)
        else:
            raise ValueError(f"{where}: input must be 1-D (with offsets) or 2-D, got shape "
                             f"{input.shape}")

    def _from_offsets(self, where: str, offsets: Any, include_last_offset: bool,
                      count: int) -> tuple[Any, Any]:
        xp = self.xp
        if offsets is None:
            raise ValueError(f"{where}: 1-D input needs offsets (where each bag starts)")
        check_tensor(offsets, "offsets", where)
        if offsets.dtype.kind not in ("int", "uint"):
            raise TypeError(f"{where}: offsets must be an integer tensor, got "
                            f"{offsets.dtype.name}")
        if offsets.ndim != 1 or (include_last_offset and offsets.shape[0] == 0):
            needs = "at least one entry" if offsets.ndim == 1 else "one axis"
            raise ValueError(f"{where}: offsets must have {needs}, got shape {offsets.shape}")
        at = xp.astype(offsets.data, xp.int64)
        if at.shape[0] == 0:
            return at, at
        first, last = int(at[0]), int(at[-1])
        if first != 0:
            raise ValueError(f"{where}: offsets[0] must be 0 (the first bag starts the input), "
                             f"got {first}")
        falls = at[1:] < at[:-1]
        if at.shape[0] > 1 and bool(xp.any(falls)):
            i = int(xp.argmax(xp.astype(falls, xp.int8))) + 1
            raise ValueError(f"{where}: offsets must be non-decreasing, got offsets[{i}] = "
                             f"{int(at[i])} after offsets[{i - 1}] = {int(at[i - 1])}")
        if include_last_offset and last != count:
            raise ValueError(f"{where}: with include_last_offset, offsets[-1] must be the "
                             f"input's length {count}, got {last}")
        if last > count:
            raise ValueError(f"{where}: offsets[-1] ({last}) is beyond the input's length "
                             f"{count}")
        if include_last_offset:
            return at[:-1], at[1:]
        return at, xp.concat([at[1:], xp.asarray([count], dtype=xp.int64)])

    def reduce(self, weight: Tensor, mode: str, per_sample_weights: Tensor | None,
               padding: int | None) -> Tensor:
        """Each bag's ``mode`` of the rows of ``weight``: ``(B, dim)``."""
        if mode == "max" and self.indices.shape[0]:  # (no entries: the sum's zeros)
            return self._maximum(weight, padding)
        xp, dtype = self.xp, weight.data.dtype
        bag = self._bag_of_entries()
        kept = None if padding is None else self.indices != padding
        factor = None if kept is None else xp.astype(kept, dtype)  # 0 for padding
        if mode == "mean":
            share = 1.0 / xp.astype(xp.maximum(self._per_bag_counts(kept), 1), dtype)
            spread = xp.take(share, bag, axis=0)
            factor = spread if factor is None else factor * spread
        scale: Any = None if factor is None else self._tensor(factor)
        if per_sample_weights is not None:
            flat = per_sample_weights.reshape(-1)
            scale = flat if scale is None else flat * scale
        rows = _embedding.embedding(weight, self._tensor(self.indices), None)
        if scale is not None:
            rows = rows * scale.reshape(-1, 1)
        dim = weight.shape[1]
        target = creation.zeros((self.starts.shape[0], dim), dtype=weight.dtype,
                                backend=weight.backend)
        into = xp.broadcast_to(xp.reshape(bag, (-1, 1)), (bag.shape[0], dim))
        return scatter_add(target, 0, self._tensor(into), rows)

    def _maximum(self, weight: Tensor, padding: int | None) -> Tensor:
        """Each bag's first maximum per dimension: the bags as a ``(B, longest)`` table of
        entries, the places past a bag's end and the padding entries never winning."""
        xp = self.xp
        longest = int(xp.max(self.ends - self.starts)) if self.starts.shape[0] else 0
        longest = max(longest, 1)
        places = xp.reshape(self.starts, (-1, 1)) + xp.reshape(
            xp.arange(longest, dtype=xp.int64), (1, -1))
        inside = places < xp.reshape(self.ends, (-1, 1))
        entries = xp.take(self.indices, xp.reshape(xp.minimum(places, self.indices.shape[0] - 1),
                                                   (-1,)), axis=0)
        entries = xp.reshape(entries, places.shape)
        takes_part = inside if padding is None else xp.logical_and(inside, entries != padding)
        table = _embedding.embedding(weight, self._tensor(entries), None)  # (B, longest, dim)
        contenders = xp.where(xp.expand_dims(takes_part, axis=2), table.data, -xp.inf)
        winner = xp.expand_dims(xp.argmax(contenders, axis=1), axis=1)
        best = gather(table, 1, self._tensor(winner)).reshape(self.starts.shape[0], -1)
        nonempty = xp.reshape(xp.any(takes_part, axis=1), (-1, 1))
        return _where(self._tensor(nonempty), best, 0.0)

    def _bag_of_entries(self) -> Any:
        """The bag of each entry (``(T,)``): the last bag starting at or before it."""
        xp = self.xp
        entries = xp.arange(self.indices.shape[0], dtype=xp.int64)
        return xp.searchsorted(self.starts, entries, side="right") - 1

    def _per_bag_counts(self, kept: Any) -> Any:
        """How many entries of each bag take part (all, or those that are not padding)."""
        xp = self.xp
        if kept is None:
            return self.ends - self.starts
        running = xp.concat([xp.zeros((1,), dtype=xp.int64),
                             xp.cumulative_sum(xp.astype(kept, xp.int64))])
        return xp.take(running, self.ends, axis=0) - xp.take(running, self.starts, axis=0)

    def _tensor(self, array: Any) -> Tensor:
        return from_op(array, self.backend, None)


class EmbeddingBag(Module):
    """A table of ``num_embeddings`` vectors (from ``N(0, 1)``, the ``padding_idx`` row zero,
    as in PyTorch) whose rows are looked up in bags and reduced by ``mode``: ``"sum"``,
    ``"mean"`` (the default) or ``"max"``; ``forward(input, offsets=None,
    per_sample_weights=None)`` is ``embedding_bag`` with this table (see there for the bags).

    ``max_norm``, ``scale_grad_by_freq=True`` and ``sparse=True`` are not supported (a
    ValueError); ``_weight`` gives the table (``from_pretrained``'s way).

    Examples:
        >>> import dparray as dp
        >>> bag = dp.nn.EmbeddingBag(10, 3, mode="sum")
        >>> bag(dp.tensor([1, 2, 4, 5, 4, 3, 2, 9]), dp.tensor([0, 4])).shape
        (2, 3)
        >>> bag(dp.tensor([[1, 2], [4, 5]])).shape
        (2, 3)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None,
                 include_last_offset: bool = False, padding_idx: int | None = None, *,
                 dtype: Any = None) -> None:
        super().__init__()
        where = "EmbeddingBag"
        self.num_embeddings = check_int(num_embeddings, "num_embeddings", where, minimum=0)
        self.embedding_dim = check_int(embedding_dim, "embedding_dim", where, minimum=0)
        _refuse_unsupported(where, max_norm, norm_type, scale_grad_by_freq, sparse)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.mode = check_choice(mode, "mode", where, MODES)
        self.include_last_offset = check_bool(include_last_offset, "include_last_offset", where)
        self.padding_idx = _padding_row(where, padding_idx, self.num_embeddings)
        shape = (self.num_embeddings, self.embedding_dim)
        if _weight is not None:
            check_tensor(_weight, "_weight", where)
            if _weight.shape != shape:
                raise ValueError(f"{where}: _weight of shape {_weight.shape} does not match "
                                 f"(num_embeddings, embedding_dim) = {shape}")
            self.weight = Parameter(_weight)
        else:
            weight = init.normal(shape, dtype)
            if self.padding_idx is not None:
                rows = creation.arange(self.num_embeddings, backend=weight.backend)
                padding = (rows == self.padding_idx).reshape(-1, 1)
                weight = Parameter(_where(padding, 0.0, weight.detach()))
            self.weight = weight

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An ``EmbeddingBag`` holding ``embeddings`` (``(num_embeddings, embedding_dim)``) as
        its weight, frozen (not trained) unless ``freeze=False``, as PyTorch's.

        Examples:
            >>> import dparray as dp
            >>> table = dp.tensor([[1.0, 2.0], [3.0, 4.0]])
            >>> dp.nn.EmbeddingBag.from_pretrained(table)(dp.tensor([[0, 1]])).tolist()
            [[2.0, 3.0]]
        """
        where = "EmbeddingBag.from_pretrained"
        check_embedding_table(embeddings, "embeddings", where)
        check_bool(freeze, "freeze", where)
        rows, dim = embeddings.shape
        layer = cls(rows, dim, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                    embeddings, include_last_offset, padding_idx)
        layer.weight.is_variable = not freeze  # still a parameter (in the state dict), frozen
        return layer

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return embedding_bag(input, self.weight, offsets, mode=self.mode,
                             per_sample_weights=per_sample_weights,
                             include_last_offset=self.include_last_offset,
                             padding_idx=self.padding_idx)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type!r}"
        text += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx!r}"
        return text
