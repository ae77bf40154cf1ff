"""Each thread's random streams are its own (issue 21, item 4): a thread that seeds and trains
with dropout draws the same masks whatever another thread does meanwhile -- run a DataParallel,
reseed, draw -- and the streams of DataParallel's chunks follow from their caller's seed.

Before, every thread shared one set of streams: another thread's ``manual_seed`` replaced the
trainer's, and its draws advanced the trainer's generator (5 seeded repeats, 5 different loss
sequences)."""

from __future__ import annotations

import threading

import numpy as np

import dparray as dp
from dparray import nn, optim

STEPS = 6


def _train(between=lambda: None, parallel=False):
    """Seed, build a model with dropout, train it for ``STEPS`` steps (``between()`` after
    each, when another thread gets its turn) and return the losses."""
    dp.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.5), nn.ReLU(), nn.Linear(16, 1))
    trained = dp.DataParallel(model, num_workers=2, execution="threads") if parallel else model
    opt = optim.SGD(model.parameters(), lr=0.05)
    x, y = dp.randn(8, 4), dp.randn(8, 1)
    losses = []
    for _ in range(STEPS):
        loss = ((trained(x) - y) * (trained(x) - y)).mean()
        opt.step(loss.backward())
        losses.append(loss.item())
        between()
    return losses


def _meddler(turns, done, seed):
    """Another thread's work at every turn: reseed (or not), draw, and run a DataParallel with
    dropout, whole and in chunks."""
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    inline = dp.DataParallel(model, num_workers=2, execution="inline")
    threads = dp.DataParallel(model, num_workers=2, execution="threads")
    while True:
        turns.wait()
        if done.is_set():
            return
        if seed is not None:
            dp.manual_seed(seed)
        dp.randn(3)
        inline(dp.ones(6, 4))
        threads(dp.ones(6, 4)).sum().backward()
        turns.wait()


def _with_meddler(train, seed):
    """``train(between)`` in a thread, another thread meddling at each of its turns."""
    turns, done = threading.Barrier(2), threading.Event()
    meddler = threading.Thread(target=_meddler, args=(turns, done, seed))
    meddler.start()

    def between():
        turns.wait()  # the meddler's turn ...
        turns.wait()  # ... taken

    result = []
    trainer = threading.Thread(target=lambda: result.append(train(between)))
    trainer.start()
    trainer.join()
    done.set()
    turns.wait()
    meddler.join()
    return result[0]


def _in_thread(function):
    result = []
    thread = threading.Thread(target=lambda: result.append(function()))
    thread.start()
    thread.join()
    return result[0]


def test_a_seeded_thread_repeats_whatever_another_thread_does():
    reference = _in_thread(_train)  # alone
    for seed in (None, 1, 0, None, 7):  # 5 seeded repeats, each beside another thread
        assert _with_meddler(_train, seed) == reference
    assert _train() == reference  # the main thread's seeded run, too


def test_a_seeded_data_parallel_repeats_whatever_another_thread_does():
    """Each chunk's stream follows from its caller's seed and its place, nothing else."""
    reference = _train(parallel=True)
    for seed in (None, 3):
        assert _with_meddler(lambda between: _train(between, parallel=True), seed) == reference


def test_the_main_threads_streams_are_untouched_by_other_threads():
    dp.manual_seed(5)
    expected = [dp.randn(4).tolist() for _ in range(3)]
    dp.manual_seed(5)
    drawn = []
    for _ in range(3):
        other = threading.Thread(target=lambda: (dp.randn(100), dp.manual_seed(9), dp.rand(5)))
        other.start()
        other.join()
        drawn.append(dp.randn(4).tolist())
    assert drawn == expected


def test_a_thread_that_seeds_gets_the_streams_of_its_seed():
    dp.manual_seed(3)
    main = dp.randn(5).tolist()
    dp.manual_seed(11)  # the main thread's seed does not leak into a thread that seeds
    assert _in_thread(lambda: (dp.manual_seed(3), dp.randn(5).tolist())[1]) == main
    assert _in_thread(lambda: (dp.manual_seed(3), dp.random.initial_seed())[1]) == 3


def test_threads_that_never_seed_share_streams_derived_from_the_main_seed():
    def draws():
        dp.manual_seed(21)
        first = _in_thread(lambda: dp.randn(4).tolist())
        second = _in_thread(lambda: dp.randn(4).tolist())
        return first, second

    first, second = draws()
    assert first != second  # one shared stream, drawn in turn: not the same numbers twice
    assert draws() == (first, second)  # and fixed by the main thread's seed
    dp.manual_seed(22)
    assert _in_thread(lambda: dp.randn(4).tolist()) != first
    dp.manual_seed(21)
    assert _in_thread(lambda: dp.randn(4).tolist()) != dp.randn(4).tolist()  # not main's


def test_fork_rng_and_state_in_a_thread_stay_in_that_thread():
    dp.manual_seed(0)
    state = dp.random.get_state()
    expected = dp.randn(3).tolist()

    def restore_in_thread():
        dp.random.set_state(state)
        with dp.random.fork_rng(4):
            dp.manual_seed(8)  # the block's streams only
            dp.randn(2)
        return dp.randn(3).tolist()

    dp.manual_seed(1)
    main_next = dp.randn(3).tolist()
    dp.manual_seed(1)
    assert _in_thread(restore_in_thread) == expected
    assert dp.randn(3).tolist() == main_next


def test_every_chunk_of_concurrent_data_parallels_repeats():
    """Two threads, each seeded, each running a DataParallel with dropout at once: each gets
    what it gets alone."""
    def run(seed):
        dp.manual_seed(seed)
        model = dp.DataParallel(nn.Sequential(nn.Linear(3, 8), nn.Dropout(0.5)), num_workers=3,
                                execution="threads")
        return [model(dp.ones(9, 3)).numpy() for _ in range(20)]

    alone = {seed: _in_thread(lambda seed=seed: run(seed)) for seed in (1, 2)}
    results = {}
    threads = [threading.Thread(target=lambda seed=seed: results.update({seed: run(seed)}))
               for seed in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for seed in (1, 2):
        for a, b in zip(alone[seed], results[seed], strict=True):
            np.testing.assert_array_equal(a, b)
