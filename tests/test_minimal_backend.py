"""A third-party backend with only the members ``dparray.backend.Backend`` requires -- no
``describe``, ``parallel_region`` or ``kernels`` -- works everywhere: it is registered, listed
by ``dparray info``, trains, and runs DataParallel on threads and inline."""

from __future__ import annotations

import contextlib
import math
import re

import array_api_strict
import numpy as np
import pytest

import dparray as dp
from dparray import nn, optim
from dparray.backend import Backend, OptionalMembers
from dparray.cli import main
from dparray.nn import functional as F

NAME = "minimal_strict"
F64 = dp.float64


class HostStream:
    """Random numbers drawn by NumPy on the host, then moved to the backend."""

    def __init__(self, seed, asarray):
        self._generator = np.random.default_rng(seed)
        self._asarray = asarray

    def normal(self, shape, dtype):
        return self._asarray(self._generator.standard_normal(shape), dtype)

    def uniform(self, shape, dtype, low=0.0, high=1.0):
        return self._asarray(self._generator.uniform(low, high, shape), dtype)

    def bernoulli(self, shape, p):
        return self._asarray(self._generator.random(shape) < p)

    def permutation(self, n):
        return self._asarray(self._generator.permutation(n).astype(np.int64))


class MinimalBackend:
    """array_api_strict behind exactly the required members; the standard's gaps (random
    numbers, scatter-add, erf) are filled on the host, as a simple adapter would."""

    def __init__(self):
        self.name = NAME
        self.xp = array_api_strict

    def asarray(self, data, dtype=None):
        return self.xp.asarray(data, dtype=dtype)

    def to_numpy(self, array):
        return np.asarray(array)

    def random(self, seed):
        return HostStream(seed, self.asarray)

    def scatter_add(self, target, index, values):
        result = np.array(self.to_numpy(target))
        np.add.at(result, self.to_numpy(index), self.to_numpy(values))
        return self.asarray(result)

    def erf(self, x):
        host = self.to_numpy(x)
        return self.asarray(np.vectorize(math.erf, otypes=[host.dtype])(host))

    def worker(self, index, count):
        return contextlib.nullcontext()

    def synchronize(self):
        return None


class RowCoupled(nn.Sequential):
    """Claims to couple the rows of a batch, so that DataParallel's inline execution really
    runs the chunks one after another instead of one call on the whole batch."""

    def couples_rows(self):
        return True


@pytest.fixture
def minimal():
    dp.register_backend(NAME, MinimalBackend)
    try:
        yield dp.get_backend(NAME)
    finally:
        dp.unregister_backend(NAME)


def test_the_backend_has_the_required_members_only(minimal):
    assert isinstance(minimal, Backend)
    optional = [name for name in dir(OptionalMembers) if not name.startswith("_")]
    assert sorted(optional) == ["describe", "extra_dtypes", "kernels", "parallel_region",
                                "to_device_async"]
    assert [name for name in optional if hasattr(minimal, name)] == []


def test_dparray_info_lists_it_as_available(minimal, capsys):
    assert main(["info"]) == 0
    output = capsys.readouterr().out
    line = re.search(rf"^\s+{NAME}\s+(.*)$", output, flags=re.MULTILINE)
    assert line is not None, output
    assert line.group(1) == (f"available (library {NAME}, adapter "
                             f"{MinimalBackend.__module__}.MinimalBackend)")


@pytest.mark.parametrize("execution", ["threads", "inline"])
def test_a_data_parallel_training_step_matches_the_unwrapped_module(minimal, execution):
    with dp.use_backend(minimal):
        dp.manual_seed(0)
        module = RowCoupled(nn.Linear(4, 6, dtype=F64), nn.GELU(), nn.Linear(6, 3, dtype=F64))
        twin = RowCoupled(nn.Linear(4, 6, dtype=F64), nn.GELU(), nn.Linear(6, 3, dtype=F64))
        twin.load_state_dict(module.state_dict())
        x = dp.randn(7, 4, dtype=F64)
        y = dp.tensor([0, 1, 2, 0, 1, 2, 0])

        expected_loss = F.cross_entropy(twin(x), y)
        expected = expected_loss.backward()
        parallel = dp.DataParallel(module, num_workers=3, execution=execution)
        loss = F.cross_entropy(parallel(x), y)
        grads = loss.backward()
        assert parallel.last_execution == execution
        assert loss.backend is minimal

        np.testing.assert_allclose(loss.item(), expected_loss.item(), rtol=1e-14)
        for (name, p), q in zip(module.named_parameters(), twin.parameters(), strict=True):
            np.testing.assert_allclose(grads[p].numpy(), expected[q].numpy(), rtol=1e-12,
                                       atol=1e-15, err_msg=name)
        optim.SGD(parallel.parameters(), lr=0.5).step(grads)
        optim.SGD(twin.parameters(), lr=0.5).step(expected)
        for (name, p), q in zip(module.named_parameters(), twin.parameters(), strict=True):
            np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-12, err_msg=name)
