"""Backends: the protocol every array library adapter satisfies, the registry, and the choice.

The core of dparray never imports an array library. It computes through ``backend.xp``, the
array-API namespace of the tensor's backend, and asks the backend for the few things the
standard lacks (random numbers, ``scatter_add``, ``erf``, worker contexts).

Which backend a new tensor lands on is decided, most specific first, by:

1. the backend of the tensors an op receives (ops never move data between backends);
2. ``with dparray.use_backend("cupy"):`` -- a context variable, so every thread and every
   DataParallel worker that runs in a copy of the caller's context sees the caller's choice;
3. ``dparray.set_backend("cupy")`` -- the process-wide default;
4. the ``DPARRAY_BACKEND`` environment variable, read once, on first use;
5. otherwise NumPy.

Built-in adapters live in ``dparray.backends``; third-party ones register under the entry-point
group ``dparray.backends`` (the entry point names a zero-argument factory returning a
``Backend``), or at run time through ``register_backend``.

A backend must have the members of ``Backend``; it may also have those of
``OptionalMembers``. The core reaches an optional member only through the function of the same
name below (``parallel_region(backend, count)``, ``describe(backend)``, ``kernels(backend)``),
which supplies the declared default when the backend lacks it, so a third-party backend that
implements only the required members works everywhere.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol, cast, runtime_checkable

# The adapters' package, not an adapter: its set-up must run before anything loads NumPy.
importlib.import_module("dparray.backends")

ENV_VAR = "DPARRAY_BACKEND"
DEFAULT_BACKEND = "numpy"
ENTRY_POINT_GROUP = "dparray.backends"


class BackendUnavailableError(RuntimeError):
    """A registered backend cannot be used on this machine (library missing, no device)."""


@runtime_checkable
class RandomGenerator(Protocol):
    """A seeded stream of random arrays on one backend; the array API has no random numbers."""

    def normal(self, shape: tuple[int, ...], dtype: Any) -> Any:
        """Standard normal samples of a floating ``dtype`` (a native dtype of the backend)."""

    def uniform(self, shape: tuple[int, ...], dtype: Any, low: float = 0.0,
                high: float = 1.0) -> Any:
        """Samples from ``[low, high)``."""

    def bernoulli(self, shape: tuple[int, ...], p: float) -> Any:
        """A boolean array whose entries are True with probability ``p``."""

    def permutation(self, n: int) -> Any:
        """A random permutation of ``0 .. n-1`` as an int64 array."""

    def get_state(self) -> Any:
        """The generator's complete state as JSON-able data (dicts, lists, str, int, float):
        what ``dparray.random.get_state`` and checkpoints save."""

    def set_state(self, state: Any) -> None:
        """Continue from ``state`` (what ``get_state`` returned, maybe in another process), so
        the same draws follow; a ValueError, with nothing changed, if it is not such a state."""


@runtime_checkable
class Backend(Protocol):
    """What dparray needs from an array library.

    ``xp`` is the array-API namespace all math goes through; it is resolved once, when the
    backend is made, never per op. The other members fill the gaps of the standard; each has a
    generic implementation written in ``xp`` alone (``dparray.backends.array_api``) that an
    adapter overrides only where its library is faster.

    Contract:
        * ``asarray(data, dtype=None)`` makes a backend array from Python data, a NumPy array
          or another backend array; ``dtype`` is a native dtype of this backend.
        * ``to_numpy(array)`` returns a NumPy array (it may share memory on the CPU).
        * ``random(seed)`` returns a ``RandomGenerator``; equal seeds give equal streams.
        * ``scatter_add(target, index, values)`` returns ``target`` with ``values[i]`` added to
          row ``index[i]`` (repeated indices accumulate); ``target`` is not modified.
        * ``erf(x)`` is the error function, elementwise, to the precision of ``x``'s dtype.
        * ``worker(i, n)`` is a context manager entered by worker ``i`` of ``n`` for its share
          of a data-parallel region (a CUDA stream on CuPy, nothing on the CPU).
        * ``synchronize()`` waits for all queued device work; a no-op on the CPU.
    """

    name: str
    xp: Any

    def asarray(self, data: Any, dtype: Any = None) -> Any: ...

    def to_numpy(self, array: Any) -> Any: ...

    def random(self, seed: int) -> RandomGenerator: ...

    def scatter_add(self, target: Any, index: Any, values: Any) -> Any: ...

    def erf(self, x: Any) -> Any: ...

    def worker(self, index: int, count: int) -> AbstractContextManager[None]: ...

    def synchronize(self) -> None: ...


class OptionalMembers(Protocol):
    """Members a backend may add to ``Backend``'s; each has a default, given in its accessor.

    * ``parallel_region(count)``: a context manager entered once around a data-parallel region
      of ``count`` workers (NumPy splits the BLAS threads among them). Default: does nothing.
    * ``describe()``: facts for ``dparray info`` as ``{"library": ..., "version": ...}`` and
      more. Default: the backend's name and class.
    * ``kernels``: a mapping from the name a reference op declares (``dparray.kernels``) to
      a faster implementation -- a subclass of the reference ``Function``, with its
      constructor, inputs and outputs, or, for a reference function such as an optimizer's
      update, a function with its signature. ``dparray.kernels.check_table`` checks one.
      Default: empty -- every op runs its array-API reference.
    * ``to_device_async(host)``: a NumPy array ``host`` as an array of this backend, and a
      ``ready()`` to call before that array is first used; the copy may run in the background
      (CuPy: pinned memory and a stream of its own). Default: ``asarray(host)``, ready at once.
    * ``quiet_math``: a pair ``(enter, leave)``, or None: ``token = enter()`` turns off the
      library's warnings about IEEE special values (NumPy's "divide by zero encountered")
      until ``leave(token)``; every op's forward and every backward pass run between them, so
      ``log(0)`` is ``-inf`` without a word, as in PyTorch. A pair of plain functions rather
      than a context manager because it runs around every op. Default: None (nothing to turn
      off).
    * ``extra_dtypes``: native dtypes, by dparray's name, that the namespace ``xp`` does not
      name itself (NumPy's ``bfloat16`` comes from ``ml_dtypes``). Default: none. The mapping
      may load its library on first access: dparray reads an entry when a program names that
      dtype, and otherwise only what its ``loaded()`` method returns, if it has one (the
      entries ready without loading anything; NumPy's imports ml_dtypes, about half a
      second, only for a program that uses bfloat16).
    """

    def parallel_region(self, count: int) -> AbstractContextManager[None]: ...

    def describe(self) -> Mapping[str, str]: ...

    @property
    def kernels(self) -> Mapping[str, Any]: ...

    def to_device_async(self, host: Any) -> tuple[Any, Callable[[], None]]: ...

    quiet_math: tuple[Callable[[], Any], Callable[[Any], None]] | None
    @property
    def extra_dtypes(self) -> Mapping[str, Any]: ...


def parallel_region(backend: Backend, count: int) -> AbstractContextManager[None]:
    """``backend.parallel_region(count)``, or a context that does nothing."""
    member = getattr(backend, "parallel_region", None)
    if member is None:
        return contextlib.nullcontext()
    return cast(AbstractContextManager[None], member(count))


def describe(backend: Backend) -> dict[str, str]:
    """``backend.describe()`` as a dict of strings, or its name and class."""
    member = getattr(backend, "describe", None)
    if member is None:
        kind = type(backend)
        return {"library": backend.name, "adapter": f"{kind.__module__}.{kind.__qualname__}"}
    return {str(key): str(value) for key, value in member().items()}


def kernels(backend: Backend) -> Mapping[str, Any]:
    """``backend.kernels``, or an empty mapping."""
    table = getattr(backend, "kernels", None)
    return table if table is not None else {}


def to_device_async(backend: Backend, host: Any) -> tuple[Any, Callable[[], None]]:
    """``backend.to_device_async(host)``, or ``backend.asarray(host)`` with nothing to wait
    for."""
    member = getattr(backend, "to_device_async", None)
    if member is None:
        return backend.asarray(host), _ready_now
    array, ready = member(host)
    return array, ready


def quiet_math(backend: Backend) -> tuple[Callable[[], Any], Callable[[Any], None]] | None:
    """``backend.quiet_math``, or None."""
    return getattr(backend, "quiet_math", None)


def _ready_now() -> None:
    return None


def extra_dtypes(backend: Backend) -> Mapping[str, Any]:
    """``backend.extra_dtypes``, or an empty mapping."""
    table = getattr(backend, "extra_dtypes", None)
    return table if table is not None else {}


BackendFactory = Callable[[], Backend]

_BUILTIN_FACTORIES: dict[str, str] = {
    "numpy": "dparray.backends.numpy:create",
    "cupy": "dparray.backends.cupy:create",
    "array_api_strict": "dparray.backends.array_api:create_strict",
}

_lock = threading.RLock()
_factories: dict[str, BackendFactory | str] = dict(_BUILTIN_FACTORIES)
_instances: dict[str, Backend] = {}
_entry_points_loaded = False
_default: Backend | None = None
_override: contextvars.ContextVar[Backend | None] = contextvars.ContextVar(
    "dparray_backend", default=None
)


def register_backend(name: str, factory: BackendFactory, *, replace: bool = False) -> None:
    """Register a backend under ``name``; ``factory()`` is called on first use.

    The factory raises ``BackendUnavailableError`` (or ``ImportError``) when its library
    or device is missing; the backend is then listed by ``registered_backends`` but not by
    ``available_backends``.

    Examples:
        >>> import dparray
        >>> from dparray.backends.array_api import ArrayAPIBackend
        >>> import array_api_strict
        >>> dparray.register_backend(
        ...     "strict2", lambda: ArrayAPIBackend(array_api_strict, "strict2"))
        >>> "strict2" in dparray.available_backends()
        True
        >>> dparray.unregister_backend("strict2")
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"backend name must be a non-empty str, got {name!r}")
    if not callable(factory):
        raise TypeError(f"backend factory for {name!r} must be callable, got {factory!r}")
    with _lock:
        _load_entry_points()
        if name in _factories and not replace:
            raise ValueError(f"backend {name!r} is already registered; pass replace=True")
        _factories[name] = factory
        _instances.pop(name, None)


