"""``var_mean`` and ``std_mean``: PyTorch's pairs of a spread and the mean over the same axes.

Each is the two reductions ``var`` (or ``std``) and ``mean`` side by side, so both members of
the pair are differentiable; ``correction`` and ``unbiased`` mean what they mean for ``var``
(1 by default, as in PyTorch).
"""

from __future__ import annotations

from typing import Any

from dparray.ops.reduce import mean, std, var
from dparray.tensor import Tensor

__all__ = [
    "std_mean",
    "var_mean",
]


def var_mean(x: Tensor, axis: Any = None, correction: float | bool | None = None,
             keepdims: bool = False, *, unbiased: bool | None = None) -> tuple[Tensor, Tensor]:
    """``(var(x), mean(x))`` over ``axis``, as PyTorch's ``torch.var_mean``.

    Examples:
        >>> import dparray
        >>> v, m = dparray.var_mean(dparray.tensor([1.0, 2.0, 6.0]))
        >>> v.item(), m.item()
        (7.0, 3.0)
    """
    return (var(x, axis, correction, keepdims, unbiased=unbiased),
            mean(x, axis=axis, keepdims=keepdims))


def std_mean(x: Tensor, axis: Any = None, correction: float | bool | None = None,
             keepdims: bool = False, *, unbiased: bool | None = None) -> tuple[Tensor, Tensor]:
    """``(std(x), mean(x))`` over ``axis``, as PyTorch's ``torch.std_mean``.

    Examples:
        >>> import dparray
        >>> s, m = dparray.std_mean(dparray.tensor([[1.0, 3.0], [2.0, 6.0]]), axis=1)
        >>> [round(v, 4) for v in s.tolist()], m.tolist()
        ([1.4142, 2.8284], [2.0, 4.0])
    """
    return (std(x, axis, correction, keepdims, unbiased=unbiased),
            mean(x, axis=axis, keepdims=keepdims))
