"""A language model's loss over its vocabulary, forward and backward: log-softmax with NLL (as
PyTorch's word-language-model example computes it) and cross-entropy, over 700 x 8,500
float32 logits (35 tokens x batch 20, an 8,500-word vocabulary), dparray against PyTorch.

    python -m bench.vocabulary_loss        # medians (ms) of alternated processes, one library each

Each library runs in a process of its own, the processes alternate ``PROCESSES`` times
(``alternated.py``), and each reports the median of 20 timed calls after 3 untimed ones; the
table gives the median of those.
"""

from __future__ import annotations

from typing import Any

from .alternated import compare, median_ms

ROWS, CLASSES = 700, 8500
PROCESSES = 5


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

    return {"log_softmax + nll_loss": median_ms(nll), "cross_entropy": median_ms(cross_entropy)}


def main() -> None:
    compare(__spec__.name, measure, PROCESSES,
            f"{ROWS} x {CLASSES} float32 logits, forward and backward")


if __name__ == "__main__":
    main()
