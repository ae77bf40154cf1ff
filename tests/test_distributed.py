"""DistributedDataParallel under ``mpiexec -n 2`` (launched as a subprocess), and its
helpers: training in step, and every way a job can go wrong ending it with a clear message
within seconds instead of hanging."""

from __future__ import annotations

import ast
import dataclasses
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import dparray as dp
from dparray import distributed, nn
from dparray.distributed import channel as _mpi_channel

HERE = pathlib.Path(__file__).resolve().parent
MPIEXEC = pathlib.Path(sys.executable).with_name("mpiexec")
FAILURES = str(HERE / "mpi" / "failures.py")
TIMEOUT = 60  # seconds one mpiexec run may take before the test calls it a hang
WITHIN = 20  # seconds a failing job may take to end (a few on an idle machine)


@dataclasses.dataclass
class Job:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def mpiexec(*args: str, ranks: int = 2) -> Job:
    """Run ``python ARGS`` on ``ranks`` ranks; a test failure (and every process killed) if
    it does not end within TIMEOUT seconds."""
    if not MPIEXEC.exists():
        pytest.fail(f"no mpiexec beside {sys.executable}: install the 'mpi' extra")
    start = time.monotonic()
    job = subprocess.Popen([str(MPIEXEC), "-n", str(ranks), sys.executable, *args],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           cwd=HERE.parent, start_new_session=True)
    try:
        stdout, stderr = job.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)  # mpiexec and the ranks it started
        stdout, stderr = job.communicate()
        pytest.fail(f"mpiexec {' '.join(args)} still running after {TIMEOUT} s: the job hangs"
                    f"\n{stdout}\n{stderr}")
    return Job(job.returncode, stdout, stderr, time.monotonic() - start)


# ------------------------------------------------------------------ training in step
def _single_process_step(rank0_start: dict) -> dict:
    """The same SGD step in one process, on the union of both ranks' batches."""
    from mpi.ddp_step import batch, build

    model = build(seed=0)
    model.load_state_dict(rank0_start)
    (x0, y0), (x1, y1) = batch(0), batch(1)
    x, y = dp.cat([x0, x1]), dp.cat([y0, y1])
    grads = nn.functional.mse_loss(model(x), y).backward()
    dp.optim.SGD(model.parameters(), lr=0.1).step(grads)
    return model.state_dict()


@pytest.mark.integration
@pytest.mark.timeout(2 * TIMEOUT)
@pytest.mark.parametrize("options", [[], ["--data-parallel"], ["--bucket-mb", "0.0002"]],
                         ids=["plain", "data-parallel-inside", "many-buckets"])
def test_one_step_equals_one_process_on_the_union_of_batches(options, tmp_path):
    result = mpiexec(str(HERE / "mpi" / "ddp_step.py"), str(tmp_path), *options)
    assert result.returncode == 0, result.stderr  # and mpi4py's pickle was never used
    start = [dp.load(tmp_path / f"start_{r}.safetensors") for r in (0, 1)]
    after = [dp.load(tmp_path / f"after_{r}.safetensors") for r in (0, 1)]
    for name in start[0]:
        assert np.array_equal(start[0][name].numpy(), start[1][name].numpy())  # broadcast
        assert np.array_equal(after[0][name].numpy(), after[1][name].numpy())  # in step
    sys.path.insert(0, str(HERE))
    try:
        expected = _single_process_step(start[0])
    finally:
        sys.path.remove(str(HERE))
    for name, value in expected.items():
        np.testing.assert_allclose(after[0][name].numpy(), value.numpy(), rtol=1e-12,
                                   atol=1e-14)


# ------------------------------------------------------------------ a job that fails ends
def _ended_with_error(job: Job) -> str:
    """The job's output, once it is known to have failed within seconds."""
    output = job.stdout + job.stderr
    assert job.returncode != 0, output
    assert job.seconds < WITHIN, f"took {job.seconds:.1f} s to end\n{output}"
    return output


@pytest.mark.integration
@pytest.mark.timeout(2 * TIMEOUT)
@pytest.mark.parametrize("scenario", ["raise", "raise-in-training"])
@pytest.mark.parametrize("wrapped", [True, False], ids=["abort_on_error", "unwrapped"])
def test_a_rank_that_raises_ends_the_job_with_its_traceback(scenario, wrapped):
    job = mpiexec(FAILURES, scenario, *(["--wrapped"] if wrapped else []))
    _ended_with_error(job)
    assert "[rank 1] Traceback (most recent call last):" in job.stderr
    assert "[rank 1] KeyError: 'rank 1 has no data'" in job.stderr


