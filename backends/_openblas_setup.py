"""How long OpenBLAS's idle helper threads busy-wait, set before NumPy loads OpenBLAS.

After each multi-threaded call, OpenBLAS's helper threads spin for ``2**28`` cycles (about
0.1 s) before they sleep: its ``THREAD_TIMEOUT``. In a training step the next matrix product
is a few milliseconds away, so the helpers never sleep, and they hold a core while the step's
elementwise work runs: a compiled loop launched right after a product waits for that core
before its second thread can start. Unless the user set ``OPENBLAS_THREAD_TIMEOUT``, dparray's
backends set it to ``SPIN_EXPONENT`` (``2**12`` cycles, a microsecond or two: the helpers
sleep as soon as a product ends) when NumPy was not loaded before dparray was imported.

Why so short: with ``2**20`` cycles (a few tenths of a millisecond, the previous setting), a
compiled channel swap launched right after a convolution's product took 415-691 us against
11-17 us with ``2**4`` to ``2**12``, and the product itself was no faster for the spin (600 us
either way; 2-core AMD EPYC with AVX-512, OpenBLAS 0.3.31). Over the twelve benchmark
workloads' steps, ``2**12`` against ``2**20`` (one process per setting, alternated twice;
medians of 8 steps): ResNet-18 -8 and -16%, the GPT -6 and -12%, the convnet W4 -9 and -16%,
the others between -12% and +3% (the LSTM language model +6 and -2%); ``2**6`` and ``2**16``
did no better. OpenBLAS reads the
variable once, as it loads: when NumPy came first, nothing changes; set the variable in the
environment then. Being an environment variable, it also reaches the processes started
afterwards.
"""

from __future__ import annotations

import os
import sys

VARIABLE = "OPENBLAS_THREAD_TIMEOUT"
SPIN_EXPONENT = "12"


set_here = False  # whether this process set the variable (rather than the user)


def shorten_spin() -> None:
    """Set ``OPENBLAS_THREAD_TIMEOUT`` unless the user did or NumPy is loaded already."""
    global set_here
    if "numpy" not in sys.modules and VARIABLE not in os.environ:
        os.environ[VARIABLE] = SPIN_EXPONENT
        set_here = True
