"""Shared fixtures: every backend-neutral test runs once per backend.

NumPy and array_api_strict must always be available (a failure, not a skip, if not); CuPy is
skipped only where this machine has no CUDA device.
"""

from __future__ import annotations

import functools
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import settings

import dparray as dp
from dparray.backend import kernels as kernel_table
from dparray.kernels import kernels_enabled, reference_only, resolve

collect_ignore = ["data", "mpi"]  # fixtures, and scripts run by other tests (PyTorch, mpiexec)

settings.register_profile("dparray", deadline=None, max_examples=40, derandomize=True)
settings.load_profile("dparray")

BACKENDS = ["numpy", "array_api_strict", "cupy"]
HARDWARE_BACKENDS = {"cupy": "needs CuPy and a CUDA device"}
KERNEL_MODES = ["kernels", "reference"]


def pytest_addoption(parser):
    parser.addoption(
        "--omit-absent-backends", action="store_true",
        help="do not generate the tests of a backend this machine cannot run (CuPy without a "
             "CUDA device) rather than report them as skipped: the quick loop (make quick)")


def pytest_generate_tests(metafunc):
    """Runs a test that takes ``backend`` once per backend, and one that takes ``kernels`` with
    the kernel table and with the array-API references only. A test that takes both runs the
    two modes only on backends with a kernel table (NumPy, CuPy): on one without
    (array_api_strict), kernels on or off run the same references, so it runs once, as
    ``reference``. With ``--omit-absent-backends``, a backend this machine cannot run gets no
    tests at all instead of skipped ones (a third of the suite, where CuPy has no device)."""
    given = {name for mark in metafunc.definition.iter_markers("parametrize")
             for name in _argnames(mark)}
    takes = {name for name in ("backend", "kernels")
             if name in metafunc.fixturenames and name not in given}
    backends = BACKENDS
    if metafunc.config.getoption("omit_absent_backends"):
        backends = [name for name in BACKENDS if name in _available_backends()]
    if takes == {"backend", "kernels"}:
        pairs = [_on(name, name, mode) for name in backends for mode in kernel_modes(name)]
        metafunc.parametrize(("backend", "kernels"), pairs, indirect=True)
    elif takes == {"backend"}:
        metafunc.parametrize("backend", [_on(name, name) for name in backends], indirect=True)
    elif takes == {"kernels"}:
        metafunc.parametrize("kernels", KERNEL_MODES, indirect=True)


def _on(name: str, *values: str):
    """The parameter ``values`` for backend ``name``: marked to skip, before any fixture is set
    up, where this machine cannot run that backend."""
    reason = HARDWARE_BACKENDS.get(name)
    skip = [pytest.mark.skip(reason=reason)] if reason and name not in _available_backends() \
        else []
    return pytest.param(*values, marks=skip, id="-".join(values))


def _argnames(mark) -> list[str]:
    names = mark.args[0] if mark.args else mark.kwargs["argnames"]
    return [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)


@functools.cache
def kernel_modes(name: str) -> list[str]:
    """Both modes where ``name`` has a kernel table, or may have one (a backend this machine
    cannot run, whose tests skip); ``reference`` alone where it has none."""
    try:
        table = kernel_table(dp.get_backend(name))
    except dp.BackendUnavailableError:
        return KERNEL_MODES
    return KERNEL_MODES if table else ["reference"]


@functools.cache
def _available_backends() -> list[str]:
    """``dp.available_backends()``, asked once a run: whether CuPy finds a device does not
    change while the tests run, and asking costs milliseconds."""
    return dp.available_backends()


@pytest.fixture
def backend(request):
    """The backend under test, made current for the test's duration."""
    name = request.param
    if name in HARDWARE_BACKENDS and name not in _available_backends():
        pytest.skip(HARDWARE_BACKENDS[name])
    with dp.use_backend(name) as chosen:
        yield chosen


@pytest.fixture
def kernels(request):
    """Run the test with the backend's kernel table, and again with the array-API
    references only (``dparray.kernels.reference_only``); once, with the references, on a
    backend without a table (``pytest_generate_tests``)."""
    if request.param == "reference":
        with reference_only():
            yield request.param
    else:
        with kernels_enabled():
            yield request.param


@pytest.fixture
def rng():
    """A NumPy generator for test data, seeded per test so failures repeat."""
    return np.random.default_rng(1234)


def to_tensor(array, requires_grad=False, backend=None):
    """A dparray tensor with exactly the values and dtype of a NumPy array."""
    return dp.tensor(np.asarray(array), requires_grad=requires_grad, backend=backend)


