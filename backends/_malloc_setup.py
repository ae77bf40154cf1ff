"""How much freed memory glibc's ``malloc`` keeps for reuse, set when the NumPy backend is made.

A training step allocates arrays of the same sizes every step (activations, their gradients,
new parameter values) and frees them by the end of it. With glibc's defaults, blocks of
32 MiB or more always come from fresh ``mmap`` pages, and freed memory at the top of the heap
goes back to the operating system once it passes twice the largest block seen; in both cases
the next step's arrays land on new pages that the kernel must fault in and zero, thousands
each step (a transformer block of 32 x 128 tokens: about 4,400 page faults per step).
PyTorch users meet the same cost and swap in jemalloc or tcmalloc for it.

So, on glibc, dparray raises both limits through ``mallopt``: blocks below ``KEEP_BYTES``
(256 MiB; 32 MiB on glibc releases that cap the mmap threshold there) come from the heap, and
up to 256 MiB of freed memory at the top of each heap stays in the process for the next step
instead of going back to the system (per malloc arena: every thread that allocates, such as a
DataParallel worker, may have one of its own). The page faults go to zero and the benchmark
workloads' steps ran up to 20% faster (docs/decisions.md). The user's setting wins: with
``DPARRAY_MALLOC=system``, or glibc's own variables in the environment
(``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``, or ``GLIBC_TUNABLES`` naming
``glibc.malloc``), nothing changes. Other C libraries are left alone.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys

KEEP_BYTES = 256 << 20
CAPPED_MMAP_THRESHOLD = 32 << 20  # the most older glibc releases accept (HEAP_MAX_SIZE / 2)
M_TRIM_THRESHOLD = -1  # glibc's <malloc.h> parameter numbers
M_MMAP_THRESHOLD = -3
OPT_OUT = "DPARRAY_MALLOC"
USER_VARIABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")

set_here = False  # whether this process changed malloc's limits (rather than the user)


def keep_freed_memory() -> None:
    """Raise glibc's mmap and trim thresholds, once, unless the user chose."""
    global set_here
    if set_here or not _on_glibc() or _user_chose():
        return
    libc = ctypes.CDLL(None)
    # The mmap threshold first: setting either limit turns glibc's own adjustment of the mmap
    # threshold off for good, so the trim threshold is set only once the other has taken.
    # mallopt returns 1 on success; on a failure glibc keeps its previous value.
    if libc.mallopt(M_MMAP_THRESHOLD, KEEP_BYTES) or \
            libc.mallopt(M_MMAP_THRESHOLD, CAPPED_MMAP_THRESHOLD):
        libc.mallopt(M_TRIM_THRESHOLD, KEEP_BYTES)
        set_here = True


def _on_glibc() -> bool:
    return sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


def _user_chose() -> bool:
    return (os.environ.get(OPT_OUT, "").strip().lower() == "system"
            or any(name in os.environ for name in USER_VARIABLES)
            or "glibc.malloc" in os.environ.get("GLIBC_TUNABLES", ""))
