"""``backward(inputs=...)``: PyTorch's argument, the gradients of some tensors only.

A GAN's generator step differentiates the discriminator's verdict on generated images but
updates the generator alone: ``loss.backward(inputs=generator.parameters())`` gives exactly
those gradients (what ``generator_optimizer.step`` takes), and the walk leaves out the edges
that lead only to the discriminator's weights, so their gradients are never computed. Checked
against the full backward pass and ``autograd.grad``, for variables and for tensors computed
from them, under ``create_graph``, with the graph kept, and inside DataParallel.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray.autograd import Function


def _net(rng):
    model = dp.nn.Sequential(dp.nn.Conv2d(2, 3, 3, dtype=dp.float64), dp.nn.Tanh(),
                             dp.nn.Flatten(), dp.nn.Linear(3 * 4 * 4, 2, dtype=dp.float64))
    x = to_tensor(rng.standard_normal((4, 2, 6, 6)), requires_grad=True)
    return model, x


def test_the_gradients_of_the_inputs_only_and_the_full_passes_values(backend, rng):
    model, x = _net(rng)
    model.to(backend)
    x = x.to(backend)
    wanted = model[0].parameters()
    full = (model(x) ** 2).sum().backward()
    some = (model(x) ** 2).sum().backward(inputs=wanted)
    assert list(some) == wanted
    for p in wanted:
        np.testing.assert_allclose(some[p].numpy(), full[p].numpy(), rtol=1e-14, atol=1e-15)


def test_a_tensor_computed_from_variables_gets_its_gradient(rng):
    x = to_tensor(rng.standard_normal((3, 4)), requires_grad=True)
    hidden = dp.sin(x) * 2.0
    loss = (hidden ** 3).sum()
    (want,) = dp.autograd.grad((dp.sin(x) * 2.0) ** 3, [x], dp.ones(3, 4))
    grads = loss.backward(inputs=[hidden, x])
    np.testing.assert_allclose(grads[hidden].numpy(), 3 * hidden.numpy() ** 2, rtol=1e-14)
    np.testing.assert_allclose(grads[x].numpy(), want.numpy(), rtol=1e-14)


def test_an_input_the_value_does_not_depend_on_is_left_out(rng):
    a = to_tensor(rng.standard_normal(3), requires_grad=True)
    b = to_tensor(rng.standard_normal(3), requires_grad=True)
    grads = (a * a).sum().backward(inputs=[a, b])
    assert list(grads) == [a]
    np.testing.assert_allclose(grads[a].numpy(), 2 * a.numpy())


def test_one_tensor_may_stand_for_the_sequence(rng):
    a = to_tensor(rng.standard_normal(3), requires_grad=True)
    b = to_tensor(rng.standard_normal(3), requires_grad=True)
    grads = (a * b).sum().backward(inputs=b)
    assert list(grads) == [b]
    np.testing.assert_array_equal(grads[b].numpy(), a.numpy())


ASKED: list[tuple[bool, bool]] = []  # which input gradients each _Recorded backward needed


class _Recorded(Function):
    """``a * b``, recording in ``ASKED`` which input gradients each backward was asked for."""

    def forward(self, a, b):
        self.save(a, b)
        return a * b

    def backward(self, grad):
        a, b = self.saved
        wanted = (self.needs_grad(0), self.needs_grad(1))
        ASKED.append(wanted)
        return (grad * b if wanted[0] else None, grad * a if wanted[1] else None)


def test_gradients_no_input_needs_are_not_computed_and_the_graph_stays_whole(rng):
    a = to_tensor(rng.standard_normal(3), requires_grad=True)
    b = to_tensor(rng.standard_normal(3), requires_grad=True)
    ASKED.clear()
    loss = _Recorded()(a, b).sum()
    grads = loss.backward(inputs=[a], retain_graph=True)
    assert ASKED == [(True, False)]
    np.testing.assert_array_equal(grads[a].numpy(), b.numpy())
    both = loss.backward()  # the kept graph still has both edges
    assert ASKED[-1] == (True, True)
    np.testing.assert_array_equal(both[b].numpy(), a.numpy())


def test_the_generator_step_of_a_gan(rng):
    generator = dp.nn.Linear(3, 4, dtype=dp.float64)
    critic = dp.nn.Linear(4, 1, dtype=dp.float64)
    noise = to_tensor(rng.standard_normal((5, 3)))
    verdict = critic(generator(noise)).mean()
    optimizer = dp.optim.SGD(generator.parameters(), lr=0.1)
    with pytest.raises(ValueError, match=r"backward\(inputs=model.parameters\(\)\)"):
        optimizer.step(verdict.backward(retain_graph=True))
    grads = verdict.backward(inputs=generator.parameters())
    before = [p.numpy().copy() for p in generator.parameters()]
    optimizer.step(grads)
    for p, old in zip(generator.parameters(), before, strict=True):
        np.testing.assert_allclose(p.numpy(), old - 0.1 * grads[p].numpy(), rtol=1e-14)


def test_with_create_graph_the_gradients_differentiate_again(rng):
    x = to_tensor(rng.standard_normal(4), requires_grad=True)
    w = to_tensor(rng.standard_normal(4), requires_grad=True)
    grads = (x ** 3 * w).sum().backward(inputs=[x], create_graph=True)
    assert list(grads) == [x]
    again = grads[x].sum().backward(inputs=[x])
    np.testing.assert_allclose(again[x].numpy(), 6 * x.numpy() * w.numpy(), rtol=1e-14)


@pytest.mark.parametrize("workers", [2, 3])
def test_under_data_parallel(workers, rng):
    model, x = _net(rng)
    wanted = model[3].parameters()
    full = (model(x) ** 2).sum().backward()
    parallel = dp.DataParallel(model, workers)
    some = (parallel(x) ** 2).sum().backward(inputs=wanted)
    assert list(some) == wanted
    for p in wanted:
        np.testing.assert_allclose(some[p].numpy(), full[p].numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("inputs, error, message", [
    ([], TypeError, r"^backward: inputs must be a Tensor or a non-empty sequence of Tensors, "
                    r"got list"),
    ([1.0], TypeError, r"^backward: inputs\[0\] must be a Tensor, got float"),
    ("a", TypeError, r"^backward: inputs must be a Tensor or a non-empty sequence"),
])
def test_bad_inputs_are_refused_before_any_work(inputs, error, message, rng):
    a = to_tensor(rng.standard_normal(3), requires_grad=True)
    loss = (a * a).sum()
    with pytest.raises(error, match=message):
        loss.backward(inputs=inputs)
    np.testing.assert_allclose(loss.backward()[a].numpy(), 2 * a.numpy())  # graph untouched


def test_a_constant_input_is_refused(rng):
    a = to_tensor(rng.standard_normal(3), requires_grad=True)
    constant = dp.ones(3)
    with pytest.raises(RuntimeError, match=r"^backward: input 0 \(shape \(3,\)\) is a constant"):
        (a * constant).sum().backward(inputs=[constant])
