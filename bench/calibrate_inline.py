"""Calibrate DataParallel's inline rule (``dparray.parallel.ELEMENTS_PER_OP``).

    python -m bench.calibrate_inline

For stacks of 8 x (Linear(w, w) + Tanh) at several widths and batches, times one training step
(forward, backward, Adam) with 2 workers on threads against one call on the whole batch (what
"inline" does for such a module), alternating the two with a pause between steps, and prints
the elements each op of a chunk puts out beside the time of threads over the whole-batch call.
Threads should be chosen where that ratio is below 1.
"""

from __future__ import annotations

import copy
import statistics
import time

import numpy as np

import dparray as dp
from dparray import nn, optim
from dparray.nn import functional as F

WORKERS = 2
COOLDOWN = 0.15  # seconds between steps: see bench.workloads.interleaved_medians


def _step(model, x, y):
    opt = optim.Adam(model.parameters(), lr=1e-4)

    def step():
        opt.step(F.mse_loss(model(x), y).backward())

    return step


def main() -> None:
    print(f"{'width':>6}{'batch':>7}{'elements/op':>13}{'threads/whole':>15}")
    for width in (32, 64, 128, 256):
        for batch in (32, 128, 512, 2048):
            dp.manual_seed(0)
            module = nn.Sequential(*[m for _ in range(8) for m in (nn.Linear(width, width),
                                                                   nn.Tanh())])
            rng = np.random.default_rng(0)
            x = dp.tensor(rng.standard_normal((batch, width)).astype(np.float32))
            y = dp.tensor(rng.standard_normal((batch, width)).astype(np.float32))
            threads = _step(dp.DataParallel(copy.deepcopy(module), WORKERS, execution="threads"),
                            x, y)
            whole = _step(copy.deepcopy(module), x, y)
            times = {"threads": [], "whole": []}
            for _ in range(3):  # warm up: the pool, the allocator, BLAS
                threads()
                whole()
            rounds = max(9, 2000 // batch)
            for _ in range(rounds):
                for name, step in (("threads", threads), ("whole", whole)):
                    time.sleep(COOLDOWN)
                    start = time.perf_counter()
                    step()
                    times[name].append(time.perf_counter() - start)
            elements = batch // WORKERS * width  # every Linear and Tanh of a chunk puts out this
            ratio = statistics.median(times["threads"]) / statistics.median(times["whole"])
            print(f"{width:6d}{batch:7d}{elements:13d}{ratio:15.2f}")


if __name__ == "__main__":
    main()
