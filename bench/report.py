"""Print the per-op overhead from a pytest-benchmark JSON file written by ``make bench``.

    python bench/report.py .benchmarks/overhead.json
"""

from __future__ import annotations

import json
import sys

OPS = 16


def main(path: str) -> None:
    with open(path) as file:
        results = {b["name"]: b["stats"]["median"] for b in json.load(file)["benchmarks"]}
    ours, numpy = results["test_dparray_chain"], results["test_numpy_chain"]
    print(f"chain of {OPS} ops, 32x64 float32, forward + backward (medians, one run)")
    print(f"  dparray    {ours * 1e6:8.1f} us")
    print(f"  raw NumPy  {numpy * 1e6:8.1f} us")
    print(f"  ratio      {ours / numpy:8.2f} x")
    print(f"  overhead   {(ours - numpy) / OPS * 1e6:8.2f} us per op (goal: <= 6)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".benchmarks/overhead.json")
