"""DataParallel's ``execution="auto"``: choose between threads and inline by measuring.

Whether threads pay depends on everything at once -- the ops, their sizes, the backend, the
cores, what else the process does -- so no rule of thumb decides well for every model (an
element-count threshold calibrated on MLPs kept a small CNN inline that ran twice as fast on
threads). Instead, for each new input signature (shapes, dtypes, backend, modes, chunk count)
the first calls run each execution for a few calls and time them; the faster median is kept
for that signature, and the choice is measured again every ``RECHECK_CALLS`` calls, in case
the machine's load changed.

Each execution is measured in blocks of consecutive calls, not alternated call by call:
switching between them resizes BLAS's thread pool and moves the arrays between the threads'
caches and allocator arenas, which slows both and hides the difference (on a convnet whose
steps take 36 ms on threads and 61 ms inline, alternating timed both at about 60 ms). The
blocks alternate in ``ROUNDS`` rounds, threads then inline, and each round is compared on its
own: the choice is the median over the rounds of the ratio of the two blocks' medians. A
change of the machine's load between rounds (on a shared machine, the same step took 45 ms
in one round and 90 in the next) then weighs on neither execution, where one median over
every block let a slow round decide. A block times at least ``SAMPLES`` calls, and more
until they add up to ``MEASURE_SECONDS / (2 * ROUNDS)`` (at most ``MAX_SAMPLES``): small
steps, whose times are noisier, are timed more often.

What is timed is the interval from one call to the next with the same signature: in a
training loop that is the whole step -- forward, loss, backward, optimizer -- so the choice
weighs the backward too, where half the work of DataParallel happens. The backend is
synchronised (``backend.synchronize()``, a no-op on the CPU) at each measured call so that
device work is counted. The first call of each block warms it up (its pool, allocator,
caches) and is not counted; in each execution's first block, the first ``FIRST_WARM_UP``
calls are not: the worker threads' first steps fault in their allocator arenas' pages and
load their compiled loops (the first threads block of a small CNN timed 118 and 78 ms where
later ones took 48).
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

CANDIDATES = ("threads", "inline")
ROUNDS = 3  # rounds of one block of each candidate, compared round by round
SAMPLES = 2  # at least this many timed intervals per block, after its warm-up calls,
MEASURE_SECONDS = 0.9  # and more until all the blocks add up to this much (small steps are
MAX_SAMPLES = 12  # noisy), but never more than this many per block
FIRST_WARM_UP = 2  # calls not counted in each candidate's first block (1 in the others)
RECHECK_CALLS = 1000
ORDER = CANDIDATES * ROUNDS


@dataclass
class _Trial:
    """The measurement of one signature: which block is being timed, and the intervals of
    each block (the first ones follow its warm-up calls and are not counted)."""

    position: int = 0  # into ORDER
    blocks: list[list[float]] = field(default_factory=lambda: [[] for _ in ORDER])
    last: tuple[float, int] | None = None  # (time, block) of the previous call

    def next_execution(self) -> str | None:
        """The candidate to run next, or None once every block has been timed enough."""
        while self.position < len(ORDER):
            timed = self.timed(self.position)
            if len(timed) < SAMPLES or (sum(timed) < MEASURE_SECONDS / len(ORDER)
                                        and len(timed) < MAX_SAMPLES):
                return ORDER[self.position]
            self.position += 1
        return None

    def timed(self, position: int) -> list[float]:
        """The counted intervals of block ``position``: those after its warm-up calls."""
        warm_up = FIRST_WARM_UP if position < len(CANDIDATES) else 1
        return self.blocks[position][warm_up:]

    def ratio(self) -> float:
        """The median over the rounds of threads' block median over inline's."""
        medians = [statistics.median(self.timed(p)) for p in range(len(ORDER))]
        ratios = [medians[p] / medians[p + 1] if medians[p + 1] > 0 else 1.0
                  for p in range(0, len(ORDER), len(CANDIDATES))]
        return statistics.median(ratios)


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
            trial = self._trials.setdefault(signature, _Trial())
        synchronize()
        now = self._clock()
        with self._lock:
            if trial.last is not None:
                previous_time, block = trial.last
                trial.blocks[block].append(now - previous_time)
            execution = trial.next_execution()
            if execution is None:
                return self._decide(signature, trial)
            trial.last = (now, trial.position)
            return execution

    def __deepcopy__(self, memo: dict[int, object]) -> ExecutionChooser:
        return ExecutionChooser(self._clock)  # a copy measures afresh

    def decision(self, signature: Hashable) -> str | None:
        """The execution chosen for ``signature``, or None while it is being measured."""
        with self._lock:
            decided = self._decided.get(signature)
            return None if decided is None else decided[0]

    def measuring(self) -> bool:
        """Whether some signature is still being measured."""
        with self._lock:
            return bool(self._trials)

    def _decide(self, signature: Hashable, trial: _Trial) -> str:
        choice = "threads" if trial.ratio() < 1.0 else "inline"
        self._decided[signature] = (choice, 0)
        self._trials.pop(signature, None)  # another thread may have decided it meanwhile
        return choice
