"""The check that a module under DataParallel gives the unwrapped module's outputs and
gradients, shared by the fused ops' tests (recurrences, causal attention)."""

from __future__ import annotations

import numpy as np

import dparray as dp


def assert_data_parallel_matches(module, x, weight, workers, execution):
    """``DataParallel(module, workers, execution)`` on ``x``: its output, and the gradients of
    ``(output * weight).sum()``, equal the unwrapped module's to rounding (float64)."""
    model = dp.DataParallel(module, workers, execution=execution)
    want = module(x)
    want_grads = (want * weight).sum().backward()
    got = model(x)
    got_grads = (got * weight).sum().backward()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)
    for variable in want_grads:
        np.testing.assert_allclose(got_grads[variable].numpy(), want_grads[variable].numpy(),
                                   rtol=1e-12, atol=1e-13)
