"""The backend registry, the choice of backend, and the hooks each backend provides."""

from __future__ import annotations

import contextvars
import math
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
from dparray.backends.array_api import ArrayAPIBackend

import dparray as dp
from dparray.backend import Backend, BackendUnavailableError


def test_numpy_and_strict_are_always_available():
    assert {"numpy", "array_api_strict"} <= set(dp.available_backends())
    assert {"numpy", "cupy", "array_api_strict"} <= set(dp.registered_backends())


def test_every_available_backend_satisfies_the_protocol():
    for name in dp.available_backends():
        backend = dp.get_backend(name)
        assert isinstance(backend, Backend)
        assert backend.name == name


def test_numpy_is_the_default():
    assert dp.zeros(1).backend.name == "numpy"


def test_unknown_backend_lists_the_registered_ones():
    with pytest.raises(ValueError, match=r"unknown backend 'nope'.*numpy.*array_api_strict"):
        dp.get_backend("nope")
    with pytest.raises(ValueError, match="unknown backend"), dp.use_backend("nope"):
        pass


@pytest.mark.skipif("cupy" in dp.available_backends(), reason="this machine has a GPU")
def test_cupy_without_a_device_is_unavailable_not_an_import_error():
    import dparray.backends.cupy as cupy_adapter  # importing the adapter never fails

    assert not cupy_adapter.is_available()
    with pytest.raises(BackendUnavailableError, match=r"cupy|CuPy|CUDA"):
        dp.get_backend("cupy")


def test_use_backend_nests_and_restores():
    with dp.use_backend("array_api_strict"):
        assert dp.ones(1).backend.name == "array_api_strict"
        with dp.use_backend("numpy"):
            assert dp.ones(1).backend.name == "numpy"
        assert dp.ones(1).backend.name == "array_api_strict"
    assert dp.ones(1).backend.name == "numpy"


def test_a_worker_in_a_copied_context_sees_the_callers_choice():
    seen = {}
    with dp.use_backend("array_api_strict"):
        context = contextvars.copy_context()
    thread = threading.Thread(target=context.run,
                              args=(lambda: seen.update(name=dp.zeros(1).backend.name),))
    thread.start()
    thread.join()
    assert seen["name"] == "array_api_strict"


def test_a_plain_thread_sees_the_process_default():
    seen = {}
    with dp.use_backend("array_api_strict"):
        thread = threading.Thread(target=lambda: seen.update(name=dp.zeros(1).backend.name))
        thread.start()
        thread.join()
    assert seen["name"] == "numpy"


def test_set_backend_changes_the_process_default():
    try:
        dp.set_backend("array_api_strict")
        assert dp.zeros(1).backend.name == "array_api_strict"
        with dp.use_backend("numpy"):
            assert dp.zeros(1).backend.name == "numpy"
    finally:
        dp.set_backend("numpy")


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, **env}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=environment, timeout=120)


@pytest.mark.integration
def test_environment_variable_chooses_the_default():
    result = _run("import dparray; print(dparray.zeros(1).backend.name)",
                  DPARRAY_BACKEND="array_api_strict")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "array_api_strict"


@pytest.mark.integration
def test_invalid_environment_variable_is_named():
    result = _run("import dparray; dparray.zeros(1)", DPARRAY_BACKEND="tensorflow")
    assert result.returncode != 0
    assert "ValueError: DPARRAY_BACKEND='tensorflow' is invalid: unknown backend" in result.stderr


def test_register_backend_at_run_time():
    import array_api_strict

    dp.register_backend("strict_copy", lambda: ArrayAPIBackend(array_api_strict, "strict_copy"))
    try:
        assert "strict_copy" in dp.available_backends()
        assert dp.zeros(2, backend="strict_copy").backend.name == "strict_copy"
        with pytest.raises(ValueError, match="already registered"):
            dp.register_backend("strict_copy", lambda: None)
    finally:
        dp.unregister_backend("strict_copy")


def test_a_factory_returning_a_non_backend_is_refused():
    dp.register_backend("broken", lambda: object(), replace=True)
    try:
        with pytest.raises(TypeError, match="not a Backend"):
            dp.get_backend("broken")
        assert "broken" not in dp.available_backends()
    finally:
        dp.unregister_backend("broken")
    assert "broken" not in dp.registered_backends()


