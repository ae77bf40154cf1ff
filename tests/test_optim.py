"""Optimizers against the update rules written out here, resuming from state dicts, clipping,
schedules, errors, and real training: two spirals and a small convnet."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray import nn, optim
from dparray.nn import functional as F


def _quadratic_grads(ws, targets):
    loss = None
    for w, t in zip(ws, targets, strict=True):
        term = ((w - t) ** 2).sum() * 0.5
        loss = term if loss is None else loss + term
    return loss.backward()


def _run(optimizer_factory, steps=5, rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    start = [rng.standard_normal((3, 2)), rng.standard_normal(4)]
    targets = [rng.standard_normal((3, 2)), rng.standard_normal(4)]
    ws = [to_tensor(s, requires_grad=True) for s in start]
    opt = optimizer_factory(ws)
    history = []
    for _ in range(steps):
        opt.step(_quadratic_grads(ws, [to_tensor(t) for t in targets]))
        history.append([w.numpy().copy() for w in ws])
    return start, targets, history, opt, ws


@pytest.mark.parametrize("momentum, dampening, nesterov, decay", [
    (0.0, 0.0, False, 0.0), (0.9, 0.0, False, 0.0), (0.9, 0.3, False, 0.01),
    (0.8, 0.0, True, 0.1)])
def test_sgd_follows_the_update_rule(momentum, dampening, nesterov, decay, backend):
    lr = 0.1
    start, targets, history, _, _ = _run(lambda ws: optim.SGD(
        ws, lr=lr, momentum=momentum, dampening=dampening, nesterov=nesterov,
        weight_decay=decay))
    for w0, t, i in zip(start, targets, range(2), strict=True):
        w, buf = w0.copy(), None
        for step in range(5):
            g = (w - t) + decay * w
            if momentum:
                buf = g if buf is None else momentum * buf + (1 - dampening) * g
                g = g + momentum * buf if nesterov else buf
            w = w - lr * g
            np.testing.assert_allclose(history[step][i], w, rtol=1e-12)


@pytest.mark.parametrize("kind", ["Adam", "AdamW"])
def test_adam_follows_the_update_rule(kind, backend):
    lr, b1, b2, eps, decay = 0.05, 0.8, 0.95, 1e-6, 0.1
    start, targets, history, _, _ = _run(lambda ws: getattr(optim, kind)(
        ws, lr=lr, betas=(b1, b2), eps=eps, weight_decay=decay))
    for w0, t, i in zip(start, targets, range(2), strict=True):
        w, m, v = w0.copy(), 0.0, 0.0
        for step in range(1, 6):
            g = w - t
            if kind == "Adam":
                g = g + decay * w
            else:
                w = w * (1 - lr * decay)
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            m_hat, v_hat = m / (1 - b1**step), v / (1 - b2**step)
            w = w - lr * m_hat / (np.sqrt(v_hat) + eps)
            np.testing.assert_allclose(history[step - 1][i], w, rtol=1e-10)


@pytest.mark.parametrize("factory", [
    lambda ws: optim.SGD(ws, lr=0.1, momentum=0.9, nesterov=True),
    lambda ws: optim.Adam(ws, lr=0.01),
    lambda ws: optim.AdamW(ws, lr=0.01)], ids=["sgd", "adam", "adamw"])
def test_training_resumes_exactly_from_state_dicts(factory, backend):
    _, targets, history, opt, _ws = _run(factory, steps=6)
    _, _, _, resumed_opt, resumed = _run(factory, steps=3)
    saved = copy.deepcopy(opt.state_dict())
    # rebuild after 3 steps from the 3-step run's state, then continue 3 more
    fresh = [to_tensor(w.numpy().copy(), requires_grad=True) for w in resumed]
    new_opt = factory(fresh)
    new_opt.load_state_dict(copy.deepcopy(resumed_opt.state_dict()))
    for _ in range(3):
        new_opt.step(_quadratic_grads(fresh, [to_tensor(t) for t in targets]))
    for got, want in zip(fresh, history[-1], strict=True):
        np.testing.assert_array_equal(got.numpy(), want)
    assert saved["param_groups"][0]["params"] == [0, 1] and set(saved["state"]) == {0, 1}


def test_load_state_dict_checks_before_changing(backend):
    w = dp.ones(3, requires_grad=True)
    opt = optim.Adam([w])
    opt.step((w * w).sum().backward())
    state = opt.state_dict()
    other = optim.Adam([dp.ones(4, requires_grad=True)])
    with pytest.raises(ValueError, match=r"exp_avg of parameter 0 has shape \(3,\), not \(4,\)"):
        other.load_state_dict(state)
    assert other.state == {}
    with pytest.raises(ValueError, match="groups do not match"):
        optim.Adam([dp.ones(3, requires_grad=True), dp.ones(1, requires_grad=True)]
                   ).load_state_dict(state)


def test_parameter_groups_and_schedules(backend):
    a, b = dp.ones(1, requires_grad=True), dp.ones(1, requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    opt.step((a + b).sum().backward())
    assert a.item() == pytest.approx(0.9) and b.item() == pytest.approx(0.0)
    step = optim.StepLR(opt, step_size=2, gamma=0.5)
    rates = []
    for _ in range(5):
        step.step()
        rates.append(step.get_last_lr())
    assert rates == [[0.1, 1.0], [0.05, 0.5], [0.05, 0.5], [0.025, 0.25], [0.025, 0.25]]
    opt2 = optim.SGD([dp.ones(1, requires_grad=True)], lr=1.0)
    cosine = optim.CosineAnnealingLR(opt2, T_max=4, eta_min=0.2)
    values = []
    for _ in range(4):
        cosine.step()
        values.append(cosine.get_last_lr()[0])
    expected = [0.2 + 0.8 * (1 + math.cos(math.pi * t / 4)) / 2 for t in range(1, 5)]
    assert values == pytest.approx(expected)
    state = cosine.state_dict()
    again = optim.CosineAnnealingLR(optim.SGD([dp.ones(1, requires_grad=True)], lr=1.0), T_max=4,
                                    eta_min=0.2)
    again.load_state_dict(state)
    assert again.last_epoch == 4


def test_clip_grad_norm(backend):
    w = dp.tensor([3.0, 0.0], dtype="float64", requires_grad=True)
    v = dp.tensor([4.0], dtype="float64", requires_grad=True)
    grads = (w * w * 0.5).sum().backward() + (v * v * 0.5).sum().backward()  # grads 3, 0, 4
    assert optim.grad_norm(grads).item() == pytest.approx(5.0)
    clipped = optim.clip_grad_norm(grads, 1.0)
    assert clipped[w].tolist() == pytest.approx([0.6, 0.0], rel=1e-6)
    assert clipped[v].tolist() == pytest.approx([0.8], rel=1e-6)
    assert optim.clip_grad_norm(grads, 10.0)[v].tolist() == [4.0]
    with pytest.raises(ValueError, match="max_norm must be a positive number"):
        optim.clip_grad_norm(grads, 0)


def test_optimizer_errors(backend):
    w = dp.ones(2, requires_grad=True)
    stranger = dp.ones(3, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    grads = (w.sum() + stranger.sum()).backward()
    with pytest.raises(ValueError, match=r"1 gradient\(s\) for tensors this optimizer does not "
                                         r"update \(shapes \[\(3,\)\]\)"):
        opt.step(grads)
    assert w.tolist() == [1.0, 1.0]  # nothing half-applied
    with pytest.raises(ValueError, match=r"lr must be a non-negative number, got -0\.1"):
        optim.SGD([w], lr=-0.1)
    with pytest.raises(ValueError, match="betas must be two numbers"):
        optim.Adam([w], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="nesterov needs momentum"):
        optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.Adam([])
    with pytest.raises(TypeError, match="needs the Gradients that backward"):
        opt.step({w: dp.ones(2)})


# --------------------------------------------------------------------------- real training
def _two_spirals(points_per_class=200, seed=0):
    rng = np.random.default_rng(seed)
    t = np.sqrt(rng.uniform(0.05, 1.0, points_per_class)) * 3 * math.pi
    arm = np.stack([t * np.cos(t), t * np.sin(t)], axis=1) / (3 * math.pi)
    x = np.concatenate([arm, -arm]) + rng.normal(0, 0.01, (2 * points_per_class, 2))
    y = np.concatenate([np.zeros(points_per_class), np.ones(points_per_class)]).astype(np.int64)
    return x.astype(np.float32), y


@pytest.mark.parametrize("name, factory, steps", [
    ("sgd", lambda p: optim.SGD(p, lr=0.3, momentum=0.9, nesterov=True), 1500),
    ("adam", lambda p: optim.Adam(p, lr=0.01), 700),
    ("adamw", lambda p: optim.AdamW(p, lr=0.01, weight_decay=1e-4), 700),
])
def test_mlp_learns_two_spirals(name, factory, steps):
    dp.manual_seed(1)
    x, y = _two_spirals()
    model = nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                          nn.Linear(64, 2))
    opt = factory(model.parameters())
    inputs, labels = dp.tensor(x), dp.tensor(y)
    for _ in range(steps):
        opt.step(F.cross_entropy(model(inputs), labels).backward())
    with dp.no_grad():
        accuracy = (model(inputs).numpy().argmax(axis=1) == y).mean()
    assert accuracy >= 0.98, (name, accuracy)


def test_convnet_loss_halves_in_50_steps():
    dp.manual_seed(2)
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, 96)
    images = rng.normal(0, 0.3, (96, 1, 8, 8)).astype(np.float32)
    for i, label in enumerate(labels):  # each class is a bar in its own place and direction
        if label == 0:
            images[i, 0, 2, :] += 1.0
        elif label == 1:
            images[i, 0, :, 5] += 1.0
        else:
            images[i, 0, np.arange(8), np.arange(8)] += 1.0
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2),
                          nn.Flatten(), nn.Linear(8 * 2 * 2, 3))
    opt = optim.Adam(model.parameters(), lr=0.01)
    x, y = dp.tensor(images), dp.tensor(labels)
    losses = []
    for _ in range(50):
        loss = F.cross_entropy(model(x), y)
        losses.append(loss.item())
        opt.step(loss.backward())
    assert losses[-1] < losses[0] / 2, (losses[0], losses[-1])


def test_load_state_dict_with_a_bad_option_changes_nothing(backend):
    a, b = dp.ones(1, requires_grad=True), dp.ones(1, requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1)
    state = opt.state_dict()
    state["param_groups"][1]["lr"] = -1.0
    with pytest.raises(ValueError, match="lr must be a non-negative number"):
        opt.load_state_dict(state)
    state["param_groups"][0]["lr"] = 0.5
    with pytest.raises(ValueError):
        opt.load_state_dict(state)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.1]