@pytest.mark.integration
@pytest.mark.timeout(2 * TIMEOUT)
@pytest.mark.parametrize("scenario", ["exit --wrapped", "exit", "return"],
                         ids=["sys.exit(0)-in-abort_on_error", "sys.exit(0)", "return"])
def test_a_rank_that_leaves_early_ends_the_job(scenario):
    job = mpiexec(FAILURES, *scenario.split())
    _ended_with_error(job)
    assert ("[rank 0] RuntimeError: DistributedDataParallel.reduce: rank 1 has exited (after "
            "DistributedDataParallel.reduce #2 (4 gradients, 21 float32 values in 1 bucket(s))) "
            "while this rank waits for it in DistributedDataParallel.reduce #3") in job.stderr


@pytest.mark.integration
@pytest.mark.timeout(2 * TIMEOUT)
def test_a_killed_rank_ends_the_job():
    job = mpiexec(FAILURES, "kill")
    output = _ended_with_error(job)
    assert "signal 9" in output  # mpiexec ends the other ranks and says which signal


@pytest.mark.integration
@pytest.mark.timeout(2 * TIMEOUT)
def test_a_collective_times_out_naming_the_operation():
    job = mpiexec(FAILURES, "slow")  # rank 1 is busy for 20 s: the job must end before
    _ended_with_error(job)
    assert ("[rank 0] RuntimeError: all_reduce: not every rank joined all_reduce #2 (sum of "
            "float32 values, shape (3,)) within the timeout of 1 s") in job.stderr


@pytest.mark.integration
@pytest.mark.timeout(2 * TIMEOUT)
def test_ranks_that_finish_at_different_times_end_normally():
    job = mpiexec(FAILURES, "late-finish")  # rank 0 works alone for 2 s at the end
    assert job.returncode == 0, job.stderr
    assert "rank 0: finished" in job.stdout and "rank 1: finished" in job.stdout


DISAGREEMENTS = {
    "dtype": "the ranks are not in the same collective: rank 0 is in all_reduce #1 (sum of "
             "int32 values, shape (3,)); rank 1 is in all_reduce #1 (sum of float32 values, "
             "shape (3,))",
    "shape": "the ranks are not in the same collective: rank 0 is in all_reduce #1 (sum of "
             "float32 values, shape (3,)); rank 1 is in all_reduce #1 (sum of float32 values, "
             "shape (2, 2))",
    "steps": "the ranks are not in the same collective: rank 0 is in "
             "DistributedDataParallel.reduce #3 (4 gradients, 21 float32 values in 1 "
             "bucket(s)); rank 1 is in all_reduce #1 (mean of float32 values, shape ())",
    "frozen": "the ranks are not in the same collective: rank 0 is in "
              "DistributedDataParallel.reduce #1 (4 gradients, 21 float32 values in 1 "
              "bucket(s)); rank 1 is in DistributedDataParallel.reduce #1 (3 gradients, 20 "
              "float32 values in 1 bucket(s))",
    "mismatch": "DistributedDataParallel: rank 1's model differs from rank 0's: 0.weight is "
                "(5, 3) float32 there, rank 0 has 0.weight (4, 3) float32",
    "bucket-mb": "DistributedDataParallel: bucket_mb is 2.0 on rank 1, 1.0 on rank 0",
}


@pytest.mark.integration
@pytest.mark.timeout(2 * TIMEOUT)
@pytest.mark.parametrize("scenario", sorted(DISAGREEMENTS))
def test_ranks_that_disagree_all_raise_naming_both_and_stay_in_step(scenario):
    job = mpiexec(FAILURES, scenario)
    assert job.returncode == 0, job.stderr  # every rank caught the error and went on
    for r in (0, 1):
        raised = [line for line in job.stdout.splitlines()
                  if line.startswith(f"rank {r}: ValueError: ")]
        assert len(raised) == 1 and raised[0].endswith(DISAGREEMENTS[scenario]), job.stdout
        assert f"rank {r}: in step, total [1.0]" in job.stdout  # 0 + 1: nothing garbled
    assert "Message truncated" not in job.stderr


