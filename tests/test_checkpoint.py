"""Whole-state checkpoints and the random streams' state: a run resumed in a fresh process is
bitwise the run that never stopped, and a file that does not fit changes nothing."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import dparray as dp
from dparray import io as dp_io
from dparray import nn, optim
from dparray.checkpoint import CHECKPOINT_KEY
from dparray.nn import functional as F

DATA = pathlib.Path(__file__).parent / "data"


# ----------------------------------------------------------------------- random streams' state

def test_set_state_replays_the_same_draws(backend):
    dp.manual_seed(3)
    dp.randn(5)  # the generator has moved before the state is taken
    state = dp.random.get_state()
    assert json.loads(json.dumps(state)) == state  # plain JSON data
    first = [dp.randn(4).numpy(), dp.rand(3).numpy(), dp.randperm(6).numpy()]
    dp.manual_seed(99)
    dp.randn(7)
    dp.random.set_state(json.loads(json.dumps(state)))
    again = [dp.randn(4).numpy(), dp.rand(3).numpy(), dp.randperm(6).numpy()]
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    assert dp.random.get_state()["seed"] == 3 and dp.random.initial_seed() == 3


def test_the_state_holds_the_seeds_handed_to_data_parallel_chunks():
    dp.manual_seed(0)
    streams = dp.random.current_streams()
    streams.spawn(5)
    state = dp.random.get_state()
    assert state["spawned"] == 5
    seeds = streams.spawn(2)
    dp.random.set_state(state)
    assert dp.random.current_streams().spawn(2) == seeds


def test_an_unused_stream_state_restarts_from_the_seed():
    dp.manual_seed(11)
    state = dp.random.get_state()
    assert state == {"seed": 11, "spawned": 0, "generators": {}}
    expected = dp.randn(3).numpy()
    dp.randn(2)
    dp.random.set_state(state)
    np.testing.assert_array_equal(dp.randn(3).numpy(), expected)


def test_inside_fork_rng_get_and_set_state_are_the_blocks():
    dp.manual_seed(1)
    outer = dp.random.get_state()
    with dp.fork_rng(5):
        inner = dp.random.get_state()
        assert inner["seed"] == 5
        dp.random.set_state(outer)
        assert dp.random.initial_seed() == 1
    assert dp.random.initial_seed() == 1 and dp.random.get_state() == outer


def test_a_state_for_a_backend_that_cannot_run_here_is_kept():
    dp.manual_seed(2)
    dp.randn(1)
    state = dp.random.get_state()
    elsewhere = {"generator": "a GPU's", "seed": 2, "draws": 4}
    state["generators"]["no_such_backend"] = elsewhere
    dp.random.set_state(state)
    assert dp.random.get_state()["generators"]["no_such_backend"] == elsewhere


@pytest.mark.parametrize("state, error, message", [
    ([1, 2], TypeError, "state must be what get_state"),
    ({"seed": 1}, ValueError, "state must have the keys"),
    ({"seed": -1, "spawned": 0, "generators": {}}, ValueError, "seed must be at least 0"),
    ({"seed": 1.5, "spawned": 0, "generators": {}}, TypeError, "seed must be an int"),
    ({"seed": 1, "spawned": "3", "generators": {}}, TypeError, "spawned must be an int"),
    ({"seed": 1, "spawned": 0, "generators": []}, TypeError, "generators must map"),
    ({"seed": 1, "spawned": 0, "generators": {"numpy": {"bit_generator": "MT19937"}}},
     ValueError, "not the state of a PCG64 random generator"),
], ids=["a list", "missing keys", "negative seed", "float seed", "str count", "list",
        "another generator"])
def test_set_state_refuses_what_get_state_cannot_return(state, error, message):
    dp.manual_seed(4)
    dp.randn(2)
    before = dp.random.get_state()
    with pytest.raises(error, match=message):
        dp.random.set_state(state)
    assert dp.random.get_state() == before


# ------------------------------------------------------------------------------- checkpoints

def _training(seed=0, execution=None):
    """A model with dropout, Adam and a schedule, and one training step."""
    dp.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.25), nn.Linear(8, 3))
    net = model if execution is None else dp.DataParallel(model, 2, execution=execution)
    opt = optim.Adam(net.parameters(), lr=1e-2)
    scheduler = optim.StepLR(opt, step_size=2, gamma=0.5)
    x = dp.tensor(np.random.default_rng(0).standard_normal((8, 4)), dtype="float32")
    y = dp.tensor([0, 1, 2, 0, 1, 2, 0, 1])

    def step():
        loss = F.cross_entropy(net(x), y)
        opt.step(loss.backward())
        scheduler.step()
        return loss.item()

    return net, opt, scheduler, step


def _everything(model, opt, scheduler):
    """The state of all four parts, as plain values to compare."""
    return ({k: v.numpy().copy() for k, v in model.state_dict().items()},
            repr(opt.state_dict()["param_groups"]),
            {i: {k: getattr(v, "numpy", lambda v=v: v)() for k, v in s.items()}
             for i, s in opt.state_dict()["state"].items()},
            scheduler.state_dict(), dp.random.get_state())


def _assert_same(a, b):
    models_a, groups_a, state_a, scheduler_a, random_a = a
    models_b, groups_b, state_b, scheduler_b, random_b = b
    assert models_a.keys() == models_b.keys()
    for name in models_a:
        np.testing.assert_array_equal(models_a[name], models_b[name])
    assert groups_a == groups_b and state_a.keys() == state_b.keys()
    for i in state_a:
        assert state_a[i].keys() == state_b[i].keys()
        for key in state_a[i]:
            np.testing.assert_array_equal(state_a[i][key], state_b[i][key])
    assert scheduler_a == scheduler_b and random_a == random_b


def test_a_checkpoint_restores_every_part_exactly(backend, tmp_path):
    model, opt, scheduler, step = _training()
    for _ in range(3):
        step()
    path = tmp_path / "run.safetensors"
    dp.save_checkpoint(path, model=model, optimizer=opt, scheduler=scheduler, step=3, epoch=1,
                       metadata={"note": "three steps"})
    saved = _everything(model, opt, scheduler)
    losses = [step() for _ in range(3)]
    other, other_opt, other_scheduler, other_step = _training(seed=7)
    checkpoint = dp.load_checkpoint(path, model=other, optimizer=other_opt,
                                    scheduler=other_scheduler)
    assert checkpoint == dp.Checkpoint(step=3, epoch=1, metadata={"note": "three steps"})
    _assert_same(_everything(other, other_opt, other_scheduler), saved)
    assert isinstance(other_opt.param_groups[0]["betas"], tuple)  # tuples stay tuples
    assert [other_step() for _ in range(3)] == losses


def test_a_checkpoint_is_a_plain_safetensors_file(tmp_path):
    model, opt, _, step = _training()
    step()
    path = tmp_path / "run.safetensors"
    dp.save_checkpoint(path, model=model, optimizer=opt, metadata={"note": "x"})
    tensors, metadata = dp.load(path, with_metadata=True)
    assert metadata == {"note": "x"}
    assert list(tensors)[:4] == ["model/0.weight", "model/0.bias", "model/3.weight",
                                 "model/3.bias"]
    assert "optimizer/state/0/exp_avg" in tensors and "optimizer/state/3/exp_avg_sq" in tensors
    np.testing.assert_array_equal(tensors["model/0.weight"].numpy(),
                                  model.state_dict()["0.weight"].numpy())
    assert [p.name for p in tmp_path.iterdir()] == ["run.safetensors"]  # written atomically


def test_parts_saved_but_not_asked_for_are_left_alone(tmp_path):
    model, opt, scheduler, step = _training()
    step()
    path = tmp_path / "run.safetensors"
    dp.save_checkpoint(path, model=model, optimizer=opt, scheduler=scheduler)
    fresh, fresh_opt, _, _ = _training(seed=3)
    assert dp.load_checkpoint(path, model=fresh) == dp.Checkpoint(None, None, {})
    assert fresh_opt.state == {}
    np.testing.assert_array_equal(fresh.state_dict()["0.weight"].numpy(),
                                  model.state_dict()["0.weight"].numpy())


RESUME = """
import json, sys
import dparray as dp
from dparray import nn, optim
from dparray.nn import functional as F

