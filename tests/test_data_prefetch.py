"""The DataLoader's background prefetch, its shutdown, its random streams and its delivery to
another backend: the thread never outlives the epoch, the batches are those made without it,
and the model's own random numbers do not change."""

from __future__ import annotations

import _thread
import gc
import signal
import threading
import time

import numpy as np
import pytest
from dparray.backends.numpy import NumPyBackend

import dparray as dp
from dparray import nn
from dparray.data import BatchError, DataLoader, TensorDataset
from dparray.data.prefetch import THREAD_NAME

PREFETCH = [0, 1, 3]


def prefetch_threads():
    return [t for t in threading.enumerate() if t.name == THREAD_NAME]


def threads_end(timeout=10.0):
    """Whether every prefetch thread ends by itself within ``timeout`` seconds: a closed loader
    does not wait for the batch its thread is making, the thread finishes it and ends."""
    for thread in prefetch_threads():
        thread.join(timeout)
    return prefetch_threads() == []


@pytest.fixture
def ctrl_c_raises():
    """Ctrl-C raises KeyboardInterrupt during the test, as in a terminal, even where the test
    run was started with SIGINT ignored (a background job of a shell)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture(autouse=True)
def no_thread_is_left_behind():
    assert threads_end()
    yield
    assert threads_end()


class Rows:
    """Sample ``i`` is ``(float(i), i)``; ``fail`` maps an index to the exception it raises,
    ``delay`` is seconds slept per sample (the GIL released, as in real I/O)."""

    def __init__(self, n, fail=None, delay=0.0):
        self.n, self.fail, self.delay = n, fail or {}, delay
        self.reads = 0

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        self.reads += 1
        if self.delay:
            time.sleep(self.delay)
        if index in self.fail:
            raise self.fail[index]
        return float(index), index


class Noisy:
    """A dataset that augments: every read adds fresh random noise (from the current stream)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        return (dp.full((3,), float(index)) + dp.randn(3),)


def _values(batches):
    return [tuple(np.asarray(t.numpy()) for t in batch) for batch in batches]


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        for u, v in zip(x, y, strict=True):
            np.testing.assert_array_equal(u, v)


# ------------------------------------------------------------------------ the thread's life

def test_the_thread_prepares_ahead_and_is_gone_at_the_end_of_the_epoch():
    loader = DataLoader(Rows(9), batch_size=2, prefetch=2)
    batches = iter(loader)
    assert len(prefetch_threads()) == 1
    assert [y.tolist() for _, y in batches] == [[0, 1], [2, 3], [4, 5], [6, 7], [8]]
    assert threads_end()


def test_without_prefetch_no_thread_runs():
    for _ in DataLoader(Rows(4), batch_size=2, prefetch=0):
        assert prefetch_threads() == []


def test_the_queue_is_bounded_by_prefetch():
    data = Rows(100)
    batches = iter(DataLoader(data, batch_size=1, prefetch=2))
    next(batches)
    time.sleep(0.3)  # ample time to run ahead, if it were not bounded
    assert data.reads <= 1 + 2 + 1  # the batch handed out, two waiting, one being made
    batches.close()


def test_the_thread_is_gone_after_break():
    for _ in DataLoader(Rows(50), batch_size=1, prefetch=2):
        break
    assert threads_end()


def test_the_thread_is_gone_after_an_exception_in_the_consumer():
    with pytest.raises(ValueError, match="the model failed"):
        for _ in DataLoader(Rows(50), batch_size=1, prefetch=2):
            raise ValueError("the model failed")
    assert threads_end()


def test_the_thread_is_gone_when_the_iterator_is_garbage_collected():
    batches = iter(DataLoader(Rows(50), batch_size=1, prefetch=2))
    next(batches)
    assert len(prefetch_threads()) == 1
    del batches
    assert threads_end()
    cycle = [iter(DataLoader(Rows(50), batch_size=1, prefetch=2))]
    cycle.append(cycle)  # collected by the cycle collector, not by reference counting
    next(cycle[0])
    del cycle
    gc.collect()
    assert threads_end()


