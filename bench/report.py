"""Print the comparisons from the pytest-benchmark JSON files written by ``make bench``.

    python bench/report.py [.benchmarks/bench.json [.benchmarks/bench-openblas.json ...]]

The first file is the whole suite in the default install (on x86-64 Linux the faster of MKL and
OpenBLAS on this CPU makes NumPy's matrix products, OpenBLAS elsewhere), each further one a run
of the workload tables under another BLAS (``DPARRAY_BLAS=openblas``); each file's tables say
which products they measured. Every
figure is a ratio of medians measured in the same run, so machine noise mostly cancels.
"""

from __future__ import annotations

import json
import statistics
import sys

OVERHEAD_OPS = 16


def main(paths: list[str]) -> None:
    for index, path in enumerate(paths):
        if index:
            print()
        print(f"== {path}")
        report(path)


def report(path: str) -> None:
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
    hvp = extra.get("test_hvp_ratio", {})
    if "hvp_ratio" in hvp:
        print("W1 MLP's loss: a Hessian-vector product against one gradient (medians, "
              "alternated)")
        print(f"  gradient {hvp['gradient_s'] * 1e3:9.1f} ms   dparray.func.hvp "
              f"{hvp['hvp_s'] * 1e3:9.1f} ms   ratio {hvp['hvp_ratio']:5.2f}x (goal: <= 3.0)")
    workloads = [info for info in extra.values() if "workload" in info]
    if workloads:
        print_dataparallel(sorted(workloads, key=lambda info: _order(info["workload"])))
    busy = [info for info in extra.values() if "busy" in info]
    if busy:
        print_busy(sorted(busy, key=lambda info: _order(info["busy"])))
    first = [info for info in extra.values() if "first_step" in info]
    if first:
        print_first_steps(sorted(first, key=lambda info: _order(info["first_step"])))
    allreduce = extra.get("test_allreduce_two_ranks", {}).get("allreduce")
    if allreduce:
        print_allreduce(allreduce)
    mixed = extra.get("test_w1_autocast_ratios", {}).get("mixed_precision")
    if mixed:
        print_mixed_precision(mixed)


def print_mixed_precision(medians: dict) -> None:
    """W1's step under autocast against its float32 step (bench/test_mixed_precision.py)."""
    print(f"W1 under autocast, interleaved medians (bfloat16 products here: "
          f"{medians['bfloat16 products']})")
    for precision in ("float32", "bfloat16", "float16"):
        ratio = medians[precision] / medians["float32"]
        print(f"  {precision:9}{medians[precision] * 1e3:9.1f} ms  {ratio:5.2f}x float32's"
              + ("   goal on AMX: <= 0.4x" if precision == "bfloat16" else ""))


def _order(name: str) -> tuple[int, str]:
    """W1 ... W12 in their numeric order, the others after them."""
    return (int(name[1:]), "") if name[1:].isdigit() else (99, name)


def print_busy(results: list[dict]) -> None:
    """Steps while another process spins on one core, against PyTorch's."""
    print("One core busy (another process spinning): medians of interleaved runs (ms)")
    print(f"  {'':7}{'unwrapped':>11}{'DP 2':>11}{'PyTorch':>11}   best / PyTorch (goal: <= 0.6x)")
    for info in results:
        best = min(info.get("unwrapped", float("inf")), info.get("dataparallel_2", float("inf")))
        ratio = f"{best / info['pytorch']:5.2f}x" if "pytorch" in info else "    -"
        cells = "".join(f"{info[key] * 1e3:11.2f}" if key in info else f"{'-':>11}"
                        for key in ("unwrapped", "dataparallel_2", "pytorch"))
        print(f"  {info['busy']:7}{cells}   {ratio}")


def print_first_steps(results: list[dict]) -> None:
    """A new process's first step against a warm one."""
    print("First step of a new process (ms; import not included) against a warm step "
          "(goal: <= 2x)")
    for info in results:
        print(f"  {info['first_step']:7}first {info['first'] * 1e3:8.1f}   warm "
              f"{info['warm'] * 1e3:8.1f}   {info['first'] / info['warm']:5.2f}x   "
              f"(import dparray {info['import'] * 1e3:.0f} ms)")


