"""How the workload tables time a step: rounds, warm-up, the pause before each timed step and
the untimed steps right before it. ``make bench``'s tables and ``python -m bench.ratios`` use
the same settings, so a quick look and the table measure the same thing."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from dparray.cli.workloads import interleaved_medians

ROUNDS = {"W2": 60, "CNN64": 30, "W8": 7, "W9": 7, "W10": 7}
DEFAULT_ROUNDS = 9
# Tiny steps start no BLAS threads to wait for, but are timed hot: after a few untimed steps.
COOLDOWN = {"W2": 0.0, "CNN64": 0.0}
LEAD_IN = {"W2": 3, "CNN64": 3}
# Every other step is timed hot too, after one untimed step, as a training loop runs it and as
# DataParallel's auto times it: after the cooldown's pause a step ran up to 1.7x slower, and
# more so on one call's threads (MKL's and the kernels' pools asleep) than on DataParallel's
# (the digits CNN at batch 700: inline 54 ms hot, 91 ms after the pause; threads 61 and 69),
# which made auto's choice (inline, the faster in a loop) look 1.3x the better execution.
DEFAULT_LEAD_IN = 1
WARMUP = 3
DEFAULT_COOLDOWN = 0.15


def interleaved(name: str, steps: Mapping[str, Callable[[], float | None]],
                rounds: int | None = None) -> dict[str, float]:
    """The medians of workload ``name``'s steps, timed round-robin with its timing settings
    (``rounds`` in place of its own number, if given)."""
    return interleaved_medians(steps, rounds or ROUNDS.get(name, DEFAULT_ROUNDS), WARMUP,
                               COOLDOWN.get(name, DEFAULT_COOLDOWN),
                               LEAD_IN.get(name, DEFAULT_LEAD_IN))
