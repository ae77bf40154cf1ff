"""``cdist``: the p-norm distance between every row of one set and every row of another, as
PyTorch's ``torch.cdist``; and ``p_norm``, the vector norm that it, ``pairwise_distance`` and
``pdist`` (``dparray.nn.distance``) share.

Both are composed of differentiable ops, so second derivatives come from the engine. A norm of
0 has no derivative; there the gradient is 0, as PyTorch's norms give it (``sqrt`` alone would
give ``0 * inf = NaN``), so two equal rows get a finite gradient, not NaN.
"""

from __future__ import annotations

import math
from typing import Any

from dparray._checks import check_choice, check_number, check_tensor
from dparray.ops._autocast import autocast_op
from dparray.ops._util import broadcast_shapes
from dparray.ops.elementwise import abs as absolute
from dparray.ops.elementwise import astype, sqrt, where
from dparray.ops.reduce import max as largest
from dparray.ops.reduce import sum as total
from dparray.ops.shape import unsqueeze
from dparray.tensor import Tensor

__all__ = [
    "cdist",
]

_COMPUTE_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                  "donot_use_mm_for_euclid_dist")


def check_p(p: Any, where: str) -> float:
    """A norm's ``p``: a number at least 0, or ``inf``."""
    value = check_number(p, "p", where, finite=False)
    if value < 0:
        raise ValueError(f"{where}: p must be at least 0 (or inf), got {p!r}")
    return value


def p_norm(x: Tensor, p: float, axis: int, keepdims: bool = False) -> Tensor:
    """``(sum |x| ** p) ** (1 / p)`` along ``axis`` for ``p > 0``; the largest ``|x|`` for
    ``p = inf``; the count of non-zero entries for ``p = 0`` (a constant, as its gradient is
    0). The gradient is 0 where the norm is 0 and, for ``p < 1``, at zero entries, as in
    PyTorch; NaN stays NaN. ``p`` is checked by the caller (``check_p``)."""
    if p == 0:
        return total(astype(x != 0, x.dtype), axis=axis, keepdims=keepdims)
    magnitude = absolute(x)
    if p == 1:
        return total(magnitude, axis=axis, keepdims=keepdims)
    if math.isinf(p):
        if x.shape[axis] == 0:  # no entries: a norm of 0, as PyTorch's
            return total(magnitude, axis=axis, keepdims=keepdims)
        return largest(magnitude, axis=axis, keepdims=keepdims)
    if p == 2:
        powered = x * x
    elif p < 1:  # the slope of |x| ** p is infinite at 0: keep 0 out of the power
        zero = magnitude == 0
        powered = where(zero, 0.0, where(zero, 1.0, magnitude) ** p)
    else:
        powered = magnitude**p
    summed = total(powered, axis=axis, keepdims=keepdims)
    zero = summed == 0  # the root's slope is infinite at 0: keep 0 out of the root
    inside = where(zero, 1.0, summed)
    return where(zero, 0.0, sqrt(inside) if p == 2 else inside ** (1.0 / p))


@autocast_op("cdist")
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The ``p``-norm distance between each row of ``x1`` (``(..., P, M)``) and each row of
    ``x2`` (``(..., R, M)``): a ``(..., P, R)`` tensor, the leading (batch) axes broadcast,
    as PyTorch's ``torch.cdist``. ``p`` is at least 0 or ``inf``.

    ``compute_mode`` is accepted for PyTorch's code and ignored: every distance comes from the
    rows' differences (PyTorch's ``"donot_use_mm_for_euclid_dist"``), never from PyTorch's
    faster, less accurate matrix-product form for ``p = 2``, so the result may differ from
    PyTorch's in the last bits where PyTorch takes that form (more than 25 rows). The
    differences take ``P * R * M`` entries per batch. The gradient is finite everywhere: 0
    between equal rows, as in PyTorch.

    Examples:
        >>> import dparray
        >>> a = dparray.tensor([[0.0, 0.0], [1.0, 1.0]])
        >>> b = dparray.tensor([[3.0, 4.0]])
        >>> [[round(d, 4) for d in row] for row in dparray.cdist(a, b).tolist()]
        [[5.0], [3.6056]]
        >>> dparray.cdist(a, b, p=1).tolist()
        [[7.0], [5.0]]
    """
    op = "cdist"
    check_tensor(x1, "x1", op)
    check_tensor(x2, "x2", op)
    p = check_p(p, op)
    check_choice(compute_mode, "compute_mode", op, _COMPUTE_MODES)  # accepted, not used
    for name, x in (("x1", x1), ("x2", x2)):
        if x.ndim < 2:
            raise ValueError(f"{op}: {name} must have at least 2 dimensions (rows and "
                             f"columns), got shape {x.shape}")
        if not x.dtype.is_floating:
            raise TypeError(f"{op}: {name} must be floating, got {x.dtype.name}")
    if x1.shape[-1] != x2.shape[-1]:
        raise ValueError(f"{op}: x1 and x2 must have the same number of columns, got "
                         f"shapes {x1.shape} and {x2.shape}")
    broadcast_shapes(op, x1.shape[:-2], x2.shape[:-2])  # the batch axes, checked first
    differences = unsqueeze(x1, -2) - unsqueeze(x2, -3)  # (..., P, R, M)
    return p_norm(differences, p, axis=-1)
