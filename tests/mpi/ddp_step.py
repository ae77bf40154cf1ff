"""Run under mpiexec by tests/test_distributed.py: one DistributedDataParallel SGD step.

    mpiexec -n 2 python tests/mpi/ddp_step.py OUT_DIR [--data-parallel] [--bucket-mb MB]

Each rank starts from its own random parameters (the broadcast must replace them with rank
0's) and its own batch; it saves the parameters after the broadcast and after the step.
mpi4py's pickle is disabled: nothing in dparray.distributed may unpickle.
"""

import argparse

import dparray as dp
from dparray import nn
from dparray.distributed import DistributedDataParallel, abort_on_error, rank


def build(seed):
    dp.manual_seed(seed)
    return nn.Sequential(nn.Linear(5, 7, dtype="float64"), nn.Tanh(),
                         nn.Linear(7, 3, dtype="float64"))


def batch(me):
    dp.manual_seed(100 + me)
    return dp.randn(6, 5, dtype="float64"), dp.randn(6, 3, dtype="float64")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--data-parallel", action="store_true")
    parser.add_argument("--bucket-mb", type=float, default=25.0)
    args = parser.parse_args()
    from no_pickle import forbid_pickle  # here, not at the top: the tests import this file

    forbid_pickle()
    me = rank()
    module = build(seed=me)  # different on every rank until the broadcast
    inner = dp.DataParallel(module, 2, execution="threads") if args.data_parallel else module
    model = DistributedDataParallel(inner, bucket_mb=args.bucket_mb)
    dp.save(model.state_dict(), f"{args.out}/start_{me}.safetensors")
    x, y = batch(me)
    grads = model.backward(nn.functional.mse_loss(model(x), y))
    dp.optim.SGD(model.parameters(), lr=0.1).step(grads)
    dp.save(model.state_dict(), f"{args.out}/after_{me}.safetensors")


if __name__ == "__main__":
    with abort_on_error():
        main()