@pytest.mark.integration
def test_third_party_backend_through_the_entry_point_group(tmp_path):
    (tmp_path / "mybackend.py").write_text(textwrap.dedent("""
        import array_api_strict
        from dparray.backends.array_api import ArrayAPIBackend

        def create():
            return ArrayAPIBackend(array_api_strict, "mybackend")
    """))
    info = tmp_path / "mybackend-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mybackend\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dparray.backends]\nmybackend = mybackend:create\n")
    result = _run("""
        import dparray
        print('mybackend' in dparray.available_backends())
        print(dparray.ones(2, backend='mybackend').backend.name)
    """, PYTHONPATH=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "mybackend"]


# ------------------------------------------------------------------------------- hooks
GRID = np.concatenate([
    np.linspace(-7.0, 7.0, 20001),
    np.array([0.0, -0.0, 1e-300, -1e-300, 1e-9, 0.84375, 0.84375 - 1e-12, 1.25, 1 / 0.35,
              5.999999, 6.0, 6.5, 27.0, 1e10, -1e10]),
    np.geomspace(1e-12, 6.0, 4000),
])


def _generic(backend):
    """The generic (pure array-API) adapter over the same namespace as ``backend``."""
    return ArrayAPIBackend(backend.xp, backend.name)


@pytest.mark.parametrize("flavour", ["adapter", "generic"])
def test_erf_is_accurate_to_float64_precision(backend, flavour):
    hook = backend if flavour == "adapter" else _generic(backend)
    values = backend.to_numpy(hook.erf(backend.asarray(GRID)))
    expected = np.array([math.erf(v) for v in GRID])
    nonzero = expected != 0
    relative = np.abs(values[nonzero] - expected[nonzero]) / np.abs(expected[nonzero])
    assert relative.max() < 1e-13
    assert np.all(values[~nonzero] == 0)
    special = backend.to_numpy(hook.erf(backend.asarray(np.array([np.inf, -np.inf, np.nan]))))
    assert special[0] == 1.0 and special[1] == -1.0 and np.isnan(special[2])


def test_erf_keeps_float32(backend):
    x = backend.asarray(np.linspace(-4, 4, 101, dtype=np.float32))
    out = backend.erf(x)
    assert out.dtype == x.dtype
    expected = np.array([math.erf(v) for v in backend.to_numpy(x).astype(np.float64)])
    np.testing.assert_allclose(backend.to_numpy(out), expected, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("flavour", ["adapter", "generic"])
def test_scatter_add_accumulates_repeated_rows(backend, flavour, rng):
    hook = backend if flavour == "adapter" else _generic(backend)
    target = rng.standard_normal((5, 3))
    index = np.array([4, 0, 4, 2, 4])
    values = rng.standard_normal((5, 3))
    expected = target.copy()
    for i, row in zip(index, values, strict=True):
        expected[i] += row
    target_array = backend.asarray(target)
    out = hook.scatter_add(target_array, backend.asarray(index), backend.asarray(values))
    np.testing.assert_allclose(backend.to_numpy(out), expected, rtol=1e-14)
    np.testing.assert_array_equal(backend.to_numpy(target_array), target)  # not modified


def test_random_is_reproducible_and_well_formed(backend):
    float64 = dp.dtypes.native_dtype(backend, dp.float64)
    first, second = backend.random(7), backend.random(7)
    a = backend.to_numpy(first.normal((20000,), float64))
    assert np.array_equal(a, backend.to_numpy(second.normal((20000,), float64)))
    assert not np.array_equal(a, backend.to_numpy(backend.random(8).normal((20000,), float64)))
    assert abs(a.mean()) < 0.05 and abs(a.std() - 1.0) < 0.05
    u = backend.to_numpy(first.uniform((20000,), float64, low=2.0, high=3.0))
    assert u.min() >= 2.0 and u.max() < 3.0 and abs(u.mean() - 2.5) < 0.02
    b = backend.to_numpy(first.bernoulli((20000,), 0.25))
    assert b.dtype == np.bool_ and abs(b.mean() - 0.25) < 0.02
    p = backend.to_numpy(first.permutation(50))
    assert sorted(p.tolist()) == list(range(50)) and p.tolist() != list(range(50))


def test_worker_and_synchronize_are_usable(backend):
    with backend.worker(0, 2):
        x = backend.xp.ones((3,))
    backend.synchronize()
    assert backend.to_numpy(x).tolist() == [1.0, 1.0, 1.0]
