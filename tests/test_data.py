"""dparray.data: datasets, the default collate, samplers and the DataLoader's batches.

The prefetch thread, its shutdown and the loader's random streams are tested in
tests/test_data_prefetch.py.
"""

from __future__ import annotations

import collections
import math
import subprocess
import sys

import numpy as np
import pytest

import dparray as dp
from dparray import nn, optim
from dparray.data import (
    DataLoader,
    DistributedSampler,
    RandomSampler,
    SequentialSampler,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)
from dparray.data.sampler import permutation
from tests.conftest import to_tensor

F64 = dp.float64


class Rows:
    """A dataset of plain Python samples, counting the reads of each index."""

    def __init__(self, n, sample=lambda i: (float(i), i)):
        self.n, self.sample = n, sample
        self.reads = collections.Counter()

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        self.reads[index] += 1
        return self.sample(index)


def _labels(loader):
    """The sample indices of one epoch, batch by batch (the second field of each sample)."""
    return [y.tolist() for _, y in loader]


def _flat(lists):
    return [item for part in lists for item in part]


# ------------------------------------------------------------------------------- TensorDataset

def test_a_tensor_dataset_indexes_rows_of_every_tensor(backend, rng):
    x, y = rng.standard_normal((5, 3)), np.arange(5)
    data = TensorDataset(to_tensor(x), to_tensor(y))
    assert len(data) == 5
    row, label = data[-2]
    np.testing.assert_array_equal(row.numpy(), x[3])
    assert label.item() == 3 and row.backend is backend
    with pytest.raises(IndexError, match="index 5 is out of range for 5 samples"):
        data[5]
    assert len(list(data)) == 5  # the sequence protocol stops at the IndexError


def test_a_tensor_dataset_batch_is_one_take_per_tensor_equal_to_stacked_samples(backend, rng):
    x = to_tensor(rng.standard_normal((7, 2, 3)))
    y = to_tensor(rng.integers(0, 9, 7))
    data = TensorDataset(x, y)
    indices = [6, 0, 3, 3]
    gathered = data.batch(indices)
    stacked = default_collate([data[i] for i in indices])
    for a, b, source in zip(gathered, stacked, (x, y), strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        np.testing.assert_array_equal(a.numpy(), source.numpy()[indices])
        assert a.dtype == source.dtype


def test_a_tensor_dataset_refuses_what_has_no_rows_of_one_length():
    with pytest.raises(TypeError, match="TensorDataset: needs at least one tensor"):
        TensorDataset()
    with pytest.raises(TypeError, match=r"TensorDataset: tensor 1 must be a Tensor, got \[1, 2\]"):
        TensorDataset(dp.zeros(2), [1, 2])
    with pytest.raises(ValueError, match="tensor 0 must have an axis 0"):
        TensorDataset(dp.tensor(1.0))
    with pytest.raises(ValueError, match=r"same length along axis 0, got \[3, 2\]"):
        TensorDataset(dp.zeros(3), dp.zeros(2, 4))
    with pytest.raises(TypeError, match=r"TensorDataset: index must be an int, got 1\.0"):
        TensorDataset(dp.zeros(3))[1.0]


# --------------------------------------------------------------------- Subset and random_split

def test_a_subset_reads_its_indices_and_keeps_the_batch_path():
    data = TensorDataset(dp.arange(10.0), dp.arange(10))
    part = Subset(data, [7, 2, 9])
    assert len(part) == 3 and part[1][1].item() == 2 and part[-1][1].item() == 9
    assert part.batch([2, 0])[1].tolist() == [9, 7]
    plain = Subset(Rows(10), [7, 2, 9])  # no batch() underneath: the default collate
    assert plain.batch([2, 0])[1].tolist() == [9, 7]
    with pytest.raises(IndexError, match="Subset: index 10 is out of range for 10 samples"):
        Subset(data, [10])
    with pytest.raises(TypeError, match="Subset: dataset must have __len__ and __getitem__"):
        Subset(3, [0])


@pytest.mark.parametrize("lengths, sizes", [([7, 3], [7, 3]), ([0.5, 0.3, 0.2], [5, 3, 2]),
                                            ([1 / 3] * 3, [4, 3, 3]), ([10, 0], [10, 0])])
def test_random_split_gives_disjoint_covering_subsets_fixed_by_the_seed(lengths, sizes):
    parts = random_split(range(10), lengths, seed=4)
    assert [len(p) for p in parts] == sizes
    assert sorted(i for p in parts for i in p.indices) == list(range(10))
    again = random_split(range(10), lengths, seed=4)
    assert [p.indices for p in again] == [p.indices for p in parts]
    other = random_split(range(10), lengths, seed=5)
    assert [p.indices for p in other] != [p.indices for p in parts] or sizes[0] == 10


def test_random_split_without_a_seed_repeats_under_manual_seed():
    dp.manual_seed(8)
    first = [p.indices for p in random_split(range(20), [10, 10])]
    dp.manual_seed(8)
    assert [p.indices for p in random_split(range(20), [10, 10])] == first


def test_random_split_refuses_lengths_that_do_not_fit():
    with pytest.raises(ValueError, match=r"lengths \[3, 3\] must add up to the dataset's length"):
        random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="must add up to 1"):
        random_split(range(10), [0.5, 0.4])
    with pytest.raises(TypeError, match="lengths must be a non-empty sequence"):
        random_split(range(10), 5)
    with pytest.raises(ValueError, match="each length must be at least 0"):
        random_split(range(10), [11, -1])


