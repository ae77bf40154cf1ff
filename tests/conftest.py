"""Shared fixtures: every backend-neutral test runs once per backend.

NumPy and array_api_strict must always be available (a failure, not a skip, if not); CuPy is
skipped only where this machine has no CUDA device.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import settings

import dparray as dp
from dparray.kernels import kernels_enabled, reference_only

collect_ignore = ["data", "mpi"]  # fixtures, and scripts run by other tests (PyTorch, mpiexec)

settings.register_profile("dparray", deadline=None, max_examples=40, derandomize=True)
settings.load_profile("dparray")

BACKENDS = ["numpy", "array_api_strict", "cupy"]
HARDWARE_BACKENDS = {"cupy": "needs CuPy and a CUDA device"}


@pytest.fixture(params=BACKENDS)
def backend(request):
    """The backend under test, made current for the test's duration."""
    name = request.param
    if name in HARDWARE_BACKENDS and name not in dp.available_backends():
        pytest.skip(HARDWARE_BACKENDS[name])
    with dp.use_backend(name) as chosen:
        yield chosen


@pytest.fixture(params=["kernels", "reference"])
def kernels(request):
    """Run the test with the backend's kernel table, and again with the array-API
    references only (``dparray.kernels.reference_only``)."""
    if request.param == "reference":
        with reference_only():
            yield request.param
    else:
        with kernels_enabled():
            yield request.param


@pytest.fixture
def rng():
    """A NumPy generator for test data, seeded per test so failures repeat."""
    return np.random.default_rng(1234)


def to_tensor(array, requires_grad=False, backend=None):
    """A dparray tensor with exactly the values and dtype of a NumPy array."""
    return dp.tensor(np.asarray(array), requires_grad=requires_grad, backend=backend)


def pytest_terminal_summary(terminalreporter):
    """One line per skip reason ("376 tests skipped: needs CuPy and a CUDA device") in place
    of a line per skipped test, which ``-rfE`` no longer prints."""
    reasons = Counter(_skip_reason(report) for report in terminalreporter.stats.get("skipped", []))
    for reason, count in sorted(reasons.items(), key=lambda item: (-item[1], item[0])):
        tests = "test" if count == 1 else "tests"
        terminalreporter.write_line(f"{count} {tests} skipped: {reason}")


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    reason = reason.removeprefix("Skipped: ")
    return "no reason given" if reason in ("", "Skipped") else reason
