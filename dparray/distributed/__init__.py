"""Training on several processes or machines: DistributedDataParallel over MPI (mpi4py).

Run one process per machine (or per core group) under ``mpiexec``; each trains on its own
shard of the data. ``DistributedDataParallel`` makes every rank start from rank 0's
parameters and averages the gradients across ranks before each optimizer step, so all ranks
take the same steps -- the same steps one process would take on the union of their batches.
It composes with ``dparray.DataParallel`` inside each rank.

The all-reduce goes through flat host buffers, one per bucket of about ``bucket_mb`` megabytes
of gradients, in parameter order, so its sums are the same on every rank and every run.

A job fails as a whole, and says why, instead of hanging:

- once this module has used a communicator of several ranks, an uncaught exception on any rank
  prints its traceback marked with the rank and aborts the job (``abort_on_error`` does the
  same for one block);
- every collective first exchanges a small fixed-size header (which operation, dtype, shape,
  bucket layout): ranks that disagree all raise a ValueError naming both sides, before any
  payload moves;
- collectives are non-blocking and wait at most ``timeout`` seconds (RuntimeError);
- a rank that exits tells the others, so a rank waiting for it in a collective fails at once,
  and at exit every rank waits for the others to finish (at most ``timeout``) before leaving.

Needs the ``mpi`` extra: ``pip install "dparray[mpi]"`` (mpi4py and the ``mpich`` wheel, whose
``mpiexec`` lands next to ``python``).

The package: ``collectives`` (the communicator, ranks, ``shard``, ``barrier``, ``all_reduce``,
``abort_on_error``), ``data_parallel`` (``DistributedDataParallel``), ``channel`` (the checked,
timed collectives underneath) and ``failure`` (one failing rank ends the job).
"""

from dparray.distributed.collectives import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
from dparray.distributed.collectives import abort_on_error as abort_on_error
from dparray.distributed.collectives import all_reduce as all_reduce
from dparray.distributed.collectives import barrier as barrier
from dparray.distributed.collectives import rank as rank
from dparray.distributed.collectives import shard as shard
from dparray.distributed.collectives import world as world
from dparray.distributed.collectives import world_size as world_size
from dparray.distributed.data_parallel import DistributedDataParallel as DistributedDataParallel

__all__ = ["DistributedDataParallel", "abort_on_error", "all_reduce", "barrier", "rank", "shard",
           "world", "world_size"]
