"""Op benchmarks of dparray against PyTorch, one library per process, processes alternated.

A benchmark module calls ``compare(__spec__.name, measure, processes, title)``: run plainly
(``python -m bench.NAME``), it starts itself again with ``--library dparray`` and ``--library
torch`` in turn ``processes`` times (each library in a process of its own: as
``torch_process.py`` explains, the two slow each other down in one) and prints the table; a
child runs ``measure(library)``, which times its calls with ``median_ms``, and prints the
result as JSON for the parent.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

LIBRARIES = ("dparray", "torch")


def median_ms(call: Callable[[], Any], warm_up: int = 3, steps: int = 20) -> float:
    """The median milliseconds of ``steps`` calls after ``warm_up`` untimed ones."""
    for _ in range(warm_up):
        call()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def compare(module: str, measure: Callable[[str], dict[str, float]], processes: int,
            title: str) -> None:
    """In a child (``--library NAME`` on the command line): print ``measure(NAME)`` as JSON.
    Otherwise: run ``processes`` alternated children of each library, then print ``title``
    and one line per measured call, the medians over the processes and their ratio."""
    if sys.argv[1:2] == ["--library"]:
        print(json.dumps(measure(sys.argv[2])))
        return
    results: dict[str, list[dict[str, float]]] = {library: [] for library in LIBRARIES}
    for _ in range(processes):
        for library in LIBRARIES:
            out = subprocess.run([sys.executable, "-m", module, "--library", library],
                                 capture_output=True, text=True, check=True).stdout
            results[library].append(json.loads(out))
    print(f"{title}, median ms of {processes} alternated processes each")
    width = max(map(len, results["dparray"][0]), default=0)
    for name in results["dparray"][0]:
        ours = statistics.median(r[name] for r in results["dparray"])
        theirs = statistics.median(r[name] for r in results["torch"])
        print(f"  {name:{width}} dparray {ours:6.1f}   PyTorch {theirs:6.1f}   "
              f"ratio {ours / theirs:.2f}x")