def unregister_backend(name: str) -> None:
    """Remove backend ``name`` from the registry (a no-op when it is not registered)."""
    global _default
    with _lock:
        _load_entry_points()
        _factories.pop(name, None)
        backend = _instances.pop(name, None)
        if backend is not None and _default is backend:
            _default = None


def registered_backends() -> list[str]:
    """Names of every registered backend, usable here or not."""
    with _lock:
        _load_entry_points()
        return list(_factories)


def available_backends() -> list[str]:
    """Names of the registered backends that work on this machine."""
    names = []
    for name in registered_backends():
        try:
            get_backend(name)
        except (BackendUnavailableError, TypeError):  # missing library or device; bad factory
            continue
        names.append(name)
    return names


def get_backend(name: str | Backend | None = None) -> Backend:
    """The backend called ``name``, or the current one when ``name`` is None.

    Raises:
        ValueError: no backend of that name is registered (the message lists those that are).
        BackendUnavailableError: it is registered but cannot run here (the message says why).
    """
    if name is None:
        return current_backend()
    if not isinstance(name, str):
        # A structural isinstance on the Protocol costs tens of microseconds; registered
        # factories are checked with it once (in _create), objects passed in are trusted.
        if hasattr(name, "xp") and hasattr(name, "asarray"):
            return name
        raise TypeError(f"expected a backend name or a Backend, got {type(name).__name__}")
    backend = _instances.get(name)
    if backend is not None:
        return backend
    with _lock:
        _load_entry_points()
        if name not in _factories:
            raise ValueError(
                f"unknown backend {name!r}; registered: {', '.join(_factories)}"
                f" (available here: {', '.join(available_backends())})"
            )
        if name not in _instances:
            _instances[name] = _create(name)
        return _instances[name]


