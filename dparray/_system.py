"""Facts about the machine that several parts of dparray need."""

from __future__ import annotations

import os


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity on Linux, else all of them)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def core_share(workers: int) -> int:
    """The cores each of ``workers`` parallel workers gets: ``cores // workers``, at least 1."""
    return max(1, available_cores() // max(1, workers))