# ------------------------------------------------------------------------------------ collate

Point = collections.namedtuple("Point", ["x", "label"])


def test_default_collate_stacks_tensors_and_numbers_in_the_samples_structure(backend):
    samples = [
        {"image": dp.tensor([[1.0, 2.0]]), "meta": (i, float(i) / 2, i % 2 == 0), "tag": f"s{i}",
         "pair": [dp.tensor(i), Point(dp.tensor([1.0 * i]), i)]}
        for i in range(3)
    ]
    batch = default_collate(samples)
    assert list(batch) == ["image", "meta", "tag", "pair"]
    assert batch["image"].shape == (3, 1, 2) and batch["image"].backend is backend
    ints, floats, bools = batch["meta"]
    assert isinstance(batch["meta"], tuple)
    assert (ints.dtype, floats.dtype, bools.dtype) == (dp.int64, dp.float32, dp.bool)
    assert ints.tolist() == [0, 1, 2] and floats.tolist() == [0.0, 0.5, 1.0]
    assert bools.tolist() == [True, False, True]
    assert batch["tag"] == ["s0", "s1", "s2"]
    scalars, point = batch["pair"]
    assert isinstance(batch["pair"], list) and scalars.tolist() == [0, 1, 2]
    assert isinstance(point, Point) and point.x.tolist() == [[0.0], [1.0], [2.0]]
    assert point.label.tolist() == [0, 1, 2]


def test_default_collate_makes_numpy_arrays_tensors():
    batch = default_collate([np.arange(3, dtype=np.int32), np.arange(3, 6, dtype=np.int32)])
    assert batch.dtype == dp.int32 and batch.tolist() == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize("samples, error, message", [
    ([dp.zeros(2), dp.zeros(3)], ValueError, r"sample 0 has \(2,\), sample 1 has \(3,\)"),
    ([{"a": 1}, {"b": 1}], ValueError, r"keys of sample 0 \['a'\]; sample 1 has \['b'\]"),
    ([(1, 2), (1,)], ValueError, r"length of sample 0 \(2\); sample 1 has 1"),
    ([(1, 2), [1, 2]], TypeError, r"sample 1 must be a tuple like sample 0, got \[1, 2\]"),
    ([1, True], TypeError, "sample 1 must be a number \\(not a bool\\) like sample 0"),
    ([dp.zeros(1), 1.0], TypeError, "sample 1 must be a Tensor like sample 0, got 1.0"),
    ([None], TypeError, "a sample must be a tensor, an array, a number"),
    ([], ValueError, "at least one sample"),
    ("ab", TypeError, "samples must be a sequence"),
])
def test_default_collate_names_the_sample_that_does_not_fit(samples, error, message):
    with pytest.raises(error, match=f"default_collate: .*{message}"):
        default_collate(samples)


