"""The compiled conversions between float32 and bfloat16, one pass each way (Numba).

bfloat16 is the upper half of a float32: the same sign and exponent, 7 bits of mantissa
instead of 23. So float32 -> bfloat16 is an integer rounding of the bit pattern, to nearest
with ties to even: add ``0x7FFF`` plus the lowest kept bit, keep the upper 16 bits. That one
rule rounds subnormals, carries into the exponent (and past the largest finite value into
infinity) exactly as IEEE rounding does. A NaN would round to an infinity when only its low
mantissa bits are set, so it becomes the quiet NaN of its sign (``0x7FC0``), as ``ml_dtypes``
makes it. bfloat16 -> float32 is exact: the 16 bits shifted up.

The loops work on the bit patterns (``uint32`` in, ``uint16`` out and back), which NumPy and
Numba both handle natively, so no bfloat16 type is needed inside the loop. Every constant is a
``uint32``, so the arithmetic stays 32-bit and the loop vectorises (with Python ints Numba
widens to 64 bits), and the NaN case is a select rather than a branch.
"""

from __future__ import annotations

import numba
from numba import prange, uint16, uint32

jit = numba.njit(nogil=True, parallel=True, cache=True)

HALF = uint32(16)
ONE = uint32(1)
BELOW_HALF = uint32(0x7FFF)
SIGN = uint32(0x8000)
QUIET_NAN = uint32(0x7FC0)
ABSOLUTE = uint32(0x7FFFFFFF)
INFINITY = uint32(0x7F800000)


@jit
def to_bfloat16(bits, out):  # pragma: no cover - compiled
    """``out[i]``: the bfloat16 bits nearest to the float32 whose bits are ``bits[i]``."""
    for i in prange(bits.shape[0]):
        b = bits[i]
        rounded = uint16((b + BELOW_HALF + ((b >> HALF) & ONE)) >> HALF)
        nan = uint16(((b >> HALF) & SIGN) | QUIET_NAN)  # a NaN stays a NaN, of its sign
        out[i] = nan if (b & ABSOLUTE) > INFINITY else rounded


@jit
def from_bfloat16(bits, out):  # pragma: no cover - compiled
    """``out[i]``: the float32 bits of the bfloat16 whose bits are ``bits[i]`` (exact)."""
    for i in prange(bits.shape[0]):
        out[i] = uint32(bits[i]) << HALF
