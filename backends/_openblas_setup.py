"""How long OpenBLAS's idle helper threads busy-wait, set before NumPy loads OpenBLAS.

After each multi-threaded call, OpenBLAS's helper threads spin for ``2**28`` cycles (about
0.1 s) before they sleep: its ``THREAD_TIMEOUT``. In a training step the next matrix product
is a few milliseconds away, so the helpers never sleep, and they hold a core while the step's
elementwise work runs: a compiled GELU over a million float32 values took 4.0 ms right after a
matrix product and 2.5 ms once the helper slept. Unless the user set
``OPENBLAS_THREAD_TIMEOUT``, dparray's backends set it to ``SPIN_EXPONENT`` (``2**20`` cycles,
under a millisecond: long enough to catch back-to-back products, short enough to give the core
back) when NumPy was not loaded before dparray was imported. OpenBLAS reads the variable once,
as it loads: when NumPy came first, nothing changes; set the variable in the environment then.
Being an environment variable, it also reaches the processes started afterwards.
"""

from __future__ import annotations

import os
import sys

VARIABLE = "OPENBLAS_THREAD_TIMEOUT"
SPIN_EXPONENT = "20"


set_here = False  # whether this process set the variable (rather than the user)


def shorten_spin() -> None:
    """Set ``OPENBLAS_THREAD_TIMEOUT`` unless the user did or NumPy is loaded already."""
    global set_here
    if "numpy" not in sys.modules and VARIABLE not in os.environ:
        os.environ[VARIABLE] = SPIN_EXPONENT
        set_here = True
