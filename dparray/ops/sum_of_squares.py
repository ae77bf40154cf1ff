"""The sum of an array's squares: the reference that ``optim.grad_norm`` (and with it
``clip_grad_norm``) runs on each gradient's array, and that a backend's kernel table may
replace (``"sum_of_squares"``) with a pass that makes no array of squares."""

from __future__ import annotations

from typing import Any

from dparray.backend import Backend
from dparray.kernels import reference
from dparray.ops._promote import wide_sum


@reference("sum_of_squares")
def sum_of_squares(backend: Backend, x: Any) -> Any:
    """The sum of the squares of every element of the array ``x``, a 0-d array of its dtype
    (bfloat16 and float16 accumulated in float32, as ``wide_sum``)."""
    return wide_sum(backend, x * x, None)