# ----------------------------------------------------------------------------------- samplers

def test_permutation_is_a_shuffle_fixed_by_seed_and_epoch():
    first = permutation(50, seed=1, epoch=0)
    assert sorted(first) == list(range(50)) and first != list(range(50))
    assert permutation(50, seed=1, epoch=0) == first
    assert permutation(50, seed=1, epoch=1) != first
    assert permutation(50, seed=2, epoch=0) != first
    assert permutation(0, seed=1, epoch=0) == []


def test_the_random_sampler_repeats_until_told_the_next_epoch():
    sampler = RandomSampler(range(20), seed=3)
    first = list(sampler)
    assert list(sampler) == first == permutation(20, 3, 0) and len(sampler) == 20
    sampler.set_epoch(2)
    assert list(sampler) == permutation(20, 3, 2)
    with pytest.raises(ValueError, match=r"RandomSampler\.set_epoch: epoch must be at least 0"):
        sampler.set_epoch(-1)
    with pytest.raises(TypeError, match="RandomSampler: the dataset must have a length"):
        RandomSampler(iter([1]))
    assert list(SequentialSampler(range(3))) == [0, 1, 2]


def _pytorch_shards(n, replicas, seed, epoch, drop_last):
    """PyTorch's DistributedSampler.__init__ and __iter__ (torch/utils/data/distributed.py),
    transcribed line by line, over our shuffle."""
    if drop_last and n % replicas != 0:
        num_samples = math.ceil((n - replicas) / replicas)
    else:
        num_samples = math.ceil(n / replicas)
    total_size = num_samples * replicas
    indices = permutation(n, seed, epoch)
    if not drop_last:
        padding_size = total_size - len(indices)
        if padding_size <= len(indices):
            indices += indices[:padding_size]
        else:
            indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
    else:
        indices = indices[:total_size]
    return [indices[rank:total_size:replicas] for rank in range(replicas)]


@pytest.mark.parametrize("n, replicas", [(10, 3), (12, 4), (5, 8), (1, 2), (0, 3), (7, 1)])
@pytest.mark.parametrize("shuffle", [True, False])
def test_distributed_shards_are_disjoint_and_cover_every_sample_once(n, replicas, shuffle):
    for epoch in range(3):
        shards = []
        for rank in range(replicas):
            sampler = DistributedSampler(range(n), num_replicas=replicas, rank=rank,
                                         shuffle=shuffle, seed=9)
            sampler.set_epoch(epoch)
            shards.append(list(sampler))
            assert len(sampler) == len(shards[-1])
        everything = [i for shard in shards for i in shard]
        assert sorted(everything) == list(range(n))  # disjoint and covering
        assert max(map(len, shards)) - min(map(len, shards)) <= 1
        order = permutation(n, 9, epoch) if shuffle else list(range(n))
        assert shards == [order[rank::replicas] for rank in range(replicas)]


@pytest.mark.parametrize("n, replicas", [(10, 3), (12, 4), (5, 8), (1, 2), (7, 1)])
def test_distributed_padding_and_drop_last_follow_pytorch(n, replicas):
    for drop_last, pad in ((True, False), (False, True)):
        shards = [list(DistributedSampler(range(n), replicas, rank, seed=2, drop_last=drop_last,
                                          pad=pad)) for rank in range(replicas)]
        assert shards == _pytorch_shards(n, replicas, 2, 0, drop_last)
        assert len({len(s) for s in shards}) == 1  # every rank takes the same number of steps


def test_distributed_shards_reshuffle_per_epoch_and_agree_across_ranks():
    def shard(rank, epoch):
        sampler = DistributedSampler(range(30), num_replicas=2, rank=rank, seed=1)
        sampler.set_epoch(epoch)
        return list(sampler)

    assert shard(0, 0) != shard(0, 1)
    for epoch in range(3):  # each rank computes the same order: the halves interleave it
        assert shard(0, epoch)[:5] == permutation(30, 1, epoch)[0:10:2]
        assert shard(1, epoch)[:5] == permutation(30, 1, epoch)[1:10:2]


