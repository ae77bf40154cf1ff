"""The tests' gradient check: element by element where it finds the most, along random directions
where the same code is already checked element by element.

A backend with a kernel table (NumPy, CuPy) runs code of its own -- the kernels -- so its
gradients are checked element by element (``dparray.testing.gradcheck``), with the table and,
where a test takes the ``kernels`` fixture, with the array-API references only. A backend without
one (array_api_strict) runs those same references, which the NumPy runs have checked element by
element; what it adds is that they run on a strict namespace, so there the check goes along
``DIRECTIONS`` random directions (``dparray.testing.directional_gradcheck``: two forwards and one
backward each, whatever the input size, against ``2 * size`` forwards). array_api_strict's
arrays cost about four times NumPy's per operation, so this halves the time of the test loop.
"""

from __future__ import annotations

from conftest import kernel_modes

import dparray as dp
from dparray.testing import directional_gradcheck, gradcheck

DIRECTIONS = 3


def element_by_element(backend: dp.Backend) -> bool:
    """Whether tests on ``backend`` check derivatives element by element (it has kernels of its
    own) or along random directions (it runs the references that NumPy's runs check)."""
    return "kernels" in kernel_modes(backend.name)


def check_gradients(function, inputs, **tolerances) -> None:
    """``gradcheck`` of ``function`` at ``inputs`` on a backend with a kernel table; otherwise
    ``directional_gradcheck`` along ``DIRECTIONS`` seeds (``tolerances`` apply to the first
    only: the directional check's own defaults are tighter, its single difference being more
    accurate than each element's)."""
    backend = next(t.backend for t in inputs if isinstance(t, dp.Tensor))
    if element_by_element(backend):
        gradcheck(function, inputs, **tolerances)
        return
    for seed in range(DIRECTIONS):
        directional_gradcheck(function, inputs, seed=seed)