def current_backend() -> Backend:
    """The backend new tensors go to: ``use_backend`` > ``set_backend`` > env var > NumPy."""
    backend = _override.get()
    if backend is not None:
        return backend
    return _default if _default is not None else _default_from_environment()


def set_backend(name: str | Backend) -> None:
    """Make ``name`` the process-wide default backend (``use_backend`` blocks still win)."""
    global _default
    backend = get_backend(name)
    with _lock:
        _default = backend


@contextlib.contextmanager
def use_backend(name: str | Backend) -> Iterator[Backend]:
    """Within the block, new tensors go to backend ``name``; yields the backend.

    The choice is a context variable: it holds in this thread and in every worker that runs in
    a copy of this context (DataParallel does this), and nowhere else.

    Examples:
        >>> import dparray
        >>> with dparray.use_backend("array_api_strict"):
        ...     dparray.zeros(2).backend.name
        'array_api_strict'
    """
    backend = get_backend(name)
    token = _override.set(backend)
    try:
        yield backend
    finally:
        _override.reset(token)


def _default_from_environment() -> Backend:
    global _default
    with _lock:
        if _default is None:
            name = os.environ.get(ENV_VAR, "").strip() or DEFAULT_BACKEND
            try:
                _default = get_backend(name)
            except ValueError as error:
                raise ValueError(f"{ENV_VAR}={name!r} is invalid: {error}") from None
            except BackendUnavailableError as error:
                raise BackendUnavailableError(f"{ENV_VAR}={name!r}: {error}") from None
        return _default


def _create(name: str) -> Backend:
    factory = _factories[name]
    try:
        if isinstance(factory, str):
            module_name, _, attribute = factory.partition(":")
            factory = getattr(importlib.import_module(module_name), attribute)
        backend = factory()
    except BackendUnavailableError:
        raise
    except ImportError as error:
        raise BackendUnavailableError(f"backend {name!r} is not available here: {error}") from error
    if not isinstance(backend, Backend):
        raise TypeError(f"factory of backend {name!r} returned {backend!r}, not a Backend")
    return backend


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    from importlib.metadata import entry_points

    for entry in entry_points(group=ENTRY_POINT_GROUP):
        _factories.setdefault(entry.name, entry.value)
