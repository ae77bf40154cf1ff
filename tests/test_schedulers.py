"""Learning-rate schedules against PyTorch's rates over many steps (fixtures from
``tests/data/make_optim_fixtures.py``), resuming mid-schedule from state dicts, and refused
arguments and state that change nothing."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from torch_reference import load_grouped

import dparray as dp
from dparray import optim

LRS = [0.1, 0.02]
CASES, ARRAYS = load_grouped("optim.safetensors", "schedules")


def _optimizer(kind, lrs=LRS):
    groups = [{"params": [dp.zeros(1, requires_grad=True)], "lr": lr} for lr in lrs]
    return optim.SGD(groups, momentum=0.9) if kind == "SGD" else optim.Adam(groups)


def _function(source):
    return eval(source, {"__builtins__": {"min": min, "max": max}})


def _build(spec, opt):
    """The schedule a fixture's spec describes (the generator builds PyTorch's the same way)."""
    kwargs = {}
    for key, value in spec["kwargs"].items():
        if key == "schedulers":
            value = [_build(part, opt) for part in value]
        elif key == "lr_lambda":
            value = ([_function(f["lambda"]) for f in value] if isinstance(value, list)
                     else _function(value["lambda"]))
        kwargs[key] = value
    return getattr(optim, spec["schedule"])(opt, **kwargs)


def _momentum(group):
    return group["betas"][0] if "betas" in group else group["momentum"]


def _run(name, opt, schedule, start, stop):
    """Step ``schedule`` from ``start`` to ``stop``; the rates (and momenta) after each."""
    metrics = CASES[name].get("metrics")
    rates, momenta = [], []
    for step in range(start + 1, stop + 1):
        if metrics is None:
            schedule.step()
        else:
            schedule.step(metrics[step - 1])
        rates.append([group["lr"] for group in opt.param_groups])
        momenta.append([_momentum(group) for group in opt.param_groups])
    return np.array(rates).reshape(-1, len(LRS)), np.array(momenta).reshape(-1, len(LRS))


@pytest.mark.parametrize("name", list(CASES))
def test_rates_follow_pytorch_over_the_whole_schedule(name, backend):
    case, arrays = CASES[name], ARRAYS[name]
    opt = _optimizer(case["optimizer"])
    schedule = _build(case["spec"], opt)
    first = [[group["lr"] for group in opt.param_groups]]
    rates, momenta = _run(name, opt, schedule, 0, case["steps"])
    np.testing.assert_allclose(np.concatenate([first, rates]), arrays["lr"], rtol=1e-12,
                               atol=1e-15)
    assert schedule.get_last_lr() == [group["lr"] for group in opt.param_groups]
    if "momentum" in arrays:
        np.testing.assert_allclose(momenta, arrays["momentum"][1:], rtol=1e-12)


@pytest.mark.parametrize("name", list(CASES))
def test_resuming_mid_schedule_lands_on_the_same_rates(name, backend):
    case, arrays = CASES[name], ARRAYS[name]
    middle = case["steps"] // 2
    opt = _optimizer(case["optimizer"])
    schedule = _build(case["spec"], opt)
    _run(name, opt, schedule, 0, middle)
    saved = copy.deepcopy((opt.state_dict(), schedule.state_dict()))
    other = _optimizer(case["optimizer"], lrs=[0.5, 0.7])  # other rates, as a fresh job has
    resumed = _build(case["spec"], other)
    other.load_state_dict(saved[0])
    resumed.load_state_dict(saved[1])
    assert resumed.state_dict() == schedule.state_dict()
    rates, momenta = _run(name, other, resumed, middle, case["steps"])
    np.testing.assert_allclose(rates, arrays["lr"][middle + 1:], rtol=1e-12, atol=1e-15)
    if "momentum" in arrays:
        np.testing.assert_allclose(momenta, arrays["momentum"][middle + 1:], rtol=1e-12)


def test_a_pytorch_style_state_dict_loads():
    """PyTorch's scheduler state dicts hold more (``_step_count``, the arguments); the
    progress is read and the rest ignored."""
    opt = _optimizer("SGD")
    schedule = optim.ExponentialLR(opt, gamma=0.5)
    schedule.load_state_dict({"base_lrs": [1.0, 2.0], "last_epoch": 3, "_step_count": 4,
                              "gamma": 0.9, "_last_lr": [0.125, 0.25], "verbose": False})
    schedule.step()
    assert schedule.get_last_lr() == [1.0 * 0.5**4, 2.0 * 0.5**4]


def test_schedules_share_the_initial_rates_as_pytorchs_do():
    opt = _optimizer("SGD")
    optim.LinearLR(opt, start_factor=0.5)  # sets the rates to half of "initial_lr"
    second = optim.ExponentialLR(opt, gamma=0.9)
    assert [g["initial_lr"] for g in opt.param_groups] == LRS and second.base_lrs == LRS
    cycle = optim.OneCycleLR(opt, max_lr=1.0, total_steps=10)  # overwrites it, as PyTorch
    assert [g["initial_lr"] for g in opt.param_groups] == [1.0 / 25] * 2
    assert cycle.base_lrs == [1.0 / 25] * 2


def test_one_cycle_with_a_warm_up_of_one_step_starts_at_the_peak():
    """``pct_start * total_steps == 1`` gives a first phase of no length, where PyTorch
    divides by zero: the rate starts at ``max_lr`` and anneals down from there."""
    opt = _optimizer("SGD", lrs=[0.1])
    schedule = optim.OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=0.1,
                                anneal_strategy="linear")
    assert opt.param_groups[0]["momentum"] == pytest.approx(0.85)  # the peak's momentum
    rates = [schedule.get_last_lr()[0]]
    for _ in range(10):
        schedule.step()
        rates.append(schedule.get_last_lr()[0])
    low = 1.0 / 25 / 1e4
    assert rates == pytest.approx([1.0] + [1.0 + (low - 1.0) * min(t, 9) / 9
                                           for t in range(1, 11)])
    assert opt.param_groups[0]["momentum"] == pytest.approx(0.95)


def test_one_cycle_ends_at_its_final_rate_and_refuses_a_step_past_it():
    """The step after the last of ``total_steps`` batches keeps the final rate (PyTorch
    extrapolates past the cycle, here to a negative rate); one more changes nothing."""
    opt = _optimizer("SGD")
    schedule = optim.OneCycleLR(opt, max_lr=0.5, total_steps=3, anneal_strategy="linear")
    for _ in range(3):
        schedule.step()
    assert schedule.get_last_lr() == pytest.approx([0.5 / 25 / 1e4] * 2)
    assert [g["momentum"] for g in opt.param_groups] == pytest.approx([0.95] * 2)
    before = (schedule.state_dict(), copy.deepcopy(opt.state_dict()["param_groups"]))
    with pytest.raises(ValueError, match=r"^OneCycleLR\.step: tried to step 4 times; "
                                         "total_steps is 3"):
        schedule.step()
    assert (schedule.state_dict(), opt.state_dict()["param_groups"]) == before


def test_lambda_lr_saves_callable_objects_but_not_functions():
    class Warmup:
        def __init__(self, length):
            self.length = length

        def __call__(self, epoch):
            return min(1.0, (epoch + 1) / self.length)

    opt = _optimizer("SGD")
    schedule = optim.LambdaLR(opt, [Warmup(4), lambda epoch: 0.5**epoch])
    state = schedule.state_dict()
    assert state["lr_lambdas"] == [{"length": 4}, None]
    state["lr_lambdas"][0]["length"] = 10
    again = optim.LambdaLR(_optimizer("SGD"), [Warmup(4), lambda epoch: 0.5**epoch])
    again.load_state_dict(state)
    again.step()
    assert again.get_last_lr() == pytest.approx([0.1 * 2 / 10, 0.02 * 0.5])


def test_lambda_lr_refuses_a_bad_factor_before_changing_the_rates():
    opt = _optimizer("SGD")
    schedule = optim.LambdaLR(opt, lambda epoch: 1.0 if epoch < 2 else math.nan)
    schedule.step()
    with pytest.raises(ValueError, match=r"^LambdaLR: lr_lambda\(2\) must be a finite number, "
                                         "got nan"):
        schedule.step()
    assert schedule.last_epoch == 1 and schedule.get_last_lr() == LRS
    with pytest.raises(TypeError, match=r"LambdaLR: lr_lambda\(0\) must be a number, got 'x'"):
        optim.LambdaLR(_optimizer("SGD"), lambda epoch: "x")


def test_reduce_on_plateau_reads_tensors_and_counts_nan_as_no_better():
    opt = _optimizer("SGD")
    schedule = optim.ReduceLROnPlateau(opt, patience=1, factor=0.5)
    schedule.step(dp.tensor(1.0))
    schedule.step(dp.tensor([math.nan]))
    assert schedule.num_bad_epochs == 1 and schedule.best == 1.0
    schedule.step(np.float64(math.nan))
    assert schedule.get_last_lr() == pytest.approx([0.05, 0.01])
    with pytest.raises(ValueError, match=r"metric must be a number or a one-element Tensor, got "
                                         r"a Tensor of shape \(2,\)"):
        schedule.step(dp.ones(2))
    with pytest.raises(TypeError, match=r"metric must be a number or a one-element Tensor, "
                                        r"got '0\.5'"):
        schedule.step("0.5")
    assert schedule.last_epoch == 3


# --------------------------------------------------------------------------- refused arguments
def _sgd():
    return _optimizer("SGD")


BAD_ARGUMENTS = [
    (lambda o: optim.ExponentialLR(o, gamma=math.nan), ValueError,
     "^ExponentialLR: gamma must be a finite number, got nan"),
    (lambda o: optim.ExponentialLR(o, gamma=-0.5), ValueError,
     r"^ExponentialLR: gamma must be at least 0\.0"),
    (lambda o: optim.ExponentialLR(o, gamma="0.5"), TypeError,
     "^ExponentialLR: gamma must be a number, got '0.5'"),
    (lambda o: optim.MultiStepLR(o, milestones=3), TypeError,
     "^MultiStepLR: milestones must be a list of ints, got 3"),
    (lambda o: optim.MultiStepLR(o, milestones=[2, 4.5]), TypeError,
     r"^MultiStepLR: each milestone must be an int, got 4\.5"),
    (lambda o: optim.MultiStepLR(o, milestones=[-1]), ValueError,
     "^MultiStepLR: each milestone must be at least 0, got -1"),
    (lambda o: optim.MultiStepLR(o, milestones=[2], gamma=math.inf), ValueError,
     "^MultiStepLR: gamma must be a finite number, got inf"),
    (lambda o: optim.LinearLR(o, start_factor=0.0), ValueError,
     r"^LinearLR: start_factor must be greater than 0\.0, got 0\.0"),
    (lambda o: optim.LinearLR(o, start_factor=1.5), ValueError,
     r"^LinearLR: start_factor must be at most 1\.0"),
    (lambda o: optim.LinearLR(o, end_factor=math.nan), ValueError,
     "^LinearLR: end_factor must be a finite number"),
    (lambda o: optim.LinearLR(o, total_iters=0), ValueError,
     "^LinearLR: total_iters must be at least 1, got 0"),
    (lambda o: optim.LinearLR(o, total_iters=2.0), TypeError,
     r"^LinearLR: total_iters must be an int, got 2\.0"),
    (lambda o: optim.LambdaLR(o, 0.5), TypeError,
     r"^LambdaLR: lr_lambda must be callable, got 0\.5"),
    (lambda o: optim.LambdaLR(o, [lambda e: 1.0]), ValueError,
     r"^LambdaLR: lr_lambda must be a function or 2 functions \(one per parameter group\), "
     "got 1"),
    (lambda o: optim.OneCycleLR(o, max_lr=1.0), ValueError,
     "^OneCycleLR: give total_steps, or epochs and steps_per_epoch"),
    (lambda o: optim.OneCycleLR(o, max_lr=1.0, epochs=2), ValueError,
     "^OneCycleLR: give total_steps, or epochs and steps_per_epoch"),
    (lambda o: optim.OneCycleLR(o, max_lr=1.0, total_steps=0), ValueError,
     "^OneCycleLR: total_steps must be at least 1, got 0"),
    (lambda o: optim.OneCycleLR(o, max_lr=1.0, epochs=2, steps_per_epoch=1.5), TypeError,
     r"^OneCycleLR: steps_per_epoch must be an int, got 1\.5"),
    (lambda o: optim.OneCycleLR(o, max_lr=math.nan, total_steps=5), ValueError,
     "^OneCycleLR: max_lr must be a finite number, got nan"),
    (lambda o: optim.OneCycleLR(o, max_lr=[1.0], total_steps=5), ValueError,
     r"^OneCycleLR: max_lr must be a number or 2 numbers \(one per parameter group\), got 1"),
    (lambda o: optim.OneCycleLR(o, max_lr=[1.0, math.inf], total_steps=5), ValueError,
     r"^OneCycleLR: max_lr\[1\] must be a finite number, got inf"),
    (lambda o: optim.OneCycleLR(o, max_lr=1.0, total_steps=5, pct_start=1.5), ValueError,
     r"^OneCycleLR: pct_start must be at most 1\.0, got 1\.5"),
    (lambda o: optim.OneCycleLR(o, max_lr=1.0, total_steps=5, anneal_strategy="cosine"),
     ValueError, "^OneCycleLR: anneal_strategy must be one of 'cos', 'linear', got 'cosine'"),
    (lambda o: optim.OneCycleLR(o, max_lr=1.0, total_steps=5, div_factor=0.0), ValueError,
     r"^OneCycleLR: div_factor must be greater than 0\.0"),
    (lambda o: optim.OneCycleLR(o, max_lr=1.0, total_steps=5, final_div_factor=math.nan),
     ValueError, "^OneCycleLR: final_div_factor must be a finite number"),
    (lambda o: optim.OneCycleLR(o, max_lr=1.0, total_steps=5, three_phase="no"), TypeError,
     "^OneCycleLR: three_phase must be a bool, got 'no'"),
    (lambda o: optim.OneCycleLR(o, max_lr=1.0, total_steps=5, max_momentum=math.nan),
     ValueError, "^OneCycleLR: max_momentum must be a finite number"),
    (lambda o: optim.OneCycleLR(o, max_lr=1.0, total_steps=5, base_momentum=-0.1),
     ValueError, r"^OneCycleLR: base_momentum must be at least 0\.0"),
    (lambda o: optim.OneCycleLR(optim.Adam(o.param_groups), max_lr=1.0, total_steps=5,
                                max_momentum=1.0), ValueError,
     r"^OneCycleLR: max_momentum for parameter group 0: betas\[0\] must be less than 1\.0"),
    (lambda o: optim.OneCycleLR(optim.Adagrad(o.param_groups), max_lr=1.0, total_steps=5),
     ValueError, "^OneCycleLR: cycle_momentum needs an optimizer with momentum or betas; "
                 r"Adagrad has neither \(pass cycle_momentum=False\)"),
    (lambda o: optim.SequentialLR(o, [], milestones=[]), ValueError,
     "^SequentialLR: schedulers must hold at least one schedule"),
    (lambda o: optim.SequentialLR(o, optim.StepLR(o, 2), milestones=[]), TypeError,
     "^SequentialLR: schedulers must be a list of schedules"),
    (lambda o: optim.SequentialLR(o, [optim.StepLR(o, 2), optim.ReduceLROnPlateau(o)],
                                  milestones=[3]), TypeError,
     r"^SequentialLR: schedulers\[1\] must be an epoch schedule \(not ReduceLROnPlateau, "
     r"which needs a metric\), got ReduceLROnPlateau"),
    (lambda o: optim.SequentialLR(o, [optim.StepLR(o, 2), optim.StepLR(_sgd(), 2)],
                                  milestones=[3]), ValueError,
     r"^SequentialLR: schedulers\[1\] schedules another optimizer"),
    (lambda o: optim.SequentialLR(o, [optim.StepLR(o, 2), optim.StepLR(o, 3)],
                                  milestones=[]), ValueError,
     "^SequentialLR: 2 schedulers need 1 milestones, got 0"),
    (lambda o: optim.SequentialLR(o, [optim.StepLR(o, 2)] * 3, milestones=[5, 2]),
     ValueError, r"^SequentialLR: milestones must not decrease, got \[5, 2\]"),
    (lambda o: optim.SequentialLR(o, [optim.StepLR(o, 2)] * 2, milestones=["5"]),
     TypeError, "^SequentialLR: each milestone must be an int, got '5'"),
    (lambda o: optim.ReduceLROnPlateau(o, mode="minimum"), ValueError,
     "^ReduceLROnPlateau: mode must be one of 'min', 'max', got 'minimum'"),
    (lambda o: optim.ReduceLROnPlateau(o, factor=1.0), ValueError,
     r"^ReduceLROnPlateau: factor must be less than 1\.0, got 1\.0"),
    (lambda o: optim.ReduceLROnPlateau(o, factor=math.nan), ValueError,
     "^ReduceLROnPlateau: factor must be a finite number"),
    (lambda o: optim.ReduceLROnPlateau(o, patience=-1), ValueError,
     "^ReduceLROnPlateau: patience must be at least 0, got -1"),
    (lambda o: optim.ReduceLROnPlateau(o, patience=2.5), TypeError,
     r"^ReduceLROnPlateau: patience must be an int, got 2\.5"),
    (lambda o: optim.ReduceLROnPlateau(o, threshold=math.inf), ValueError,
     "^ReduceLROnPlateau: threshold must be a finite number"),
    (lambda o: optim.ReduceLROnPlateau(o, threshold_mode="relative"), ValueError,
     "^ReduceLROnPlateau: threshold_mode must be one of 'rel', 'abs', got 'relative'"),
    (lambda o: optim.ReduceLROnPlateau(o, cooldown=None), TypeError,
     "^ReduceLROnPlateau: cooldown must be an int, got None"),
    (lambda o: optim.ReduceLROnPlateau(o, min_lr=[0.1]), ValueError,
     r"^ReduceLROnPlateau: min_lr must be a number or 2 numbers"),
    (lambda o: optim.ReduceLROnPlateau(o, min_lr=[0.1, math.nan]), ValueError,
     r"^ReduceLROnPlateau: min_lr\[1\] must be a finite number"),
    (lambda o: optim.ReduceLROnPlateau(o, eps=math.nan), ValueError,
     "^ReduceLROnPlateau: eps must be a finite number"),
    (lambda o: optim.ReduceLROnPlateau([]), TypeError,
     "^ReduceLROnPlateau needs an Optimizer, got list"),
    (lambda o: optim.OneCycleLR(None, max_lr=1.0, total_steps=3), TypeError,
     "^OneCycleLR needs an Optimizer, got NoneType"),
    (lambda o: optim.LinearLR("sgd"), TypeError, "^LinearLR needs an Optimizer, got str"),
]


@pytest.mark.parametrize("make, error, message", BAD_ARGUMENTS,
                         ids=[f"{i}-{m[1:40]}" for i, (_, _, m) in enumerate(BAD_ARGUMENTS)])
def test_bad_arguments_are_refused_before_the_optimizer_changes(make, error, message):
    opt = _sgd()
    before = copy.deepcopy(opt.state_dict()["param_groups"])
    with pytest.raises(error, match=message):
        make(opt)
    if not any("initial_lr" in group for group in opt.param_groups):  # no schedule was made
        assert opt.state_dict()["param_groups"] == before


def test_a_refused_one_cycle_leaves_every_group_as_it_was():
    opt = optim.Adam([{"params": [dp.zeros(1, requires_grad=True)], "lr": 0.1},
                      {"params": [dp.zeros(1, requires_grad=True)], "betas": (0.5, 0.9)}])
    before = copy.deepcopy(opt.state_dict()["param_groups"])
    with pytest.raises(ValueError, match=r"max_momentum for parameter group 1: betas\[0\] must "
                                         r"be less than 1\.0"):
        optim.OneCycleLR(opt, max_lr=1.0, total_steps=5, max_momentum=[0.9, 1.5])
    assert opt.state_dict()["param_groups"] == before


# --------------------------------------------------------------------------- refused state
def _schedules():
    opt = _sgd()
    return {
        "LinearLR": optim.LinearLR(opt),
        "OneCycleLR": optim.OneCycleLR(_sgd(), max_lr=1.0, total_steps=10),
        "LambdaLR": optim.LambdaLR(_sgd(), lambda epoch: 1.0),
        "SequentialLR": (lambda o: optim.SequentialLR(
            o, [optim.LinearLR(o), optim.ExponentialLR(o, 0.9)], milestones=[3]))(_sgd()),
        "ReduceLROnPlateau": optim.ReduceLROnPlateau(_sgd()),
    }


BAD_STATES = [
    ("LinearLR", [], TypeError, r"^LinearLR\.load_state_dict needs a mapping, got list"),
    ("LinearLR", {"last_epoch": 2}, ValueError, "the state dict has no 'base_lrs'"),
    ("LinearLR", {"base_lrs": [0.1, math.nan], "last_epoch": 2}, ValueError,
     "each of base_lrs must be a finite number"),
    ("OneCycleLR", {"base_lrs": [0.1, 0.1], "last_epoch": -2}, ValueError,
     "last_epoch must be at least 0, got -2"),
    ("LambdaLR", {"base_lrs": [0.1, 0.1], "last_epoch": 2, "lr_lambdas": [{"a": 1}, None]},
     ValueError, r"lr_lambdas\[0\] holds attributes, but this schedule's function has no "
                 "saved state"),
    ("LambdaLR", {"base_lrs": [0.1, 0.1], "last_epoch": 2, "lr_lambdas": [None, 3]},
     TypeError, "each of lr_lambdas must be None or the attributes of a callable object, "
                "got 3"),
    ("LambdaLR", {"base_lrs": [0.1, 0.1], "last_epoch": 2, "lr_lambdas": [None]}, ValueError,
     "lr_lambdas must be a list of 2 entries"),
    ("SequentialLR", {"base_lrs": [0.1, 0.1], "last_epoch": 4}, ValueError,
     "the state dict has no '_schedulers'"),
    ("SequentialLR", {"base_lrs": [0.1, 0.1], "last_epoch": 4,
                      "_schedulers": [{"base_lrs": [0.1, 0.1], "last_epoch": 4},
                                      {"base_lrs": [0.1], "last_epoch": 1}]}, ValueError,
     r"_schedulers\[1\]: 1 base_lrs for 2 parameter groups"),
    ("ReduceLROnPlateau", {"best": math.nan, "num_bad_epochs": 0, "cooldown_counter": 0,
                           "last_epoch": 3}, ValueError, "best must be a finite number"),
    ("ReduceLROnPlateau", {"best": 0.5, "num_bad_epochs": "2", "cooldown_counter": 0,
                           "last_epoch": 3}, TypeError, "num_bad_epochs must be an int"),
    ("ReduceLROnPlateau", {"best": 0.5, "num_bad_epochs": 2, "last_epoch": 3}, ValueError,
     "the state dict has no 'cooldown_counter'"),
]


@pytest.mark.parametrize("kind, state, error, message", BAD_STATES,
                         ids=[f"{kind}-{i}" for i, (kind, *_) in enumerate(BAD_STATES)])
def test_bad_state_dicts_are_refused_and_change_nothing(kind, state, error, message):
    schedule = _schedules()[kind]
    if kind == "ReduceLROnPlateau":
        schedule.step(1.0)
    else:
        schedule.step()
    before = copy.deepcopy(schedule.state_dict())
    with pytest.raises(error, match=message):
        schedule.load_state_dict(state)
    assert schedule.state_dict() == before


def test_reduce_on_plateau_state_keeps_an_infinite_best():
    schedule = optim.ReduceLROnPlateau(_sgd(), mode="max")
    state = schedule.state_dict()
    assert state == {"best": -math.inf, "num_bad_epochs": 0, "cooldown_counter": 0,
                     "last_epoch": 0}
    again = optim.ReduceLROnPlateau(_sgd(), mode="max")
    again.load_state_dict({**state, "best": 0.75, "num_bad_epochs": 3})
    assert again.best == 0.75 and again.num_bad_epochs == 3
