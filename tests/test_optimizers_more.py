"""RMSprop, Adagrad, NAdam, Adamax, Adadelta, Rprop and ASGD against PyTorch (fixtures from
``tests/data/make_optim_fixtures.py`` and ``make_more_optim_fixtures.py``: parameters after
every step in float64, several option combinations, two parameter groups, state dicts with
PyTorch's names), resuming from PyTorch's state dict, refused options and state that change
nothing, and ``clip_grad_value``."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from conftest import to_tensor
from torch_reference import load_grouped

import dparray as dp
from dparray import optim


def _load():
    cases, arrays = {}, {}
    for file_name in ("optim.safetensors", "optim_more.safetensors"):
        found, grouped = load_grouped(file_name, "optimizers")
        cases.update(found)
        arrays.update(grouped)
    return cases, arrays


CASES, ARRAYS = _load()


def _setup(name):
    """The case's parameters (float64, current backend) and its dparray optimizer."""
    case, arrays = CASES[name], ARRAYS[name]
    params = [to_tensor(arrays[f"param.{i}"], requires_grad=True) for i in range(3)]
    groups = [{"params": members, **_options(options)}
              for members, options in zip([params[:1], params[1:]], case["groups"], strict=True)]
    return params, getattr(optim, case["optimizer"])(groups, **_options(case["kwargs"]))


def _options(options):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}


def _grads(name, params, step):
    arrays = ARRAYS[name]
    return dp.Gradients({p: to_tensor(arrays[f"grad.{step}.{i}"]) for i, p in enumerate(params)
                         if f"grad.{step}.{i}" in arrays})


def _steps(name):
    return sum(1 for key in ARRAYS[name] if key.startswith("after.") and key.endswith(".0"))


@pytest.mark.parametrize("name", list(CASES))
def test_parameters_follow_pytorch_step_by_step(name, backend):
    params, opt = _setup(name)
    for step in range(_steps(name)):
        opt.step(_grads(name, params, step))
        for i, p in enumerate(params):
            assert p.dtype == dp.float64
            np.testing.assert_allclose(p.numpy(), ARRAYS[name][f"after.{step}.{i}"],
                                       rtol=1e-12, atol=1e-14, err_msg=f"step {step}, param {i}")


@pytest.mark.parametrize("name", list(CASES))
def test_state_dict_has_pytorchs_names_and_values(name, backend):
    params, opt = _setup(name)
    for step in range(_steps(name)):
        opt.step(_grads(name, params, step))
    case, arrays = CASES[name], ARRAYS[name]
    state = opt.state_dict()
    assert set(state["state"]) == {int(i) for i in case["state_keys"]}
    for index, keys in case["state_keys"].items():
        entry = state["state"][int(index)]
        assert set(entry) == set(keys), index
        for key in keys:
            if key in case["state_scalars"][index]:
                want = case["state_scalars"][index][key]
                if key == "step":
                    assert type(entry[key]) is int and entry[key] == want
                else:
                    assert entry[key] == pytest.approx(want, rel=1e-14)
            else:
                np.testing.assert_allclose(entry[key].numpy(), arrays[f"state.{index}.{key}"],
                                           rtol=1e-12, atol=1e-14)
    for ours, theirs in zip(state["param_groups"], case["param_groups"], strict=True):
        assert ours["params"] == theirs["params"]
        for key, value in ours.items():
            assert key in theirs, key  # every option of ours has PyTorch's name
            want = tuple(theirs[key]) if isinstance(value, tuple) else theirs[key]
            assert value == want, key


def _pytorch_state_dict(name):
    """PyTorch's final state dict as dparray tensors and numbers: what a converted PyTorch
    checkpoint holds (PyTorch's extra group options such as ``foreach`` included)."""
    case, arrays = CASES[name], ARRAYS[name]
    state = {}
    for index, keys in case["state_keys"].items():
        scalars = case["state_scalars"][index]
        state[int(index)] = {
            key: (int(scalars[key]) if key == "step" else scalars[key]) if key in scalars
            else to_tensor(arrays[f"state.{index}.{key}"]) for key in keys}
    return {"state": state, "param_groups": copy.deepcopy(case["param_groups"])}


