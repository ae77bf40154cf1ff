"""Fast paths without backends in the core: each backend's kernel table, looked up once.

A composite op (layer norm, softmax + cross-entropy, convolution, pooling, an optimizer's
update, ...) is written once against the array API: the *reference*, correct on every
backend. The reference declares, once, the name of its entry in backends' kernel tables:
``@reference("layer_norm")`` on its ``Function`` subclass (or on a plain function, such as an
optimizer's update). A backend may declare ``kernels`` (``dparray.backend.OptionalMembers``): a
flat mapping from those names to faster implementations with the reference's constructor,
inputs, outputs and saved values -- a subclass of the reference ``Function``, or a function with
the reference function's signature. ``check_table`` says whether a table keeps that contract
(every name declared by a reference, every kernel a subclass of it); the test suite runs it on
every backend's table.

``resolve(backend, Reference)`` is how the core picks one: its kernel, or the reference. It
reads the table once per (backend, reference) and caches the answer, so the hot path costs one
dict lookup. A subclass of a reference that does not declare a name of its own (a user's
variant of an op) never gets the reference's kernel. With the environment variable
``DPARRAY_KERNELS=reference`` (read at import), or inside
``with dparray.kernels.reference_only():`` (a context variable: this thread and the
DataParallel workers it starts), every op runs its reference.

Examples:
    >>> import dparray as dp
    >>> from dparray.kernels import reference, resolve
    >>> @reference("example_double")
    ... class Double(dp.Function):
    ...     def forward(self, x):
    ...         return 2.0 * x
    ...     def backward(self, grad):
    ...         return 2.0 * grad
    >>> resolve(dp.get_backend("array_api_strict"), Double) is Double
    True
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar, cast

from dparray.backend import Backend, kernels

ENV_VAR = "DPARRAY_KERNELS"
ENABLED_BY_ENVIRONMENT = os.environ.get(ENV_VAR, "").strip().lower() != "reference"

Implementation = TypeVar("Implementation")

_enabled: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "dparray_kernels_enabled", default=ENABLED_BY_ENVIRONMENT
)
_references: dict[str, Any] = {}  # table name -> the reference that declared it
_resolved: dict[tuple[int, Any], Any] = {}  # (backend id, reference) -> kernel, or None
_backends: dict[int, Backend] = {}  # the backends in _resolved, kept so that no id is reused
_UNKNOWN = object()
_lock = threading.Lock()


__all__ = ["check_table", "enabled", "forget", "kernels_enabled", "reference",
           "reference_only", "references", "resolve"]


def reference(name: str) -> Callable[[Implementation], Implementation]:
    """Declare the decorated ``Function`` subclass (or function) the reference of op ``name``:
    backends' kernel tables name its kernel ``name``. Each name is declared once."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"reference: name must be a non-empty str, got {name!r}")

    def declare(implementation: Implementation) -> Implementation:
        with _lock:
            if name in _references and _references[name] is not implementation:
                raise ValueError(f"reference: {name!r} is already declared by "
                                 f"{_qualified(_references[name])}")
            _references[name] = implementation
        implementation.kernel_name = name  # type: ignore[attr-defined]
        return implementation

    return declare


def references() -> dict[str, Any]:
    """Every declared reference, by its name in kernel tables."""
    with _lock:
        return dict(_references)


def resolve(backend: Backend, implementation: Implementation) -> Implementation:
    """What runs ``implementation`` (a reference) on ``backend``: the backend's kernel for it
    when there is one and kernels are on, else ``implementation`` itself."""
    if not _enabled.get():
        return implementation
    key = (id(backend), implementation)
    found = _resolved.get(key, _UNKNOWN)
    if found is _UNKNOWN:
        name = getattr(implementation, "kernel_name", "")
        with _lock:
            declared = _references.get(name) is implementation
            found = kernels(backend).get(name) if declared else None
            _resolved[key] = found
            _backends[id(backend)] = backend
    if found is None:
        return implementation
    return cast(Implementation, found)  # a kernel stands in for its reference


def check_table(table: Mapping[str, Any]) -> None:
    """Raise a ValueError listing every entry of a kernel table that breaks the contract: a
    name no reference declares, a class that does not subclass its reference, or a function
    whose parameters differ from its reference's. Backend authors call it in their tests."""
    declared = references()
    problems = []
    for name, kernel in table.items():
        ref = declared.get(name)
        if ref is None:
            problems.append(f"{name!r} is not the name of a reference op")
        elif isinstance(ref, type):
            if not (isinstance(kernel, type) and issubclass(kernel, ref)):
                problems.append(f"{name!r}: {_qualified(kernel)} does not subclass "
                                f"{_qualified(ref)}")
        elif _parameters(kernel) != _parameters(ref):  # (the first may be named differently)
            problems.append(f"{name!r}: {_qualified(kernel)}{inspect.signature(kernel)} does "
                            f"not take the parameters of {_qualified(ref)}"
                            f"{inspect.signature(ref)}")
    if problems:
        raise ValueError("kernel table: " + "; ".join(problems))


def _parameters(function: Any) -> list[Any] | None:
    """The kinds of ``function``'s parameters and the names of all but the first (an
    optimizer's update is a method, ``self`` first; its kernel a function of the optimizer)."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):  # not a function
        return None
    return [p.kind for p in parameters] + [p.name for p in parameters[1:]]


def _qualified(implementation: Any) -> str:
    module = getattr(implementation, "__module__", "?")
    return f"{module}.{getattr(implementation, '__qualname__', repr(implementation))}"


def enabled() -> bool:
    """Whether backends' kernels are used in the current context."""
    return _enabled.get()


@contextlib.contextmanager
def reference_only() -> Iterator[None]:
    """Within the block, every op runs its array-API reference (for tests and comparisons)."""
    token = _enabled.set(False)
    try:
        yield
    finally:
        _enabled.reset(token)


@contextlib.contextmanager
def kernels_enabled() -> Iterator[None]:
    """Within the block, backends' kernels are used even if ``DPARRAY_KERNELS=reference``."""
    token = _enabled.set(True)
    try:
        yield
    finally:
        _enabled.reset(token)


def forget(backend: Backend | None = None) -> None:
    """Drop cached lookups (of ``backend``, or all): for a backend whose table changed."""
    with _lock:
        for key in list(_resolved):
            if backend is None or key[0] == id(backend):
                del _resolved[key]
        if backend is None:
            _backends.clear()
        else:
            _backends.pop(id(backend), None)
