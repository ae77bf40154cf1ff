"""Every op: its value against an independent reference, its gradient against finite
differences in float64, on every backend."""

from __future__ import annotations

import numpy as np
import pytest
from cases import ALL_CASES
from conftest import to_tensor

from dparray.testing import gradcheck


@pytest.mark.parametrize("case", ALL_CASES, ids=repr)
def test_value_matches_reference(case, backend, rng):
    arrays = case.inputs(rng)
    out = case.function(*[to_tensor(a) for a in arrays])
    expected = np.asarray(case.reference(*arrays))
    assert out.shape == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", ALL_CASES, ids=repr)
def test_gradient_matches_finite_differences(case, backend, rng):
    inputs = [to_tensor(a, requires_grad=True) for a in case.inputs(rng)]
    gradcheck(case.function, inputs)


@pytest.mark.parametrize("case", ALL_CASES, ids=repr)
def test_float32_stays_float32(case, backend, rng):
    inputs = [to_tensor(a.astype(np.float32), requires_grad=True) for a in case.inputs(rng)]
    out = case.function(*inputs)
    assert out.dtype.name == "float32"
    grads = out.sum().backward()
    for t in inputs:
        assert grads[t].dtype.name == "float32"
        assert grads[t].shape == t.shape
