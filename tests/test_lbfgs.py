"""LBFGS against PyTorch (fixtures from ``tests/data/make_more_optim_fixtures.py``: parameters
and losses after every ``step(closure)`` in float64, with and without the strong Wolfe line
search, the evaluation counts, the final state dict with PyTorch's names), resuming from
PyTorch's state dict, both forms of closure, and refused input that changes nothing."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from conftest import to_tensor
from torch_reference import load_grouped

import dparray as dp
from dparray import optim
from dparray.nn import functional as F

CASES, ARRAYS = load_grouped("optim_more.safetensors", "lbfgs")


def logistic(params, data):
    w, b = params
    return F.cross_entropy(data["x"] @ w.T + b, data["y"]) + 0.05 * (w**2).sum()


def rosenbrock(params, data):
    x, w = params
    valley = (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
    return valley + ((w @ data["v"] - data["target"]) ** 2).sum() + 0.1 * (w**4).sum()


LOSSES = {"logistic": logistic, "rosenbrock": rosenbrock}


def _setup(name):
    """The case's parameters (float64, current backend), data, closure and optimizer."""
    case, arrays = CASES[name], ARRAYS[name]
    params = [to_tensor(arrays[f"param.{i}"], requires_grad=True) for i in range(2)]
    data = {key[len("data."):]: to_tensor(value) for key, value in arrays.items()
            if key.startswith("data.")}
    opt = optim.LBFGS(params, **case["kwargs"])
    return params, (lambda: LOSSES[case["loss"]](params, data)), opt


def _close(ours, theirs):
    # a line search compares losses and slopes, so rounding differences in dot products
    # (NumPy's and PyTorch's BLAS) grow along the iterations: still far below any real change
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", list(CASES))
def test_parameters_and_losses_follow_pytorch_step_by_step(name, backend):
    params, closure, opt = _setup(name)
    for step in range(CASES[name]["steps"]):
        loss = opt.step(closure)
        assert isinstance(loss, dp.Tensor)
        _close(loss.item(), ARRAYS[name][f"loss.{step}"])
        for i, p in enumerate(params):
            assert p.dtype == dp.float64 and p.is_variable
            _close(p.numpy(), ARRAYS[name][f"after.{step}.{i}"])


@pytest.mark.parametrize("name", list(CASES))
def test_state_dict_has_pytorchs_names_counts_and_values(name, backend):
    _, closure, opt = _setup(name)
    for _ in range(CASES[name]["steps"]):
        opt.step(closure)
    case, arrays = CASES[name], ARRAYS[name]
    state = opt.state_dict()
    assert list(state["state"]) == [0]
    entry, numbers = state["state"][0], case["state_numbers"]
    assert set(entry) == set(case["state_keys"])
    assert entry["func_evals"] == numbers["func_evals"]  # the same evaluations, exactly
    assert entry["n_iter"] == numbers["n_iter"]
    for key in ("d", "prev_flat_grad"):
        assert isinstance(entry[key], dp.Tensor)
        _close(entry[key].numpy(), arrays[f"state.{key}"])
    for key in ("old_dirs", "old_stps"):
        assert len(entry[key]) == numbers[f"{key}_count"]
        for j, vector in enumerate(entry[key]):
            _close(vector.numpy(), arrays[f"state.{key}.{j}"])
    for key in ("t", "H_diag", "prev_loss"):
        assert type(entry[key]) is float
        _close(entry[key], numbers[key])
    for key in ("ro", "al"):
        if key in numbers:
            assert [v is None for v in entry[key]] == [v is None for v in numbers[key]]
            _close([v for v in entry[key] if v is not None],
                   [v for v in numbers[key] if v is not None])
    (ours,), (theirs,) = state["param_groups"], case["param_groups"]
    assert ours == {key: theirs[key] for key in ours}  # every option under PyTorch's name
    assert set(ours) == set(theirs)


