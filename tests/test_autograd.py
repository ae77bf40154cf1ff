"""The engine: graph walks, accumulation, Gradients, grad mode, freeing, threads."""

from __future__ import annotations

import concurrent.futures
import contextvars

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray.autograd import Function


def test_shared_subexpression_accumulates(backend):
    x = to_tensor(np.array([0.5, -1.5]), requires_grad=True)
    a = x * x
    y = (a * a + a * 3.0).sum()  # x^4 + 3 x^2
    expected = 4 * np.array([0.5, -1.5]) ** 3 + 6 * np.array([0.5, -1.5])
    np.testing.assert_allclose(y.backward()[x].numpy(), expected, rtol=1e-14)


def test_same_variable_in_both_operands(backend):
    x = to_tensor(np.array([3.0]), requires_grad=True)
    assert (x * x).sum().backward()[x].tolist() == [6.0]
    assert (x + x + x).sum().backward()[x].tolist() == [3.0]


def test_gradients_only_for_variables_in_creation_order(backend):
    b = dp.tensor([1.0], requires_grad=True)
    a = dp.tensor([2.0], requires_grad=True)
    constant = dp.tensor([5.0])
    grads = (a * b * constant).sum().backward()
    assert list(grads) == [b, a]
    assert constant not in grads and len(grads) == 2
    with pytest.raises(KeyError, match="not a variable"):
        grads[constant]
    assert grads.get(constant) is None


def test_gradients_add_and_scale(backend):
    w = dp.tensor([1.0, 2.0], requires_grad=True)
    v = dp.tensor([3.0], requires_grad=True)
    g1 = (w * w).sum().backward()
    g2 = (w.sum() * v).sum().backward()
    total = g1 + g2
    assert total[w].tolist() == [5.0, 7.0] and total[v].tolist() == [3.0]
    assert (total * 2)[v].tolist() == [6.0] and (0.5 * total)[w].tolist() == [2.5, 3.5]
    assert (total / 4)[v].tolist() == [0.75]
    assert list(total) == [w, v]
    with pytest.raises(TypeError):
        total * "2"
    assert "Gradients(2 variables" in repr(total)


def test_backward_with_an_explicit_gradient(backend):
    x = to_tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    y = x * x
    grads = y.backward(to_tensor(np.array([1.0, 0.0, -1.0])))
    assert grads[x].tolist() == [2.0, 0.0, -6.0]


def test_backward_on_a_variable_itself(backend):
    w = dp.tensor([[4.0]], requires_grad=True)
    assert w.backward()[w].tolist() == [[1.0]]


def test_no_grad_builds_no_graph_and_enable_grad_restores(backend):
    w = dp.tensor([1.0], requires_grad=True)
    with dp.no_grad():
        assert not dp.is_grad_enabled()
        assert (w * 2).grad_fn is None
        with dp.enable_grad():
            assert (w * 2).grad_fn is not None
    assert dp.is_grad_enabled()

    @dp.no_grad()
    def inference():
        return w * 2

    assert inference().grad_fn is None


def test_retain_graph_allows_a_second_pass(backend):
    x = dp.tensor([2.0], requires_grad=True)
    y = (x * x * x).sum()
    first = y.backward(retain_graph=True)
    second = y.backward()
    assert first[x].tolist() == second[x].tolist() == [12.0]


def test_a_deep_graph_needs_no_recursion(backend):
    x = dp.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    assert y.sum().backward()[x].tolist() == [1.0]


def test_custom_function_with_a_bare_gradient(backend):
    class Square(Function):
        def forward(self, x):
            self.save(x)
            return x * x

        def backward(self, grad):
            (x,) = self.saved
            return 2.0 * x * grad

    x = dp.tensor(np.array([3.0, -1.0]), requires_grad=True)
    assert Square()(x).sum().backward()[x].tolist() == [6.0, -2.0]


def test_a_backward_that_returns_none_stops_that_path(backend):
    x = dp.tensor(np.array([1.0, 2.0]), requires_grad=True)
    w = dp.tensor(np.array([3.0]), requires_grad=True)
    mask = x > 1.5
    y = (dp.where(mask, x, 0.0) * w).sum()
    grads = y.backward()
    assert grads[x].tolist() == [0.0, 3.0] and grads[w].tolist() == [2.0]


def test_concurrent_backward_passes_do_not_interfere(backend):
    w = to_tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
    context = contextvars.copy_context()

    def gradient(scale):
        x = to_tensor(np.full((5, 3), scale))
        return ((x @ w).tanh().sum()).backward()[w].numpy()

    def step(scale):  # a worker runs in a copy of the caller's context, as DataParallel's do
        return context.copy().run(gradient, scale)

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(step, [0.1, 0.2, 0.3, 0.4] * 5))
    for scale, result in zip([0.1, 0.2, 0.3, 0.4] * 5, results, strict=True):
        np.testing.assert_array_equal(result, step(scale))


def test_a_backward_with_the_wrong_number_of_gradients_is_named(backend):
    class Broken(Function):
        def forward(self, a, b):
            return a + b

        def backward(self, grad):
            return (grad,)

    x = dp.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Broken\.backward returned 1 gradients for 2 inputs"):
        Broken()(x, x).sum().backward()
