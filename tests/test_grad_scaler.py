"""``dparray.amp.GradScaler``: PyTorch's scale schedule (``tests/data/mixed_precision.safetensors``,
made by ``tests/data/make_mixed_precision_fixtures.py``), a skipped overflowing step that changes
nothing, all-or-nothing refusals, state dicts and checkpoints, and float16 training with it."""

from __future__ import annotations

import copy
import json
import math
import pathlib

import numpy as np
import pytest
from safetensors import safe_open

import dparray as dp
import dparray.nn.functional as F
from dparray import nn, optim
from dparray.amp import GradScaler

FIXTURES = pathlib.Path(__file__).parent / "data" / "mixed_precision.safetensors"


def _pytorch_runs():
    with safe_open(str(FIXTURES), "np") as f:
        return json.loads(f.metadata()["grad_scaler"])["runs"]


@pytest.mark.parametrize("run", _pytorch_runs(), ids=lambda run: str(run["config"]))
def test_the_scale_schedule_is_pytorchs(run):
    w = dp.tensor([1.0, -2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    scaler = GradScaler(**run["config"])
    scales, stepped = [], []
    for step in range(len(run["scales"])):
        loss = (w * w).sum() * (math.inf if step in run["overflow"] else 1.0)
        stepped.append(scaler.step(opt, scaler.scale(loss).backward()))
        scales.append(scaler.get_scale())
    assert scales == run["scales"] and stepped == run["stepped"]
    assert scaler.state_dict() == run["state"]


def _adam_setup():
    dp.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    opt = optim.Adam(model.parameters(), lr=1e-2)
    return model, opt


def _loss(model, factor=1.0):
    return (model(dp.ones((2, 3))) ** 2).mean() * factor


def test_an_overflowing_step_changes_nothing_but_the_scale():
    model, opt = _adam_setup()
    scaler = GradScaler(init_scale=2.0**10, growth_interval=2)
    assert scaler.step(opt, scaler.scale(_loss(model)).backward())  # state to keep
    params = [p.numpy().copy() for p in model.parameters()]
    state = copy.deepcopy(opt.state_dict())
    for bad in (math.inf, math.nan):
        grads = scaler.scale(_loss(model, bad)).backward()
        assert scaler.step(opt, grads) is False
        assert all(np.array_equal(p.numpy(), q) for p, q in zip(model.parameters(), params,
                                                                 strict=True))
        after = opt.state_dict()
        assert after["param_groups"] == state["param_groups"]
        for key, entry in state["state"].items():
            assert after["state"][key]["step"] == entry["step"]
            assert np.array_equal(after["state"][key]["exp_avg"].numpy(),
                                  entry["exp_avg"].numpy())
    assert scaler.get_scale() == 2.0**8 and scaler.state_dict()["_growth_tracker"] == 0


def test_a_gradient_that_overflows_only_when_scaled_is_caught():
    w = dp.tensor([1.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    scaler = GradScaler(init_scale=2.0**100)
    loss = (w * 3e30).sum()  # finite, but times 2^100 it is beyond float32
    with np.errstate(over="ignore"):  # NumPy warns of the overflow the scaler then handles
        grads = scaler.scale(loss).backward()
    assert scaler.step(opt, grads) is False
    assert w.tolist() == [1.0] and scaler.get_scale() == 2.0**99


def test_unscale_then_clip_then_step():
    w = dp.tensor([3.0, 4.0], requires_grad=True)
    opt = optim.SGD([w], lr=1.0)
    scaler = GradScaler(init_scale=64.0)
    grads = scaler.unscale(scaler.scale((w * w).sum() / 2).backward())
    assert grads[w].tolist() == [3.0, 4.0]
    assert scaler.step(opt, optim.clip_grad_norm(grads, 1.0), unscaled=True)
    np.testing.assert_allclose(w.numpy(), [3.0 - 0.6, 4.0 - 0.8], rtol=1e-5)


def test_refusals_change_nothing():
    model, opt = _adam_setup()
    scaler = GradScaler(init_scale=8.0, growth_interval=1)
    grads = scaler.scale(_loss(model)).backward()
    before = scaler.state_dict()
    with pytest.raises(TypeError, match=r"GradScaler\.step needs an optimizer"):
        scaler.step(grads, opt)
    with pytest.raises(TypeError, match="needs the Gradients that backward"):
        scaler.step(opt, {})
    other = dp.tensor([1.0], requires_grad=True)
    stranger = (other * 2.0).sum().backward()
    with pytest.raises(ValueError, match="gradient\\(s\\) for tensors this optimizer does not"):
        scaler.step(opt, stranger)  # the optimizer refuses: the scale does not move either
    assert scaler.state_dict() == before
    with pytest.raises(TypeError, match="needs the loss Tensor"):
        scaler.scale(1.0)


def test_constructor_checks():
    with pytest.raises(ValueError, match="init_scale"):
        GradScaler(init_scale=0.0)
    with pytest.raises(ValueError, match="growth_factor must be above 1"):
        GradScaler(growth_factor=1.0)
    with pytest.raises(ValueError, match="backoff_factor must be below 1"):
        GradScaler(backoff_factor=1.0)
    with pytest.raises(ValueError, match="growth_interval"):
        GradScaler(growth_interval=0)
    with pytest.raises(ValueError, match=r"GradScaler: device must be one of \['cpu', 'cuda'\], "
                                         r"got 'tpu'"):
        GradScaler("tpu")


def test_the_constructor_takes_pytorchs_device_first_or_the_scale_first():
    """``torch.amp.GradScaler("cuda", ...)`` and ``torch.cuda.amp.GradScaler(1024.0)``."""
    for scaler in (GradScaler("cuda", init_scale=8.0), GradScaler(device="cpu", init_scale=8.0),
                   GradScaler(8.0)):
        assert scaler.get_scale() == 8.0 and scaler.is_enabled()
    assert not GradScaler("cuda", enabled=False).is_enabled()


def test_state_dict_round_trip_and_pytorchs_state():
    scaler = GradScaler(init_scale=8.0, growth_interval=3)
    w = dp.tensor([1.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    scaler.step(opt, scaler.scale(w.sum()).backward())
    fresh = GradScaler()
    fresh.load_state_dict(scaler.state_dict())
    assert fresh.state_dict() == scaler.state_dict() == {
        "scale": 8.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 3,
        "_growth_tracker": 1}
    pytorchs = _pytorch_runs()[1]["state"]
    fresh.load_state_dict(pytorchs)
    assert fresh.state_dict() == pytorchs
    fresh.load_state_dict({**pytorchs, "scale": dp.tensor(4.0)})  # PyTorch's tensor form
    assert fresh.get_scale() == 4.0
    for bad, error in (({**pytorchs, "scale": -1.0}, ValueError),
                       ({**pytorchs, "_growth_tracker": 5}, ValueError),
                       ({"scale": 1.0}, ValueError), ([], TypeError)):
        with pytest.raises(error):
            fresh.load_state_dict(bad)
        assert fresh.get_scale() == 4.0


def test_a_disabled_scaler_passes_everything_through():
    w = dp.tensor([1.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.5)
    scaler = GradScaler(enabled=False)
    loss = (w * w).sum()
    assert scaler.scale(loss) is loss and scaler.get_scale() == 1.0
    assert scaler.step(opt, loss.backward()) and w.tolist() == [0.0]
    assert scaler.state_dict() == {}
    with pytest.raises(ValueError, match="disabled"):
        scaler.load_state_dict({"scale": 2.0})


def test_checkpoints_keep_the_scaler(tmp_path):
    model, opt = _adam_setup()
    scaler = GradScaler(init_scale=16.0, growth_interval=2)
    for factor in (1.0, math.inf, 1.0):
        scaler.step(opt, scaler.scale(_loss(model, factor)).backward())
    path = tmp_path / "run.ckpt.safetensors"
    dp.save_checkpoint(path, model=model, optimizer=opt, scaler=scaler, step=3)
    restored = GradScaler()
    dp.load_checkpoint(path, model=model, optimizer=opt, scaler=restored)
    assert restored.state_dict() == scaler.state_dict()
    dp.save_checkpoint(path, model=model, step=3)  # without one: loading one is an error
    with pytest.raises(ValueError, match="has no scaler state"):
        dp.load_checkpoint(path, model=model, scaler=restored)
    dp.load_checkpoint(path, model=model)  # and without asking, as before
    with pytest.raises(TypeError, match=r"scaler must be a dparray\.amp\.GradScaler"):
        dp.save_checkpoint(path, model=model, scaler=opt)


def test_float16_training_needs_the_scaler_and_trains_with_it():
    """Gradients below float16's smallest subnormal vanish without scaling."""
    dp.manual_seed(0)
    x = dp.randn(64, 16)
    y = dp.tensor([i % 4 for i in range(64)])

    def train(scaler):
        dp.manual_seed(1)
        model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
        opt = optim.SGD(model.parameters(), lr=0.5)
        zero_fraction = []
        for _ in range(20):
            with dp.autocast(dtype=dp.float16):
                loss = F.cross_entropy(model(x), y) * 1e-6  # a tiny loss: tiny gradients
            grads = scaler.scale(loss).backward()
            first = grads[model[0].weight]
            zero_fraction.append(float((first == 0.0).astype("float32").mean().item()))
            scaler.step(opt, grads)
        return zero_fraction

    without = train(GradScaler(enabled=False))
    with_scaler = train(GradScaler(init_scale=2.0**16))
    assert without[0] > 0.9 and with_scaler[0] < 0.1