@pytest.mark.parametrize("name", list(CASES))
def test_a_loaded_pytorch_state_dict_resumes_training_exactly(name, backend):
    params, opt = _setup(name)
    for step in range(_steps(name)):
        opt.step(_grads(name, params, step))
    fresh, resumed = _setup(name)
    for p, q in zip(fresh, params, strict=True):
        p.data = q.data
    resumed.load_state_dict(_pytorch_state_dict(name))
    rng = np.random.default_rng(5)
    for _ in range(3):
        extra = [rng.standard_normal(p.shape) for p in params]
        opt.step(dp.Gradients({p: to_tensor(g) for p, g in zip(params, extra, strict=True)}))
        resumed.step(dp.Gradients({p: to_tensor(g) for p, g in zip(fresh, extra, strict=True)}))
    for p, q in zip(fresh, params, strict=True):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-12, atol=1e-14)


def test_rmsprop_keeps_the_buffers_its_options_need(backend):
    a, b = dp.ones(2, requires_grad=True), dp.ones(3, requires_grad=True)
    opt = optim.RMSprop([{"params": [a]}, {"params": [b], "momentum": 0.9, "centered": True}])
    opt.step((a.sum() + b.sum()).backward())
    assert set(opt.state[a]) == {"step", "square_avg"}
    assert set(opt.state[b]) == {"step", "square_avg", "momentum_buffer", "grad_avg"}
    opt.param_groups[1]["momentum"] = 0.0  # turned off: the buffer stays, as in PyTorch
    opt.step((a.sum() + b.sum()).backward())
    assert "momentum_buffer" in opt.state[b] and opt.state[b]["step"] == 2
    values = (a.tolist(), b.tolist())
    opt.param_groups[0]["momentum"] = 0.5  # turned on mid-training: no buffer to continue
    with pytest.raises(ValueError, match=r"^RMSprop.step: the state of parameter 0 for RMSprop "
                                         r"needs 'step', 'square_avg', 'momentum_buffer': "
                                         r"missing 'momentum_buffer'"):
        opt.step((a.sum() + b.sum()).backward())
    assert (a.tolist(), b.tolist()) == values and opt.state[b]["step"] == 2


def test_adagrad_state_exists_from_construction_with_each_groups_accumulator(backend):
    a, b = dp.ones(2, requires_grad=True), dp.ones(1, requires_grad=True)
    opt = optim.Adagrad([{"params": [a]}, {"params": [b], "initial_accumulator_value": 3.0}],
                        lr=0.5, initial_accumulator_value=1.0)
    state = opt.state_dict()["state"]
    assert state[0]["step"] == 0 and state[0]["sum"].tolist() == [1.0, 1.0]
    assert state[1]["sum"].tolist() == [3.0]
    opt.step((a.sum() * 2.0 + b.sum()).backward())  # gradients 2 and 1
    assert a.tolist() == pytest.approx([1.0 - 0.5 * 2.0 / (math.sqrt(5.0) + 1e-10)] * 2)
    assert b.tolist() == pytest.approx([1.0 - 0.5 / (math.sqrt(4.0) + 1e-10)])


KINDS = ["RMSprop", "Adagrad", "NAdam", "Adamax", "Adadelta", "Rprop", "ASGD"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_float32_parameter_stays_float32(kind, backend):
    rng = np.random.default_rng(3)
    w = dp.tensor(rng.standard_normal((3, 2)).astype(np.float32), requires_grad=True)
    opt = getattr(optim, kind)([w], lr=0.01)
    for _ in range(3):
        opt.step(dp.Gradients({w: dp.tensor(rng.standard_normal((3, 2)))}))  # float64
    assert w.dtype == dp.float32
    for key, value in opt.state_dict()["state"][0].items():
        if isinstance(value, dp.Tensor):
            assert value.dtype == dp.float32, key
        else:
            assert type(value) is (int if key == "step" else float), key


@pytest.mark.parametrize("kind", KINDS)
def test_each_optimizer_fits_a_linear_model(kind, backend):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3))
    y = x @ np.array([1.5, -2.0, 0.5]) + 0.3
    w = to_tensor(np.zeros(3), requires_grad=True)
    b = to_tensor(np.zeros(1), requires_grad=True)
    lr = {"RMSprop": 0.01, "Adagrad": 0.5, "NAdam": 0.05, "Adamax": 0.05, "Adadelta": 5.0,
          "Rprop": 0.01, "ASGD": 0.05}[kind]
    opt = getattr(optim, kind)([w, b], lr=lr)
    inputs, targets = to_tensor(x), to_tensor(y)
    losses = []
    for _ in range(300):
        loss = ((inputs @ w + b - targets) ** 2).mean()
        losses.append(loss.item())
        opt.step(loss.backward())
    assert losses[-1] < losses[0] / 100, (losses[0], losses[-1])


