"""``einsum``: Einstein summation, built from ops that already have gradients.

The array API has no einsum, so the subscripts are parsed here and the work is done with
``diagonal`` (an index repeated within one operand), ``sum`` (an index no one else needs),
``broadcast_to`` (a size-1 axis meeting a longer one), and, for each pair of operands from
left to right, one batched ``matmul`` over the indices they share: shared indices still
needed later are its batch axes, the others are contracted. The gradient follows from those
ops, so it is an einsum of the output's gradient with the other operands, as it should be.
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence

from dparray._checks import check_tensor, describe
from dparray.ops._autocast import autocast_op
from dparray.ops.construct import diagonal
from dparray.ops.linalg import matmul
from dparray.ops.reduce import sum as _sum
from dparray.ops.shape import broadcast_to, permute, reshape
from dparray.tensor import Tensor

__all__ = [
    "einsum",
]

_LETTERS = frozenset(string.ascii_letters)
_ELLIPSIS = "..."

Labels = list[str]


@autocast_op("einsum")
def einsum(subscripts: str, *operands: Tensor | Sequence[Tensor]) -> Tensor:
    """Einstein summation over ``operands`` as ``subscripts`` say, as in NumPy and PyTorch.

    Each operand's axes are named by letters (``"ij,jk->ik"``); an index that is left out of
    the output is summed over; an index repeated within one operand takes its diagonal
    (``"ii->i"``); ``...`` stands for the remaining (broadcast) axes, summed over when the
    output leaves it out (``"ij...,ij...->ij"``). Without ``->`` the output holds ``...`` then
    the indices that appear once, in alphabetical order. Axes of size 1
    broadcast against longer ones with the same index. Operands may also come as one list.

    Examples:
        >>> import dparray
        >>> a = dparray.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> dparray.einsum("ij,jk->ik", a, a).tolist()
        [[7.0, 10.0], [15.0, 22.0]]
        >>> dparray.einsum("ii", a).item(), dparray.einsum("ij->j", a).tolist()
        (5.0, [4.0, 6.0])
        >>> dparray.einsum("...j,j", a, dparray.tensor([1.0, -1.0])).tolist()
        [-1.0, -1.0]
    """
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: subscripts must be a str, got {describe(subscripts)}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    tensors = [check_tensor(t, f"operands[{i}]", "einsum") for i, t in enumerate(operands)]
    if not tensors:
        raise ValueError("einsum: needs at least one operand")
    inputs, output = _parse(subscripts, [t.ndim for t in tensors])
    sizes = _sizes(subscripts, tensors, inputs)
    terms = [_prepare(t, labels, sizes) for t, labels in zip(tensors, inputs, strict=True)]
    terms = [_sum_unshared(t, labels, i, terms, output) for i, (t, labels) in enumerate(terms)]
    result, labels = terms[0]
    for i in range(1, len(terms)):
        later = {label for _, rest in terms[i + 1:] for label in rest}
        result, labels = _contract(result, labels, *terms[i], later | set(output))
    return _arrange(result, labels, output)


def _parse(subscripts: str, ndims: list[int]) -> tuple[list[Labels], Labels]:
    """The index labels of each operand and of the output, ``...`` spelled out as one label
    per broadcast axis (numbered from the right, so shorter ones line up at the end)."""
    text = subscripts.replace(" ", "")
    left, arrow, right = text.partition("->")
    terms = left.split(",")
    if len(terms) != len(ndims):
        raise ValueError(
            f"einsum: subscripts {subscripts!r} name {len(terms)} operands, got {len(ndims)}"
        )
    inputs = []
    broadcast = 0
    for i, (term, ndim) in enumerate(zip(terms, ndims, strict=True)):
        letters = _letters(term, subscripts)
        named = sum(1 for label in letters if label != _ELLIPSIS)
        if _ELLIPSIS in letters:
            extra = ndim - named
            if extra < 0:
                raise ValueError(
                    f"einsum: operand {i} has {ndim} dimensions, fewer than the {named} "
                    f"indices of {term!r}"
                )
            at = letters.index(_ELLIPSIS)
            letters[at:at + 1] = [f"...{extra - j}" for j in range(extra)]
            broadcast = max(broadcast, extra)
        elif named != ndim:
            raise ValueError(
                f"einsum: operand {i} has {ndim} dimensions but {term!r} names {named}"
            )
        inputs.append(letters)
    spread = [f"...{broadcast - j}" for j in range(broadcast)]
    if not arrow:
        counts = [label for labels in inputs for label in labels if label in _LETTERS]
        return inputs, spread + sorted(label for label in set(counts) if counts.count(label) == 1)
    output = _letters(right, subscripts)
    if _ELLIPSIS in output:  # without it, the '...' axes are summed over, as in PyTorch
        at = output.index(_ELLIPSIS)
        output[at:at + 1] = spread
    known = {label for labels in inputs for label in labels}
    for label in output:
        if label not in known:
            raise ValueError(f"einsum: output index {label!r} of {subscripts!r} is in no operand")
        if output.count(label) > 1:
            raise ValueError(f"einsum: output index {label!r} of {subscripts!r} is repeated")
    return inputs, output


def _letters(term: str, subscripts: str) -> Labels:
    """The labels of one term: letters, and ``...`` at most once."""
    if term.count(_ELLIPSIS) > 1:
        raise ValueError(f"einsum: {term!r} in {subscripts!r} has more than one '...'")
    labels: Labels = []
    for piece_number, piece in enumerate(term.split(_ELLIPSIS)):
        if piece_number:
            labels.append(_ELLIPSIS)
        for char in piece:
            if char not in _LETTERS:
                raise ValueError(
                    f"einsum: {subscripts!r} has {char!r}; indices are letters, with '...', "
                    "',' and '->' between them"
                )
            labels.append(char)
    return labels


def _sizes(subscripts: str, tensors: list[Tensor], inputs: list[Labels]) -> dict[str, int]:
    """The size of every index; a size-1 axis broadcasts, other sizes must agree."""
    sizes: dict[str, int] = {}
    for i, (t, labels) in enumerate(zip(tensors, inputs, strict=True)):
        mine: dict[str, int] = {}
        for label, n in zip(labels, t.shape, strict=True):
            if mine.setdefault(label, n) != n:
                raise ValueError(
                    f"einsum: index {label!r} is repeated in operand {i} over axes of sizes "
                    f"{mine[label]} and {n}"
                )
            known = sizes.get(label, 1)
            if n != known and 1 not in (n, known):
                raise ValueError(
                    f"einsum: index {_shown(label)} of {subscripts!r} has size {known} in one "
                    f"operand and {n} in operand {i}"
                )
            sizes[label] = max(known, n) if n and known else 0
    return sizes


def _prepare(t: Tensor, labels: Labels, sizes: dict[str, int]) -> tuple[Tensor, Labels]:
    """One operand with its repeated indices reduced to diagonals and its size-1 axes
    broadcast to their index's size."""
    labels = list(labels)
    while len(set(labels)) < len(labels):
        label = next(label for label in labels if labels.count(label) > 1)
        first = labels.index(label)
        second = labels.index(label, first + 1)
        t = diagonal(t, 0, first, second)  # the diagonal becomes the last axis
        labels = [x for i, x in enumerate(labels) if i not in (first, second)] + [label]
    target = tuple(sizes[label] for label in labels)
    if t.shape != target:
        t = broadcast_to(t, target)
    return t, labels