mode, execution, backend, checkpoint, out = sys.argv[1:]
dp.set_backend(backend)
dp.manual_seed(1234)
model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Dropout(0.25), nn.Linear(16, 3))
net = model if execution == "plain" else dp.DataParallel(model, 2, execution="threads")
opt = optim.Adam(net.parameters(), lr=0.01)
scheduler = optim.StepLR(opt, step_size=2, gamma=0.5)
data, labels = dp.randn(64, 5), dp.tensor([i % 3 for i in range(64)])
start, stop = 0, 6
if mode == "first":
    stop = 3
if mode == "rest":
    start = dp.load_checkpoint(checkpoint, model=net, optimizer=opt, scheduler=scheduler).step
losses = []
for step in range(start, stop):
    index = dp.randperm(64)[:16]  # the data order comes from the random streams too
    loss = F.cross_entropy(net(dp.take(data, index)), dp.take(labels, index))
    opt.step(loss.backward())
    scheduler.step()
    losses.append(loss.item().hex())
if mode == "first":
    dp.save_checkpoint(checkpoint, model=net, optimizer=opt, scheduler=scheduler, step=stop)
assert execution == "plain" or net.last_execution == "threads", net.last_execution
dp.save(model.state_dict(), out + ".safetensors")
with open(out + ".json", "w") as file:
    json.dump(losses, file)
