"""Fast paths without backends in the core: each backend's kernel table, looked up once.

A composite op (layer norm, softmax + cross-entropy, convolution, pooling, an optimizer's
update, ...) is written once against the array API: the *reference*, correct on every
backend. A backend may declare ``kernels`` (``dparray.backend.OptionalMembers``): a flat
mapping from an op's name to a faster implementation with the reference's constructor,
inputs, outputs and saved values -- typically a subclass of the reference ``Function`` that
overrides ``forward`` and ``backward``, or, for a plain function such as an optimizer update, a
function with the same signature.

``resolve(backend, name, reference)`` is how the core picks one. It reads the table once per
(backend, op) and caches the answer, so the hot path costs one dict lookup. With the
environment variable ``DPARRAY_KERNELS=reference`` (read at import), or inside
``with dparray.kernels.reference_only():`` (a context variable: this thread and the
DataParallel workers it starts), every op runs its reference.

Examples:
    >>> import dparray as dp
    >>> from dparray.kernels import resolve
    >>> class Double(dp.Function):
    ...     def forward(self, x):
    ...         return 2.0 * x
    ...     def backward(self, grad):
    ...         return 2.0 * grad
    >>> resolve(dp.get_backend("array_api_strict"), "double", Double) is Double
    True
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Iterator
from typing import Any, TypeVar, cast

from dparray.backend import Backend, kernels

ENV_VAR = "DPARRAY_KERNELS"
ENABLED_BY_ENVIRONMENT = os.environ.get(ENV_VAR, "").strip().lower() != "reference"

Implementation = TypeVar("Implementation")

_enabled: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "dparray_kernels_enabled", default=ENABLED_BY_ENVIRONMENT
)
_resolved: dict[tuple[int, str], Any] = {}  # (backend id, op) -> kernel, or None for none
_UNKNOWN = object()
_lock = threading.Lock()


__all__ = ["enabled", "forget", "kernels_enabled", "reference_only", "resolve"]

def resolve(backend: Backend, name: str, reference: Implementation) -> Implementation:
    """The implementation of op ``name`` to use on ``backend``: its kernel when the backend
    has one and kernels are on, else ``reference``."""
    if not _enabled.get():
        return reference
    key = (id(backend), name)
    found = _resolved.get(key, _UNKNOWN)
    if found is _UNKNOWN:
        with _lock:
            found = _resolved[key] = kernels(backend).get(name)
    if found is None:
        return reference
    return cast(Implementation, found)  # a kernel stands in for its reference


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
