"""Derivatives of derivatives of every op: for each case of the op table (``test_ops``'s
``EVERY_CASE``, so ops added there are covered too), every fused op and every loss
(``cases_second_order.py``), the gradient of ``s(x) = sum_i grad_i(x) . v_i`` -- a
Hessian-vector product of ``L(x) = sum(f(x) * w)`` -- against central differences of the
first derivative in float64 on every backend (element by element where the backend has a
kernel table, along random directions where it runs the references only: ``gradient_checks``);
fused ops with the kernel tables and with the references. Third derivatives of tanh, exp,
matmul and softmax likewise, against differences of the second derivative. The create_graph
gradients equal the plain ones.
"""

from __future__ import annotations

import numpy as np
import pytest
from cases_second_order import FUSED, LOSSES, SECOND_ORDER_CASES
from conftest import to_tensor
from gradient_checks import DIRECTIONS, element_by_element
from test_ops import EVERY_CASE

import dparray as dp
from dparray import kernels as _kernels

EPS = 1e-6


def _directional(arrays, rng):
    """A fixed random direction for each input, as constant tensors."""
    return [to_tensor(rng.standard_normal(a.shape)) for a in arrays]


def _first(function, tensors, cotangent, **options):
    return dp.autograd.grad((function(*tensors) * cotangent).sum(), tensors,
                            allow_unused=True, **options)


def _dot(grads, directions):
    total = None
    for g, v in zip(grads, directions, strict=True):
        if g is not None:
            term = (g * v).sum()
            total = term if total is None else total + term
    return total


def _as_numpy(grads, arrays):
    return [np.zeros(a.shape) if g is None else g.numpy() for g, a in zip(grads, arrays,
                                                                          strict=True)]


def check_second_order(function, arrays, rng, rtol=1e-4, atol=1e-5):
    """``d/dx_k sum_i grad_i . v_i`` against central differences of the first derivative."""
    tensors = [to_tensor(a, requires_grad=True) for a in arrays]
    out = function(*tensors)
    cotangent = to_tensor(rng.standard_normal(out.shape))
    directions = _directional(arrays, rng)
    graphed = _first(function, tensors, cotangent, create_graph=True)
    plain = _first(function, [to_tensor(a, requires_grad=True) for a in arrays], cotangent)
    for g, p in zip(graphed, plain, strict=True):  # create_graph computes the same gradient
        assert (g is None) == (p is None)
        if g is not None:
            np.testing.assert_allclose(g.numpy(), p.numpy(), rtol=1e-12, atol=1e-12)
    s = _dot(graphed, directions)
    analytic = [np.zeros(a.shape) for a in arrays]
    if s is not None and s.requires_grad:
        analytic = _as_numpy(dp.autograd.grad(s, tensors, allow_unused=True), arrays)

    def objective(moved_arrays):
        moved = [to_tensor(m, requires_grad=True) for m in moved_arrays]
        value = _dot(_first(function, moved, cotangent), directions)
        return 0.0 if value is None else value.item()

    if not element_by_element(dp.get_backend()):
        _check_along_random_directions(objective, arrays, analytic, rng)
        return
    for position, a in enumerate(arrays):
        for j in range(a.size):
            step = np.zeros(a.size)
            step[j] = EPS
            step = step.reshape(a.shape)
            plus, minus = list(arrays), list(arrays)
            plus[position], minus[position] = a + step, a - step
            numeric = (objective(plus) - objective(minus)) / (2 * EPS)
            value = analytic[position].reshape(-1)[j]
            assert abs(value - numeric) <= atol + rtol * abs(numeric), (
                f"second derivative of input {position} at flat index {j}: analytic {value!r}, "
                f"numeric {numeric!r}")


def _check_along_random_directions(objective, arrays, analytic, rng, rtol=1e-5, atol=1e-7):
    """``<grad s, w>`` against the central difference of ``s`` along ``w``, for
    ``DIRECTIONS`` random ``w`` (one array per input): ``gradient_checks``' policy for a
    backend without a kernel table."""
    for k in range(DIRECTIONS):
        w = [rng.standard_normal(a.shape) for a in arrays]
        value = sum(float(np.sum(g * d)) for g, d in zip(analytic, w, strict=True))
        numeric = (objective([a + EPS * d for a, d in zip(arrays, w, strict=True)])
                   - objective([a - EPS * d for a, d in zip(arrays, w, strict=True)])) / (2 * EPS)
        assert abs(value - numeric) <= atol + rtol * abs(numeric), (
            f"second derivative along random direction {k}: analytic {value!r}, "
            f"numeric {numeric!r}")


@pytest.mark.parametrize("case", EVERY_CASE, ids=repr)
def test_every_op_second_derivative_matches_finite_differences(case, backend, rng):
    check_second_order(case.function, case.inputs(rng), rng)


