"""Helpers for testing modules: gradient checks through a module's own forward."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from gradient_checks import check_gradients

import dparray as dp


def _owner(module: dp.nn.Module, name: str) -> tuple[dp.nn.Module, str]:
    *path, leaf = name.split(".")
    for part in path:
        module = getattr(module, part)
    return module, leaf


def module_gradcheck(module: dp.nn.Module, *inputs: dp.Tensor, seed: int = 0,
                     output: Callable[[dp.Tensor], dp.Tensor] = lambda y: y,
                     check: Callable[..., None] = check_gradients) -> None:
    """Finite-difference check of the gradients of ``module``'s output with respect to its
    inputs and every trainable parameter, through the module's own ``forward``.

    Parameters are swapped in for each evaluation; the random stream is reseeded every time,
    so dropout masks repeat. ``check`` is ``check_gradients`` (every element in turn on a
    backend with kernels, random directions on one without) or ``directional_gradcheck`` (one
    random direction everywhere: for modules with many parameters).
    """
    names = [name for name, p in module.named_parameters() if p.is_variable]
    params = [p for _, p in module.named_parameters() if p.is_variable]
    count = len(inputs)

    def function(*args: dp.Tensor) -> dp.Tensor:
        originals = []
        for name, value in zip(names, args[count:], strict=True):
            owner, leaf = _owner(module, name)
            originals.append((owner, leaf, getattr(owner, leaf)))
            setattr(owner, leaf, value)
        try:
            with dp.fork_rng(seed):
                return output(module(*args[:count]))
        finally:
            for owner, leaf, value in originals:
                setattr(owner, leaf, value)

    check(function, [*inputs, *params])


def assert_same_gradients(fused: dp.Tensor, composed: dp.Tensor, inputs: Sequence[dp.Tensor],
                          rng: np.random.Generator) -> dp.Gradients:
    """Backpropagates one random cotangent through a fused op's result and its composition's;
    every variable among ``inputs`` gets the same gradient from both. Returns the fused one's."""
    cotangent = dp.tensor(rng.standard_normal(fused.shape))
    got = (fused * cotangent).sum().backward()
    want = (composed * cotangent).sum().backward()
    for i, t in enumerate(inputs):
        if t.is_variable:
            np.testing.assert_allclose(got[t].numpy(), want[t].numpy(), rtol=1e-10, atol=1e-12,
                                       err_msg=f"gradient of input {i}")
    return got