def test_nothing_in_distributed_uses_mpi4pys_pickle_based_calls():
    pickled = {"allgather", "allreduce", "alltoall", "bcast", "gather", "scatter", "send",
               "recv", "isend", "irecv", "sendrecv", "exscan", "scan"}
    used = set()
    for path in sorted((HERE.parent / "dparray" / "distributed").glob("*.py")):
        tree = ast.parse(path.read_text())
        used |= {node.func.attr for node in ast.walk(tree)
                 if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
    assert used & pickled == set()
    assert {"Iallgather", "Iallgatherv", "Iallreduce", "Ibcast"} <= used  # the check sees


# ------------------------------------------------------------------ in one process
class World:
    """A stand-in communicator for one rank of ``size``, to test sharding in one process;
    ``Abort`` records its status instead of ending anything."""

    def __init__(self, rank: int, size: int) -> None:
        self.rank, self.size = rank, size
        self.aborted: list[int] = []

    def Get_rank(self) -> int:
        return self.rank

    def Get_size(self) -> int:
        return self.size

    def Abort(self, status: int) -> None:
        self.aborted.append(status)


@pytest.mark.parametrize("size", [1, 2, 3, 5])
@pytest.mark.parametrize("n_items", [1, 7, 12, 20])
def test_shard_covers_every_item(size, n_items):
    exact = [distributed.shard(n_items, 3, 1, World(r, size), pad=False).tolist()
             for r in range(size)]
    assert sorted(i for share in exact for i in share) == list(range(n_items))  # once each
    assert max(map(len, exact)) - min(map(len, exact)) <= 1
    padded = [distributed.shard(n_items, 3, 1, World(r, size)).tolist() for r in range(size)]
    assert len({len(share) for share in padded}) == 1  # the same count on every rank
    assert {i for share in padded for i in share} == set(range(n_items))
    assert sum(map(len, padded)) - n_items < size  # at most size - 1 repeats


def test_shard_changes_with_the_epoch_and_repeats_with_the_seed():
    first = distributed.shard(50, seed=1, epoch=0, comm=World(0, 2)).tolist()
    assert first == distributed.shard(50, seed=1, epoch=0, comm=World(0, 2)).tolist()
    assert first != distributed.shard(50, seed=1, epoch=1, comm=World(0, 2)).tolist()


def test_single_process_helpers():
    hook = sys.excepthook
    assert distributed.rank() == 0 and distributed.world_size() == 1
    distributed.barrier()
    assert distributed.all_reduce(dp.tensor([1.0, 2.0]), "mean").tolist() == [1.0, 2.0]
    assert distributed.all_reduce(dp.tensor([3, 4], dtype="int32"), "max").tolist() == [3, 4]
    model = distributed.DistributedDataParallel(nn.Linear(2, 2), timeout=5)
    assert [n for n, _ in model.named_parameters()] == ["weight", "bias"]
    assert sys.excepthook is hook  # one process keeps Python's own handling of errors


BAD_CALLS = [
    (lambda: distributed.all_reduce([1.0]), TypeError, "all_reduce: value must be a Tensor"),
    (lambda: distributed.all_reduce(dp.ones(1), "prod"), ValueError,
     "all_reduce: op must be one of 'sum', 'mean', 'max', 'min', got 'prod'"),
    (lambda: distributed.all_reduce(dp.ones(1), 1), TypeError, "all_reduce: op must be one of"),
    (lambda: distributed.all_reduce(dp.tensor([True])), TypeError,
     "all_reduce: value must hold numbers, got a bool tensor"),
    (lambda: distributed.all_reduce(dp.ones(1), timeout=0), ValueError,
     "all_reduce: timeout must be greater than 0.0, got 0"),
    (lambda: distributed.all_reduce(dp.ones(1), comm="world"), TypeError,
     "all_reduce: comm must be an MPI communicator"),
    (lambda: distributed.barrier(timeout="1"), TypeError, "barrier: timeout must be a number"),
    (lambda: distributed.shard(0, 1, 1), ValueError, "shard: n_items must be at least 1, got 0"),
    (lambda: distributed.shard(2.0, 1, 1), TypeError, "shard: n_items must be an int"),
    (lambda: distributed.shard(2, "1", 1), TypeError, "shard: seed must be an int"),
    (lambda: distributed.shard(2, 1, 1, pad=1), TypeError, "shard: pad must be a bool"),
    (lambda: distributed.DistributedDataParallel(nn.Linear(2, 2), bucket_mb=0), ValueError,
     "DistributedDataParallel: bucket_mb must be greater than 0.0, got 0"),
    (lambda: distributed.DistributedDataParallel(nn.Linear(2, 2), bucket_mb="25"), TypeError,
     "DistributedDataParallel: bucket_mb must be a number"),
    (lambda: distributed.DistributedDataParallel(nn.Linear(2, 2), timeout=-1.0), ValueError,
     "DistributedDataParallel: timeout must be greater than 0.0"),
    (lambda: distributed.DistributedDataParallel("model"), TypeError,
     "DistributedDataParallel wraps a Module, got str"),
]


@pytest.mark.parametrize(("call", "kind", "message"), BAD_CALLS)
def test_bad_arguments_are_refused_before_any_collective(call, kind, message):
    distributed.barrier()  # so that this process has a channel whose collectives count
    channels = [(channel, channel.count) for channel in _mpi_channel.channels]
    assert channels
    with pytest.raises(kind, match=f"^{re.escape(message)}"):
        call()
    assert [(c, c.count) for c, _ in channels] == channels  # no collective was started


def test_reduce_refuses_what_is_not_this_models_gradients():
    model = distributed.DistributedDataParallel(nn.Linear(2, 2))
    before = model.state_dict()
    with pytest.raises(TypeError, match="reduce: grads must be the Gradients that backward"):
        model.reduce({model.module.weight: dp.ones(2, 2)})
    with pytest.raises(ValueError, match="not trainable parameters of this model"):
        model.reduce((dp.ones(2, requires_grad=True) * 2).sum().backward())
    wrong = dp.Gradients({model.module.weight: dp.ones(2, 2, dtype="float64")})
    with pytest.raises(ValueError, match=r"a gradient is \(2, 2\) float64 for a parameter of "
                                         r"\(2, 2\) float32"):
        model.reduce(wrong)
    with pytest.raises(TypeError, match="reduce: bucketed must be a bool"):
        model.reduce(model(dp.ones(1, 2)).sum().backward(), bucketed="no")
    with pytest.raises(TypeError, match="backward: loss must be a Tensor"):
        model.backward(1.0)
    after = model.state_dict()
    assert all(np.array_equal(before[k].numpy(), after[k].numpy()) for k in before)


def test_abort_on_error_marks_the_traceback_with_the_rank_and_aborts(capsys):
    world = World(3, 4)
    with pytest.raises(ValueError), distributed.abort_on_error(world):
        raise ValueError("no data")
    with pytest.raises(KeyboardInterrupt), distributed.abort_on_error(world):
        raise KeyboardInterrupt
    with pytest.raises(SystemExit), distributed.abort_on_error(world):
        sys.exit(0)  # a normal exit is not a failure
    assert world.aborted == [1, 130]
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "[rank 3] Traceback (most recent call last):"
    assert "[rank 3] ValueError: no data" in lines
    assert all(line.startswith("[rank 3] ") for line in lines)


class _Never:
    """A request that never completes."""

    def Test(self) -> bool:
        return False


class Stalled(World):
    """A communicator whose collectives never complete, and on which no rank ever leaves."""

    def Iallgather(self, *args) -> _Never:
        return _Never()

    def Iprobe(self, *args) -> bool:
        return False


FLOAT32 = _mpi_channel.dtype_code("float32")


def test_a_wait_past_its_timeout_fails_and_later_collectives_fail_at_once():
    channel = _mpi_channel.Channel(Stalled(0, 2), Stalled(0, 2), 1.0)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"^all_reduce: not every rank joined all_reduce #1 "
                                           r"\(sum of float32 values, shape \(3,\)\) within the "
                                           r"timeout of 0.05 s"):
        channel.begin("all_reduce", _mpi_channel.ALL_REDUCE, [0, FLOAT32, 1, 3, 0, 3], 0.05)
    assert 0.05 <= time.monotonic() - start < 1.0
    with pytest.raises(RuntimeError, match=r"^barrier: an earlier collective on this "
                                           r"communicator failed .*timeout of 0\.05 s"):
        channel.begin("barrier", _mpi_channel.BARRIER, [], 1.0)
    assert channel.count == 1  # the refused barrier took part in nothing


