"""Which library makes the NumPy backend's float32 and float64 matrix products when MKL is
installed: MKL or NumPy's OpenBLAS, decided by a race on this CPU, once per process.

Neither wins everywhere. On a 2-core AMD EPYC with AVX2 only, MKL made the training steps of
the benchmark workloads 11-17% faster than OpenBLAS; on a 2-core AMD EPYC with AVX-512,
OpenBLAS made every one faster, by 8-50% (``python bench/compare_blas.py``: the GPT W7 1.10x,
ResNet-18 W8 1.08x, the MNIST CNN W11 1.23x, the VAE W12 1.50x, the MLP W1 1.20x), its
float32 product of a convolution's shape (64 x 288 times 288 x 36864) taking 8.7 ms to MKL's
12.8. So the first product that MKL could make races the two libraries on two products of a
training step's shapes (``SHAPES``: a convolution's and a linear layer's, 40-60 ms in all),
and MKL keeps the products unless OpenBLAS was faster by more than ``MARGIN``: where they are
close MKL stays, since on a loaded machine its threads sleep where OpenBLAS's spin. The race
waits for Numba's start-up thread (``_numba_setup.warm_up_in_background``) to finish: while it
ran, a core was taken from whichever library ran, and the race went either way (OpenBLAS 3.4x
MKL's time in one process, MKL 3.3x OpenBLAS's in the next; 1.4-1.7x MKL's once it waits).

The low-precision products race likewise (``race_low_precision``, run by
``_low_precision.native``): where the CPU has the instructions for bfloat16 or float16, MKL's
native product against the float32 product of converted operands. On the AVX-512 EPYC above,
with AVX512-BF16, MKL's bfloat16 product of 2048^3 ran at 0.76x OpenBLAS's float32 one
(``python bench/mixed_precision.py``), so the instructions alone do not say it pays.

``DPARRAY_BLAS=mkl`` or ``DPARRAY_BLAS=openblas`` decides without a race. The two libraries
round differently (both to float32's or float64's accuracy); a program that must repeat bit
for bit across processes names one, so that a close race cannot go either way.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

SHAPES = ((64, 576, 4096), (512, 512, 512))  # (m, k, n): a convolution's, a linear layer's
ROUNDS = 3
MARGIN = 1.1  # OpenBLAS makes the products only when MKL took this many times as long
LOW_PRECISION_SHAPE = (512, 1024, 1024)  # (m, k, n) of the bfloat16/float16 race


def race(mkl_product: Callable[[Any, Any], Any], openblas_product: Callable[[Any, Any], Any]
         ) -> tuple[float, float]:
    """The seconds MKL and OpenBLAS take for the float32 products of ``SHAPES``: the best of
    ``ROUNDS`` rounds, run in turn after one untimed round each (which starts the libraries'
    threads)."""
    pairs = [(np.full((m, k), 0.5, np.float32), np.full((k, n), 0.25, np.float32))
             for m, k, n in SHAPES]  # (a product's time does not depend on normal values)
    return _best_of(mkl_product, openblas_product, pairs)


def _best_of(first: Callable[[Any, Any], Any], second: Callable[[Any, Any], Any],
             pairs: list[tuple[Any, Any]]) -> tuple[float, float]:
    """The best of ``ROUNDS`` timed rounds of each product over ``pairs``, run in turn after
    one untimed round each (which starts the libraries' threads)."""
    contenders = (first, second)
    best = [float("inf"), float("inf")]
    for contender in contenders:
        for a, b in pairs:
            contender(a, b)
    for _ in range(ROUNDS):
        for i, contender in enumerate(contenders):
            start = time.perf_counter()
            for a, b in pairs:
                contender(a, b)
            best[i] = min(best[i], time.perf_counter() - start)
    return best[0], best[1]


def race_low_precision(native_product: Callable[[Any, Any], Any],
                       float32_product: Callable[[Any, Any], Any], dtype: Any
                       ) -> tuple[float, float]:
    """The seconds MKL's native product of ``dtype`` operands and the float32 product of their
    converted copies take for ``LOW_PRECISION_SHAPE``, the best of ``ROUNDS`` as ``race``'s."""
    m, k, n = LOW_PRECISION_SHAPE
    a, b = np.full((m, k), 0.5, dtype), np.full((k, n), 0.25, dtype)
    return _best_of(native_product, float32_product, [(a, b)])


def verdict(mkl_seconds: float, openblas_seconds: float, mkl_name: str) -> tuple[bool, str]:
    """``(mkl, why)``: whether MKL makes the products after a race with these times, and a
    line saying which library does and why (``mkl_name`` names MKL and its threads)."""
    if mkl_seconds > MARGIN * openblas_seconds:
        return False, (f"OpenBLAS (NumPy's: {mkl_name} took {mkl_seconds / openblas_seconds:.2f}x "
                       f"its time on this CPU; DPARRAY_BLAS=mkl for MKL's)")
    return True, (f"{mkl_name}; OpenBLAS took {openblas_seconds / mkl_seconds:.2f}x its time on "
                  f"this CPU")
