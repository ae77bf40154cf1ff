"""The workloads (``dparray.cli.workloads``) under every configuration: one Adam step each.

    make bench                                          # everything, then bench/report.py
    pytest bench/test_dataparallel.py --benchmark-only  # pytest-benchmark's own tables

Two kinds of benchmark:

* ``test_step[<workload>-<configuration>]``: one benchmark per configuration, grouped by
  workload (``--benchmark-group-by=group``, the default), so pytest-benchmark's tables compare
  them and ``--benchmark-compare`` finds regressions. Each also records the peak memory that one
  step allocates (``extra_info["peak_mib"]``, traced by ``tracemalloc``, which sees NumPy's
  arrays; PyTorch's allocator is invisible to it, so its column has none).
* ``test_interleaved[<workload>]``: every configuration of a workload timed round-robin in one
  loop, so that drift on a shared machine hits all alike; the medians go to ``extra_info`` for
  the ratio tables of ``bench/report.py`` -- the headline numbers.
* ``test_one_core_busy[<workload>]``: the unwrapped module, DataParallel(2) and PyTorch,
  round-robin, while another process spins on one core (``busy_core.py``).

Configurations: the unwrapped module (on every core, and on one core's share: BLAS, MKL and
the compiled kernels on one thread each), DataParallel with 1, 2 and 4 workers (``auto``),
with 2 workers forced to ``threads`` and to ``inline``
(``auto`` should be within 10% of the better of those two), and PyTorch with the same threads
when it is installed -- in a process of its own (``torch_process.py`` says why), which times
its steps itself; in ``test_step`` its times include the round trip to that process (tens of
microseconds).
"""

from __future__ import annotations

import contextlib
import tracemalloc
from collections.abc import Callable, Iterator

import pytest

import dparray as dp
from dparray._system import available_cores
from dparray.backend import parallel_region
from dparray.cli.workloads import WORKLOADS, dparray_step
from dparray.parallel import auto as _auto

from . import torch_process
from .busy_core import one_core_busy
from .timing import DEFAULT_ROUNDS, ROUNDS, WARMUP, interleaved

AUTO_CHOICES: dict[tuple[str, str], str] = {}  # what auto decided, by (workload, configuration)
CONFIGURATIONS = ("unwrapped", "unwrapped_1_core", "dataparallel_1", "dataparallel_2",
                  "dataparallel_2_threads", "dataparallel_2_inline", "dataparallel_4",
                  "pytorch")


def _on_one_core(step: Callable[[], None]) -> Callable[[], None]:
    """``step`` on one core's share, as one of ``cores`` DataParallel workers runs: BLAS (the
    region's budget), MKL and the compiled kernels (the worker's) on one thread each. The
    baseline that DataParallel's speed-up is stated against, as in ``make demo``."""
    backend = dp.get_backend("numpy")
    cores = available_cores()

    def limited() -> None:
        with parallel_region(backend, cores), backend.worker(0, cores):
            step()

    return limited


def build_step(name: str, configuration: str) -> Callable[[], float | None] | None:
    """One Adam step of workload ``name`` under ``configuration`` (None: not available)."""
    workload = WORKLOADS[name]
    dp.manual_seed(0)
    module = workload.build()
    x, y = workload.batch()
    if configuration == "pytorch":
        return torch_process.TorchStep(name, x, y) if torch_process.available() else None
    if configuration.startswith("unwrapped"):
        step = dparray_step(workload, module, x, y)
        return _on_one_core(step) if configuration.endswith("core") else step
    parts = configuration.split("_")
    execution = parts[2] if len(parts) > 2 else "auto"
    model = dp.DataParallel(module, int(parts[1]), execution=execution)
    step = dparray_step(workload, model, x, y)
    if execution == "auto":  # let auto finish measuring before anything is timed
        step()
        for _ in range(len(_auto.ORDER) * (_auto.MAX_SAMPLES + _auto.FIRST_WARM_UP)):
            if not model._chooser.measuring():
                break
            step()
        AUTO_CHOICES[name, configuration] = model.last_execution
    return step


@contextlib.contextmanager
def _closing(steps: list[object]) -> Iterator[None]:
    """Ends the PyTorch process among ``steps`` on the way out."""
    try:
        yield
    finally:
        for step in steps:
            if isinstance(step, torch_process.TorchStep):
                step.close()


def _peak_mib(step: Callable[[], object]) -> float:
    tracemalloc.start()
    try:
        step()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@pytest.mark.parametrize("name", list(WORKLOADS))
def test_step(benchmark, name, configuration):
    step = build_step(name, configuration)
    if step is None:
        pytest.skip("PyTorch is not installed")
    benchmark.group = f"{name}: {WORKLOADS[name].description}"
    with _closing([step]):
        for _ in range(WARMUP):
            step()
        if configuration != "pytorch":
            benchmark.extra_info["peak_mib"] = _peak_mib(step)
        benchmark.pedantic(step, rounds=ROUNDS.get(name, DEFAULT_ROUNDS), iterations=1,
                           warmup_rounds=1)


@pytest.mark.parametrize("name", list(WORKLOADS))
@pytest.mark.benchmark(group="interleaved")
def test_interleaved(benchmark, name):
    steps = {c: s for c in CONFIGURATIONS if (s := build_step(name, c)) is not None}
    medians = {}

    def measure():
        medians.update(interleaved(name, steps))

    with _closing(list(steps.values())):
        peaks = {c: _peak_mib(s) for c, s in steps.items() if c != "pytorch"}
        benchmark.pedantic(measure, rounds=1, iterations=1)
    auto = {c: AUTO_CHOICES[name, c] for c in steps if (name, c) in AUTO_CHOICES}
    products = dp.backend.describe(dp.get_backend("numpy")).get("matrix products", "?")
    benchmark.extra_info.update(workload=name, description=WORKLOADS[name].description,
                                peaks=peaks, auto=auto, products=products, **medians)


BUSY = ("W1", "W2", "W3", "W7")
BUSY_CONFIGURATIONS = ("unwrapped", "dataparallel_2", "pytorch")


@pytest.mark.parametrize("name", BUSY)
@pytest.mark.benchmark(group="one-core-busy")
def test_one_core_busy(benchmark, name):
    """Built with the core busy too, so that DataParallel's ``auto`` chooses under it."""
    medians = {}
    with one_core_busy():
        steps = {c: s for c in BUSY_CONFIGURATIONS if (s := build_step(name, c)) is not None}

        def measure():
            medians.update(interleaved(name, steps))

        with _closing(list(steps.values())):
            benchmark.pedantic(measure, rounds=1, iterations=1)
    benchmark.extra_info.update(busy=name, **medians)
