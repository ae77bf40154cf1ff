"""Devices: PyTorch's device vocabulary mapped onto dparray's backends and their devices.

A ``dparray.device`` names a place the way PyTorch does, and each place is one (backend,
device of that backend's namespace):

* ``"cpu"`` is the NumPy backend (``"numpy"`` is the same device);
* ``"cuda"`` is the CuPy backend on the current CUDA device, ``"cuda:N"`` CuPy on device ``N``
  (``"cupy"`` and ``"cupy:N"`` are the same devices);
* any other registered backend goes by its name: ``"array_api_strict"`` is that backend on its
  namespace's default device, ``"array_api_strict:N"`` on the ``N``-th of the namespace's
  ``__array_namespace_info__().devices()``.

Strings, ``device`` objects and ``Backend`` objects are accepted wherever a device is taken
(``Tensor.to``, ``Module.to``, the factories' ``device=``). Making a ``device`` checks only its
spelling, as PyTorch's does; using one that cannot run here is a ``BackendUnavailableError``
that says why. ``Tensor.device`` answers with a ``device``, so ``x.to(x.device)`` is ``x``.
"""

from __future__ import annotations

import threading
from typing import Any

from dparray import dtypes as _dtypes
from dparray._checks import TensorBase, describe
from dparray.backend import Backend, BackendUnavailableError, get_backend, registered_backends

BACKEND_OF_TYPE = {"cpu": "numpy", "cuda": "cupy"}
"""PyTorch's device types and the backends that stand for them."""
TYPE_OF_BACKEND = {backend: kind for kind, backend in BACKEND_OF_TYPE.items()}

_device_lists: dict[Backend, tuple[Any, ...]] = {}
_lists_lock = threading.Lock()


class device:  # PyTorch's name, torch.device
    """Where a tensor lives, as PyTorch names it: ``device("cpu")``, ``device("cuda:1")``,
    ``device("cuda", 1)``, ``device("array_api_strict")``.

    ``type`` is ``"cpu"``, ``"cuda"`` or another backend's name; ``index`` the device's number
    on that backend, or None for its default (the current CUDA device for ``"cuda"``).

    Examples:
        >>> import dparray as dp
        >>> dp.device("cuda:1")
        device(type='cuda', index=1)
        >>> str(dp.device("cuda", 0)), dp.device("numpy") == dp.device("cpu")
        ('cuda:0', True)
        >>> dp.zeros(2).device
        device(type='cpu')
    """

    __slots__ = ("_index", "_type")
    _type: str
    _index: int | None

    def __init__(self, type: str | device | int, index: int | None = None) -> None:
        if isinstance(type, device):
            if index is not None:
                raise TypeError(f"device: an index cannot be given with a device ({type})")
            self._type, self._index = type._type, type._index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            type, index = "cuda", _checked_index(type, type)  # PyTorch: an int is a CUDA device
        if not isinstance(type, str):
            raise TypeError(f"device: expected a device string such as 'cpu' or 'cuda:0', a "
                            f"device or an int, got {describe(type)}")
        kind, colon, number = type.partition(":")
        if colon:
            if index is not None:
                raise ValueError(f"device: the index is given twice, in {type!r} and as {index}")
            if not number.isdigit() or (len(number) > 1 and number[0] == "0"):
                raise ValueError(f"device: the index in {type!r} must be a non-negative integer "
                                 "(as in 'cuda:1')")
            index = int(number)
        self._type = _known_type(kind.strip(), type)
        self._index = None if index is None else _checked_index(index, type)

    @property
    def type(self) -> str:
        """``"cpu"``, ``"cuda"`` or the name of another backend."""
        return self._type

    @property
    def index(self) -> int | None:
        """The device's number on its backend; None for the backend's default device."""
        return self._index

    def __str__(self) -> str:
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __repr__(self) -> str:
        extra = "" if self._index is None else f", index={self._index}"
        return f"device(type={self._type!r}{extra})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, device):
            return (self._type, self._index) == (other._type, other._index)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((device, self._type, self._index))

    def __reduce__(self) -> tuple[Any, ...]:
        return device, (self._type, self._index)


def _known_type(kind: str, given: str) -> str:
    """``kind`` as a device type: PyTorch's ``cpu`` and ``cuda``, or a registered backend's
    name (``numpy`` and ``cupy`` spelled as the PyTorch types they stand for)."""
    if kind in BACKEND_OF_TYPE:
        return kind
    names = registered_backends()
    if kind in names:
        return TYPE_OF_BACKEND.get(kind, kind)
    others = [name for name in names if name not in TYPE_OF_BACKEND]
    raise ValueError(f"device: unknown device type in {given!r}; dparray has 'cpu' (NumPy), "
                     f"'cuda' (CuPy) and its other backends' names ({', '.join(others)}), "
                     "each optionally followed by ':index'")


def _checked_index(index: Any, given: Any) -> int:
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError(f"device: the index must be an int, got {describe(index)}")
    if index < 0:
        raise ValueError(f"device: the index must be non-negative, got {index} (in {given!r})")
    return index


def as_device(spec: Any, where: str = "device") -> device:
    """``spec`` (a ``device``, a device string, a backend name, a ``Backend``) as a
    ``device``."""
    if isinstance(spec, device):
        return spec
    if isinstance(spec, (str, int)) and not isinstance(spec, bool):
        return device(spec)
    if hasattr(spec, "xp") and hasattr(spec, "asarray"):
        return device(TYPE_OF_BACKEND.get(spec.name, spec.name))
    raise TypeError(f"{where}: expected a device ('cpu', 'cuda:0', dparray.device(...)) or a "
                    f"backend, got {describe(spec)}")