def print_allreduce(results: dict) -> None:
    """All-reduce of each workload's gradients against its training step."""
    print(f"DistributedDataParallel all-reduce across {results['ranks']} ranks (ms; "
          "share of a training step)")
    for name in ("W1", "W2"):
        m = results[name]
        print(f"  {name}: {m['tensors']} tensors, {m['parameters']} parameters; step "
              f"{m['step'] * 1e3:.2f}; bucketed {m['bucketed'] * 1e3:.2f} "
              f"({m['bucketed'] / m['step']:.0%}); one call per tensor "
              f"{m['per_parameter'] * 1e3:.2f} ({m['per_parameter'] / m['step']:.0%})")


# (issue goals: ratios of medians in one run; "best" is the best dparray configuration)
GOALS = {"W1": "best <= 0.9x PyTorch; DP 2 >= 1.6x 1 core",
         "W2": "best <= 0.55x PyTorch",
         "W3": "best <= 1.0x PyTorch; DP 2 >= 1.6x 1 core",
         "W4": "best <= 1.0x PyTorch", "W5": "best <= 0.9x PyTorch",
         "W6": "best <= 1.1x PyTorch",
         **{f"W{i}": "best <= 1.0x PyTorch" for i in range(7, 13)}}
REAL_PROGRAMS = [f"W{i}" for i in range(7, 13)]
COLUMNS = [("unwrapped", "unwrapped"), ("unwrapped_1_core", "1 core"),
           ("dataparallel_1", "DP 1"), ("dataparallel_2", "DP 2"),
           ("dataparallel_2_threads", "DP 2 thr"), ("dataparallel_2_inline", "DP 2 inl"),
           ("dataparallel_4", "DP 4"), ("pytorch", "PyTorch")]
DPARRAY = [key for key, _ in COLUMNS if key != "pytorch"]


def print_dataparallel(workloads: list[dict]) -> None:
    """Medians (ms) of each workload's configurations, timed round-robin in one loop, and
    the ratios the goals are stated in."""
    print("Workloads: forward + backward + Adam step, medians of interleaved runs (ms)")
    products = {info["products"] for info in workloads if "products" in info}
    if products:
        print(f"  dparray's matrix products: {', '.join(sorted(products))}")
    print(f"  {'':7}" + "".join(f"{title:>11}" for _, title in COLUMNS))
    for info in workloads:
        cells = "".join(f"{info[key] * 1e3:11.2f}" if key in info else f"{'-':>11}"
                        for key, _ in COLUMNS)
        print(f"  {info['workload']:7}{cells}")
    print("\n  ratios: best dparray / PyTorch; DP 2 speed-up over 1 core; auto (DP 2) "
          "/ better of threads and inline, and what auto chose; peak MiB of a step (best "
          "configuration)")
    for info in workloads:
        best_key = min(DPARRAY, key=lambda key: info.get(key, float("inf")))
        best = info[best_key]
        torch = f"{best / info['pytorch']:5.2f}x" if "pytorch" in info else "    -"
        speedup = info["unwrapped_1_core"] / info["dataparallel_2"]
        better = min(info["dataparallel_2_threads"], info["dataparallel_2_inline"])
        auto = info["dataparallel_2"] / better
        chose = info.get("auto", {}).get("dataparallel_2", "?")
        peak = info.get("peaks", {}).get(best_key)
        memory = f"{peak:8.1f}" if peak is not None else "       -"
        print(f"  {info['workload']:7}{torch} ({best_key}){speedup:7.2f}x{auto:7.2f}x "
              f"{chose:8}{memory}   goal: {GOALS.get(info['workload'], '-')}")
    real = [best_ratio(info) for info in workloads if info["workload"] in REAL_PROGRAMS
            and "pytorch" in info]
    if real:
        print(f"  W7-W12 geometric mean of best / PyTorch: {statistics.geometric_mean(real):.2f}x"
              f" over {len(real)} (goal: <= 0.85x)")
    for info in workloads:
        print(f"  {info['workload']}: {info['description']}")


def best_ratio(info: dict) -> float:
    """The best dparray configuration's median over PyTorch's."""
    return min(info.get(key, float("inf")) for key in DPARRAY) / info["pytorch"]


if __name__ == "__main__":
    main(sys.argv[1:] or [".benchmarks/bench.json"])