@functools.cache
def numpy_math_ulps() -> int:
    """How many ulps NumPy's float64 ``log1p`` and ``expm1`` may lie from libm's on this CPU:
    0 where they are libm's (bit for bit), 4 where NumPy runs its own SVML-derived AVX-512
    versions instead (CPUs with AVX512_SKX; NumPy checks those to 4 ulps). The kernels that
    take these functions from libm are their NumPy references to the bit on the first kind of
    CPU and within this many ulps on the second; the tests that compare the two allow it."""
    x = np.linspace(-30.0, 30.0, 20_001)
    for ours, libm, inputs in ((np.expm1, math.expm1, x), (np.log1p, math.log1p, np.abs(x))):
        if not np.array_equal(ours(inputs), np.array([libm(v) for v in inputs])):
            return 4
    return 0


def assert_the_references_float64(got: np.ndarray, want: np.ndarray,
                                  scale: np.ndarray | None = None) -> None:
    """A kernel's float64 result is its NumPy reference's: to the bit, or, where NumPy's
    transcendentals are not libm's, NaN and infinities in the same places and each finite
    value within ``numpy_math_ulps()`` ulps of the reference's -- ulps of the larger of the
    value and ``scale`` (a gradient's cotangent: the size of the terms that may cancel)."""
    if numpy_math_ulps() == 0:
        np.testing.assert_array_equal(got, want)
        return
    assert got.shape == want.shape and got.dtype == want.dtype == np.float64
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    size = np.abs(want[finite])
    if scale is not None:
        size = np.maximum(size, np.abs(np.where(np.isfinite(scale), scale, 0.0)[finite]))
    with np.errstate(over="ignore"):  # (the spacing above float64's largest value: inf)
        bound = numpy_math_ulps() * np.spacing(size)
    assert np.all(np.abs(got[finite] - want[finite]) <= bound)


