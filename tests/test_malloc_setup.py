"""On glibc, the NumPy backend keeps freed memory for reuse unless the user set malloc's limits:
measured by the page faults of allocating, filling and freeing a large array again and again."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="mallopt's limits exist on glibc only",
)

PROGRAM = """
import resource
import dparray as dp
import numpy as np
from dparray.backends import _malloc_setup
from dparray.backends import _numba_setup
dp.get_backend("numpy")  # makes the NumPy backend, whatever the default
if _numba_setup._warm_up is not None:  # its page faults are the process's too
    _numba_setup._warm_up.join()
def fill_and_free():
    a = np.empty(48 << 18, np.float32)  # 48 MiB: above glibc's largest mmap threshold
    a.fill(1.0)
fill_and_free()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(4):
    fill_and_free()
faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) // 4
print(_malloc_setup.set_here, faults)
"""
# fresh pages fault at least once per 2 MiB, even where NumPy gets transparent huge pages
FRESH_FAULTS = 48 // 2
USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES",
                 "DPARRAY_MALLOC")


def _run(**environment: str) -> tuple[str, int]:
    env = {k: v for k, v in os.environ.items() if k not in USER_SETTINGS}
    result = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                            env={**env, **environment}, check=False, timeout=120)
    assert result.returncode == 0, result.stderr
    set_here, faults = result.stdout.split()
    return set_here, int(faults)


@pytest.mark.integration
def test_freed_memory_is_reused_without_new_page_faults():
    set_here, faults = _run()
    assert set_here == "True"
    assert faults < FRESH_FAULTS, faults


@pytest.mark.integration
@pytest.mark.parametrize("setting", [
    {"DPARRAY_MALLOC": "system"},
    {"MALLOC_TRIM_THRESHOLD_": "131072"},
    {"MALLOC_MMAP_THRESHOLD_": "131072"},
    {"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=131072"},
])
def test_the_users_malloc_setting_wins(setting):
    set_here, faults = _run(**setting)
    assert set_here == "False"
    assert faults >= FRESH_FAULTS, faults  # glibc's own behaviour: fresh pages each time



class FakeLibc:
    """``mallopt`` of a glibc that accepts an mmap threshold up to ``cap`` (older releases:
    32 MiB), recording the calls."""

    def __init__(self, cap):
        self.cap, self.calls = cap, []

    def mallopt(self, parameter, value):
        self.calls.append((parameter, value))
        return int(parameter != -3 or value <= self.cap)


@pytest.mark.parametrize(("cap", "expected", "changed"), [
    (256 << 20, [(-3, 256 << 20), (-1, 256 << 20)], True),
    (32 << 20, [(-3, 256 << 20), (-3, 32 << 20), (-1, 256 << 20)], True),
    (1 << 20, [(-3, 256 << 20), (-3, 32 << 20)], False),  # nothing taken: trim left alone
])
def test_the_mmap_threshold_is_set_first_and_the_trim_threshold_only_after_it(
        cap, expected, changed, monkeypatch):
    from dparray.backends import _malloc_setup

    libc = FakeLibc(cap)
    monkeypatch.setattr(_malloc_setup, "set_here", False)
    monkeypatch.setattr(_malloc_setup.ctypes, "CDLL", lambda name: libc)
    for name in USER_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    _malloc_setup.keep_freed_memory()
    assert libc.calls == expected
    assert _malloc_setup.set_here is changed
