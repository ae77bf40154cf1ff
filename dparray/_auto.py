"""DataParallel's ``execution="auto"``: choose between threads and inline by measuring.

Whether threads pay depends on everything at once -- the ops, their sizes, the backend, the
cores, what else the process does -- so no rule of thumb decides well for every model (an
element-count threshold calibrated on MLPs kept a small CNN inline that ran twice as fast on
threads). Instead, for each new input signature (shapes, dtypes, backend, modes, chunk count)
the first calls alternate between the two executions and time them; the faster one is kept
for that signature, and the choice is measured again every ``RECHECK_CALLS`` calls, in case the
machine's load changed.

What is timed is the interval from one call to the next with the same signature: in a
training loop that is the whole step -- forward, loss, backward, optimizer -- so the choice
weighs the backward too, where half the work of DataParallel happens. The backend is
synchronised (``backend.synchronize()``, a no-op on the CPU) at each measured call so that
device work is counted. The first call of each execution warms it up (its pool, allocator,
caches) and is not counted.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

CANDIDATES = ("threads", "inline")
SAMPLES = 3  # timed intervals per candidate, after one warm-up call each
RECHECK_CALLS = 1000


@dataclass
class _Trial:
    """The measurement of one signature: the schedule of executions and the intervals."""

    schedule: list[str]
    intervals: dict[str, list[float]] = field(default_factory=lambda: {c: [] for c in CANDIDATES})
    last: tuple[float, str] | None = None  # (time, execution) of the previous call


class ExecutionChooser:
    """Per-signature choice of ``"threads"`` or ``"inline"``, decided by timing."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._decided: dict[Hashable, tuple[str, int]] = {}  # signature -> (choice, calls)
        self._trials: dict[Hashable, _Trial] = {}
        self._lock = threading.Lock()

    def choose(self, signature: Hashable, synchronize: Callable[[], None]) -> str:
        """The execution for this call of ``signature``."""
        with self._lock:
            decided = self._decided.get(signature)
            if decided is not None:
                choice, calls = decided
                if calls < RECHECK_CALLS:
                    self._decided[signature] = (choice, calls + 1)
                    return choice
                del self._decided[signature]  # measure again
            trial = self._trials.get(signature)
            if trial is None:
                trial = self._trials[signature] = _Trial(_schedule())
        synchronize()
        now = self._clock()
        with self._lock:
            if trial.last is not None:
                previous_time, previous = trial.last
                trial.intervals[previous].append(now - previous_time)
            if not trial.schedule:
                choice = self._decide(signature, trial)
                return choice
            execution = trial.schedule.pop(0)
            trial.last = (now, execution)
            return execution

    def __deepcopy__(self, memo: dict[int, object]) -> ExecutionChooser:
        return ExecutionChooser(self._clock)  # a copy measures afresh

    def decision(self, signature: Hashable) -> str | None:
        """The execution chosen for ``signature``, or None while it is being measured."""
        with self._lock:
            decided = self._decided.get(signature)
            return None if decided is None else decided[0]

    def _decide(self, signature: Hashable, trial: _Trial) -> str:
        threads, inline = (statistics.median(trial.intervals[c][1:]) for c in CANDIDATES)
        choice = "threads" if threads < inline else "inline"
        self._decided[signature] = (choice, 0)
        del self._trials[signature]
        return choice


def _schedule() -> list[str]:
    """Alternate the candidates, each warmed up once: threads, inline, threads, inline, ..."""
    return [c for _ in range(SAMPLES + 1) for c in CANDIDATES]