@pytest.mark.parametrize("case", FUSED, ids=repr)
def test_every_fused_op_second_derivative_matches_finite_differences(case, backend, kernels,
                                                                     rng):
    check_second_order(case.function, case.inputs(rng), rng)


@pytest.mark.filterwarnings("ignore:kl_div")  # reduction="mean" warns that it is not the KL
@pytest.mark.parametrize("case", LOSSES, ids=repr)
def test_every_loss_second_derivative_matches_finite_differences(case, backend, rng):
    check_second_order(case.function, case.inputs(rng), rng)


@pytest.mark.filterwarnings("ignore:kl_div")
def test_every_reference_op_has_a_second_order_case():
    """Each of dparray's Functions that a kernel table may replace is exercised by a fused
    case or an op-table case (the optimizers' updates and the matmul function are not graph
    nodes; SyncBatchNorm's node is batch norm's, and refuses create_graph under DataParallel:
    test_create_graph_parallel.py)."""
    exercised = set()
    rng = np.random.default_rng(0)
    for case in [*SECOND_ORDER_CASES, *EVERY_CASE]:
        tensors = [to_tensor(a, requires_grad=True) for a in case.inputs(rng)]
        with _kernels.reference_only():
            out = case.function(*tensors)
        stack = [out.grad_fn]
        while stack:
            node = stack.pop()
            if node is not None and type(node) not in exercised:
                exercised.add(type(node))
                stack.extend(p for p in node.parents if isinstance(p, dp.Function))
    references = {name: ref for name, ref in _kernels.references().items()
                  if isinstance(ref, type) and ref.__module__.startswith("dparray.")}
    missing = sorted(name for name, ref in references.items()
                     if ref not in exercised and name != "sync_batch_norm")
    assert missing == []


# ---------------------------------------------------------------------------- third order
def _third(function, arrays, rng):
    """``d/dx t(x)`` with ``t = sum_i d/dx_i (sum_j grad_j . v_j) . u_i``, against central
    differences of ``t``'s inner derivative (the second derivative)."""
    tensors = [to_tensor(a, requires_grad=True) for a in arrays]
    cotangent = to_tensor(rng.standard_normal(function(*tensors).shape))
    first_dirs, second_dirs = _directional(arrays, rng), _directional(arrays, rng)

    def second(ts, create_graph):
        grads = _first(function, ts, cotangent, create_graph=True)
        return dp.autograd.grad(_dot(grads, first_dirs), ts, allow_unused=True,
                                create_graph=create_graph)

    t = _dot(second(tensors, True), second_dirs)
    analytic = _as_numpy(dp.autograd.grad(t, tensors, allow_unused=True), arrays)
    for position, a in enumerate(arrays):
        for j in range(a.size):
            values = []
            for sign in (1.0, -1.0):
                shifted = a.copy()
                shifted.reshape(-1)[j] += sign * EPS
                moved = [to_tensor(shifted if i == position else b, requires_grad=True)
                         for i, b in enumerate(arrays)]
                values.append(_dot(second(moved, False), second_dirs).item())
            numeric = (values[0] - values[1]) / (2 * EPS)
            value = analytic[position].reshape(-1)[j]
            assert abs(value - numeric) <= 1e-5 + 1e-4 * abs(numeric), (position, j, value,
                                                                       numeric)


THIRD_ORDER = {
    "tanh": (dp.tanh, [(3, 4)]),
    "exp": (dp.exp, [(2, 3)]),
    "matmul": (lambda a, b: (a @ b) * (a @ b), [(2, 3), (3, 2)]),
    "softmax": (lambda x: x.softmax(axis=-1), [(2, 4)]),
}


@pytest.mark.parametrize("name", sorted(THIRD_ORDER))
def test_third_derivative_matches_finite_differences(name, backend, rng):
    function, shapes = THIRD_ORDER[name]
    _third(function, [rng.standard_normal(s) * 0.7 for s in shapes], rng)


def test_third_derivative_of_tanh_is_the_closed_form(backend):
    """tanh''' = -2 (1 - t^2)(1 - 3 t^2), elementwise, by three create_graph passes."""
    x = dp.tensor([-1.2, -0.3, 0.0, 0.4, 2.0], dtype="float64", requires_grad=True)
    (d1,) = dp.autograd.grad(x.tanh().sum(), x, create_graph=True)
    (d2,) = dp.autograd.grad(d1.sum(), x, create_graph=True)
    (d3,) = dp.autograd.grad(d2.sum(), x)
    t = np.tanh(x.numpy())
    np.testing.assert_allclose(d1.numpy(), 1 - t**2, rtol=1e-13)
    np.testing.assert_allclose(d2.numpy(), -2 * t * (1 - t**2), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(d3.numpy(), -2 * (1 - t**2) * (1 - 3 * t**2), rtol=1e-12)
