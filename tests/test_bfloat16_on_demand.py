"""NumPy's bfloat16 comes from ml_dtypes, whose import takes about half a second: dparray
imports it only when a program first names bfloat16, and still knows a bfloat16 array that
the program made itself. Each test starts a fresh interpreter (the import happens once per
process)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration


def _run(program: str) -> list[str]:
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_a_float32_program_does_not_import_ml_dtypes_until_it_names_bfloat16():
    seen = _run("""
import sys
import dparray as dp
from dparray import nn
model = nn.Sequential(nn.Linear(3, 4), nn.GELU(), nn.Linear(4, 2))
loss = model(dp.ones((5, 3))).sum()
loss.backward()
print(loss.dtype.name, "ml_dtypes" in sys.modules)
x = dp.ones((2, 2), dtype="bfloat16")
print(x.dtype.name, "ml_dtypes" in sys.modules, (x @ x).dtype.name)
""")
    assert seen == ["float32", "False", "bfloat16", "True", "bfloat16"]


def test_a_bfloat16_array_made_by_the_program_is_a_bfloat16_tensor():
    seen = _run("""
import ml_dtypes
import numpy as np
import dparray as dp
a = np.ones((2, 3), dtype=ml_dtypes.bfloat16)
t = dp.tensor(a, requires_grad=True)
grads = (t @ dp.tensor(np.ones((3, 2), dtype=ml_dtypes.bfloat16))).sum().backward()
print(t.dtype.name, grads[t].dtype.name, dp.exp(t).dtype.name)  # exp keeps a float type
""")
    assert seen == ["bfloat16", "bfloat16", "bfloat16"]
