"""Run under mpiexec by tests/test_distributed.py: a rank that fails.

    mpiexec -n 2 python tests/mpi/failures.py raise|mismatch

``raise``: rank 1 raises while rank 0 waits in an all-reduce; ``abort_on_error`` must end the
job. ``mismatch``: rank 1's model has other shapes; every rank must raise a clear ValueError.
"""

import sys

import dparray as dp
from dparray import nn
from dparray.distributed import DistributedDataParallel, abort_on_error, all_reduce, rank


def main(kind):
    me = rank()
    if kind == "raise":
        if me == 1:
            raise KeyError("rank 1 has no data")
        all_reduce(dp.ones(3))  # rank 0 would wait here forever
    else:
        width = 4 if me == 0 else 5
        DistributedDataParallel(nn.Sequential(nn.Linear(3, width), nn.Linear(width, 1)))


if __name__ == "__main__":
    with abort_on_error():
        main(sys.argv[1])