def test_headers_from_other_ranks_are_described_whatever_they_hold():
    mine = [1, _mpi_channel.ALL_REDUCE, 1, 0, FLOAT32, 1, 3, 0, 3, 0, 0, 0, 0, 0, 0, 0]
    odd = [1, _mpi_channel.ALL_REDUCE, 1, 99, -4, 30, 3, 0, 3, 0, 0, 0, 0, 0, 0, 0]
    unknown = [1, 42, 1] + [0] * 13
    with pytest.raises(ValueError, match=r"rank 0 is in all_reduce #1 \(sum of float32 values, "
                                         r"shape \(3,\)\); rank 1 is in all_reduce #1 \(unknown"
                                         r"\(99\) of unknown\(-5\) values, shape \(3, 0, 0, 0, "
                                         r"0, 0, 0, 0\)\.\.\.\); rank 2 is in collective 1 of an"
                                         r" unknown kind 42"):
        _mpi_channel.check_same_operation([mine, odd, unknown], "all_reduce")


def test_ranks_that_differ_only_in_layout_are_told_so():
    header = [2, _mpi_channel.REDUCE, 1, 1, 1 << (FLOAT32 - 1), 2, 10, 0x1234, *[0] * 8]
    other = [*header[:7], 0x5678, *header[8:]]
    with pytest.raises(ValueError, match=r"rank 0 is in .* \(layout 00001234\); rank 1 is in "
                                         r".* \(layout 00005678\)"):
        _mpi_channel.check_same_operation([header, other], "DistributedDataParallel.reduce")
