"""dparray shortens OpenBLAS's busy-wait when it is imported before NumPy, and only then."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration  # each test starts a fresh interpreter

PROGRAM = """
import os{first}
import dparray as dp
import numpy  # loads OpenBLAS, which reads the variable now
from dparray.backends import _openblas_setup
float(dp.ones(3).sum())
print(os.environ.get("OPENBLAS_THREAD_TIMEOUT"), _openblas_setup.set_here)
"""


def _timeout_seen(first: str = "", **environment: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    result = subprocess.run([sys.executable, "-c", PROGRAM.format(first=first)],
                            capture_output=True, text=True, env={**env, **environment})
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_importing_dparray_first_sets_a_short_spin():
    from dparray.backends import _openblas_setup

    assert _timeout_seen() == f"{_openblas_setup.SPIN_EXPONENT} True"
    assert _openblas_setup.SPIN_EXPONENT == "12"


def test_a_numpy_loaded_before_dparray_is_left_as_it_is():
    assert _timeout_seen(first="\nimport numpy") == "None False"


@pytest.mark.parametrize("value", ["4", "28"])
def test_the_users_setting_wins(value):
    assert _timeout_seen(OPENBLAS_THREAD_TIMEOUT=value) == f"{value} False"
