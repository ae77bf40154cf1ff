"""DistributedDataParallel's all-reduce between 2 ranks: ``mpiexec -n 2 python -m
bench.allreduce``, launched from the suite so ``make bench`` includes it."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.mark.benchmark(group="allreduce")
def test_allreduce_two_ranks(benchmark, tmp_path):
    mpiexec = pathlib.Path(sys.executable).with_name("mpiexec")
    output = tmp_path / "allreduce.json"
    command = [str(mpiexec), "-n", "2", sys.executable, "-m", "bench.allreduce", "--json",
               str(output)]

    def run():
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True, timeout=600)

    benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info["allreduce"] = json.loads(output.read_text())