def _pytorch_state_dict(name):
    """PyTorch's final state dict, as a converted PyTorch checkpoint holds it."""
    case, arrays = CASES[name], ARRAYS[name]
    numbers = case["state_numbers"]
    entry = {}
    for key in case["state_keys"]:
        if key in ("d", "prev_flat_grad"):
            entry[key] = to_tensor(arrays[f"state.{key}"])
        elif key in ("old_dirs", "old_stps"):
            entry[key] = [to_tensor(arrays[f"state.{key}.{j}"])
                          for j in range(numbers[f"{key}_count"])]
        elif key in ("t", "H_diag", "prev_loss"):  # 0-d tensors in PyTorch
            entry[key] = dp.tensor(numbers[key], dtype="float64")
        else:
            entry[key] = numbers[key]
    return {"state": {0: entry}, "param_groups": copy.deepcopy(case["param_groups"])}


@pytest.mark.parametrize("name", list(CASES))
def test_a_loaded_pytorch_state_dict_resumes_training_exactly(name, backend):
    params, closure, opt = _setup(name)
    for _ in range(CASES[name]["steps"]):
        opt.step(closure)
    fresh, fresh_closure, resumed = _setup(name)
    for p, q in zip(fresh, params, strict=True):
        p.data = q.data
    resumed.load_state_dict(_pytorch_state_dict(name))
    for _ in range(2):
        opt.step(closure)
        resumed.step(fresh_closure)
    for p, q in zip(fresh, params, strict=True):
        _close(p.numpy(), q.numpy())
    assert resumed.state_dict()["state"][0]["func_evals"] == opt.state_dict()["state"][0][
        "func_evals"]


def test_its_own_state_dict_round_trips_bit_for_bit(backend):
    params, closure, opt = _setup("lbfgs_wolfe_rosenbrock")
    opt.step(closure)
    saved = copy.deepcopy(opt.state_dict())
    start = [p.data for p in params]
    opt.step(closure)
    after = [p.numpy() for p in params]
    for p, data in zip(params, start, strict=True):
        p.data = data
    opt.load_state_dict(saved)
    opt.step(closure)
    for p, expected in zip(params, after, strict=True):
        np.testing.assert_array_equal(p.numpy(), expected)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_a_closure_may_return_the_loss_or_the_loss_and_its_gradients(line_search_fn, backend):
    results = []
    for form in ("loss", "loss and grads"):
        params, closure, opt = _setup("lbfgs_wolfe_logistic")
        opt.param_groups[0]["line_search_fn"] = line_search_fn

        def both(closure=closure):
            loss = closure()
            return loss, loss.backward()

        first = opt.step(closure if form == "loss" else both)
        results.append((first.item(), [p.numpy() for p in params]))
    (loss_a, params_a), (loss_b, params_b) = results
    assert loss_a == loss_b
    for a, b in zip(params_a, params_b, strict=True):
        np.testing.assert_array_equal(a, b)


def test_it_minimises_a_float32_quadratic_and_keeps_float32(backend, rng):
    a = to_tensor(rng.standard_normal((6, 4)).astype(np.float32))
    target = to_tensor(rng.standard_normal(6).astype(np.float32))
    w = dp.zeros(4, dtype="float32", requires_grad=True)
    opt = optim.LBFGS([w], line_search_fn="strong_wolfe", tolerance_grad=1e-5)
    for _ in range(3):
        opt.step(lambda: ((a @ w - target) ** 2).sum())
    solution = np.linalg.lstsq(a.numpy().astype(np.float64), target.numpy(), rcond=None)[0]
    assert w.dtype == dp.float32
    np.testing.assert_allclose(w.numpy(), solution, rtol=1e-4, atol=1e-5)
    entry = opt.state_dict()["state"][0]
    assert entry["d"].dtype == dp.float32 and all(v.dtype == dp.float32
                                                   for v in entry["old_dirs"])


def test_the_closure_runs_with_gradients_on_inside_no_grad(backend):
    w = dp.tensor([3.0, -1.0], dtype="float64", requires_grad=True)
    opt = optim.LBFGS([w], line_search_fn="strong_wolfe")
    with dp.no_grad():
        loss = opt.step(lambda: ((w - 1.0) ** 2).sum())
    assert loss.item() == 8.0
    np.testing.assert_allclose(w.numpy(), [1.0, 1.0], atol=1e-7)