def _sum_unshared(t: Tensor, labels: Labels, index: int,
                  terms: list[tuple[Tensor, Labels]], output: Labels) -> tuple[Tensor, Labels]:
    """Sum over the indices of one operand that no other operand and not the output has."""
    others = {label for i, (_, rest) in enumerate(terms) if i != index for label in rest}
    alone = [a for a, label in enumerate(labels) if label not in others and label not in output]
    if not alone:
        return t, labels
    return _sum(t, axis=tuple(alone)), [x for a, x in enumerate(labels) if a not in alone]


def _contract(a: Tensor, a_labels: Labels, b: Tensor, b_labels: Labels,
              needed: set[str]) -> tuple[Tensor, Labels]:
    """``a`` and ``b`` combined into one operand with one batched matmul: shared indices that
    are ``needed`` later are batch axes, the other shared ones are summed over."""
    batch = [x for x in a_labels if x in b_labels and x in needed]
    summed = [x for x in a_labels if x in b_labels and x not in needed]
    left = [x for x in a_labels if x not in b_labels]
    right = [x for x in b_labels if x not in a_labels]
    sizes = dict(zip(a_labels, a.shape, strict=True)) | dict(zip(b_labels, b.shape, strict=True))
    a3 = _grouped(a, a_labels, [batch, left, summed], sizes)
    b3 = _grouped(b, b_labels, [batch, summed, right], sizes)
    product = matmul(a3, b3)
    labels = batch + left + right
    return reshape(product, tuple(sizes[x] for x in labels)), labels


def _grouped(t: Tensor, labels: Labels, groups: list[Labels],
             sizes: dict[str, int]) -> Tensor:
    """``t`` with its axes ordered as ``groups`` and each group merged into one axis."""
    order = [labels.index(x) for group in groups for x in group]
    if order != list(range(len(order))):
        t = permute(t, order)
    return reshape(t, tuple(math.prod(sizes[x] for x in group) for group in groups))


def _arrange(t: Tensor, labels: Labels, output: Labels) -> Tensor:
    """The last operand with its axes in the output's order."""
    order = [labels.index(x) for x in output]
    return t if order == list(range(len(order))) else permute(t, order)


def _shown(label: str) -> str:
    return "'...'" if label.startswith(_ELLIPSIS) else repr(label)
