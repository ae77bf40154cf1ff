"""The first training step of a new process against a warm one, for one workload.

    python -m bench.first_step W7        # prints {"first": s, "warm": s, "import": s} as JSON

Run in a fresh interpreter (``bench/test_first_step.py`` starts one per workload), so the first
step pays what a user's first step pays: loading the compiled kernels from Numba's cache (or
compiling them), BLAS's thread start-up, the first allocations. ``warm`` is the median of the
next five steps; ``import`` the seconds ``import dparray`` took before it all.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

WARM_STEPS = 5


def main(name: str) -> None:
    start = time.perf_counter()
    from dparray.cli.workloads import seeded_step

    imported = time.perf_counter() - start
    step, _, _ = seeded_step(name)
    start = time.perf_counter()
    step()
    first = time.perf_counter() - start
    warm = []
    for _ in range(WARM_STEPS):
        start = time.perf_counter()
        step()
        warm.append(time.perf_counter() - start)
    print(json.dumps({"first": first, "warm": statistics.median(warm), "import": imported}))


if __name__ == "__main__":
    main(sys.argv[1])