def test_it_stops_at_once_where_the_gradient_is_within_tolerance(backend):
    w = dp.tensor([1.0, 1.0], dtype="float64", requires_grad=True)
    opt = optim.LBFGS([w])
    calls = []

    def closure():
        calls.append(1)
        return ((w - 1.0) ** 2).sum()

    assert opt.step(closure).item() == 0.0
    assert len(calls) == 1 and w.tolist() == [1.0, 1.0]
    assert opt.state_dict()["state"][0] == {"func_evals": 1, "n_iter": 0}


def test_a_parameter_without_a_gradient_counts_as_zero(backend):
    used = dp.tensor([2.0], dtype="float64", requires_grad=True)
    unused = dp.tensor([5.0, 6.0], dtype="float64", requires_grad=True)
    opt = optim.LBFGS([used, unused], line_search_fn="strong_wolfe")
    opt.step(lambda: ((used - 1.0) ** 2).sum())
    assert unused.tolist() == [5.0, 6.0]
    assert used.tolist() == pytest.approx([1.0], abs=1e-9)


# --------------------------------------------------------------------------- refused input
def _quadratic():
    w = dp.tensor([1.0, -2.0], dtype="float64", requires_grad=True)
    return w, optim.LBFGS([w]), (lambda: (w * w).sum())


@pytest.mark.parametrize("argument", ["gradients", None, 3.0])
def test_step_needs_a_closure(argument, backend):
    w, opt, _ = _quadratic()
    given = (w * w).sum().backward() if argument == "gradients" else argument
    with pytest.raises(TypeError, match=r"^LBFGS.step needs a closure: a function that computes "
                                        r"the loss and returns it"):
        opt.step(given)
    assert w.tolist() == [1.0, -2.0]


@pytest.mark.parametrize("result, error, message", [
    (lambda w: 3.0, TypeError, "the closure returned 3.0"),
    (lambda w: ((w * w).sum(), "grads"), TypeError, "the closure returned"),
    (lambda w: w * w, ValueError, r"the loss must have one element, got shape \(2,\)"),
    (lambda w: dp.tensor(1.0), RuntimeError, "depends on no variable"),
])
def test_a_closure_that_returns_something_else_is_refused(result, error, message, backend):
    w, opt, _ = _quadratic()
    with pytest.raises(error, match=message):
        opt.step(lambda: result(w))
    assert w.tolist() == [1.0, -2.0] and opt.state_dict()["state"] == {0: {"func_evals": 0,
                                                                           "n_iter": 0}}


def test_a_closure_that_differentiates_its_loss_itself_gets_a_hint(backend):
    w, opt, _ = _quadratic()

    def pytorch_habit():
        loss = (w * w).sum()
        loss.backward()  # PyTorch's line, whose result is dropped
        return loss

    with pytest.raises(RuntimeError, match=r"^LBFGS.step: the closure's loss was differentiated "
                                           r"already; return the loss and let LBFGS call "
                                           r"backward\(\), or return \(loss, loss.backward\(\)\)"):
        opt.step(pytorch_habit)


def test_gradients_of_other_tensors_are_refused(backend):
    w, opt, _ = _quadratic()
    other = dp.ones(3, dtype="float64", requires_grad=True)
    with pytest.raises(ValueError, match=r"^LBFGS.step: 1 gradient\(s\) for tensors this "
                                         r"optimizer does not update \(shapes \[\(3,\)\]\)"):
        opt.step(lambda: (w * w).sum() + other.sum())
    assert w.tolist() == [1.0, -2.0]


