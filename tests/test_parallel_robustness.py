"""DataParallel under interruption and churn: Ctrl-C and SystemExit reach the caller as
themselves, threads stay bounded, idle ones are released, and ``auto`` decides by timing."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

import dparray as dp
from dparray import nn
from dparray.parallel import auto as _auto
from dparray.parallel import pool as _pool


class Exits(nn.Module):
    def forward(self, x):
        if x.shape[0] and float(x[0, 0].item()) == 1.0:  # only the second chunk
            raise SystemExit(3)
        return x


def test_system_exit_in_a_chunk_is_raised_as_itself(backend):
    model = dp.DataParallel(Exits(), 2, execution="threads")
    x = dp.tensor([[0.0], [1.0]])
    with pytest.raises(SystemExit) as raised:
        model(x)
    assert raised.value.code == 3
    assert model(dp.zeros(2, 1)).shape == (2, 1)  # the workers are still usable


class Interrupts(nn.Module):
    def forward(self, x):
        raise KeyboardInterrupt


def test_keyboard_interrupt_in_a_chunk_is_raised_as_itself(backend):
    with pytest.raises(KeyboardInterrupt):
        dp.DataParallel(Interrupts(), 3, execution="threads")(dp.ones(3, 2))


SCRIPT = textwrap.dedent("""
    import sys
    import dparray as dp
    model = dp.DataParallel(dp.nn.Sequential(dp.nn.Linear(256, 256), dp.nn.Tanh()), 2,
                            execution="threads")
    x = dp.randn(2048, 256)
    from dparray.backends import _numba_setup
    if _numba_setup._warm_up is not None:
        # an interpreter interrupted while this daemon thread still imports Numba exits with
        # status 1 about one time in four (CPython's shutdown, not dparray's handling)
        _numba_setup._warm_up.join()
    print("ready", flush=True)
    try:
        while True:
            model(x).sum().backward()
    except KeyboardInterrupt:
        print("caught KeyboardInterrupt", flush=True)
        raise
""")


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_ctrl_c_during_training_reaches_except_keyboard_interrupt_and_exits_130():
    process = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "ready"
    time.sleep(1.0)  # well inside the training loop
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert "caught KeyboardInterrupt" in out, err
    assert "ChunkError" not in err
    assert process.returncode in (130, -signal.SIGINT)  # CPython re-raises SIGINT to exit


def test_threads_are_bounded_by_the_largest_chunk_count(backend):
    model = dp.DataParallel(nn.Identity(), 16, execution="threads")
    for batch in range(2, 17):
        model(dp.ones(batch, 1))
    assert _pool.workers.thread_count() <= 15


def test_idle_workers_beyond_the_calls_in_use_are_released(backend, monkeypatch):
    dp.DataParallel(nn.Identity(), 6, execution="threads")(dp.ones(6, 1))
    assert _pool.workers.thread_count() >= 5
    monkeypatch.setattr(_pool, "IDLE_SECONDS", 0.0)
    time.sleep(0.01)
    dp.DataParallel(nn.Identity(), 2, execution="threads")(dp.ones(2, 1))
    assert _pool.workers.thread_count() == 1


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.mark.parametrize(("costs", "winner"), [({"threads": 1.0, "inline": 2.0}, "threads"),
                                              ({"threads": 2.0, "inline": 1.0}, "inline"),
                                              ({"threads": 1.0, "inline": 1.0}, "inline")])
def test_the_chooser_keeps_the_faster_median_and_rechecks(costs, winner, monkeypatch):
    clock = FakeClock()
    chooser = _auto.ExecutionChooser(clock)
    synced = []
    seen = []
    schedule = [c for c in _auto.ORDER for _ in range(_auto.SAMPLES + 1)]
    assert schedule[::_auto.SAMPLES + 1] == ["threads", "inline", "threads", "inline"]
    for call in range(len(schedule) + 3):
        execution = chooser.choose("sig", lambda call=call: synced.append(call))
        seen.append(execution)
        first_of_its_block = call < len(schedule) and call % (_auto.SAMPLES + 1) == 0
        warm_up = 50.0 if first_of_its_block else 0.0  # slow, and not counted
        clock.now += costs[execution] + warm_up
    assert seen[:len(schedule)] == schedule
    assert seen[len(schedule):] == [winner] * 3
    assert chooser.decision("sig") == winner
    assert len(synced) == len(schedule) + 1  # the backend is synchronised while measuring only
    monkeypatch.setattr(_auto, "RECHECK_CALLS", 2)
    chooser.choose("sig", lambda: None)
    assert chooser.decision("sig") is None  # measuring again


@pytest.mark.parametrize(("cost", "timed"), [(0.04, 4), (0.001, _auto.MAX_SAMPLES)])
def test_the_chooser_times_small_steps_for_longer(cost, timed):
    clock = FakeClock()
    chooser = _auto.ExecutionChooser(clock)
    seen = []
    while chooser.decision("sig") is None:
        seen.append(chooser.choose("sig", lambda: None))
        clock.now += cost
    assert not chooser.measuring()
    # each block: a warm-up call, then the timed ones (0.15 s of 0.04 s steps takes 4)
    block = timed + 1
    assert seen[:-1] == (["threads"] * block + ["inline"] * block) * _auto.BLOCKS


def test_two_threads_deciding_one_signature_at_once_agree():
    """``choose`` releases its lock while the backend synchronises; a second caller may decide
    the signature meanwhile, and the first must not fail on the finished trial."""
    clock = FakeClock()
    chooser = _auto.ExecutionChooser(clock)
    measured = len(_auto.ORDER) * (_auto.SAMPLES + 1)  # the call after these decides
    for _ in range(measured):
        chooser.choose("sig", lambda: None)
        clock.now += 1.0
    decided_meanwhile = []

    def another_thread_decides():
        decided_meanwhile.append(chooser.choose("sig", lambda: None))

    first = chooser.choose("sig", another_thread_decides)
    assert decided_meanwhile and first == decided_meanwhile[0] == chooser.decision("sig")
    assert not chooser.measuring()
