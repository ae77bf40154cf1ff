"""DistributedDataParallel under ``mpiexec -n 2`` (launched as a subprocess), and its
helpers."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import dparray as dp
from dparray import distributed, nn

HERE = pathlib.Path(__file__).resolve().parent
MPIEXEC = pathlib.Path(sys.executable).with_name("mpiexec")
TIMEOUT = 120


def mpiexec(*args: str, ranks: int = 2) -> subprocess.CompletedProcess:
    if not MPIEXEC.exists():
        pytest.fail(f"no mpiexec beside {sys.executable}: install the 'mpi' extra")
    return subprocess.run([str(MPIEXEC), "-n", str(ranks), sys.executable, *args],
                          capture_output=True, text=True, timeout=TIMEOUT, cwd=HERE.parent)


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


@pytest.mark.parametrize("options", [[], ["--data-parallel"], ["--bucket-mb", "0.0002"]],
                         ids=["plain", "data-parallel-inside", "many-buckets"])
def test_one_step_equals_one_process_on_the_union_of_batches(options, tmp_path):
    result = mpiexec(str(HERE / "mpi" / "ddp_step.py"), str(tmp_path), *options)
    assert result.returncode == 0, result.stderr
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


def test_a_failing_rank_ends_the_job(tmp_path):
    result = mpiexec(str(HERE / "mpi" / "failures.py"), "raise")
    assert result.returncode != 0
    assert "[rank 1] KeyError: 'rank 1 has no data'" in result.stderr


def test_different_models_on_two_ranks_are_named(tmp_path):
    result = mpiexec(str(HERE / "mpi" / "failures.py"), "mismatch")
    assert result.returncode != 0
    assert "rank 1's model differs from rank 0's: 0.weight is (5, 3) float32 there, rank 0 " \
           "has 0.weight (4, 3) float32" in result.stderr


class World:
    """A stand-in communicator for one rank of ``size``, to test sharding in one process."""

    def __init__(self, rank: int, size: int) -> None:
        self.rank, self.size = rank, size

    def Get_rank(self) -> int:
        return self.rank

    def Get_size(self) -> int:
        return self.size


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


def test_single_process_helpers_and_errors():
    assert distributed.rank() == 0 and distributed.world_size() == 1
    distributed.barrier()
    assert distributed.all_reduce(dp.tensor([1.0, 2.0]), "mean").tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="op must be one of"):
        distributed.all_reduce(dp.ones(1), "prod")
    with pytest.raises(ValueError, match="n_items must be a positive int"):
        distributed.shard(0, 1, 1)
    model = distributed.DistributedDataParallel(nn.Linear(2, 2))
    with pytest.raises(ValueError, match="not trainable parameters of this model"):
        model.reduce((dp.ones(2, requires_grad=True) * 2).sum().backward())
    assert [n for n, _ in model.named_parameters()] == ["weight", "bias"]
    with pytest.raises(ValueError, match="bucket_mb must be positive"):
        distributed.DistributedDataParallel(nn.Linear(2, 2), bucket_mb=0)