# --------------------------------------------------------------------------- refused input
FACTORIES = {
    "RMSprop": lambda params, **kw: optim.RMSprop(params, **kw),
    "Adagrad": lambda params, **kw: optim.Adagrad(params, **kw),
    "NAdam": lambda params, **kw: optim.NAdam(params, **kw),
    "Adamax": lambda params, **kw: optim.Adamax(params, **kw),
    "Adadelta": lambda params, **kw: optim.Adadelta(params, **kw),
    "Rprop": lambda params, **kw: optim.Rprop(params, **kw),
    "ASGD": lambda params, **kw: optim.ASGD(params, **kw),
}
BAD_OPTIONS = [
    ("RMSprop", "lr", math.nan, ValueError, "lr must be a finite number, got nan"),
    ("RMSprop", "alpha", math.nan, ValueError, "alpha must be a finite number, got nan"),
    ("RMSprop", "alpha", 1.5, ValueError, r"alpha must be at most 1\.0, got 1\.5"),
    ("RMSprop", "alpha", -0.1, ValueError, r"alpha must be at least 0\.0, got -0\.1"),
    ("RMSprop", "eps", math.inf, ValueError, "eps must be a finite number, got inf"),
    ("RMSprop", "momentum", -math.inf, ValueError, "momentum must be a finite number"),
    ("RMSprop", "momentum", -0.5, ValueError, r"momentum must be at least 0\.0"),
    ("RMSprop", "weight_decay", math.nan, ValueError, "weight_decay must be a finite number"),
    ("RMSprop", "centered", 1, TypeError, "centered must be a bool, got 1"),
    ("RMSprop", "alpha", "0.9", TypeError, "alpha must be a number, got '0.9'"),
    ("Adagrad", "lr_decay", math.nan, ValueError, "lr_decay must be a finite number"),
    ("Adagrad", "lr_decay", -1.0, ValueError, r"lr_decay must be at least 0\.0"),
    ("Adagrad", "initial_accumulator_value", math.inf, ValueError,
     "initial_accumulator_value must be a finite number"),
    ("Adagrad", "initial_accumulator_value", -0.1, ValueError,
     r"initial_accumulator_value must be at least 0\.0"),
    ("Adagrad", "eps", math.nan, ValueError, "eps must be a finite number"),
    ("Adagrad", "weight_decay", None, TypeError, "weight_decay must be a number, got None"),
    ("NAdam", "betas", (math.nan, 0.9), ValueError, r"betas\[0\] must be a finite number"),
    ("NAdam", "betas", (0.9, 1.0), ValueError, r"betas\[1\] must be less than 1\.0"),
    ("NAdam", "betas", 0.9, TypeError, "betas must be a pair of numbers, got 0.9"),
    ("NAdam", "betas", (0.9,), ValueError, r"betas must be a pair of numbers, got \(0\.9,\)"),
    ("NAdam", "momentum_decay", math.inf, ValueError, "momentum_decay must be a finite number"),
    ("NAdam", "momentum_decay", -0.004, ValueError, r"momentum_decay must be at least 0\.0"),
    ("NAdam", "eps", -1e-8, ValueError, "eps must be at least 0"),
    ("NAdam", "decoupled_weight_decay", "yes", TypeError,
     "decoupled_weight_decay must be a bool, got 'yes'"),
    ("Adamax", "betas", (0.9, math.inf), ValueError, r"betas\[1\] must be a finite number"),
    ("Adamax", "betas", (-0.1, 0.9), ValueError, r"betas\[0\] must be at least 0\.0"),
    ("Adamax", "betas", ("0.9", 0.99), TypeError, r"betas\[0\] must be a number"),
    ("Adamax", "eps", math.nan, ValueError, "eps must be a finite number"),
    ("Adamax", "lr", -0.1, ValueError, r"lr must be at least 0\.0, got -0\.1"),
    ("Adadelta", "rho", 1.5, ValueError, r"rho must be at most 1\.0, got 1\.5"),
    ("Adadelta", "rho", math.nan, ValueError, "rho must be a finite number, got nan"),
    ("Adadelta", "eps", -1e-6, ValueError, r"eps must be at least 0\.0"),
    ("Adadelta", "weight_decay", "0", TypeError, "weight_decay must be a number, got '0'"),
    ("Rprop", "etas", (0.5, 1.0), ValueError,
     r"etas must be \(etaminus, etaplus\) with 0 < etaminus < 1 < etaplus, got \(0\.5, 1\.0\)"),
    ("Rprop", "etas", (0.0, 1.2), ValueError, r"etas must be \(etaminus, etaplus\)"),
    ("Rprop", "etas", (0.5, math.inf), ValueError, r"etas\[1\] must be a finite number"),
    ("Rprop", "etas", 0.5, TypeError, "etas must be a pair of numbers, got 0.5"),
    ("Rprop", "step_sizes", (1.0, 0.1), ValueError,
     r"step_sizes must be \(minimum, maximum\) with 0 <= minimum <= maximum"),
    ("Rprop", "step_sizes", (1e-6,), ValueError, "step_sizes must be a pair of numbers"),
    ("Rprop", "step_sizes", (None, 50), TypeError, r"step_sizes\[0\] must be a number"),
    ("Rprop", "lr", math.nan, ValueError, "lr must be a finite number, got nan"),
    ("ASGD", "lambd", -1e-4, ValueError, r"lambd must be at least 0\.0"),
    ("ASGD", "alpha", math.inf, ValueError, "alpha must be a finite number, got inf"),
    ("ASGD", "t0", math.nan, ValueError, "t0 must be a finite number, got nan"),
    ("ASGD", "t0", "1e6", TypeError, "t0 must be a number, got '1e6'"),
    ("ASGD", "weight_decay", -0.1, ValueError, r"weight_decay must be at least 0\.0"),
]
BAD_IDS = [f"{kind}-{key}-{value!r}" for kind, key, value, *_ in BAD_OPTIONS]


