"""The engine's create_graph: ``backward(create_graph=True)`` and ``dp.autograd.grad`` -- their
arguments, errors, what the graph keeps and frees, and that first-order backward is unchanged.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray.nn import functional as F


def _x(values=(0.5, -1.0, 2.0)):
    return dp.tensor(list(values), dtype="float64", requires_grad=True)


# ---------------------------------------------------------------------------- backward()
def test_backward_create_graph_returns_differentiable_gradients(backend):
    x = _x()
    grads = (x ** 3).sum().backward(create_graph=True)
    g = grads[x]
    assert g.requires_grad and g.grad_fn is not None
    np.testing.assert_allclose(g.numpy(), 3 * x.numpy() ** 2)
    second = g.sum().backward()[x]
    np.testing.assert_allclose(second.numpy(), 6 * x.numpy())


def test_first_order_backward_gives_constants_and_frees_the_graph(backend):
    x = _x()
    loss = (x.tanh() * x).sum()
    g = loss.backward()[x]
    assert g.grad_fn is None and not g.requires_grad
    with pytest.raises(RuntimeError, match="already freed"):
        loss.backward()


def test_create_graph_keeps_the_graph_unless_told_not_to(backend):
    x = _x()
    loss = (x.sin() * x).sum()
    first = loss.backward(create_graph=True)[x]
    again = loss.backward()[x]  # the graph was kept
    np.testing.assert_allclose(first.numpy(), again.numpy())
    loss = (x.sin() * x).sum()
    loss.backward(create_graph=True, retain_graph=False)
    with pytest.raises(RuntimeError, match="already freed"):
        loss.backward()


def test_create_graph_values_equal_first_order_values(backend, rng):
    w = to_tensor(rng.standard_normal((4, 3)), requires_grad=True)
    x = to_tensor(rng.standard_normal((5, 4)))
    loss = F.cross_entropy(F.gelu(x @ w), dp.tensor([0, 2, 1, 1, 0]))
    plain = F.cross_entropy(F.gelu(x @ w), dp.tensor([0, 2, 1, 1, 0])).backward()[w]
    graphed = loss.backward(create_graph=True)[w]
    np.testing.assert_allclose(graphed.numpy(), plain.numpy(), rtol=1e-13, atol=1e-15)


def test_gradients_arithmetic_stays_in_the_graph(backend):
    x = _x()
    total = ((x ** 3).sum().backward(create_graph=True) * 2.0
             + (x ** 2).sum().backward(create_graph=True))[x]
    assert total.grad_fn is not None
    np.testing.assert_allclose(dp.autograd.grad(total.sum(), x)[0].numpy(),
                               12 * x.numpy() + 2)


def test_a_users_function_is_twice_differentiable(backend):
    class Cube(dp.Function):
        def forward(self, x):
            self.save(x)
            return x * x * x

        def backward(self, grad):
            (x,) = self.saved
            return grad * 3.0 * x * x

    x = _x()
    (g,) = dp.autograd.grad(Cube()(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(dp.autograd.grad(g.sum(), x)[0].numpy(), 6 * x.numpy())


def test_a_backward_outside_the_namespace_says_so(backend):
    class Odd(dp.Function):
        def forward(self, x):
            self.save(x)
            return x * 2.0

        def backward(self, grad):
            return self.xp.no_such_function(grad, *self.saved)

    x = _x()
    with pytest.raises(AttributeError, match="tensor namespace has no 'no_such_function'"):
        Odd()(x).sum().backward(create_graph=True)


def test_a_variable_changed_after_forward_is_refused(backend):
    x = _x()
    loss = (x * x).sum()
    x.data = x.data + 1.0  # what an optimizer step does
    with pytest.raises(RuntimeError, match="was given new values"):
        loss.backward(create_graph=True)


# ---------------------------------------------------------------------------- grad()
def test_grad_returns_one_gradient_per_input_as_pytorch(backend):
    x, y = _x(), _x((1.0, 2.0, 3.0))
    gx, gy = dp.autograd.grad((x * y).sum(), [x, y])
    np.testing.assert_allclose(gx.numpy(), y.numpy())
    np.testing.assert_allclose(gy.numpy(), x.numpy())
    (only,) = dp.autograd.grad((x * y).sum(), x)
    assert only.grad_fn is None


def test_grad_of_several_outputs_with_grad_outputs(backend):
    x = _x()
    a, b = x * 2.0, x * x
    (g,) = dp.autograd.grad([a, b], x, grad_outputs=[dp.ones_like(a), x.detach()])
    np.testing.assert_allclose(g.numpy(), 2.0 + 2 * x.numpy() ** 2)


def test_grad_with_respect_to_an_intermediate_tensor(backend):
    x = _x()
    h = x.exp()
    out = (h * h).sum() + x.sum()
    gh, gx = dp.autograd.grad(out, [h, x])
    np.testing.assert_allclose(gh.numpy(), 2 * np.exp(x.numpy()))
    np.testing.assert_allclose(gx.numpy(), 2 * np.exp(2 * x.numpy()) + 1.0)


def test_grad_of_an_intermediate_with_create_graph(backend):
    x = _x()
    h = x.sin()
    (gh,) = dp.autograd.grad((h ** 3).sum(), h, create_graph=True)  # 3 sin(x)^2
    np.testing.assert_allclose(dp.autograd.grad(gh.sum(), x)[0].numpy(),
                               6 * np.sin(x.numpy()) * np.cos(x.numpy()))


def test_grad_allow_unused(backend):
    x, unused = _x(), _x()
    with pytest.raises(RuntimeError, match=r"input 1 .* is not used by the outputs"):
        dp.autograd.grad((x * x).sum(), [x, unused])
    gx, gu = dp.autograd.grad((x * x).sum(), [x, unused], allow_unused=True)
    assert gu is None and gx is not None


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda x: dp.autograd.grad((x * x).sum(), dp.tensor([1.0])), RuntimeError,
     "input 0 .* is a constant"),
    (lambda x: dp.autograd.grad(dp.tensor(1.0), x), RuntimeError, "output 0 .* depends on no"),
    (lambda x: dp.autograd.grad(x * x, x), ValueError, "single-element tensor"),
    (lambda x: dp.autograd.grad((x * x).sum(), [x, 3]), TypeError, r"inputs\[1\] must be a"),
    (lambda x: dp.autograd.grad((x * x).sum(), []), TypeError, "non-empty sequence"),
    (lambda x: dp.autograd.grad([x * x], x, grad_outputs=[]), ValueError,
     "one entry per output"),
    (lambda x: dp.autograd.grad(x * x, x, grad_outputs=dp.ones(2)), ValueError,
     "does not match tensor shape"),
])
def test_grad_refuses_bad_arguments(call, error, message, backend):
    with pytest.raises(error, match=message):
        call(_x())


def test_grad_computes_only_what_leads_to_the_inputs(backend):
    """A gradient with respect to ``x`` asks no node for the weight's gradient (PyTorch
    prunes the same way): the create_graph walk hides the other edges from each node."""
    asked = []

    class Scale(dp.Function):
        def forward(self, x, w):
            self.save(x, w)
            return x * w

        def backward(self, grad):
            x, w = self.saved
            asked.append((self.needs_grad(0), self.needs_grad(1)))
            return (grad * w if self.needs_grad(0) else None,
                    grad * x if self.needs_grad(1) else None)

    x, w = _x(), _x((2.0, 3.0, 4.0))
    dp.autograd.grad((Scale()(x, w) ** 2).sum(), x, create_graph=True)
    assert asked == [(True, False)]


# ---------------------------------------------------------------------------- memory
def test_nodes_keep_inputs_only_when_they_rebuild_saved_values(backend):
    x = _x()
    assert not hasattr((x + 1.0).grad_fn, "saved_inputs")  # nothing saved
    assert not hasattr(F.relu(x).grad_fn, "saved_inputs")  # its output, used as a mask
    assert not hasattr(x.tanh().grad_fn, "saved_inputs")  # its output
    softplus = dp.softplus(x, beta=2.0).grad_fn
    assert softplus.saved_inputs[0] is x.data  # saved beta * x: the input rebuilds it


@pytest.mark.parametrize("op", [dp.tanh, dp.sigmoid, dp.exp, dp.softmax])
def test_ops_that_save_their_output_free_their_input(op):
    """As in PyTorch: the input of an op that saves its output (an intermediate no one else
    holds) is freed after forward, and create_graph still differentiates through it."""
    with dp.use_backend("numpy"):
        w = dp.randn(8, 8, dtype="float64", requires_grad=True)
        hidden = dp.randn(4, 8, dtype="float64") @ w
        kept = weakref.ref(hidden.data)
        out = op(hidden)
        del hidden
        gc.collect()
        assert kept() is None
        (g,) = dp.autograd.grad((out * out).sum(), w, create_graph=True)
        assert dp.autograd.grad(g.sum(), w)[0].shape == (8, 8)


def test_backward_frees_the_kept_inputs():
    with dp.use_backend("numpy"):
        w = dp.randn(32, 32, requires_grad=True)
        hidden = dp.randn(4, 32) @ w
        kept = weakref.ref(hidden.data)
        loss = dp.softplus(hidden, beta=2.0).sum()
        del hidden
        gc.collect()
        assert kept() is not None  # the softplus node keeps it, for create_graph
        loss.backward()
        gc.collect()
        assert kept() is None


def test_first_order_backward_after_create_graph_is_unchanged(backend, rng):
    """A create_graph pass leaves the graph as it was: a plain backward over it afterwards
    gives the same gradients, bit for bit, as one over a fresh graph."""
    data = rng.standard_normal((3, 4))

    def loss_of(w):
        return (F.softmax(to_tensor(data) @ w, dim=-1) ** 2).sum()

    w = to_tensor(rng.standard_normal((4, 2)), requires_grad=True)
    fresh = loss_of(w).backward()[w].numpy()
    loss = loss_of(w)
    loss.backward(create_graph=True)
    np.testing.assert_array_equal(loss.backward()[w].numpy(), fresh)


def test_saved_values_must_be_one_of_three():
    with pytest.raises(ValueError, match="saved_values must be one of 'inputs', 'constants', "
                                         "'output', got 'outputs'"):
        class Typo(dp.Function):
            saved_values = "outputs"
