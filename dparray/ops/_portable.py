"""Array-API functions that only recent versions of the standard have, with portable fallbacks.

``cumulative_prod`` (2024.12) and ``take_along_axis`` (2024.12) are used where the namespace
has them -- array_api_strict and array-api-compat's NumPy and CuPy do -- and built from older
functions where it does not. ``running`` is the loop that the scans the standard lacks
(cumulative max, min, log-sum-exp) are made of.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any


def running(xp: Any, x: Any, combine: Callable[[Any, Any], Any]) -> Any:
    """The inclusive scan of ``x`` along axis 0: ``out[i] = combine(out[i - 1], x[i])``.

    One step per position, each a vectorised op over the other axes: ``n`` Python-level steps
    for an axis of length ``n`` (cheap for the sequence lengths of models, slow for millions).
    """
    if x.shape[0] == 0:
        return x
    out = [x[0, ...]]
    for i in range(1, x.shape[0]):
        out.append(combine(out[-1], x[i, ...]))
    return xp.stack(out)


def cumulative_prod(xp: Any, x: Any, axis: int) -> Any:
    """The running product of ``x`` along ``axis``."""
    function = getattr(xp, "cumulative_prod", None)
    if function is not None:
        return function(x, axis=axis)
    moved = xp.moveaxis(x, axis, 0)
    return xp.moveaxis(running(xp, moved, lambda a, b: a * b), 0, axis)


def take_along_axis(xp: Any, x: Any, indices: Any, axis: int) -> Any:
    """``x`` picked at ``indices`` along ``axis`` (``indices`` has ``x``'s shape but along
    ``axis``), like NumPy's ``take_along_axis``."""
    function = getattr(xp, "take_along_axis", None)
    if function is not None:
        return function(x, indices, axis=axis)
    moved = xp.moveaxis(x, axis, -1)
    moved_indices = xp.moveaxis(indices, axis, -1)
    rows = math.prod(moved.shape[:-1])
    length, picks = moved.shape[-1], moved_indices.shape[-1]
    starts = xp.reshape(xp.arange(rows, dtype=indices.dtype) * length, (rows, 1))
    flat = xp.reshape(xp.reshape(moved_indices, (rows, picks)) + starts, (-1,))
    picked = xp.take(xp.reshape(moved, (-1,)), flat)
    return xp.moveaxis(xp.reshape(picked, moved_indices.shape), -1, axis)


def clip(xp: Any, x: Any, low: float | None, high: float | None) -> Any:
    """``xp.clip(x, low, high)``; for a dtype whose ``clip`` the namespace refuses (NumPy's
    bfloat16, from ml_dtypes, has no clip loop) the same through ``maximum`` and ``minimum``,
    which keep NaN and give ``high`` everywhere when ``low > high``, as ``clip`` does."""
    try:
        return xp.clip(x, low, high)
    except TypeError:
        pass
    out = x if low is None else xp.maximum(x, low)
    return out if high is None else xp.minimum(out, high)