def _trained(kind, momentum=False):
    a = dp.tensor([1.0, -2.0], requires_grad=True)
    b = dp.tensor([[0.5], [3.0]], requires_grad=True)
    extra = {"momentum": 0.9, "centered": True} if momentum else {}
    opt = FACTORIES[kind]([a, b], lr=0.01, **extra)
    opt.step(((a * a).sum() + (b * b * b).sum()).backward())
    return opt, a, b


def _snapshot(opt):
    state = opt.state_dict()
    return ({i: {k: v.numpy().tolist() if isinstance(v, dp.Tensor) else v
                 for k, v in entry.items()} for i, entry in state["state"].items()},
            copy.deepcopy(state["param_groups"]))


@pytest.mark.parametrize("kind, key, value, error, message", BAD_OPTIONS, ids=BAD_IDS)
def test_bad_options_are_refused_everywhere_they_enter(kind, key, value, error, message,
                                                       backend):
    w = dp.ones(2, requires_grad=True)
    with pytest.raises(error, match=f"^{kind}: {message}"):
        FACTORIES[kind]([w], **{key: value})
    with pytest.raises(error, match=f"^{kind}: parameter group 1: {message}"):
        FACTORIES[kind]([{"params": [dp.ones(1, requires_grad=True)]},
                         {"params": [w], key: value}])
    opt, a, b = _trained(kind)
    before = _snapshot(opt)
    state = opt.state_dict()
    state["param_groups"][0][key] = value
    with pytest.raises(error, match=f"^{kind}.load_state_dict: parameter group 0: {message}"):
        opt.load_state_dict(state)
    assert _snapshot(opt) == before
    values = (a.tolist(), b.tolist())
    opt.param_groups[0][key] = value
    with pytest.raises(error, match=f"^{kind}.step: parameter group 0: {message}"):
        opt.step(((a * a).sum() + b.sum()).backward())
    assert (a.tolist(), b.tolist()) == values and _snapshot(opt)[0] == before[0]


