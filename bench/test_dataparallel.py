"""DataParallel on workloads W1-W4 at 1, 2 and 4 workers: forward, backward, Adam step.

    make bench      # prints the ratio table (bench/report.py)

Every configuration of a workload is timed in one loop, round-robin, and the medians are stored
in the benchmark's extra_info: the unwrapped module with BLAS on every core and with BLAS on one
thread, DataParallel with 1, 2 and 4 workers (which split the cores for BLAS themselves), and
PyTorch with the same threads when it is installed.
"""

from __future__ import annotations

import copy

import pytest
from threadpoolctl import ThreadpoolController

import dparray as dp
from dparray.benchmarks import WORKLOADS, dparray_step, interleaved_medians, torch_step

ROUNDS = {"W1": 7, "W2": 60, "W3": 7, "W4": 7}
COOLDOWN = {"W1": 0.15, "W2": 0.0, "W3": 0.15, "W4": 0.15}  # W2's 64x64 products use 1 thread
WARMUP = 3  # the pools, the allocator, BLAS, and DataParallel's first ("probe") call


def _one_blas_thread(step):
    controller = ThreadpoolController()

    def limited():
        with controller.limit(limits=1, user_api="blas"):
            step()

    return limited


@pytest.mark.parametrize("name", list(WORKLOADS))
@pytest.mark.benchmark(group="dataparallel")
def test_dataparallel_workload(benchmark, name):
    workload = WORKLOADS[name]
    dp.manual_seed(0)
    module = workload.build()
    x, y = workload.batch()
    steps = {
        "unwrapped": dparray_step(workload, copy.deepcopy(module), x, y),
        "unwrapped_1_blas_thread": _one_blas_thread(
            dparray_step(workload, copy.deepcopy(module), x, y)),
    }
    for workers in (1, 2, 4):
        wrapped = dp.DataParallel(copy.deepcopy(module), workers)
        steps[f"dataparallel_{workers}"] = dparray_step(workload, wrapped, x, y)
    reference = torch_step(workload, x, y)
    if reference is not None:
        steps["pytorch"] = reference
    medians = {}

    def measure():
        medians.update(interleaved_medians(steps, ROUNDS[name], WARMUP, COOLDOWN[name]))

    benchmark.pedantic(measure, rounds=1, iterations=1)
    benchmark.extra_info.update(workload=name, description=workload.description, **medians)
