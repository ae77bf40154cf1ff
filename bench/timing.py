"""How the workload tables time a step: rounds, warm-up, the pause before each timed step and
the untimed steps right before it. ``make bench``'s tables and ``python -m bench.ratios`` use
the same settings, so a quick look and the table measure the same thing."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from dparray.backends import _openblas_setup

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
# The pause before a timed step outlasts the spin of the other library's idle threads: OpenBLAS's
# helpers spin for 2**12 cycles (a microsecond or two) where dparray loaded before NumPy and set
# it, else for OpenBLAS's own 2**28 (about 0.1 s); GNU OpenMP's threads sleep at once in dparray
# (OMP_WAIT_POLICY=PASSIVE) and spin for about a millisecond in PyTorch's process. It is no
# longer than that: after 0.15 s idle, both cores' first steps ran 2-4x slower (the VAE, W12:
# 20-29 ms, then 5-7, on a 2-core virtual machine), which a training loop never sees and one
# lead-in step did not hide.
DEFAULT_COOLDOWN = 0.02 if _openblas_setup.set_here else 0.15


def interleaved(name: str, steps: Mapping[str, Callable[[], float | None]],
                rounds: int | None = None) -> dict[str, float]:
    """The medians of workload ``name``'s steps, timed round-robin with its timing settings
    (``rounds`` in place of its own number, if given)."""
    return interleaved_medians(steps, rounds or ROUNDS.get(name, DEFAULT_ROUNDS), WARMUP,
                               COOLDOWN.get(name, DEFAULT_COOLDOWN),
                               LEAD_IN.get(name, DEFAULT_LEAD_IN))