@pytest.mark.parametrize("kwargs, error, message", [
    ({"line_search_fn": "armijo"}, ValueError,
     "line_search_fn must be None or 'strong_wolfe', got 'armijo'"),
    ({"line_search_fn": True}, TypeError, "line_search_fn must be None or 'strong_wolfe'"),
    ({"max_iter": 0}, ValueError, "max_iter must be at least 1, got 0"),
    ({"max_iter": 2.5}, TypeError, "max_iter must be an int, got 2.5"),
    ({"max_eval": 0}, ValueError, "max_eval must be at least 1, got 0"),
    ({"history_size": 0}, ValueError, "history_size must be at least 1, got 0"),
    ({"tolerance_grad": -1.0}, ValueError, r"tolerance_grad must be at least 0\.0"),
    ({"tolerance_change": math.nan}, ValueError, "tolerance_change must be a finite number"),
    ({"lr": -1.0}, ValueError, r"lr must be at least 0\.0"),
])
def test_bad_options_are_refused(kwargs, error, message, backend):
    w = dp.ones(2, requires_grad=True)
    with pytest.raises(error, match=f"^LBFGS: {message}"):
        optim.LBFGS([w], **kwargs)
    opt = optim.LBFGS([w])
    opt.param_groups[0].update(kwargs)
    with pytest.raises(error, match=f"^LBFGS.step: parameter group 0: {message}"):
        opt.step(lambda: (w * w).sum())
    assert w.tolist() == [1.0, 1.0]


def test_parameter_groups_and_mixed_parameters_are_refused(backend):
    a, b = dp.ones(2, requires_grad=True), dp.ones(2, dtype="float64", requires_grad=True)
    with pytest.raises(ValueError, match=r"^LBFGS does not support parameter groups"):
        optim.LBFGS([{"params": [a]}, {"params": [b], "lr": 0.1}])
    with pytest.raises(ValueError, match=r"^LBFGS: the parameters must share one backend and "
                                         r"dtype, got float32 on '\w+' and float64"):
        optim.LBFGS([a, b])


def _trained():
    _, closure, opt = _setup("lbfgs_wolfe_rosenbrock")
    opt.step(closure)
    opt.step(closure)
    return opt


@pytest.mark.parametrize("change, error, message", [
    (lambda e: e.pop("d"), ValueError, "missing 'd'"),
    (lambda e: e.pop("func_evals"), ValueError, "missing 'func_evals'"),
    (lambda e: e.update(velocity=1.0), ValueError, "unknown 'velocity'"),
    (lambda e: e.update(d=dp.zeros(3, dtype="float64")), ValueError,
     r"d has shape \(3,\), not \(12,\) \(the parameters' total size\)"),
    (lambda e: e.update(d=[0.0] * 12), TypeError, "d must be a Tensor, got"),
    (lambda e: e.update(old_dirs=e["old_dirs"][:1]), ValueError,
     "old_dirs, old_stps and ro must have one length, got 1, 2 and 2"),
    (lambda e: e.update(ro=0.5), TypeError, "ro must be a list, got 0.5"),
    (lambda e: e.update(t=math.nan), ValueError, "t must be a finite number"),
    (lambda e: e.update(n_iter=-1), ValueError, "n_iter must be at least 0"),
    (lambda e: e.update(prev_flat_grad=dp.zeros(12, dtype="int64")), ValueError,
     "prev_flat_grad has dtype int64"),
])
def test_a_bad_state_dict_is_refused_and_changes_nothing(change, error, message, backend):
    opt = _trained()
    before = copy.deepcopy(opt.state_dict())
    broken = copy.deepcopy(before)
    change(broken["state"][0])
    with pytest.raises(error, match=message):
        opt.load_state_dict(broken)
    after = opt.state_dict()
    assert after["param_groups"] == before["param_groups"]
    assert after["state"][0]["func_evals"] == before["state"][0]["func_evals"]
    np.testing.assert_array_equal(after["state"][0]["d"].numpy(), before["state"][0]["d"].numpy())


def test_state_for_another_parameter_is_refused(backend):
    opt = _trained()
    saved = opt.state_dict()
    saved["state"] = {1: saved["state"][0]}
    with pytest.raises(ValueError, match="LBFGS keeps its state with parameter 0, got state for "
                                         "parameter 1"):
        opt.load_state_dict(saved)
