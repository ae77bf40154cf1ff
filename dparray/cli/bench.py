"""A quick run of the DataParallel workloads (W1-W6): one Adam step of each, unwrapped and with
DataParallel at 2 and at every core's worth of workers, timed round-robin in one process;
prints the medians and the ratios. Well under a minute; ``make bench`` runs the full suite."""

from __future__ import annotations

import copy

import dparray as dp
from dparray._system import available_cores
from dparray.cli.workloads import WORKLOADS, dparray_step, interleaved_medians

COOLDOWN = {"W2": 0.0}  # the rest pause 0.15 s between steps: see interleaved_medians


def run(names: list[str], rounds: int) -> int:
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown or rounds < 1:
        raise ValueError(f"bench: workloads are {', '.join(WORKLOADS)} and rounds >= 1; got "
                         f"{', '.join(names)} and {rounds}")
    workers = sorted({2, max(2, available_cores())})
    print("one Adam step, medians of interleaved runs (ms); ratios against unwrapped")
    print(f"  {'':4}{'unwrapped':>11}" + "".join(f"{f'DP {w}':>10}{'ratio':>7}" for w in workers))
    for name in names:
        medians = measure(name, workers, rounds)
        cells = "".join(f"{medians[w] * 1e3:10.2f}{medians[w] / medians[0]:6.2f}x"
                        for w in workers)
        print(f"  {name:4}{medians[0] * 1e3:11.2f}{cells}   {WORKLOADS[name].description}")
    return 0


def measure(name: str, workers: list[int], rounds: int) -> dict[int, float]:
    """Median seconds per step: key 0 is the unwrapped module, others the worker counts."""
    workload = WORKLOADS[name]
    dp.manual_seed(0)
    module = workload.build()
    x, y = workload.batch()
    steps = {0: dparray_step(workload, copy.deepcopy(module), x, y)}
    for count in workers:
        wrapped = dp.DataParallel(copy.deepcopy(module), count)
        steps[count] = dparray_step(workload, wrapped, x, y)
    return interleaved_medians(steps, rounds, warmup=2, cooldown=COOLDOWN.get(name, 0.15))
