"""Train the digits MLP on several processes with DistributedDataParallel.

    mpiexec -n 2 python examples/train_distributed.py      # or: python examples/... (1 rank)

Every rank trains on its shard of each epoch's shuffle with a local batch of 128 / ranks; the
gradients are averaged, so each step is the step one process takes on the global batch of 128,
and the accuracy is the same whatever the number of ranks. A rank that fails ends the whole
job with its traceback (DistributedDataParallel sees to it: nothing to wrap). Needs the
``demo`` and ``mpi`` extras: pip install "dparray[demo,mpi]".
"""

import argparse
import random

from sklearn.datasets import load_digits

import dparray as dp
from dparray import nn, optim
from dparray.distributed import DistributedDataParallel, all_reduce, rank, shard, world_size
from dparray.nn import functional as F

GLOBAL_BATCH = 128


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=15)
    args = parser.parse_args()
    ranks, me = world_size(), rank()
    if GLOBAL_BATCH % ranks:
        raise ValueError(f"{ranks} ranks do not divide the global batch of {GLOBAL_BATCH}")

    digits = load_digits()
    x = dp.tensor(digits.data, dtype="float64") / 16.0
    y = dp.tensor(digits.target, dtype="int64")
    order = list(range(len(x)))
    random.Random(0).shuffle(order)  # the same split on every rank
    train, test = dp.tensor(order[:1408]), dp.tensor(order[1408:])
    train_x, train_y = dp.take(x, train), dp.take(y, train)
    test_x, test_y = dp.take(x, test), dp.take(y, test)

    dp.manual_seed(me)  # different on every rank: the broadcast makes rank 0's win
    model = DistributedDataParallel(nn.Sequential(
        nn.Linear(64, 128, dtype="float64"), nn.ReLU(), nn.Linear(128, 10, dtype="float64")))
    opt = optim.Adam(model.parameters(), lr=2e-3)
    local = GLOBAL_BATCH // ranks
    for epoch in range(args.epochs):
        mine = shard(len(train_x), seed=0, epoch=epoch, pad=False)
        for start in range(0, len(mine), local):
            index = mine[start:start + local]
            loss = F.cross_entropy(model(dp.take(train_x, index)), dp.take(train_y, index))
            opt.step(model.backward(loss))

    with dp.no_grad():
        correct = (model(test_x).argmax(axis=1) == test_y).astype("float64").sum()
    accuracy = all_reduce(correct, "mean").item() / len(test_x)  # the same on every rank
    if me == 0:
        print(f"{ranks} rank(s): held-out accuracy {accuracy:.2%}")


if __name__ == "__main__":
    main()