def test_close_and_with_stop_the_thread_at_once():
    loader = DataLoader(Rows(50), batch_size=1, prefetch=2)
    with iter(loader) as batches:
        next(batches)
        kept = batches  # still referenced after the block
    assert threads_end()
    with pytest.raises(StopIteration):
        next(kept)


def test_the_thread_is_gone_after_a_keyboard_interrupt_in_the_consumer():
    with pytest.raises(KeyboardInterrupt):
        for _ in DataLoader(Rows(50), batch_size=1, prefetch=2):
            raise KeyboardInterrupt
    assert threads_end()


def test_ctrl_c_while_waiting_for_a_batch_stops_the_thread(ctrl_c_raises):
    class Interrupting(Rows):
        def __getitem__(self, index):
            if index == 2:
                _thread.interrupt_main()  # as if Ctrl-C were pressed now
            return super().__getitem__(index)

    with pytest.raises(KeyboardInterrupt):
        for _ in DataLoader(Interrupting(200, delay=0.01), batch_size=1, prefetch=2):
            pass
    assert threads_end()


class Stalling(Rows):
    """Sample ``stall`` takes ``seconds`` (a hung read); the others are quick."""

    def __init__(self, n, stall, seconds):
        super().__init__(n)
        self.stall, self.seconds = stall, seconds

    def __getitem__(self, index):
        if index == self.stall:
            time.sleep(self.seconds)
        return super().__getitem__(index)


def test_ctrl_c_returns_at_once_while_the_thread_makes_a_slow_batch(ctrl_c_raises):
    """Issue 21, item 5: a SIGINT waited until the thread had finished its batch (30 s for a
    30 s stall). Now the loop is left at once and the batch is abandoned."""
    timer = threading.Timer(0.3, _thread.interrupt_main)  # Ctrl-C, while batch 1 is being made
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            for _ in DataLoader(Stalling(10, stall=1, seconds=2.0), batch_size=1, prefetch=2):
                pass
    finally:
        timer.cancel()
    assert time.perf_counter() - start < 1.2  # not the 2 s the stalled sample takes
    assert len(prefetch_threads()) == 1  # still finishing the batch nobody waits for
    assert threads_end()  # and gone once it has


@pytest.mark.parametrize("leave", ["break", "close", "drop"])
def test_leaving_the_loop_does_not_wait_for_the_batch_being_made(leave):
    """Before: a ``break`` waited 3.2 s with a 0.2 s-per-item dataset."""
    loader = DataLoader(Rows(40, delay=0.25), batch_size=2, prefetch=2)
    if leave == "break":
        for _ in loader:  # the thread is now making the next batches, 0.5 s each
            start = time.perf_counter()
            break
    else:
        batches = iter(loader)
        next(batches)
        start = time.perf_counter()
        if leave == "close":
            batches.close()
        else:
            del batches
    assert time.perf_counter() - start < 0.3
    assert threads_end()


def test_a_keyboard_interrupt_in_the_dataset_reaches_the_caller_as_itself():
    loader = DataLoader(Rows(10, fail={3: KeyboardInterrupt()}), batch_size=2, prefetch=2)
    with pytest.raises(KeyboardInterrupt):
        list(loader)
    assert threads_end()


def test_preparation_overlaps_the_consumer():
    def epoch_seconds(prefetch):
        start = time.perf_counter()
        for _ in DataLoader(Rows(24, delay=0.01), batch_size=3, prefetch=prefetch):
            time.sleep(0.03)  # the model's step, as long as making a batch
        return time.perf_counter() - start

    alone, overlapped = epoch_seconds(0), epoch_seconds(2)
    assert overlapped < 0.8 * alone, (alone, overlapped)


# ------------------------------------------------------------------------------- exceptions