"""


@pytest.mark.integration
@pytest.mark.timeout(240)
@pytest.mark.parametrize("backend_name, execution", [
    ("numpy", "plain"), ("numpy", "threads"), ("array_api_strict", "plain"),
])
def test_resuming_in_a_fresh_process_is_bitwise_the_uninterrupted_run(tmp_path, backend_name,
                                                                      execution):
    """6 steps in one process equal 3 steps, a checkpoint, and 3 more in a new process."""
    checkpoint = tmp_path / "run.safetensors"

    def run(mode):
        out = tmp_path / mode
        result = subprocess.run([sys.executable, "-c", RESUME, mode, execution, backend_name,
                                 str(checkpoint), str(out)], capture_output=True, text=True,
                                timeout=120)
        assert result.returncode == 0, result.stderr[-3000:]
        with open(f"{out}.json") as file:
            return json.load(file), dp.load(f"{out}.safetensors")

    reference_losses, reference = run("reference")
    first_losses, _ = run("first")
    rest_losses, resumed = run("rest")
    assert len(reference_losses) == 6
    assert first_losses + rest_losses == reference_losses  # float.hex: bit for bit
    assert list(resumed) == list(reference)
    for name in reference:
        assert resumed[name].numpy().tobytes() == reference[name].numpy().tobytes(), name


def test_resuming_under_data_parallel_in_one_process(tmp_path):
    model, opt, scheduler, step = _training(execution="threads")
    for _ in range(2):
        step()
    path = tmp_path / "run.safetensors"
    dp.save_checkpoint(path, model=model, optimizer=opt, scheduler=scheduler, step=2)
    losses = [step() for _ in range(2)]
    assert model.last_execution == "threads"
    other, other_opt, other_scheduler, other_step = _training(seed=9, execution="threads")
    dp.load_checkpoint(path, model=other, optimizer=other_opt, scheduler=other_scheduler)
    assert [other_step() for _ in range(2)] == losses


# ------------------------------------------------------------------- refused, nothing changed

def _refused(path, error, message, parts=("model", "optimizer", "scheduler")):
    """Loading ``path`` raises ``error`` and leaves the model, optimizer, scheduler, random
    streams and the file as they were."""
    model, opt, scheduler, step = _training(seed=5)
    step()
    targets = {"model": model, "optimizer": opt, "scheduler": scheduler}
    asked = {k: targets[k] for k in parts}
    before = _everything(model, opt, scheduler)
    payload = pathlib.Path(path).read_bytes() if pathlib.Path(path).is_file() else None
    with pytest.raises(error, match=message):
        dp.load_checkpoint(path, **asked)
    _assert_same(_everything(model, opt, scheduler), before)
    if payload is not None:
        assert pathlib.Path(path).read_bytes() == payload


@pytest.fixture
def saved(tmp_path):
    """A checkpoint of the model, optimizer and scheduler of ``_training`` after a step."""
    model, opt, scheduler, step = _training(seed=1)
    step()
    path = tmp_path / "run.safetensors"
    dp.save_checkpoint(path, model=model, optimizer=opt, scheduler=scheduler, step=1)
    return path


def test_a_truncated_checkpoint_changes_nothing(tmp_path, saved):
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(saved.read_bytes()[:-100])
    _refused(truncated, ValueError, r"truncated\.safetensors is not a valid safetensors file")
    damaged = bytearray(saved.read_bytes())
    damaged[-3] ^= 0x40
    (tmp_path / "damaged.safetensors").write_bytes(bytes(damaged))
    _refused(tmp_path / "damaged.safetensors", ValueError, "is corrupted")


def test_a_foreign_file_changes_nothing(tmp_path):
    model, *_ = _training()
    weights = tmp_path / "weights.safetensors"
    dp.save(model.state_dict(), weights)
    _refused(weights, ValueError, r"weights\.safetensors is not a dparray checkpoint")
    _refused(DATA / "torch_net.safetensors", ValueError, "is not a dparray checkpoint")
    _refused(tmp_path, IsADirectoryError, "needs a regular file")
    _refused(tmp_path / "missing.safetensors", FileNotFoundError, "No such file")


def test_another_models_checkpoint_changes_nothing(tmp_path):
    dp.manual_seed(0)
    wider = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Dropout(0.25), nn.Linear(5, 3))
    path = tmp_path / "wider.safetensors"
    dp.save_checkpoint(path, model=wider, optimizer=optim.Adam(wider.parameters()))
    _refused(path, ValueError, r"the checkpoint's model state does not fit this "
                               r"Sequential: .*0\.weight: shape \(5, 4\)", parts=["model"])


def test_a_checkpoint_without_an_asked_for_part_changes_nothing(tmp_path):
    model, *_ = _training()
    path = tmp_path / "model-only.safetensors"
    dp.save_checkpoint(path, model=model)
    _refused(path, ValueError, "has no optimizer state: it was saved without one")
    _refused(path, ValueError, "has no scheduler state", parts=["model", "scheduler"])


def test_another_optimizers_state_changes_nothing(tmp_path):
    model, *_ = _training()
    sgd = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss = F.cross_entropy(model(dp.randn(8, 4)), dp.tensor([0, 1, 2, 0, 1, 2, 0, 1]))
    sgd.step(loss.backward())
    path = tmp_path / "sgd.safetensors"
    dp.save_checkpoint(path, model=model, optimizer=sgd)
    _refused(path, ValueError, "the checkpoint's optimizer state does not fit this Adam",
             parts=["model", "optimizer"])


def test_a_part_refused_after_the_model_loaded_puts_the_model_back(tmp_path):
    model, opt, scheduler, step = _training(seed=2)
    step()
    opt.param_groups[0]["lr"] = -1.0  # a state that Adam.load_state_dict refuses
    path = tmp_path / "bad-lr.safetensors"
    dp.save_checkpoint(path, model=model, optimizer=opt, scheduler=scheduler)
    _refused(path, ValueError, "lr must be at least 0")


@pytest.mark.parametrize("description, message", [
    ('{"dict": []}', "its state has"),
    ("[" * 100_000 + "]" * 100_000, "not a valid dparray checkpoint"),
    ("not json", "not a valid dparray checkpoint"),
    ('{"tensor": "nowhere"}', "not a valid dparray checkpoint"),
], ids=["no parts", "deeply nested", "not json", "a missing tensor"])
def test_a_checkpoint_with_a_crafted_description_changes_nothing(tmp_path, description,
                                                                 message):
    path = tmp_path / "crafted.safetensors"
    dp_io._write({"model/w": dp.ones(2)}, path, {}, {CHECKPOINT_KEY: description},
                 follow_symlinks=True)  # with a valid checksum: only the description is wrong
    _refused(path, ValueError, message)


def test_bad_arguments_write_nothing(tmp_path):
    model, opt, _, _ = _training()
    path = tmp_path / "run.safetensors"
    cases = [
        (TypeError, "save_checkpoint: model must be a dparray.nn.Module", {"model": opt}),
        (TypeError, "optimizer must be a dparray.optim.Optimizer",
         {"model": model, "optimizer": model}),
        (TypeError, "scheduler must be a dparray.optim.LRScheduler",
         {"model": model, "scheduler": opt}),
        (ValueError, "save_checkpoint: step must be at least 0", {"model": model, "step": -1}),
        (TypeError, "save_checkpoint: epoch must be an int", {"model": model, "epoch": 1.5}),
        (ValueError, "keys starting with 'dparray.'",
         {"model": model, "metadata": {"dparray.checkpoint": "{}"}}),
        (TypeError, "metadata must map str to str", {"model": model, "metadata": {"a": 1}}),
    ]
    for error, message, arguments in cases:
        with pytest.raises(error, match=message):
            dp.save_checkpoint(path, **arguments)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(TypeError, match="load_checkpoint: model must be"):
        dp.load_checkpoint(path, model=None)
