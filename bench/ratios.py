"""A quick look at workloads against PyTorch: dparray's unwrapped step and PyTorch's (in its
own process, ``torch_process.py``), alternated in one loop with the table's timing settings
(``timing.py``), medians and their ratio.

    python -m bench.ratios [W7 W8 ...] [--rounds N] [--busy]

``--busy`` starts a second process that spins on one core while the steps run (the "one core
busy" condition of ``make bench``). The full table, with every DataParallel configuration and
peak memory, is ``make bench``'s.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time

import dparray as dp
from dparray.cli.workloads import seeded_step

from . import torch_process
from .busy_core import one_core_busy
from .timing import interleaved


def measure(name: str, rounds: int | None) -> dict[str, float]:
    step, x, y = seeded_step(name)
    start = time.perf_counter()
    step()
    first = time.perf_counter() - start
    steps = {"dparray": step, "pytorch": torch_process.TorchStep(name, x, y)}
    try:
        medians = interleaved(name, steps, rounds)
    finally:
        steps["pytorch"].close()  # type: ignore[attr-defined]
    return {**medians, "first": first}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=[f"W{i}" for i in range(7, 13)])
    parser.add_argument("--rounds", type=int, default=None,
                        help="timed rounds (default: the table's number for the workload)")
    parser.add_argument("--busy", action="store_true")
    arguments = parser.parse_args()
    products = dp.backend.describe(dp.get_backend("numpy")).get("matrix products", "?")
    print(f"matrix products: {products}; one core busy: {arguments.busy}")
    ratios = []
    with one_core_busy() if arguments.busy else contextlib.nullcontext():
        for name in arguments.names:
            m = measure(name, arguments.rounds)
            ratio = m["dparray"] / m["pytorch"]
            ratios.append(ratio)
            print(f"{name:4} dparray {m['dparray'] * 1e3:8.1f} ms  PyTorch "
                  f"{m['pytorch'] * 1e3:8.1f} ms  ratio {ratio:5.2f}x  first step "
                  f"{m['first'] * 1e3:7.0f} ms ({m['first'] / m['dparray']:4.1f}x a warm one)",
                  flush=True)
    print(f"geometric mean of the ratios: {statistics.geometric_mean(ratios):.2f}x")


if __name__ == "__main__":
    main()
