"""``x[key]`` against PyTorch on a generated table of keys (issue 21, item 1): every mix of ints,
slices, ``None``, ``...``, integer tensors (0-, 1- and 2-D), lists and bool masks of up to three
entries on a 3-D tensor, and of four on a 4-D one, with PyTorch's values, shapes and refusals
(``tests/data/make_index_fixtures.py``; the patterns are ``tests/index_patterns.py``).

PyTorch applies ints (and 0-d integer tensors) first, as basic indexing, so they never make the
tensor indices beside them non-adjacent; NumPy counts them as advanced indices. Before the
fix, ``x[0, :, index]`` had the right shape and transposed values.
"""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest
from index_patterns import concrete, keys
from safetensors import safe_open

import dparray as dp

FIXTURE = pathlib.Path(__file__).parent / "data" / "index_patterns.safetensors"


def _table():
    with safe_open(FIXTURE, "numpy") as file:
        cases = json.loads(file.metadata()["index_cases"])
        return cases, file.get_tensor("values").astype(np.int64)


CASES, VALUES = _table()
PATTERNS = keys()


def test_the_table_covers_every_pattern():
    assert len(CASES) == len(PATTERNS) > 2900
    refused = sum(isinstance(case, str) for case in CASES)
    assert 0 < refused < len(CASES) // 4 and set(c for c in CASES if isinstance(c, str)) == {
        "IndexError"}


def _check(shape, kinds, case):
    """None if ``x[key]`` is PyTorch's (value, shape, gradient or refusal), else why not."""
    n = math.prod(shape)
    key = concrete(kinds, shape, lambda data, dtype: dp.tensor(data, dtype=dtype))
    x = dp.tensor(np.arange(n, dtype=np.float64).reshape(shape), requires_grad=True)
    if kinds.count("...") > 1:
        # the one deliberate difference (docs/decisions.md): two ellipses are refused, as by
        # NumPy and the array API; PyTorch takes them, as if only the first counted
        assert not isinstance(case, str)
        case = "IndexError"
    if isinstance(case, str):
        try:
            x[key]
        except IndexError:
            return None
        except Exception as error:  # reported with the key
            return f"{type(error).__name__} ({error}), PyTorch: {case}"
        return f"no error, PyTorch: {case}"
    out_shape, offset = tuple(case[0]), case[1]
    expected = VALUES[offset:offset + math.prod(out_shape)]
    try:
        out = x[key]
    except Exception as error:  # reported with the key
        return f"{type(error).__name__}: {error}"
    if out.shape != out_shape or not np.array_equal(out.numpy().reshape(-1), expected):
        return f"shape {out.shape}, values {out.numpy().reshape(-1)[:8]}; PyTorch: shape " \
               f"{out_shape}, values {expected[:8]}"
    cotangent = np.arange(1.0, expected.size + 1.0).reshape(out_shape)
    grad = (out * dp.tensor(cotangent)).sum().backward()[x].numpy()
    if not np.array_equal(grad.reshape(-1), np.bincount(expected, cotangent.reshape(-1), n)):
        return "gradient differs"
    return None


@pytest.mark.parametrize("ndim", [3, 4])
def test_every_pattern_gives_pytorchs_result(backend, ndim):
    failures = []
    for (shape, kinds), case in zip(PATTERNS, CASES, strict=True):
        if len(shape) == ndim:
            why = _check(shape, kinds, case)
            if why is not None:
                failures.append(f"x[{', '.join(kinds)}] of shape {shape}: {why}")
    assert not failures, f"{len(failures)} keys differ from PyTorch:\n" + "\n".join(failures[:40])


def test_the_issue_snippet(backend):
    x = dp.arange(4.0).reshape(1, 2, 2)
    assert x[0, :, dp.tensor([1, 1])].tolist() == [[1.0, 1.0], [3.0, 3.0]]
    y = dp.arange(24.0).reshape(2, 3, 4)
    assert y[dp.tensor(0), :, dp.tensor([1, 0])].tolist() == y[0][:, [1, 0]].tolist()
    assert y[[1, 0], :, 0].shape == (2, 3) and y[0, :, [1, 0]].shape == (3, 2)
