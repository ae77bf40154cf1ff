"""PyTorch habits that do not apply here fail with an error that says what to do instead."""

from __future__ import annotations

import pytest

import dparray as dp
from dparray import nn, optim

ADVICE = r"backward\(\) returns them as a Gradients mapping .*opt\.step\(grads\)"


def test_tensor_grad_says_backward_returns_the_gradients(backend):
    w = dp.ones(2, requires_grad=True)
    with pytest.raises(AttributeError, match=r"Tensor has no \.grad: .*" + ADVICE):
        _ = w.grad
    assert not hasattr(w, "grad")


@pytest.mark.parametrize("owner", [
    lambda: optim.SGD([dp.ones(2, requires_grad=True)], lr=0.1),
    lambda: nn.Linear(2, 2),
    lambda: dp.DataParallel(nn.Linear(2, 2), 2),
])
def test_zero_grad_says_there_is_nothing_to_zero(owner, backend):
    with pytest.raises(AttributeError, match=r"has no zero_grad\(\): .*nothing to zero"):
        owner().zero_grad()


def test_step_without_gradients_says_where_they_come_from(backend):
    w = dp.ones(2, requires_grad=True)
    opt = optim.Adam([w])
    (w * w).sum().backward()  # the PyTorch habit: backward for its side effect
    with pytest.raises(TypeError, match=r"Adam\.step needs the gradients: .*" + ADVICE):
        opt.step()
    assert w.tolist() == [1.0, 1.0]


def test_other_missing_attributes_are_plain_attribute_errors(backend):
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'weights'"):
        _ = nn.Linear(2, 2).weights
    with pytest.raises(AttributeError, match="'SGD' object has no attribute 'momentum'"):
        _ = optim.SGD([dp.ones(1, requires_grad=True)]).momentum


@pytest.mark.parametrize("clip", [nn.utils.clip_grad_norm_, nn.utils.clip_grad_value_])
def test_in_place_clipping_says_to_clip_the_returned_gradients(clip, backend):
    model = nn.Linear(2, 2)
    name = clip.__name__.removesuffix("_")
    with pytest.raises(TypeError, match=rf"^nn\.utils\.{name}_ clips gradients stored on the "
                                        rf"parameters: .*{ADVICE}.*optim\.{name}\(grads, "):
        clip(model.parameters(), 1.0)


def test_clipping_the_parameters_instead_of_the_gradients_gives_the_hint(backend):
    model = nn.Linear(2, 2)
    with pytest.raises(TypeError, match=r"^clip_grad_norm needs the Gradients that backward\(\) "
                                        r"returns, got list: .*" + ADVICE):
        optim.clip_grad_norm(model.parameters(), 1.0)
