"""The kernel table: lookup, switching it off, and dparray without Numba."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import ClassVar

import pytest

import dparray as dp
from dparray import kernels
from dparray.autograd import Function


@kernels.reference("test_double")
class Reference(Function):
    def forward(self, x):
        return x * 2.0

    def backward(self, grad):
        return grad * 2.0


class Faster(Reference):
    pass


class Undeclared(Function):  # a reference that names no table entry
    def forward(self, x):
        return x * 3.0


class TableBackend:
    """A stand-in backend whose kernel table maps "double" to ``Faster``."""

    name = "table"
    kernels: ClassVar[dict[str, type]] = {"test_double": Faster}


def test_resolve_uses_the_table_and_caches_the_answer():
    backend = TableBackend()
    assert kernels.resolve(backend, Reference) is Faster
    assert kernels.resolve(backend, Undeclared) is Undeclared
    backend.kernels = {}
    assert kernels.resolve(backend, Reference) is Faster  # cached per (backend, op)
    kernels.forget(backend)
    assert kernels.resolve(backend, Reference) is Reference


def test_reference_only_turns_the_table_off_in_this_context():
    backend = TableBackend()
    with kernels.reference_only():
        assert not kernels.enabled()
        assert kernels.resolve(backend, Reference) is Reference
    assert kernels.resolve(backend, Reference) is Faster


def test_a_backend_without_kernels_runs_the_references():
    strict = dp.get_backend("array_api_strict")
    assert kernels.resolve(strict, Reference) is Reference


def test_a_subclass_of_a_reference_never_gets_the_reference_kernel():
    """A user's variant of an op inherits ``kernel_name`` but declares no name of its own, so
    the kernel written for the reference cannot replace its code."""

    class Variant(Reference):
        def forward(self, x):
            return x * 4.0

    assert kernels.resolve(TableBackend(), Variant) is Variant


def test_a_name_is_declared_by_one_reference():
    with pytest.raises(ValueError, match=r"'test_double' is already declared by .*Reference"):
        kernels.reference("test_double")(Undeclared)
    with pytest.raises(TypeError, match="name must be a non-empty str"):
        kernels.reference("")


def _run(code, **env):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env={**os.environ, **env}, check=False, timeout=120)


@pytest.mark.integration
def test_the_environment_variable_turns_every_table_off():
    result = _run("""
        import dparray as dp
        from dparray.nn import functional as F
        x = dp.randn(4, 8, requires_grad=True)
        y = F.layer_norm(x, (8,))
        print(type(y.grad_fn).__name__)
    """, DPARRAY_KERNELS="reference")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "LayerNorm"


@pytest.mark.integration
def test_without_numba_dparray_works_through_the_references():
    result = _run("""
        import sys
        sys.modules["numba"] = None  # as if it were not installed
        import dparray as dp
        from dparray.nn import functional as F
        backend = dp.get_backend("numpy")
        # MKL's products, when installed, and the 16-bit products (converted without Numba)
        assert set(backend.kernels) <= {"matmul", "low_precision_matmul"}, backend.kernels
        print(backend.describe()["kernels"])
        x = dp.randn(4, 8, requires_grad=True)
        loss = F.cross_entropy(F.gelu(F.layer_norm(x, (8,))), dp.tensor([0, 1, 2, 3]))
        grads = loss.backward()
        print(type(loss.grad_fn).__name__, grads[x].shape)
    """)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("numba is not installed")
    assert lines[1] == "CrossEntropy (4, 8)"


def test_the_float32_gelu_kernel_is_accurate_to_float32():
    """The NumPy kernel's own erf (a rational fit, vectorisable) against math.erf: GELU of
    float32 input within two float32 roundings of the exact value, plus the rounding of
    ``1 + erf`` in float32 that every float32 GELU has in the left tail; and as close to the
    array-API reference."""
    import math

    import numpy as np

    from dparray.nn import functional as F

    x = np.linspace(-9.0, 9.0, 200_001).astype(np.float32)
    exact = np.array([v * 0.5 * (1.0 + math.erf(v / math.sqrt(2.0)))
                      for v in x.astype(np.float64)])
    with kernels.kernels_enabled():
        y = F.gelu(dp.tensor(x)).numpy().astype(np.float64)
    with kernels.reference_only():
        reference = F.gelu(dp.tensor(x)).numpy().astype(np.float64)
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    bound = 2.0 * ulp + 2.0**-24 * np.abs(x)
    assert np.all(np.abs(y - exact) <= bound)
    assert np.all(np.abs(y - reference) <= 2.0 * bound)
    assert y[0] == 0.0 and y[-1] == 9.0  # the tails are exactly 0 and x


def test_a_small_loop_runs_a_serial_compilation_of_itself():
    """Below ``SERIAL_BELOW`` elements a parallel loop runs its serial twin (same options but
    ``parallel``, cached under a name of its own), not the thread pool; above, the loop."""
    import numba
    import numpy as np
    from dparray.backends import _numba_setup as setup

    def double(x, out):  # pragma: no cover - compiled
        for i in numba.prange(x.shape[0]):
            out[i] = 2.0 * x[i]

    loop = numba.njit(parallel=True, nogil=True, fastmath={"reassoc"})(double)
    small = np.arange(7.0)
    out = np.empty_like(small)
    setup.launch(loop, small.size, small, out)
    assert list(out) == [2.0 * v for v in small]
    twin = setup.serial(loop)
    assert twin is setup.serial(loop)
    assert twin.signatures and not loop.signatures
    assert twin.targetoptions["parallel"] is False
    assert twin.targetoptions["fastmath"] == loop.targetoptions["fastmath"]
    assert twin.py_func.__qualname__.startswith(f"{double.__qualname__}__serial_")

    large = np.ones(setup.SERIAL_BELOW)
    setup.launch(loop, large.size, large, np.empty_like(large))
    assert loop.signatures


def test_the_threaded_scatter_add_repeats_the_in_order_sum_bitwise():
    """Above ``SERIAL_BELOW`` elements the rows of the target are shared among the threads;
    every element still adds its terms in index order (as ``np.add.at``), negative indices
    counting from the end, whatever the thread count."""
    import numba
    import numpy as np
    from dparray.backends import _numba_setup

    backend = dp.get_backend("numpy")
    if not backend.kernels:
        pytest.skip("the NumPy kernels are not in use here")
    rng = np.random.default_rng(5)
    target = rng.standard_normal((700, 64))
    assert target.size >= _numba_setup.SERIAL_BELOW
    index = rng.integers(-700, 700, 5000)
    values = rng.standard_normal((5000, 64))
    expected = target.copy()
    np.add.at(expected, index, values)
    previous = numba.get_num_threads()
    try:
        for threads in sorted({1, previous}):
            numba.set_num_threads(threads)
            out = backend.scatter_add(target, index, values)
            assert np.array_equal(out, expected), threads
    finally:
        numba.set_num_threads(previous)


def test_threads_asking_for_a_serial_twin_at_once_get_one_compilation():
    import threading

    import numba
    from dparray.backends import _numba_setup as setup

    def triple(x, out):  # pragma: no cover - compiled
        for i in numba.prange(x.shape[0]):
            out[i] = 3.0 * x[i]

    loop = numba.njit(parallel=True, nogil=True)(triple)
    start = threading.Barrier(8)
    twins = []

    def ask():
        start.wait()
        twins.append(setup.serial(loop))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(twins) == 8 and all(twin is twins[0] for twin in twins)
