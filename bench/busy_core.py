"""The "one core busy" condition: another process spinning on one core while a benchmark runs,
as on a shared machine. PyTorch's OpenMP threads busy-wait for each other, so a lost core
stalls every parallel op; dparray's threads sleep between loops (``_openmp_setup``)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator

SPIN = "while True: pass"


@contextlib.contextmanager
def one_core_busy() -> Iterator[None]:
    """Within the block, a child Python process spins (one core's worth of work)."""
    spinner = subprocess.Popen([sys.executable, "-c", SPIN])
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait()
