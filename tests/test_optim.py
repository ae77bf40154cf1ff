"""Optimizers against the update rules written out here, resuming from state dicts, clipping,
schedules, refused input that changes nothing (with a property test over random state dicts),
and real training: two spirals and a small convnet."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from conftest import to_tensor
from hypothesis import given
from hypothesis import strategies as st

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
    with pytest.raises(ValueError, match=r"clip_grad_norm: max_norm must be greater than 0\.0"):
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
    with pytest.raises(ValueError, match=r"SGD: lr must be at least 0\.0, got -0\.1"):
        optim.SGD([w], lr=-0.1)
    with pytest.raises(ValueError, match=r"Adam: betas\[1\] must be less than 1\.0, got 1\.0"):
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
@pytest.mark.slow
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


@pytest.mark.slow
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
    with pytest.raises(ValueError, match=r"parameter group 1: lr must be at least 0\.0, got -1\.0"):
        opt.load_state_dict(state)
    state["param_groups"][0]["lr"] = 0.5
    with pytest.raises(ValueError):
        opt.load_state_dict(state)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.1]


# --------------------------------------------------------------------------- refused input
OPTIMIZERS = {
    "SGD": lambda params, **kw: optim.SGD(params, **{"lr": 0.1, "momentum": 0.9, **kw}),
    "Adam": lambda params, **kw: optim.Adam(params, **{"lr": 0.01, **kw}),
    "AdamW": lambda params, **kw: optim.AdamW(params, **{"lr": 0.01, **kw}),
}
BAD_OPTIONS = [
    ("SGD", "lr", math.nan, ValueError, "lr must be a finite number, got nan"),
    ("SGD", "lr", math.inf, ValueError, "lr must be a finite number, got inf"),
    ("SGD", "lr", -1.0, ValueError, r"lr must be at least 0\.0, got -1\.0"),
    ("SGD", "lr", "0.1", TypeError, "lr must be a number, got '0.1'"),
    ("SGD", "lr", None, TypeError, "lr must be a number, got None"),
    ("SGD", "momentum", math.nan, ValueError, "momentum must be a finite number"),
    ("SGD", "momentum", -math.inf, ValueError, "momentum must be a finite number"),
    ("SGD", "dampening", math.inf, ValueError, "dampening must be a finite number"),
    ("SGD", "weight_decay", math.nan, ValueError, "weight_decay must be a finite number"),
    ("SGD", "weight_decay", [0.1], TypeError, "weight_decay must be a number"),
    ("SGD", "nesterov", "yes", TypeError, "nesterov must be a bool, got 'yes'"),
    ("Adam", "lr", math.nan, ValueError, "lr must be a finite number"),
    ("Adam", "eps", math.nan, ValueError, "eps must be a finite number"),
    ("Adam", "eps", math.inf, ValueError, "eps must be a finite number"),
    ("Adam", "eps", -1e-8, ValueError, "eps must be at least 0"),
    ("Adam", "weight_decay", math.inf, ValueError, "weight_decay must be a finite number"),
    ("Adam", "betas", (math.nan, 0.9), ValueError, r"betas\[0\] must be a finite number"),
    ("Adam", "betas", (0.9, math.inf), ValueError, r"betas\[1\] must be a finite number"),
    ("Adam", "betas", (0.9, -0.1), ValueError, r"betas\[1\] must be at least 0"),
    ("Adam", "betas", (0.9,), ValueError, r"betas must be a pair of numbers, got \(0\.9,\)"),
    ("Adam", "betas", 0.9, TypeError, "betas must be a pair of numbers, got 0.9"),
    ("Adam", "betas", ("0.9", 0.99), TypeError, r"betas\[0\] must be a number"),
    ("AdamW", "weight_decay", math.nan, ValueError, "weight_decay must be a finite number"),
    ("AdamW", "betas", (0.9, 1.0), ValueError, r"betas\[1\] must be less than 1\.0"),
]
BAD_OPTION_IDS = [f"{kind}-{key}-{value!r}" for kind, key, value, *_ in BAD_OPTIONS]


def _snapshot(opt):
    """Everything an optimizer holds, as plain values, to compare before and after a call."""
    state = opt.state_dict()
    return ({i: {k: v.numpy().tolist() if isinstance(v, dp.Tensor) else v
                 for k, v in entry.items()} for i, entry in state["state"].items()},
            copy.deepcopy(state["param_groups"]))


def _trained(kind, backend_name=None, **options):
    a = dp.tensor([1.0, -2.0], requires_grad=True, backend=backend_name)
    b = dp.tensor([[0.5], [3.0]], requires_grad=True, backend=backend_name)
    opt = OPTIMIZERS[kind]([a, b], **options)
    opt.step(((a * a).sum() + (b * b * b).sum()).backward())
    return opt, a, b


@pytest.mark.parametrize("kind, key, value, error, message", BAD_OPTIONS, ids=BAD_OPTION_IDS)
def test_bad_hyperparameters_are_refused_by_the_constructor(kind, key, value, error, message,
                                                            backend):
    w = dp.ones(2, requires_grad=True)
    with pytest.raises(error, match=f"^{kind}: {message}"):
        OPTIMIZERS[kind]([w], **{key: value})
    with pytest.raises(error, match=f"^{kind}: parameter group 1: {message}"):
        OPTIMIZERS[kind]([{"params": [dp.ones(1, requires_grad=True)]},
                          {"params": [w], key: value}])


@pytest.mark.parametrize("kind, key, value, error, message", BAD_OPTIONS, ids=BAD_OPTION_IDS)
def test_bad_hyperparameters_are_refused_by_load_state_dict(kind, key, value, error, message,
                                                            backend):
    opt, a, b = _trained(kind)
    before, params = _snapshot(opt), (a.tolist(), b.tolist())
    state = opt.state_dict()
    state["param_groups"][0][key] = value
    with pytest.raises(error, match=f"^{kind}.load_state_dict: parameter group 0: {message}"):
        opt.load_state_dict(state)
    assert _snapshot(opt) == before
    opt.step(((a * a).sum() + b.sum()).backward())  # still usable
    assert (a.tolist(), b.tolist()) != params


@pytest.mark.parametrize("kind, key, value, error, message", BAD_OPTIONS, ids=BAD_OPTION_IDS)
def test_step_refuses_bad_hyperparameters_set_on_a_group(kind, key, value, error, message,
                                                         backend):
    a, b = dp.ones(2, requires_grad=True), dp.ones(1, requires_grad=True)
    opt = OPTIMIZERS[kind]([{"params": [a]}, {"params": [b]}])
    opt.param_groups[1][key] = value
    with pytest.raises(error, match=f"^{kind}.step: parameter group 1: {message}"):
        opt.step((a.sum() + b.sum()).backward())
    assert a.tolist() == [1.0, 1.0] and b.tolist() == [1.0] and opt.state == {}


def test_nesterov_is_checked_in_every_group(backend):
    w = dp.ones(1, requires_grad=True)
    with pytest.raises(ValueError, match="parameter group 0: nesterov needs momentum > 0"):
        optim.SGD([{"params": [w], "momentum": 0.0}], lr=0.1, momentum=0.9, nesterov=True)


@pytest.mark.parametrize("params, error, message", [
    ([{"lr": 0.1}], ValueError, r"^SGD: parameter group 0 has no 'params'"),
    ([{"params": 5}], TypeError, r"^SGD: parameter group 0: 'params' must be an iterable of "
                                 r"Tensors, got int"),
    ([{"params": "w"}], TypeError, "'params' must be an iterable of Tensors, got str"),
    ([{"params": [1.0]}], TypeError, "parameter group 0: optimizes Tensors, got float"),
    (5, TypeError, "^SGD needs an iterable of Tensors or of parameter-group dicts, got int"),
    ({"params": []}, TypeError, "needs an iterable of Tensors .* got dict"),
    ([], ValueError, "SGD got an empty parameter list"),
])
def test_bad_parameter_lists_are_clear_errors(params, error, message, backend):
    with pytest.raises(error, match=message):
        optim.SGD(params, lr=0.1)


def test_parameter_list_spellings(backend):
    w = dp.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match=r"needs an iterable of Tensors .* got Tensor"):
        optim.SGD(w, lr=0.1)
    with pytest.raises(TypeError, match="either Tensors or parameter-group dicts, not both; "
                                        "item 0 is a Tensor, item 1 a dict"):
        optim.SGD([w, {"params": [dp.ones(1, requires_grad=True)]}], lr=0.1)
    opt = optim.SGD([{"params": w}], lr=0.5)  # one tensor as a group's params, as in PyTorch
    opt.step((w * w).sum().backward())
    assert opt.param_groups[0]["params"] == [w] and w.tolist() == [0.0, 0.0]
    generated = optim.SGD((p for p in [w]), lr=0.1)
    assert generated.param_groups[0]["params"][0] is w


def _corrupt(state, kind, how):
    """``state`` (an optimizer state dict, deep-copied) with one thing broken."""
    entry = state["state"][1]
    buffer = "momentum_buffer" if kind == "SGD" else "exp_avg"
    if how == "wrong shape":
        entry[buffer] = dp.zeros(2, 2)
    elif how == "int dtype":
        entry[buffer] = dp.zeros(2, 1, dtype="int64")
    elif how == "not a tensor":
        entry[buffer] = np.zeros((2, 1), np.float32)
    elif how == "unknown key":
        entry["velocity"] = dp.zeros(2, 1)
    elif how == "missing key":
        del entry[buffer]
    elif how == "string step":
        entry["step"] = "3"
    elif how == "negative step":
        entry["step"] = -1
    elif how == "float step":
        entry["step"] = 1.0
    elif how == "no such parameter":
        state["state"][7] = dict(entry)
    elif how == "string state key":
        state["state"]["0"] = state["state"].pop(0)
    elif how == "entry not a mapping":
        state["state"][1] = [1, 2]
    elif how == "duplicate id":
        state["param_groups"][0]["params"] = [0, 0]
    elif how == "id not an int":
        state["param_groups"][0]["params"] = [0, "1"]
    elif how == "group without params":
        del state["param_groups"][0]["params"]
    elif how == "group not a mapping":
        state["param_groups"][0] = [0, 1]
    elif how == "too many groups":
        state["param_groups"].append({"params": []})
    elif how == "state not a mapping":
        state["state"] = []
    elif how == "no state":
        del state["state"]
    return state


CORRUPTIONS = [
    ("SGD", "wrong shape", ValueError, r"momentum_buffer of parameter 1 has shape \(2, 2\), "
                                       r"not \(2, 1\)"),
    ("Adam", "wrong shape", ValueError, r"exp_avg of parameter 1 has shape \(2, 2\)"),
    ("Adam", "int dtype", ValueError, "exp_avg of parameter 1 has dtype int64; optimizer state "
                                      "is floating"),
    ("SGD", "not a tensor", TypeError, "momentum_buffer of parameter 1 must be a Tensor"),
    ("Adam", "unknown key", ValueError, "the state of parameter 1 for Adam needs 'exp_avg', "
                                        "'exp_avg_sq', 'step': unknown 'velocity'"),
    ("SGD", "unknown key", ValueError, "unknown 'velocity'"),
    ("Adam", "missing key", ValueError, "missing 'exp_avg'"),
    ("Adam", "string step", TypeError, "step of parameter 1 must be an int, got '3'"),
    ("Adam", "negative step", ValueError, "step of parameter 1 must be at least 0, got -1"),
    ("Adam", "float step", TypeError, r"step of parameter 1 must be an int, got 1\.0"),
    ("Adam", "no such parameter", ValueError, "state for parameter id 7, which no group lists"),
    ("SGD", "string state key", TypeError, "each state key must be an int, got '0'"),
    ("SGD", "entry not a mapping", TypeError, "the state of parameter 1 must be a mapping"),
    ("SGD", "duplicate id", ValueError, "parameter id 0 appears twice"),
    ("Adam", "id not an int", TypeError, "each parameter id must be an int, got '1'"),
    ("SGD", "group without params", ValueError, "parameter group 0 has no 'params'"),
    ("SGD", "group not a mapping", TypeError, "parameter group 0 must be a mapping"),
    ("Adam", "too many groups", ValueError, r"groups do not match .*\(2 groups, not 1\)"),
    ("SGD", "state not a mapping", TypeError, "'state' must be a mapping, got list"),
    ("SGD", "no state", ValueError, "the state dict has no 'state'"),
]


@pytest.mark.parametrize("kind, how, error, message", CORRUPTIONS,
                         ids=[f"{kind}-{how}" for kind, how, *_ in CORRUPTIONS])
def test_load_state_dict_refuses_bad_state_and_changes_nothing(kind, how, error, message,
                                                               backend):
    opt, a, b = _trained(kind)
    before = _snapshot(opt)
    state = _corrupt(copy.deepcopy(opt.state_dict()), kind, how)
    with pytest.raises(error, match=message):
        opt.load_state_dict(state)
    assert _snapshot(opt) == before
    values = (a.tolist(), b.tolist())
    opt.step(((a * a).sum() + (b * b).sum()).backward())
    assert (a.tolist(), b.tolist()) != values


def test_load_state_dict_refuses_non_mappings(backend):
    opt, _, _ = _trained("SGD")
    with pytest.raises(TypeError, match=r"SGD\.load_state_dict needs a mapping, got list"):
        opt.load_state_dict([])
    with pytest.raises(TypeError, match="'param_groups' must be a list, got dict"):
        opt.load_state_dict({"state": {}, "param_groups": {}})


def test_loaded_state_is_cast_and_moved_to_the_parameter(backend):
    source, _, _ = _trained("Adam", backend_name="numpy")
    state = source.state_dict()
    state["state"][0]["exp_avg"] = state["state"][0]["exp_avg"].astype("float64")
    a = dp.tensor([1.0, -2.0], requires_grad=True)
    b = dp.tensor([[0.5], [3.0]], requires_grad=True)
    opt = optim.Adam([a, b], lr=0.01)
    opt.load_state_dict(state)
    loaded = opt.state_dict()["state"][0]["exp_avg"]
    assert loaded.dtype == dp.float32 and loaded.backend is backend  # as PyTorch casts
    np.testing.assert_allclose(loaded.numpy(), state["state"][0]["exp_avg"].numpy(), rtol=1e-7)
    assert opt.state_dict()["state"][0]["step"] == 1


def test_step_checks_the_state_it_reads_before_changing_anything(backend):
    opt, a, b = _trained("Adam")
    values = (a.tolist(), b.tolist())
    opt.state[b]["exp_avg_sq"] = opt.state[b]["exp_avg_sq"][:1, :]  # as if corrupted by hand
    with pytest.raises(ValueError, match=r"^Adam.step: exp_avg_sq of parameter 1 has shape "
                                         r"\(1, 1\), not \(2, 1\)"):
        opt.step(((a * a).sum() + (b * b).sum()).backward())
    assert (a.tolist(), b.tolist()) == values  # the first parameter was not updated either
    opt.state[b]["step"] = "2"
    with pytest.raises(TypeError, match="step of parameter 1 must be an int"):
        opt.step(((a * a).sum() + (b * b).sum()).backward())
    assert (a.tolist(), b.tolist()) == values and opt.state[a]["step"] == 1


def test_step_refuses_a_gradient_that_is_not_a_tensor(backend):
    w = dp.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match="Gradients map tensors to tensors, got Tensor -> "
                                        "ndarray"):
        dp.Gradients({w: np.ones(2)})


@pytest.mark.parametrize("kind, options", [
    ("SGD", {"momentum": 0.9, "weight_decay": 0.1}),
    ("SGD", {"momentum": 0.8, "nesterov": True}),
    ("Adam", {"weight_decay": 0.1}),
    ("AdamW", {}),
])
def test_a_float64_gradient_keeps_a_float32_parameter_float32(kind, options, backend):
    rng = np.random.default_rng(3)
    start = rng.standard_normal((3, 2)).astype(np.float32)
    grads = [rng.standard_normal((3, 2)) for _ in range(3)]
    results = []
    for cast in (False, True):
        w = dp.tensor(start, requires_grad=True)
        opt = OPTIMIZERS[kind]([w], **options)
        for g in grads:
            g = g.astype(np.float32) if cast else g
            opt.step(dp.Gradients({w: dp.tensor(g)}))
            assert w.dtype == dp.float32
            assert all(v.dtype == dp.float32 for v in opt.state_dict()["state"][0].values()
                       if isinstance(v, dp.Tensor))
        results.append(w.numpy())
    # the float64 gradient is cast first, exactly as if it had been float32
    np.testing.assert_array_equal(results[0], results[1])


def test_clip_refuses_what_is_not_gradients(backend):
    w = dp.ones(2, requires_grad=True)
    grads = (w * w).sum().backward()
    with pytest.raises(TypeError, match=r"^grad_norm needs the Gradients that backward"):
        optim.grad_norm({w: dp.ones(2)})
    with pytest.raises(TypeError, match=r"^clip_grad_norm needs the Gradients that backward"):
        optim.clip_grad_norm([grads], 1.0)
    with pytest.raises(ValueError, match="at least one gradient, got an empty Gradients"):
        optim.grad_norm(dp.Gradients())
    with pytest.raises(TypeError, match="max_norm must be a number, got '1'"):
        optim.clip_grad_norm(grads, "1")
    with pytest.raises(ValueError, match="max_norm must be a finite number, got nan"):
        optim.clip_grad_norm(grads, math.nan)
    assert optim.clip_grad_norm(grads, math.inf)[w].tolist() == [2.0, 2.0]


def test_schedulers_check_their_arguments_and_state(backend):
    opt = optim.SGD([dp.ones(1, requires_grad=True)], lr=1.0)
    with pytest.raises(TypeError, match=r"StepLR: step_size must be an int, got 1\.5"):
        optim.StepLR(opt, 1.5)
    with pytest.raises(ValueError, match="StepLR: gamma must be a finite number"):
        optim.StepLR(opt, 1, gamma=math.nan)
    with pytest.raises(ValueError, match="CosineAnnealingLR: T_max must be at least 1"):
        optim.CosineAnnealingLR(opt, 0)
    schedule = optim.StepLR(opt, 2)
    for state, error, message in [
        ({"base_lrs": [math.nan], "last_epoch": 1}, ValueError, "base_lrs must be a finite"),
        ({"base_lrs": [0.1, 0.2], "last_epoch": 1}, ValueError, "2 base_lrs for 1 parameter"),
        ({"base_lrs": [0.1], "last_epoch": "1"}, TypeError, "last_epoch must be an int"),
        ({"base_lrs": [0.1], "last_epoch": -1}, ValueError, "last_epoch must be at least 0"),
        ({"base_lrs": 0.1, "last_epoch": 1}, TypeError, "base_lrs must be a list"),
        ({"last_epoch": 1}, ValueError, "the state dict has no 'base_lrs'"),
    ]:
        with pytest.raises(error, match=message):
            schedule.load_state_dict(state)
        assert schedule.state_dict() == {"base_lrs": [1.0], "last_epoch": 0}


# --------------------------------------------------------------------------- property test
_VALUES = ["0", "1", "3", "-1", "0.5", "nan", "inf", "'x'", "None", "True", "(0.9, 0.99)",
           "(0.9,)", "[0, 1]", "[1, 0]", "[0, 0]", "t(2)", "t(2, 1)", "t(2, 2)", "t(2, 1, int)",
           "t(2, f64)", "t(2, 1, f64)", "numpy(2)"]
_STATE_KEYS = ["step", "exp_avg", "exp_avg_sq", "momentum_buffer", "junk"]
_GROUP_KEYS = ["lr", "momentum", "dampening", "weight_decay", "eps", "betas", "nesterov",
               "params", "extra"]
_EDITS = st.one_of(
    st.tuples(st.just("set state"), st.sampled_from([0, 1, 7, "0"]),
              st.sampled_from(_STATE_KEYS), st.sampled_from(_VALUES)),
    st.tuples(st.just("drop state"), st.sampled_from([0, 1]), st.sampled_from(_STATE_KEYS)),
    st.tuples(st.just("set option"), st.sampled_from(_GROUP_KEYS), st.sampled_from(_VALUES)),
    st.tuples(st.just("drop option"), st.sampled_from(_GROUP_KEYS)),
)


def _value(tag):
    """The value a tag of ``_VALUES`` names: tensors made on the current backend."""
    shapes = {"t(2)": ((2,), None), "t(2, 1)": ((2, 1), None), "t(2, 2)": ((2, 2), None),
              "t(2, 1, int)": ((2, 1), "int64"), "t(2, f64)": ((2,), "float64"),
              "t(2, 1, f64)": ((2, 1), "float64")}
    if tag in shapes:
        shape, dtype = shapes[tag]
        return dp.full(shape, 0.25 if dtype != "int64" else 1, dtype=dtype)
    if tag == "numpy(2)":
        return np.full(2, 0.25)
    return eval(tag, {"nan": math.nan, "inf": math.inf})


def _apply(state, edit):
    action, *rest = edit
    if action == "set state":
        index, key, tag = rest
        state["state"].setdefault(index, {})[key] = _value(tag)
    elif action == "drop state":
        state["state"].get(rest[0], {}).pop(rest[1], None)
    elif action == "set option":
        state["param_groups"][0][rest[0]] = _value(rest[1])
    else:
        state["param_groups"][0].pop(rest[0], None)


def _same(got, given):
    """Whether a loaded option is the one given: numbers as floats, betas as a tuple, other
    keys (which optimizers keep without reading, as PyTorch does) as the very object."""
    if got is given:
        return True
    if isinstance(given, (list, tuple)):
        return isinstance(got, tuple) and list(got) == list(given)
    return type(given) in (int, float) and got == given


@pytest.mark.parametrize("backend_name", ["numpy", "array_api_strict"])
@given(kind=st.sampled_from(["SGD", "Adam"]), edits=st.lists(_EDITS, max_size=3))
def test_random_state_dicts_load_fully_or_change_nothing(backend_name, kind, edits):
    with dp.use_backend(backend_name):
        opt, a, b = _trained(kind)
        before = _snapshot(opt)
        state = copy.deepcopy(opt.state_dict())
        for edit in edits:
            _apply(state, edit)
        try:
            opt.load_state_dict(state)
        except (TypeError, ValueError):
            assert _snapshot(opt) == before
            return
        loaded, _ = _snapshot(opt)
        assert set(loaded) == {i for i, p in enumerate([a, b]) if p in opt.state}
        for index, entry in state["state"].items():
            got = loaded[index]
            assert set(got) == set(entry)
            for key, value in entry.items():
                if isinstance(value, dp.Tensor):  # cast to the parameter's dtype, as PyTorch
                    assert got[key] == value.numpy().astype(np.float32).tolist()
                else:
                    assert got[key] == value
        group = opt.param_groups[0]
        for key, value in state["param_groups"][0].items():
            if key != "params":
                assert _same(group[key], value), key
        opt.step(((a * a).sum() + (b * b).sum()).backward())  # never fails half-way
        assert a.dtype == b.dtype == dp.float32