def test_distributed_sampler_refuses_a_rank_outside_the_world():
    with pytest.raises(ValueError, match=r"rank must be less than num_replicas \(2\), got 2"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="num_replicas must be at least 1, got 0"):
        DistributedSampler(range(4), num_replicas=0, rank=0)
    with pytest.raises(ValueError, match="pad and drop_last exclude each other"):
        DistributedSampler(range(4), 2, 0, drop_last=True, pad=True)
    with pytest.raises(TypeError, match="DistributedSampler: shuffle must be a bool"):
        DistributedSampler(range(4), 2, 0, shuffle=1)


def _run(code):
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip()


@pytest.mark.integration
def test_a_distributed_sampler_given_its_rank_does_not_import_mpi():
    out = _run("import sys, dparray as dp\n"
               "s = dp.data.DistributedSampler(range(10), num_replicas=2, rank=1)\n"
               "print(len(list(s)), 'mpi4py' in sys.modules)")
    assert out == "5 False"


@pytest.mark.integration
def test_a_distributed_sampler_asks_mpi_for_what_is_left_out():
    out = _run("import sys, dparray as dp\n"
               "s = dp.data.DistributedSampler(range(10))\n"
               "print(s.num_replicas, s.rank, len(list(s)), 'mpi4py' in sys.modules)")
    assert out == "1 0 10 True"


# --------------------------------------------------------------------------------- DataLoader