@pytest.mark.parametrize("prefetch", PREFETCH)
def test_an_exception_in_the_dataset_reaches_the_caller_with_the_index(prefetch):
    data = Rows(10, fail={5: KeyError("no such row")})
    batches = iter(DataLoader(data, batch_size=2, prefetch=prefetch))
    assert [next(batches)[1].tolist() for _ in range(2)] == [[0, 1], [2, 3]]
    with pytest.raises(BatchError, match=r"DataLoader: sample 5 \(batch 2 of epoch 0\) failed: "
                                         r"KeyError: 'no such row'") as caught:
        next(batches)
    assert (caught.value.index, caught.value.batch, caught.value.epoch) == (5, 2, 0)
    assert isinstance(caught.value.__cause__, KeyError)
    assert threads_end()
    with pytest.raises(StopIteration):
        next(batches)


@pytest.mark.parametrize("prefetch", PREFETCH)
def test_an_exception_in_collate_or_batch_names_the_batch(prefetch):
    def collate(samples):
        raise ValueError("cannot")

    loader = DataLoader(Rows(4), batch_size=2, collate_fn=collate, prefetch=prefetch)
    with pytest.raises(BatchError, match=r"batch 0 of epoch 0 \(samples \[0, 1\]\) failed: "
                                         "ValueError: cannot") as caught:
        list(loader)
    assert caught.value.index is None and isinstance(caught.value.__cause__, ValueError)

    class Broken(TensorDataset):
        def batch(self, indices):
            raise IndexError("gone")

    loader = DataLoader(Broken(dp.arange(20.0)), batch_size=10, prefetch=prefetch)
    loader.set_epoch(4)
    with pytest.raises(BatchError, match=r"batch 0 of epoch 4 \(samples \[0, 1, 2, 3, 4, 5, 6, "
                                         r"7, '...'\]\) failed: IndexError: gone"):
        list(loader)


# ----------------------------------------------------------------- order and random streams

@pytest.mark.parametrize("prefetch", PREFETCH[1:])
def test_prefetching_gives_the_batches_made_without_it(prefetch):
    def epochs(prefetch):
        loader = DataLoader(Noisy(11), batch_size=3, shuffle=True, seed=4, prefetch=prefetch)
        return [_values(loader) for _ in range(2)]

    inline = epochs(0)
    _same(epochs(prefetch)[0], inline[0])
    _same(epochs(prefetch)[1], inline[1])


def test_a_datasets_random_draws_repeat_under_the_seed_and_differ_across_epochs():
    loader = DataLoader(Noisy(6), batch_size=6, seed=1)
    first, second = _values(loader), _values(loader)
    assert not np.array_equal(first[0][0], second[0][0])
    again = DataLoader(Noisy(6), batch_size=6, seed=1)
    _same(_values(again), first)
    noise = first[0][0] - np.arange(6.0)[:, None]  # fresh noise for every sample
    assert len({tuple(row) for row in noise.round(6)}) == 6


def test_the_loader_draws_nothing_from_the_global_stream():
    dp.manual_seed(3)
    expected = dp.randn(4).numpy()
    dp.manual_seed(3)
    loader = DataLoader(Noisy(8), batch_size=2, shuffle=True, seed=0)
    list(loader)
    np.testing.assert_array_equal(dp.randn(4).numpy(), expected)


@pytest.mark.parametrize("prefetch", PREFETCH[1:])
def test_prefetching_does_not_change_the_models_dropout(prefetch):
    dp.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 16), nn.Dropout(0.5))

    def outputs(prefetch):
        loader = DataLoader(Noisy(24), batch_size=4, shuffle=True, seed=2, prefetch=prefetch)
        dp.manual_seed(7)
        result = []
        for (x,) in loader:
            time.sleep(0.002)  # let the thread run ahead and draw while the model draws
            result.append(model(x).numpy())
        return result

    threaded, inline = outputs(prefetch), outputs(0)
    batches = [x for (x,) in DataLoader(Noisy(24), batch_size=4, shuffle=True, seed=2)]
    dp.manual_seed(7)
    by_hand = [model(x).numpy() for x in batches]  # no loader running beside the model
    for a, b, c in zip(threaded, inline, by_hand, strict=True):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


