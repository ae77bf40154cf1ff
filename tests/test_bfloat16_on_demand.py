"""NumPy's bfloat16 comes from ml_dtypes, whose import takes about half a second: dparray
imports it only when a program first names bfloat16, and still knows a bfloat16 array that
the program made itself. Each test starts a fresh interpreter (the import happens once per
process), but the last, which builds a dtype table of its own."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import types
from collections.abc import Mapping

import array_api_compat.numpy
import ml_dtypes
import numpy as np
import pytest

import dparray as dp
from dparray import dtypes


def _run(program: str) -> list[str]:
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


@pytest.mark.integration
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


@pytest.mark.integration
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


class _SlowBfloat16(Mapping):
    """An ``extra_dtypes`` whose one entry takes a while to load, as ml_dtypes' import does."""

    def __init__(self):
        self.loads = 0

    def __getitem__(self, name):
        if name != "bfloat16":
            raise KeyError(name)
        self.loads += 1
        time.sleep(0.2)
        return np.dtype(ml_dtypes.bfloat16)

    def __iter__(self):
        return iter(["bfloat16"])

    def __len__(self):
        return 1

    def loaded(self):
        return {}


def test_threads_that_ask_for_bfloat16_at_once_all_get_it_and_it_loads_once():
    extra = _SlowBfloat16()
    table = dtypes._Table(types.SimpleNamespace(xp=array_api_compat.numpy, extra_dtypes=extra))
    assert dp.float32 in table.to_native and dp.bfloat16 not in table.to_native
    got, start = [], threading.Barrier(4)

    def ask():
        start.wait()
        got.append(table.native(dp.bfloat16))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert got == [np.dtype(ml_dtypes.bfloat16)] * 4 and extra.loads == 1
    assert table.dtype(np.dtype(ml_dtypes.bfloat16)) is dp.bfloat16
    bfloat16 = np.dtype(ml_dtypes.bfloat16)
    assert bfloat16 in table.low and bfloat16 in table.floating


def test_a_library_that_cannot_make_bfloat16_arrays_has_no_bfloat16():
    """CuPy releases without bfloat16 refuse the dtype: the mapping is then empty, and asking
    again does not try again."""
    from dparray.backends._ml_dtypes import LazyBfloat16

    asked = []
    refusing = LazyBfloat16(lambda bfloat16: asked.append(bfloat16))  # returns None
    assert refusing.get("bfloat16") is None and "bfloat16" not in refusing
    assert len(refusing) == 0 and list(refusing) == [] and dict(refusing.loaded()) == {}
    assert asked == [ml_dtypes.bfloat16]  # asked once
    with pytest.raises(KeyError, match="float8"):
        LazyBfloat16(np.dtype)["float8"]