@pytest.mark.parametrize("batch_size", [1, 3, 7, 10, 16])
def test_every_sample_comes_exactly_once_per_epoch(batch_size):
    data = Rows(10)
    loader = DataLoader(data, batch_size=batch_size, shuffle=True, seed=0)
    assert len(loader) == -(-10 // batch_size)
    for epoch in range(3):
        batches = _labels(loader)
        assert len(batches) == len(loader)
        assert all(len(b) == batch_size for b in batches[:-1])
        assert sorted(i for b in batches for i in b) == list(range(10))
        assert sum(data.reads.values()) == 10 * (epoch + 1)


def test_the_order_repeats_under_a_seed_and_differs_across_epochs():
    data = TensorDataset(dp.arange(40.0), dp.arange(40))
    first = DataLoader(data, batch_size=8, shuffle=True, seed=11)
    epochs = [_labels(first) for _ in range(3)]
    assert epochs[0] != epochs[1] != epochs[2] != epochs[0]
    again = DataLoader(data, batch_size=8, shuffle=True, seed=11)
    assert [_labels(again) for _ in range(3)] == epochs
    assert [i for b in epochs[1] for i in b] == permutation(40, 11, 1)  # the sampler's shuffle
    again.set_epoch(1)
    assert _labels(again) == epochs[1] and again.epoch == 2
    assert _labels(DataLoader(data, batch_size=8, shuffle=True, seed=12)) != epochs[0]


def test_without_a_seed_the_order_repeats_under_manual_seed():
    data = TensorDataset(dp.arange(30.0), dp.arange(30))
    dp.manual_seed(5)
    first = [_labels(loader) for loader in [DataLoader(data, 6, shuffle=True)] for _ in range(2)]
    dp.manual_seed(5)
    loader = DataLoader(data, 6, shuffle=True)
    assert [_labels(loader) for _ in range(2)] == first
    assert first[0] != first[1]
    assert _labels(DataLoader(data, 6, shuffle=True)) != first[0]  # a second loader: its own


def test_without_shuffle_the_batches_are_in_order():
    loader = DataLoader(Rows(7), batch_size=3)
    assert _labels(loader) == [[0, 1, 2], [3, 4, 5], [6]] == _labels(loader)


def test_drop_last_leaves_out_the_short_batch():
    loader = DataLoader(Rows(10), batch_size=4, shuffle=True, drop_last=True, seed=1)
    assert len(loader) == 2
    for _ in range(3):
        batches = _labels(loader)
        assert [len(b) for b in batches] == [4, 4]
        assert len(set(_flat(batches))) == 8
    assert len(DataLoader(Rows(3), batch_size=4, drop_last=True)) == 0
    assert list(DataLoader(Rows(3), batch_size=4, drop_last=True)) == []
    assert list(DataLoader(Rows(0), batch_size=4)) == []


def test_a_tensor_dataset_is_read_one_take_per_batch_not_sample_by_sample(backend):
    class Counting(TensorDataset):
        def __init__(self, *tensors):
            super().__init__(*tensors)
            self.items = self.batches = 0

        def __getitem__(self, index):
            self.items += 1
            return super().__getitem__(index)

        def batch(self, indices):
            self.batches += 1
            return super().batch(indices)

    data = Counting(dp.arange(20.0).reshape(10, 2), dp.arange(10))
    fast = [tuple(t.numpy() for t in b) for b in DataLoader(data, 4, shuffle=True, seed=2)]
    assert (data.batches, data.items) == (3, 0)
    slow = DataLoader(data, 4, shuffle=True, seed=2, collate_fn=default_collate)
    for (a, b), (c, d) in zip(fast, slow, strict=True):  # the same batches, sample by sample
        np.testing.assert_array_equal(a, c.numpy())
        np.testing.assert_array_equal(b, d.numpy())
    assert (data.batches, data.items) == (3, 10)


def test_a_collate_fn_receives_the_list_of_samples():
    seen = []

    def collate(samples):
        seen.append(samples)
        return len(samples)

    assert list(DataLoader(Rows(5), batch_size=2, collate_fn=collate)) == [2, 2, 1]
    assert seen[0] == [(0.0, 0), (1.0, 1)]


def test_a_loader_batches_dicts_into_dicts():
    data = Rows(6, lambda i: {"x": dp.full((2,), float(i)), "y": i})
    batches = list(DataLoader(data, batch_size=4))
    assert [sorted(b) for b in batches] == [["x", "y"], ["x", "y"]]
    assert batches[0]["x"].shape == (4, 2) and batches[1]["y"].tolist() == [4, 5]


def test_a_loader_over_a_distributed_sampler_shards_every_epoch():
    data = Rows(23)
    loaders = [DataLoader(data, batch_size=4, seed=0,
                          sampler=DistributedSampler(data, num_replicas=3, rank=rank, seed=6))
               for rank in range(3)]
    assert [len(loader) for loader in loaders] == [2, 2, 2]
    seen = []
    for _ in range(2):
        epoch = [_flat(_labels(loader)) for loader in loaders]
        assert sorted(_flat(epoch)) == list(range(23))
        seen.append(epoch)
    assert seen[0] != seen[1]  # the loader's epoch reached the sampler


def test_the_loader_refuses_bad_arguments_before_any_work():
    data = Rows(4)
    cases = [
        (dict(dataset=3), TypeError, "dataset must have __len__ and __getitem__, got 3"),
        (dict(batch_size=0), ValueError, "batch_size must be at least 1, got 0"),
        (dict(batch_size=2.0), TypeError, r"batch_size must be an int, got 2.0 \(float\)"),
        (dict(shuffle="yes"), TypeError, "shuffle must be a bool"),
        (dict(prefetch=-1), ValueError, "prefetch must be at least 0, got -1"),
        (dict(seed=-3), ValueError, "seed must be at least 0, got -3"),
        (dict(collate_fn=1), TypeError, "collate_fn must be callable, got 1"),
        (dict(sampler=3), TypeError, "sampler must have __iter__ and __len__, got 3"),
        (dict(sampler=range(4), shuffle=True), ValueError, "sampler and shuffle exclude"),
        (dict(backend="nope"), ValueError, "unknown backend 'nope'"),
    ]
    for arguments, error, message in cases:
        arguments = {"dataset": data, **arguments}
        with pytest.raises(error, match=message):
            DataLoader(**arguments)
    assert data.reads == {}
    with pytest.raises(ValueError, match=r"DataLoader\.set_epoch: epoch must be at least 0"):
        DataLoader(data).set_epoch(-1)


def test_a_data_parallel_training_loop_fed_by_the_loader_matches_the_unwrapped_module():
    dp.manual_seed(0)
    x, y = dp.randn(48, 5, dtype=F64), dp.randn(48, 2, dtype=F64)
    data = TensorDataset(x, y)
    model = nn.Sequential(nn.Linear(5, 8, dtype=F64), nn.Tanh(), nn.Linear(8, 2, dtype=F64))
    reference = nn.Sequential(nn.Linear(5, 8, dtype=F64), nn.Tanh(), nn.Linear(8, 2, dtype=F64))
    reference.load_state_dict(model.state_dict())
    wrapped = dp.DataParallel(model, num_workers=2, execution="threads")

    def train(module, loader):
        opt = optim.SGD(module.parameters(), lr=0.1)
        for _ in range(2):
            for xb, yb in loader:
                opt.step(((module(xb) - yb) ** 2).mean().backward())

    train(wrapped, DataLoader(data, batch_size=12, shuffle=True, seed=3))
    assert wrapped.last_execution == "threads"
    # the reference is fed by hand: the loader's shuffles, rows taken with NumPy
    host_x, host_y = x.numpy(), y.numpy()
    opt = optim.SGD(reference.parameters(), lr=0.1)
    for epoch in range(2):
        order = permutation(48, 3, epoch)
        for start in range(0, 48, 12):
            rows = order[start:start + 12]
            xb, yb = dp.tensor(host_x[rows]), dp.tensor(host_y[rows])
            opt.step(((reference(xb) - yb) ** 2).mean().backward())
    for (name, p), (_, q) in zip(model.named_parameters(), reference.named_parameters(),
                                 strict=True):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-12, atol=1e-12, err_msg=name)


