"""Second derivatives of every op-table case against PyTorch's: for the inputs, cotangent and
directions recorded in ``tests/data/second_order.safetensors`` (written by
``tests/data/make_second_order_fixtures.py`` with ``torch.autograd.grad(...,
create_graph=True)``), dparray's create_graph gradients and the gradients of
``sum_i grad_i . v_i`` equal PyTorch's, in float64, on every backend."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from cases_second_order import fixture_keys
from conftest import to_tensor
from safetensors.numpy import load_file
from test_ops import EVERY_CASE

import dparray as dp

FIXTURE = pathlib.Path(__file__).parent / "data" / "second_order.safetensors"
RECORDED = load_file(str(FIXTURE))


KEYED = list(zip(fixture_keys(EVERY_CASE), EVERY_CASE, strict=True))


def test_every_op_case_has_a_pytorch_fixture():
    recorded = {key.split("/")[0] for key in RECORDED}
    missing = [key for key, _ in KEYED if key not in recorded]
    assert missing == [], (
        f"no PyTorch second derivatives for {missing}: add their PyTorch form to "
        "tests/data/torch_forms.py and run tests/data/make_second_order_fixtures.py")


@pytest.mark.parametrize(("key", "case"), KEYED, ids=[key for key, _ in KEYED])
def test_second_derivatives_equal_pytorch(key, case, backend):
    count = sum(1 for name in RECORDED if name.startswith(f"{key}/input."))
    if count == 0:
        pytest.fail(f"{key} is not in {FIXTURE.name}: regenerate it")
    arrays = [RECORDED[f"{key}/input.{i}"] for i in range(count)]
    inputs = [to_tensor(a, requires_grad=True) for a in arrays]
    cotangent = to_tensor(RECORDED[f"{key}/cotangent"])
    directions = [to_tensor(RECORDED[f"{key}/direction.{i}"]) for i in range(count)]
    grads = dp.autograd.grad((case.function(*inputs) * cotangent).sum(), inputs,
                             create_graph=True, allow_unused=True)
    total = None
    for i, (g, v) in enumerate(zip(grads, directions, strict=True)):
        expected = RECORDED[f"{key}/grad.{i}"]
        np.testing.assert_allclose(np.zeros(expected.shape) if g is None else g.numpy(),
                                   expected, rtol=1e-11, atol=1e-12)
        if g is not None:
            total = (g * v).sum() if total is None else total + (g * v).sum()
    second = [None] * count
    if total is not None and total.requires_grad:
        second = list(dp.autograd.grad(total, inputs, allow_unused=True))
    for i, h in enumerate(second):
        expected = RECORDED[f"{key}/second.{i}"]
        np.testing.assert_allclose(np.zeros(expected.shape) if h is None else h.numpy(),
                                   expected, rtol=1e-10, atol=1e-11)
