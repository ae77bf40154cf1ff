"""W1's training step under bfloat16 and float16 autocast against its float32 step, timed
round-robin in one loop (``make bench``; ``bench/report.py`` prints the ratios), and the
agreement check that runs untimed in ``make test``: the step under autocast trains the same
model to nearly the same loss.

The goal (W1 under bfloat16 autocast <= 0.4x its float32 step) needs a CPU that multiplies
bfloat16 natively (AMX); the report prints ``dparray info``'s line saying whether this one does.
"""

from __future__ import annotations

import numpy as np
import pytest

import dparray as dp
from dparray.cli.workloads import WORKLOADS, interleaved_medians

try:  # run from the repository: bench/ is a package
    from bench.mixed_precision import _step
except ImportError:  # pragma: no cover - run from inside bench/
    from mixed_precision import _step

PRECISIONS = ("float32", "bfloat16", "float16")


def _steps():
    workload = WORKLOADS["W1"]
    dp.manual_seed(0)
    x, y = workload.batch()
    steps, models = {}, {}
    for precision in PRECISIONS:
        dp.manual_seed(0)
        models[precision] = workload.build()
        steps[precision] = _step(models[precision], x, y, precision)
    return steps, models


def test_w1_steps_under_autocast_agree():
    steps, models = _steps()
    for step in steps.values():
        for _ in range(2):
            step()
    first = [p.numpy() for p in models["float32"].parameters()]
    for precision in ("bfloat16", "float16"):
        for mine, reference in zip(models[precision].parameters(), first, strict=True):
            assert mine.dtype is dp.float32
            assert np.abs(mine.numpy() - reference).max() < 1e-3  # Adam's lr is 1e-4


@pytest.mark.benchmark(group="mixed precision")
def test_w1_autocast_ratios(benchmark):
    steps, _ = _steps()
    medians = benchmark.pedantic(lambda: interleaved_medians(steps, rounds=5, warmup=2),
                                 rounds=1, iterations=1)
    facts = dp.backend.describe(dp.get_backend("numpy"))
    benchmark.extra_info["mixed_precision"] = {
        **medians, "bfloat16 products": facts["bfloat16 products"]}