def test_batches_are_prepared_in_the_callers_context():
    with dp.use_backend("array_api_strict"):
        loader = DataLoader(Rows(4), batch_size=2, prefetch=2)
        batches = list(loader)
    assert {t.backend.name for batch in batches for t in batch} == {"array_api_strict"}


# ---------------------------------------------------------------- delivery to another backend

@pytest.mark.parametrize("prefetch", PREFETCH)
def test_batches_are_delivered_on_the_loaders_backend(prefetch, rng):
    x = rng.standard_normal((10, 3))
    data = TensorDataset(dp.tensor(x, backend="numpy"), dp.arange(10, backend="numpy"))
    loader = DataLoader(data, batch_size=4, backend="array_api_strict", prefetch=prefetch)
    batches = list(loader)
    assert [t.backend.name for batch in batches for t in batch] == ["array_api_strict"] * 6
    np.testing.assert_array_equal(np.concatenate([b[0].numpy() for b in batches]), x)
    rows = DataLoader(Rows(3), batch_size=3, backend="array_api_strict", prefetch=prefetch)
    (values, labels), = list(rows)  # numbers are collated on the host, then moved
    assert values.backend.name == labels.backend.name == "array_api_strict"
    for _ in loader:
        break  # the copy ahead and the thread stop (the fixture checks the thread)


class Recording(NumPyBackend):
    """NumPy, with a ``to_device_async`` hook that logs when copies start and are waited on."""

    def __init__(self, log):
        super().__init__()
        self.name = "recording"
        self.log = log

    def to_device_async(self, host):
        first = int(host.reshape(-1)[0])
        self.log.append(("copy", first, threading.current_thread() is threading.main_thread()))
        return self.asarray(host.copy()), lambda: self.log.append(("ready", first))


@pytest.mark.parametrize("prefetch", PREFETCH)
def test_each_copy_starts_one_batch_ahead_and_is_waited_on_before_use(prefetch):
    log = []
    data = TensorDataset(dp.arange(6, backend="numpy"))
    for (x,) in DataLoader(data, batch_size=2, backend=Recording(log), prefetch=prefetch):
        log.append(("got", x.tolist()[0]))
        assert x.backend.name == "recording"
    assert log == [("copy", 0, True), ("copy", 2, True), ("ready", 0), ("got", 0),
                   ("copy", 4, True), ("ready", 2), ("got", 2), ("ready", 4), ("got", 4)]


@pytest.mark.parametrize("prefetch", PREFETCH)
def test_with_a_copy_ahead_an_error_still_comes_after_the_batches_before_it(prefetch):
    data = Rows(6, fail={4: ValueError("bad")})
    batches = iter(DataLoader(data, batch_size=2, backend="array_api_strict", prefetch=prefetch))
    assert [next(batches)[1].tolist() for _ in range(2)] == [[0, 1], [2, 3]]
    with pytest.raises(BatchError, match="sample 4"):
        next(batches)
    assert threads_end()


def test_on_cupy_a_host_dataset_is_copied_to_the_gpu():
    if "cupy" not in dp.available_backends():
        pytest.skip("needs CuPy and a CUDA device")
    x = np.arange(24.0, dtype=np.float32).reshape(8, 3)
    data = TensorDataset(dp.tensor(x, backend="numpy"), dp.arange(8, backend="numpy"))
    batches = list(DataLoader(data, batch_size=3, shuffle=True, seed=0, backend="cupy"))
    assert {t.backend.name for batch in batches for t in batch} == {"cupy"}
    rows = np.concatenate([b[0].numpy() for b in batches])
    labels = np.concatenate([b[1].numpy() for b in batches])
    np.testing.assert_array_equal(rows, x[labels])
    assert sorted(labels.tolist()) == list(range(8))