STATE_CORRUPTIONS = [
    ("NAdam", "mu_product", math.nan, ValueError, "mu_product of parameter 1 must be a finite"),
    ("NAdam", "mu_product", "0.9", TypeError, "mu_product of parameter 1 must be a number"),
    ("NAdam", "mu_product", None, TypeError, "mu_product of parameter 1 must be a number"),
    ("NAdam", "step", 1.0, TypeError, r"step of parameter 1 must be an int, got 1\.0"),
    ("Adamax", "exp_inf", "zeros", TypeError, "exp_inf of parameter 1 must be a Tensor"),
    ("Adagrad", "sum", dp.zeros(3), ValueError, r"sum of parameter 1 has shape \(3,\), not "
                                                r"\(2, 1\)"),
    ("Adagrad", "velocity", dp.zeros(2, 1), ValueError, "unknown 'velocity'"),
    ("RMSprop", "grad_avg", dp.zeros(2, 1, dtype="int64"), ValueError,
     "grad_avg of parameter 1 has dtype int64"),
    ("RMSprop", "momentum_buffer", None, ValueError, "missing 'momentum_buffer'"),
    ("ASGD", "eta", math.inf, ValueError, "eta of parameter 1 must be a finite number"),
    ("ASGD", "mu", "1", TypeError, "mu of parameter 1 must be a number"),
    ("Rprop", "step_size", dp.zeros(2), ValueError, r"step_size of parameter 1 has shape \(2,\)"),
    ("Adadelta", "acc_delta", None, ValueError, "missing 'acc_delta'"),
]


@pytest.mark.parametrize("kind, key, value, error, message", STATE_CORRUPTIONS,
                         ids=[f"{kind}-{key}-{value!r}" for kind, key, value, *_ in
                              STATE_CORRUPTIONS])
def test_bad_state_is_refused_and_changes_nothing(kind, key, value, error, message, backend):
    opt, a, b = _trained(kind, momentum=kind == "RMSprop")
    before = _snapshot(opt)
    state = copy.deepcopy(opt.state_dict())
    if value is None and key in ("momentum_buffer", "acc_delta"):
        del state["state"][1][key]
    else:
        state["state"][1][key] = value
    with pytest.raises(error, match=message):
        opt.load_state_dict(state)
    assert _snapshot(opt) == before
    values = (a.tolist(), b.tolist())
    opt.step(((a * a).sum() + (b * b).sum()).backward())  # still usable
    assert (a.tolist(), b.tolist()) != values


# --------------------------------------------------------------------------- clip_grad_value
def test_clip_grad_value_clamps_every_element(backend):
    rng = np.random.default_rng(2)
    w = to_tensor(rng.standard_normal((4, 3)) * 3, requires_grad=True)
    v = to_tensor(rng.standard_normal(5) * 3, requires_grad=True)
    grads = (w * w).sum().backward() + (v * v * v).sum().backward()
    clipped = optim.clip_grad_value(grads, 1.5)
    assert isinstance(clipped, dp.Gradients) and clipped is not grads
    for t in (w, v):
        np.testing.assert_array_equal(clipped[t].numpy(), np.clip(grads[t].numpy(), -1.5, 1.5))
        assert clipped[t].dtype == grads[t].dtype
    assert np.abs(grads[w].numpy()).max() > 1.5  # the input is left as it was
    assert optim.clip_grad_value(grads, math.inf)[v].tolist() == grads[v].tolist()
    assert optim.clip_grad_value(grads, 0)[w].tolist() == [[0.0] * 3] * 4


def test_clip_grad_value_keeps_nan_and_clamps_infinities(backend):
    w = dp.ones(3, requires_grad=True)
    grads = dp.Gradients({w: dp.tensor([math.nan, math.inf, -math.inf])})
    got = optim.clip_grad_value(grads, 2.0)[w].tolist()
    assert math.isnan(got[0]) and got[1:] == [2.0, -2.0]
    assert len(optim.clip_grad_value(dp.Gradients(), 1.0)) == 0


@pytest.mark.parametrize("grads, clip_value, error, message", [
    ("list", 1.0, TypeError, "^clip_grad_value needs the Gradients that backward"),
    ("grads", "1", TypeError, "^clip_grad_value: clip_value must be a number, got '1'"),
    ("grads", None, TypeError, "clip_value must be a number, got None"),
    ("grads", True, TypeError, "clip_value must be a number, got True"),
    ("grads", math.nan, ValueError, "clip_value must be a finite number, got nan"),
    ("grads", -1.0, ValueError, r"clip_value must be at least 0\.0, got -1\.0"),
])
def test_clip_grad_value_refuses_bad_arguments(grads, clip_value, error, message, backend):
    w = dp.ones(2, requires_grad=True)
    real = (w * w).sum().backward()
    with pytest.raises(error, match=message):
        optim.clip_grad_value([real] if grads == "list" else real, clip_value)
