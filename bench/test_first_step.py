"""The first training step of a new process, each workload in a fresh interpreter
(``first_step.py``); bench/report.py prints it against a warm step (goal: <= 2x)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dparray.cli.workloads import WORKLOADS


@pytest.mark.parametrize("name", list(WORKLOADS))
@pytest.mark.benchmark(group="first-step")
def test_first_step(benchmark, name):
    def fresh_process() -> dict[str, float]:
        result = subprocess.run([sys.executable, "-m", "bench.first_step", name],
                                capture_output=True, text=True, check=True, timeout=300)
        return json.loads(result.stdout.strip().splitlines()[-1])

    times = benchmark.pedantic(fresh_process, rounds=1, iterations=1)
    benchmark.extra_info.update(first_step=name, **times)
