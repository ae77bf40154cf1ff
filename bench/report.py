"""Print the comparisons from a pytest-benchmark JSON file written by ``make bench``.

    python bench/report.py .benchmarks/bench.json

Every figure is a ratio of medians measured in the same run, so machine noise mostly cancels.
"""

from __future__ import annotations

import json
import sys

OVERHEAD_OPS = 16


def main(path: str) -> None:
    with open(path) as file:
        benchmarks = json.load(file)["benchmarks"]
    medians = {b["name"]: b["stats"]["median"] for b in benchmarks}
    extra = {b["name"]: b.get("extra_info", {}) for b in benchmarks}
    if {"test_dparray_chain", "test_numpy_chain"} <= medians.keys():
        ours, numpy = medians["test_dparray_chain"], medians["test_numpy_chain"]
        print(f"chain of {OVERHEAD_OPS} ops, 32x64 float32, forward + backward (medians)")
        print(f"  dparray {ours * 1e6:9.1f} us   raw NumPy {numpy * 1e6:9.1f} us   "
              f"ratio {ours / numpy:5.2f}x")
        print(f"  overhead {(ours - numpy) / OVERHEAD_OPS * 1e6:.2f} us per op (goal: <= 6)")
    if {"test_dparray_training_step", "test_numpy_training_step"} <= medians.keys():
        ours, numpy = medians["test_dparray_training_step"], medians["test_numpy_training_step"]
        print("MLP 784-1024-1024-10, batch 2048, float32, one Adam training step (medians)")
        print(f"  dparray {ours * 1e3:9.1f} ms   hand-written NumPy {numpy * 1e3:9.1f} ms   "
              f"ratio {ours / numpy:5.3f}x (goal: <= 1.10)")
    interleaved = extra.get("test_interleaved_ratio", {}).get("ratio")
    if interleaved is not None:
        print(f"  the two alternated in one loop: ratio of medians {interleaved:5.3f}x")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".benchmarks/bench.json")
