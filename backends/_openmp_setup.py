"""OpenMP's idle threads sleep at once, unless the user chose otherwise.

GNU OpenMP reads ``OMP_WAIT_POLICY`` once, when it loads. Its default lets a finished loop's
threads spin for the next one; in a training step the next op is usually a matrix product or
a loop of another library, whose threads need those cores. Both users of OpenMP here, Numba's
``omp`` threading layer (``_numba_setup``) and MKL's GNU threading layer (``_mkl``), call
``sleep_between_loops`` before they load it.
"""

from __future__ import annotations

import os


def sleep_between_loops() -> None:
    """``OMP_WAIT_POLICY=PASSIVE`` unless the user set it; effective if OpenMP is not loaded."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