def cuda_device(spec: Any, where: str) -> device:
    """The argument of PyTorch's ``cuda(device)`` as a device: None the current CUDA device,
    an int, a string or a device that CUDA device."""
    if spec is None:
        return device("cuda")
    found = as_device(spec, where)
    if found.type != "cuda":
        raise ValueError(f"{where}: {str(found)!r} is not a CUDA device; use .to()")
    return found


def placement(spec: Any, where: str = "device") -> tuple[Backend, Any]:
    """The backend and native device that ``spec`` names: without an index, the backend's
    default device; for ``"cuda"`` (and for a ``Backend`` object) None, which means the
    current CUDA device (or wherever the backend puts new arrays), where a tensor already on
    the backend stays.

    Raises:
        BackendUnavailableError: the device's backend cannot run here (the message says why).
        ValueError: the backend has no device of that index here.
    """
    if hasattr(spec, "xp") and hasattr(spec, "asarray"):
        return spec, None  # a Backend object: its default device
    target = as_device(spec, where)
    name = BACKEND_OF_TYPE.get(target.type, target.type)
    try:
        backend = get_backend(name)
    except BackendUnavailableError as error:
        raise BackendUnavailableError(f"{where}: device {str(target)!r} is not available "
                                      f"here: {error}") from None
    if target.index is None:
        return backend, None if target.type == "cuda" else default_device(backend)
    natives = native_devices(backend)
    if target.index >= len(natives):
        raise ValueError(f"{where}: device {str(target)!r} is not available here: backend "
                         f"{backend.name!r} has {len(natives)} device(s), numbered from 0")
    return backend, natives[target.index]


def native_devices(backend: Backend) -> tuple[Any, ...]:
    """The devices of ``backend``'s namespace (``__array_namespace_info__().devices()``; the
    default device alone for a namespace without it), listed once per backend."""
    natives = _device_lists.get(backend)
    if natives is None:
        xp = backend.xp
        info = getattr(xp, "__array_namespace_info__", None)
        found = tuple(info().devices()) if info is not None else ()
        natives = found or (xp.empty((0,)).device,)
        with _lists_lock:
            _device_lists[backend] = natives
    return natives


def default_device(backend: Backend) -> Any:
    """The native device ``backend``'s namespace puts new arrays on: the namespace's
    ``default_device()``, else the first it lists."""
    info = getattr(backend.xp, "__array_namespace_info__", None)
    if info is not None:
        found = info().default_device()
        if found is not None:
            return found
    return native_devices(backend)[0]


def device_of(backend: Backend, array: Any) -> device:
    """The ``device`` of an array of ``backend``: ``cpu`` for NumPy, ``cuda:N`` for CuPy (with
    its index, as PyTorch reports CUDA tensors), and for other backends their name, with the
    index of the namespace's device unless it is the default one (the first listed)."""
    kind = TYPE_OF_BACKEND.get(backend.name, backend.name)
    natives = native_devices(backend)
    native = array.device
    index = next((i for i, d in enumerate(natives) if d == native), None)
    if kind == "cuda" or (index is not None and index > 0):
        return device(kind, index)
    return device(kind)


def on_device(backend: Backend, array: Any, native: Any) -> Any:
    """``array`` on the native device ``native`` of its backend (itself when it is there, or
    when ``native`` is None: the default)."""
    if native is None or array.device == native:
        return array
    return backend.xp.asarray(array, device=native)


def parse_to(args: tuple[Any, ...], kwargs: dict[str, Any],
             where: str) -> tuple[Any, Any, bool]:
    """The arguments of PyTorch's ``to``: ``to(device)``, ``to(dtype)``, ``to(device, dtype)``,
    ``to(tensor)`` (its device and dtype), ``to(device=..., dtype=..., copy=...,
    non_blocking=...)``. Returns (the device spec or None, the dtype or None, copy); a string
    names a dtype when it is one (``"float64"``), else a device."""
    unknown = set(kwargs) - {"device", "dtype", "copy", "non_blocking"}
    if unknown:
        raise TypeError(f"{where}: unexpected keyword argument(s) {', '.join(sorted(unknown))}")
    target_device, dtype = kwargs.get("device"), kwargs.get("dtype")
    for name in ("copy", "non_blocking"):
        if not isinstance(kwargs.get(name, False), bool):
            raise TypeError(f"{where}: {name} must be a bool, got {describe(kwargs[name])}")
    if len(args) > 2:
        raise TypeError(f"{where}: expected at most a device and a dtype, got {len(args)} "
                        "positional arguments")
    for arg in args:
        if isinstance(arg, TensorBase):
            if len(args) > 1:
                raise TypeError(f"{where}: a tensor argument comes alone (its device and "
                                "dtype are taken)")
            other: Any = arg
            found_device, found_dtype = other.device, other.dtype
        elif _is_dtype(arg):
            found_device, found_dtype = None, arg
        else:
            found_device, found_dtype = arg, None
        if found_dtype is not None:
            if dtype is not None:
                raise TypeError(f"{where}: the dtype is given twice")
            dtype = found_dtype
        if found_device is not None:
            if target_device is not None:
                raise TypeError(f"{where}: the device is given twice")
            target_device = found_device
    return target_device, dtype, bool(kwargs.get("copy", False))


def _is_dtype(value: Any) -> bool:
    if isinstance(value, _dtypes.DType):
        return True
    if isinstance(value, str):
        return value in _dtypes.ALL_DTYPES
    return not (isinstance(value, (device, int)) or hasattr(value, "xp"))
