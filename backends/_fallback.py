"""The base of the kernel classes: run the reference for the calls a kernel does not cover.

A kernel class lists ``Fallback`` before the reference it replaces (``class GeluKernel(Fallback,
Gelu)``), so ``super()`` inside ``Fallback`` is the reference. A kernel's ``forward`` calls
``reference_forward`` for an input it does not handle (a dtype, a layout); the node remembers
it, and its ``backward`` then calls ``reference_backward``, so the pair always matches.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dparray.autograd import Function


class Fallback(Function):
    """See the module docstring."""

    fallback = False

    def reference_forward(self, *arrays: Any) -> Any:
        self.fallback = True
        return super().forward(*arrays)

    def reference_backward(self, grad: Any) -> Any:
        return super().backward(grad)


class LastAxisFallback(Fallback):
    """A kernel of an op along ``self.axis`` that covers only the last axis of a non-empty
    array (the row kernels of softmax and log-softmax)."""

    axis: int | tuple[()]

    def along_last_axis(self, x: Any) -> bool:
        """Whether the op runs along the last axis of ``x``, which has rows to work on; if so,
        ``self.axis`` is made non-negative."""
        axis = self.axis
        if isinstance(axis, int) and axis < 0:
            axis += x.ndim
        if x.ndim == 0 or axis != x.ndim - 1 or x.shape[-1] == 0:
            return False
        self.axis = axis
        return True


FLOAT_CODES = ("f", "d")  # float32's and float64's one-letter codes, on NumPy and CuPy alike


def floating(*arrays: Any) -> bool:
    """Whether the arrays given (None skipped) share one dtype, float32 or float64: the calls
    the compiled kernels of NumPy and CuPy cover."""
    dtype = None
    for array in arrays:
        if array is None:
            continue
        if dtype is None:
            dtype = array.dtype
        elif array.dtype != dtype:
            return False
    # the code, not dtype.name: NumPy computes the name in Python (5 us, on every kernel call)
    return dtype is not None and dtype.char in FLOAT_CODES


def finite_in(kind: Any, *values: float) -> bool:
    """Whether each constant stays finite in the arrays' type ``kind`` (``1e300`` does not
    in float32): the compiled loops take their constants in it."""
    with np.errstate(over="ignore"):
        return all(math.isfinite(kind(value)) for value in values)
