"""Run under mpiexec by tests/test_distributed.py: ranks that fail, leave or disagree.

    mpiexec -n 2 python tests/mpi/failures.py SCENARIO [--wrapped]

Each scenario is one function below (its docstring says what happens); ``--wrapped`` runs it
inside ``abort_on_error``. Scenarios where the ranks disagree catch the error on every rank
and print it as ``rank R: <error>``, then prove the ranks are still in step with one more
all-reduce. mpi4py's pickle is disabled first: nothing in dparray.distributed may unpickle.
"""

import os
import signal
import sys
import time

from no_pickle import forbid_pickle

import dparray as dp
from dparray import nn
from dparray.distributed import DistributedDataParallel, abort_on_error, all_reduce, rank


def _model():
    dp.manual_seed(0)
    return DistributedDataParallel(nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)))


def _train(model, steps, stop=None):
    """``steps`` SGD steps; ``stop(step)`` runs on rank 1 before each one."""
    opt = dp.optim.SGD(model.parameters(), lr=0.1)
    loss = None
    for step in range(steps):
        if stop is not None and rank() == 1:
            stop(step)
        x = dp.randn(8, 3)
        loss = nn.functional.mse_loss(model(x), x[:, :1])
        opt.step(model.backward(loss))
    return loss


def _say(text):
    """One line in one write: mpiexec interleaves the ranks' output write by write."""
    sys.stdout.write(f"rank {rank()}: {text}\n")
    sys.stdout.flush()


def _report(error):
    _say(f"{type(error).__name__}: {error}")


def _still_in_step():
    total = all_reduce(dp.tensor([float(rank())]))
    _say(f"in step, total {total.tolist()}")


def scenario_raise():
    """Rank 1 raises before any collective while rank 0 waits in an all-reduce."""
    if rank() == 1:
        raise KeyError("rank 1 has no data")
    all_reduce(dp.ones(3))


def scenario_raise_in_training():
    """Rank 1 raises in its third step while rank 0 waits in the gradient reduce."""
    def fail(step):
        if step == 2:
            raise KeyError("rank 1 has no data")
    _train(_model(), 5, fail)


def scenario_exit():
    """Rank 1 calls sys.exit(0) in its third step; rank 0 waits in the gradient reduce."""
    def leave(step):
        if step == 2:
            sys.exit(0)
    _train(_model(), 5, leave)


def scenario_return():
    """Rank 1 trains two steps and returns (the script ends); rank 0 goes on to a third."""
    _train(_model(), 3 if rank() == 0 else 2)


def scenario_kill():
    """Rank 1 is killed (SIGKILL) in its third step; rank 0 waits in the gradient reduce."""
    def die(step):
        if step == 2:
            os.kill(os.getpid(), signal.SIGKILL)
    _train(_model(), 5, die)


def scenario_slow():
    """Rank 1 is busy for 20 s; rank 0 waits for it in an all-reduce with a 1 s timeout."""
    all_reduce(dp.ones(3))
    if rank() == 1:
        time.sleep(20)
    all_reduce(dp.ones(3), timeout=1)


def scenario_late_finish():
    """Rank 0 works alone for 2 s after training while rank 1 has finished: a normal end."""
    _train(_model(), 2)
    if rank() == 0:
        time.sleep(2)
    _say("finished")


def scenario_dtype():
    """all_reduce of int32 on rank 0 and float32 on rank 1."""
    value = dp.tensor([1, 2, 3], dtype="int32" if rank() == 0 else "float32")
    try:
        all_reduce(value)
    except ValueError as error:
        _report(error)
    _still_in_step()


def scenario_shape():
    """all_reduce of shape (3,) on rank 0 and (2, 2) on rank 1."""
    try:
        all_reduce(dp.ones(3) if rank() == 0 else dp.ones(2, 2))
    except ValueError as error:
        _report(error)
    _still_in_step()


def scenario_steps():
    """Rank 0 takes three steps, rank 1 two; then both all-reduce the last loss."""
    model = _model()
    try:
        loss = _train(model, 3 if rank() == 0 else 2)
        all_reduce(loss, "mean")
    except ValueError as error:
        _report(error)
    _still_in_step()


def scenario_frozen():
    """Rank 1 freezes its last bias after construction: the gradient layouts differ."""
    model = _model()
    if rank() == 1:
        model.module[2].bias.is_variable = False
    try:
        _train(model, 1)
    except ValueError as error:
        _report(error)
    _still_in_step()


def scenario_mismatch():
    """Rank 1's model has other shapes: every rank raises at construction."""
    width = 4 if rank() == 0 else 5
    try:
        DistributedDataParallel(nn.Sequential(nn.Linear(3, width), nn.Linear(width, 1)))
    except ValueError as error:
        _report(error)
    _still_in_step()


def scenario_bucket_mb():
    """The ranks pass different bucket sizes."""
    try:
        DistributedDataParallel(nn.Linear(3, 1), bucket_mb=1.0 + rank())
    except ValueError as error:
        _report(error)
    _still_in_step()


if __name__ == "__main__":
    forbid_pickle()
    run = globals()["scenario_" + sys.argv[1].replace("-", "_")]
    if "--wrapped" in sys.argv:
        with abort_on_error():
            run()
    else:
        run()
