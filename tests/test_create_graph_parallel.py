"""create_graph through DataParallel: a gradient penalty (WGAN-GP's, on the gradient of the
critic's output with respect to its input) computed under DataParallel with 2 and 3 workers,
on threads and inline, equals the unwrapped module's, and so does a second-order product of
the parameters; SyncBatchNorm's chunks, which must meet, are refused with a clear error."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray import func, nn


def _critic():
    dp.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 6), nn.LayerNorm(6), nn.GELU(), nn.Linear(6, 4),
                         nn.Tanh(), nn.Linear(4, 1)).to(dp.float64)


def _penalty(model, x):
    x = x.detach().requires_grad_()
    (g,) = dp.autograd.grad(model(x).sum(), x, create_graph=True)
    return ((g * g).sum(axis=1).sqrt() - 1.0).__pow__(2).mean()


@pytest.mark.parametrize("execution", ["threads", "inline"])
@pytest.mark.parametrize("workers", [2, 3])
def test_gradient_penalty_under_data_parallel_equals_unwrapped(workers, execution, backend,
                                                               kernels, rng):
    critic = _critic()
    x = to_tensor(rng.standard_normal((7, 3)))
    expected_value = _penalty(critic, x)
    expected = expected_value.backward()
    wrapped = dp.DataParallel(critic, num_workers=workers, execution=execution)
    value = _penalty(wrapped, x)
    assert wrapped.last_execution in ("threads", "whole")
    got = value.backward()
    np.testing.assert_allclose(value.item(), expected_value.item(), rtol=1e-12)
    parameters = critic.parameters()
    assert [p in got for p in parameters] == [p in expected for p in parameters]
    for p in (p for p in parameters if p in expected):
        np.testing.assert_allclose(got[p].numpy(), expected[p].numpy(), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("workers", [2, 3])
def test_a_hessian_vector_product_under_data_parallel_equals_unwrapped(workers, backend, rng):
    critic = _critic()
    x = to_tensor(rng.standard_normal((6, 3)))
    params = dict(critic.named_parameters())
    tangents = {name: to_tensor(rng.standard_normal(p.shape)) for name, p in params.items()}

    def loss(model):
        return lambda p: (func.functional_call(model, p, x) ** 2).mean()

    _, (expected,) = func.hvp(loss(critic), (params,), (tangents,))
    wrapped = dp.DataParallel(critic, num_workers=workers, execution="threads")
    _, (got,) = func.hvp(loss(wrapped), (params,), (tangents,))
    for name in params:
        np.testing.assert_allclose(got[name].numpy(), expected[name].numpy(), rtol=1e-10,
                                   atol=1e-13)


def test_sync_batch_norm_chunks_refuse_create_graph(backend, rng):
    dp.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.SyncBatchNorm(4), nn.Linear(4, 1))
    wrapped = dp.DataParallel(model, num_workers=2, execution="threads")
    x = dp.randn(6, 3, requires_grad=True)
    out = wrapped(x).sum()
    with pytest.raises(RuntimeError, match="SyncBatchNorm in training is not supported"):
        dp.autograd.grad(out, x, create_graph=True)
    assert out.backward()[x].shape == (6, 3)  # the plain backward still runs
