"""MKL's matrix products against NumPy's OpenBLAS, one training step at a time, in one process.

    python bench/compare_blas.py [W1 W3 ...]      (every workload when none is named)

Needs the ``mkl`` extra (``pip install "dparray[mkl]"``). For each workload it builds the
model once and alternates blocks of steps, the products through MKL in one block and through
OpenBLAS in the next, eight times, so that both see the same machine; it prints the median
step of each and their ratio. (Two separate processes would compare the machine's moods as
much as the libraries.)
"""

from __future__ import annotations

import statistics
import sys
import time

from dparray.backends import _mkl

import dparray as dp
from dparray.cli.workloads import WORKLOADS, dparray_step

ROUNDS = 8
NEVER = 1 << 62  # a product size no step reaches: every product goes to OpenBLAS


def compare(name: str) -> tuple[float, float]:
    """Median seconds of a step of workload ``name`` with MKL's products and with OpenBLAS's."""
    workload = WORKLOADS[name]
    dp.manual_seed(0)
    model = workload.build()
    x, y = workload.batch()
    step = dparray_step(workload, model, x, y)
    for _ in range(3):
        step()
    per_block = 40 if name == "W2" else 4
    times: dict[int, list[float]] = {_mkl.SMALLEST: [], NEVER: []}
    threshold, choice = _mkl.SMALLEST, _mkl.makes_products()
    _mkl._choice = (True, "MKL, whichever won the race")  # MKL's block is MKL's
    try:
        for _ in range(ROUNDS):
            for smallest, samples in times.items():
                _mkl.SMALLEST = smallest
                step()  # the first step after a switch warms the other library's threads
                for _ in range(per_block):
                    start = time.perf_counter()
                    step()
                    samples.append(time.perf_counter() - start)
    finally:
        _mkl.SMALLEST, _mkl._choice = threshold, choice
    return statistics.median(times[threshold]), statistics.median(times[NEVER])


def main(names: list[str]) -> None:
    if _mkl.status()[0] is None:
        raise SystemExit(f"MKL is not in use: {_mkl.status()[1]}")
    print(f"matrix products: {_mkl.makes_products()[1]}")
    for name in names or list(WORKLOADS):
        mkl, openblas = compare(name)
        print(f"{name}: MKL {mkl * 1e3:8.2f} ms   OpenBLAS {openblas * 1e3:8.2f} ms   "
              f"ratio {mkl / openblas:.3f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
