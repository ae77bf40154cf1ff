"""ELU, SELU and CELU on NumPy (one reference, ``dparray.ops.activations.Elu``): the
reference's arithmetic in compiled passes.

The reference's ``expm1`` is libm's, one element at a time, on CPUs without AVX-512 (float32:
11 ns an element on an AVX2 EPYC), and it takes seven NumPy passes forward and six backward:
ELU forward and backward over 4096 x 512 float32 took 72-74 ms, against PyTorch's 6 (``python
-m bench.activations``). Here forward is one compiled pass; backward is one for the negative
side, NumPy's ``exp`` of it sliced over the cores (``_core_split``), and one more.

Float64 takes libm's ``expm1`` inside the loop, so values are the reference's to the bit where
NumPy's ``expm1`` is libm's (CPUs without AVX-512; with it, NumPy runs its own, accurate to 4
ulps, and the two differ by those ulps).
Float32 takes ``expm1`` computed in float64 and rounded once (``_numba_loops.exp_minus_one``),
within an ulp of libm's float32 ``expm1``: a float32 value is within an ulp or two of the
reference's (docs/decisions.md). Gradients need no ``expm1`` and are the reference's to the bit
in both types. The kernel saves what the reference saves, so ``create_graph`` replays it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dparray.ops.activations import Elu

from ._core_split import exp
from ._numba_setup import loops as _loops
from ._piecewise_kernels import OnePassKernel


class EluKernel(OnePassKernel, Elu):
    """See the module docstring."""

    forward_loop = "elu"

    def constants(self) -> tuple[float, ...]:
        return self.input_scale, self.scale, self.scale * self.alpha, 1.0

    def backward_constants(self) -> tuple[float, ...]:
        return self.input_scale, self.scale, self.scale * self.alpha * self.input_scale, 1.0

    def backward_pass(self, grad: Any, x: Any, constants: tuple[Any, ...], out: Any) -> None:
        input_scale, scale, slope, one = constants
        e = np.empty_like(x)
        loops = _loops()
        loops.elu_negative_side(x, input_scale, one, e)
        exp(e, out=e)
        loops.elu_backward(grad, x, e, scale, slope, one, out)
