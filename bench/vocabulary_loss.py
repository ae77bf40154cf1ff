"""A language model's loss over its vocabulary, forward and backward: log-softmax with NLL (as
PyTorch's word-language-model example computes it) and cross-entropy, over 700 x 8,500
float32 logits (35 tokens x batch 20, an 8,500-word vocabulary), dparray against PyTorch.

    python bench/vocabulary_loss.py        # medians (ms) of alternated processes, one library each

Each library runs in a process of its own (as ``torch_process.py`` explains, the two slow each
other down in one), the processes alternate ``PROCESSES`` times, and each reports the median
of ``STEPS`` timed calls after ``WARM_UP`` untimed ones; the table gives the median of those.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from typing import Any

ROWS, CLASSES = 700, 8500
PROCESSES, WARM_UP, STEPS = 5, 3, 20


def _time(call: Any) -> float:
    for _ in range(WARM_UP):
        call()
    times = []
    for _ in range(STEPS):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def measure(library: str) -> dict[str, float]:
    """Median milliseconds of each loss, forward and backward, in this process."""
    import numpy as np

    rng = np.random.default_rng(0)
    logits = rng.standard_normal((ROWS, CLASSES)).astype(np.float32)
    targets = rng.integers(0, CLASSES, ROWS)
    if library == "torch":
        import torch

        F: Any = torch.nn.functional
        x = torch.from_numpy(logits).requires_grad_()
        y = torch.from_numpy(targets)
    else:
        import dparray as dp
        from dparray.nn import functional as F

        x = dp.tensor(logits, requires_grad=True)
        y = dp.tensor(targets)

    def nll() -> None:
        F.nll_loss(F.log_softmax(x, dim=1), y).backward()

    def cross_entropy() -> None:
        F.cross_entropy(x, y).backward()

    return {"log_softmax + nll_loss": _time(nll), "cross_entropy": _time(cross_entropy)}


def main() -> None:
    results: dict[str, list[dict[str, float]]] = {"dparray": [], "torch": []}
    for _ in range(PROCESSES):
        for library in results:
            out = subprocess.run([sys.executable, __file__, "--library", library],
                                 capture_output=True, text=True, check=True).stdout
            results[library].append(json.loads(out))
    print(f"{ROWS} x {CLASSES} float32 logits, forward and backward, median ms of {PROCESSES} "
          "alternated processes each")
    for loss in results["dparray"][0]:
        ours = statistics.median(r[loss] for r in results["dparray"])
        theirs = statistics.median(r[loss] for r in results["torch"])
        print(f"  {loss:24} dparray {ours:6.1f}   PyTorch {theirs:6.1f}   "
              f"ratio {ours / theirs:.2f}x")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--library"]:
        print(json.dumps(measure(sys.argv[2])))
    else:
        main()