# ------------------------------------------------------------------------------------ digits

def test_load_digits_gives_scikit_learns_digits_scaled_to_one(backend):
    from sklearn.datasets import load_digits as sklearn_digits

    reference = sklearn_digits()
    x, y = dp.data.load_digits()
    assert x.backend is backend and (x.dtype, y.dtype) == (dp.float32, dp.int64)
    np.testing.assert_array_equal(x.numpy(), (reference.data / 16.0).astype(np.float32))
    np.testing.assert_array_equal(y.numpy(), reference.target)
    x64, _ = dp.data.load_digits(dtype="float64", backend="numpy")
    assert x64.dtype == dp.float64 and x64.backend.name == "numpy"


def test_the_digits_train_and_test_splits_are_disjoint_and_cover_them_all():
    x, y = dp.data.load_digits()
    train_x, train_y = dp.data.load_digits("train")
    test_x, test_y = dp.data.load_digits("test", seed=0)
    assert (len(train_x), len(test_x)) == (1797 - 359, 359)  # a fifth, rounded down

    def rows(images, labels):
        return {(tuple(r), int(c)) for r, c in zip(images.numpy(), labels.numpy(), strict=True)}

    everything, train, test = rows(x, y), rows(train_x, train_y), rows(test_x, test_y)
    duplicates = len(x) - len(everything)  # a few digits occur twice in the data
    assert train | test == everything and len(train & test) <= duplicates
    assert rows(*dp.data.load_digits("test", seed=1)) != test
    small = dp.data.load_digits("test", test_fraction=0.1)[0]
    assert len(small) == 179


def test_load_digits_says_how_to_install_scikit_learn(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(ImportError, match=r'pip install "dparray\[demo\]"'):
        dp.data.load_digits()


def test_load_digits_refuses_an_unknown_split():
    with pytest.raises(ValueError, match="load_digits: split must be one of 'all', 'train'"):
        dp.data.load_digits("validation")
    with pytest.raises(ValueError, match=r"test_fraction must be less than 1\.0"):
        dp.data.load_digits("test", test_fraction=1.0)
