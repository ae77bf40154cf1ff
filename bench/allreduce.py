"""All-reduce cost of DistributedDataParallel, run under mpiexec.

    mpiexec -n 2 python -m bench.allreduce [--json FILE]

The gradients of W1 (MLP 784-1024-1024-10: 6 tensors, about 1.9 M float32 parameters) and of
W2 (8 x Linear(64, 64): 16 small tensors) averaged across the ranks, bucketed (25 MB buckets)
and one call per parameter, against one training step of the workload (forward, backward,
Adam; the workload's batch split among the ranks). Medians of interleaved runs; rank 0 prints
the table (and writes it as JSON).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import dparray as dp
from dparray.cli.workloads import WORKLOADS
from dparray.distributed import (
    DistributedDataParallel,
    abort_on_error,
    barrier,
    rank,
    world_size,
)
from dparray.nn import functional as F

ROUNDS = 9


def measure(name: str, ranks: int) -> dict[str, float]:
    workload = WORKLOADS[name]
    dp.manual_seed(0)
    model = DistributedDataParallel(workload.build())
    opt = dp.optim.Adam(model.parameters(), lr=1e-4)
    x, y = workload.batch()
    rows = slice(0, x.shape[0] // ranks)
    x, y = x[rows], y[rows]
    loss_of = F.cross_entropy if workload.classify else F.mse_loss
    grads = loss_of(model(x), y).backward()

    def step():
        opt.step(model.backward(loss_of(model(x), y)))

    runs = {"step": step, "bucketed": lambda: model.reduce(grads),
            "per_parameter": lambda: model.reduce(grads, bucketed=False)}
    times: dict[str, list[float]] = {key: [] for key in runs}
    for round_number in range(ROUNDS + 2):
        for key, run in runs.items():
            barrier()
            start = time.perf_counter()
            run()
            barrier()
            if round_number >= 2:
                times[key].append(time.perf_counter() - start)
    medians = {key: statistics.median(values) for key, values in times.items()}
    medians["tensors"] = len(model.parameters())
    medians["parameters"] = sum(p.elem_count() for p in model.parameters())
    return medians


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    args = parser.parse_args()
    ranks = world_size()
    results = {name: measure(name, ranks) for name in ("W1", "W2")}
    if rank() != 0:
        return
    print(f"all-reduce of the gradients across {ranks} ranks, medians (ms)")
    print(f"  {'':4}{'tensors':>8}{'params':>10}{'step':>9}{'bucketed':>16}{'per tensor':>18}")
    for name, m in results.items():
        print(f"  {name:4}{m['tensors']:8d}{m['parameters']:10d}{m['step'] * 1e3:9.2f}"
              f"{m['bucketed'] * 1e3:9.2f} ({m['bucketed'] / m['step']:4.0%})"
              f"{m['per_parameter'] * 1e3:9.2f} ({m['per_parameter'] / m['step']:4.0%})")
    if args.json:
        with open(args.json, "w") as file:
            json.dump({"ranks": ranks, **results}, file)


if __name__ == "__main__":
    with abort_on_error():
        main()