def special_floats(dtype: type, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` normal values of ``dtype`` (scale 12) led by NaN, +-0, +-inf, +-tiny, +-the
    smallest subnormal, +-max and values where ``exp`` under- or overflows in float32 and
    float64: the elementwise kernels' edges."""
    info = np.finfo(dtype)
    special = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, info.tiny, -info.tiny,
                        info.smallest_subnormal, -info.smallest_subnormal, info.max, -info.max,
                        88.7, -88.7, 104.0, -104.0, 745.2, -745.2, 1e-8, -1e-8], dtype)
    values = (rng.standard_normal(size) * 12).astype(dtype)
    values[: special.size] = special[: size]
    return values


def float32_values_in_zero_to_one(rng: np.random.Generator) -> np.ndarray:
    """Uniform ones, ones spread over every binade down to 1e-40, ones a few ulps below 1, and
    the edges: 0, 1, subnormals, the smallest normal, both sides of 2^-29 (where 1 - x stops
    being exact in float64)."""
    uniform = rng.random(300_000, dtype=np.float32)
    binades = np.exp(rng.uniform(np.log(1e-40), 0.0, 300_000)).astype(np.float32)
    near_one = (1.0 - np.exp(rng.uniform(np.log(6e-8), 0.0, 300_000))).astype(np.float32)
    tiny = np.finfo(np.float32)
    boundary = np.float32(2.0 ** -29)
    edges = np.array([0.0, 1.0, tiny.smallest_subnormal, tiny.tiny, 1e-30, boundary,
                      np.nextafter(boundary, np.float32(0)), np.nextafter(boundary, np.float32(1)),
                      np.nextafter(np.float32(1), np.float32(0)), 0.5, 0.25], np.float32)
    return np.concatenate([edges, uniform, binades, near_one])


def value_and_gradient(function, x, grad):
    """``function`` of ``x`` (a NumPy array) and its gradient for the cotangent ``grad``, as
    NumPy arrays, with NumPy's floating-point warnings off (the edges overflow)."""
    t = to_tensor(x, requires_grad=True)
    with np.errstate(all="ignore"):
        out = function(t)
        return out.numpy(), out.backward(to_tensor(grad))[t].numpy()


def derivatives_as_the_reference_gives_them(function, x_array):
    """The first and second derivatives of ``function(x).sum()`` in float64 (the second
    through ``create_graph``), asserted equal to the bit to what the references give; the
    kernels' elementwise ops replay their references, so they must be."""
    def derivatives():
        x = to_tensor(x_array, requires_grad=True)
        (first,) = dp.autograd.grad(function(x).sum(), [x], create_graph=True)
        (again,) = dp.autograd.grad(first.sum(), [x])
        return first.numpy(), again.numpy()

    kernel = derivatives()
    with reference_only():
        reference = derivatives()
    for got, want in zip(kernel, reference, strict=True):
        np.testing.assert_array_equal(got, want)
    return kernel


def assert_integer_input_gives_the_references_float(function, backend):
    """``function`` of an integer tensor: the reference's float dtype and values (returned)."""
    out = function(dp.tensor([-2, 0, 3], backend=backend))
    with reference_only():
        reference = function(dp.tensor([-2, 0, 3], backend=backend))
    assert out.dtype == reference.dtype and out.dtype in (dp.float32, dp.float64)
    np.testing.assert_array_equal(out.numpy(), reference.numpy())
    return out.numpy()


def assert_second_derivatives_are_the_references(op, x_array, tolerance):
    """``d(sum(out ** 3))/dx`` with ``create_graph``, then the gradient of its sum of squares,
    for ``out = op(x)`` in float64: the same, to ``tolerance``, with the references alone."""
    _assert_second_derivatives(op, [x_array], 0, tolerance)


def assert_float64_gradient_into_float32_node(reference_class, arguments, x_array, grad_array):
    """A float64 gradient into the NumPy kernel of ``reference_class(*arguments)`` run on the
    float32 ``x_array``: a float64 input gradient, the reference node's to 1e-13."""
    kernel = resolve(dp.get_backend("numpy"), reference_class)(*arguments)
    reference = reference_class(*arguments)
    for node in (kernel, reference):
        node(to_tensor(x_array, requires_grad=True))
    got, want = kernel.backward(grad_array), reference.backward(grad_array)
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-13)


def assert_mixed_second_derivatives_are_the_references(op, x_array, w_array, tolerance):
    """``d(sum(out ** 3))/dx`` with ``create_graph``, then the gradient of its sum of squares
    by ``w``, for ``out = op(x, w)`` in float64: the same, to ``tolerance``, with the
    references alone (a layer's kernel replays its reference for the second pass)."""
    _assert_second_derivatives(op, [x_array, w_array], 1, tolerance)


def _assert_second_derivatives(op, arrays, by, tolerance):
    """``d(sum(out ** 3))`` by the first input with ``create_graph``, then the gradient of its
    sum of squares by input ``by``, with the kernels and with the references alone."""
    def second():
        inputs = [to_tensor(a, requires_grad=True) for a in arrays]
        out = op(*inputs)
        (first,) = dp.autograd.grad((out * out * out).sum(), [inputs[0]], create_graph=True)
        (again,) = dp.autograd.grad((first * first).sum(), [inputs[by]])
        return first.numpy(), again.numpy()

    kernel = second()
    with reference_only():
        reference = second()
    for got, want in zip(kernel, reference, strict=True):
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


def assert_model_under_data_parallel(model, x_array, workers, tolerance=1e-12):
    """``model`` (float64) under DataParallel against unwrapped: the output and the gradients
    of ``sum(out ** 3)`` by the input and every parameter, to ``tolerance``."""
    x = to_tensor(x_array, requires_grad=True)

    def step(m):
        out = m(x)
        grads = (out * out * out).sum().backward()
        return [out.numpy(), grads[x].numpy()] + [grads[p].numpy() for p in model.parameters()]

    expected = step(model)
    for got, want in zip(step(dp.DataParallel(model, workers)), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


def assert_activation_under_data_parallel(activation, workers, rng):
    """``Linear`` then ``activation`` (an ``nn`` module) under DataParallel against unwrapped,
    in float64: values and gradients to 1e-12. Each worker's share of the batch is above the
    kernels' serial-loop threshold: parallel loops in parallel workers."""
    model = dp.nn.Sequential(dp.nn.Linear(5, 40_000 // 7 + 1, dtype=dp.float64), activation)
    x = to_tensor(rng.standard_normal((14, 5)), requires_grad=True)

    def run(m):
        out = m(x)
        grads = (out * out).sum().backward()
        return out.numpy(), grads[x].numpy(), grads[model[0].weight].numpy()

    expected = run(model)
    for got, want in zip(run(dp.DataParallel(model, workers)), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def pytest_terminal_summary(terminalreporter):
    """One line per skip reason ("376 tests skipped: needs CuPy and a CUDA device") in place
    of a line per skipped test, which ``-rfE`` no longer prints."""
    reasons = Counter(_skip_reason(report) for report in terminalreporter.stats.get("skipped", []))
    for reason, count in sorted(reasons.items(), key=lambda item: (-item[1], item[0])):
        tests = "test" if count == 1 else "tests"
        terminalreporter.write_line(f"{count} {tests} skipped: {reason}")
    if terminalreporter.config.getoption("omit_absent_backends"):
        absent = [name for name in HARDWARE_BACKENDS if name not in _available_backends()]
        for name in absent:
            terminalreporter.write_line(f"no {name} tests generated: "
                                        f"{HARDWARE_BACKENDS[name]} (--omit-absent-backends)")


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    reason = reason.removeprefix("Skipped: ")
    return "no reason given" if reason in ("", "Skipped") else reason
