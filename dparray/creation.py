"""Factories: tensors from data, constants, ranges and random draws.

Every factory takes ``dtype`` (a dparray dtype, its name, or a native dtype), ``device``
(PyTorch's: ``"cpu"``, ``"cuda:1"``, a ``dparray.device``; see ``dparray/devices.py``) or
``backend`` (name or object; the current backend when both are omitted) and
``requires_grad``. Python floats become the default floating dtype (float32 unless changed);
an array that has a dtype keeps it, so a float64 NumPy array stays float64.
"""

from __future__ import annotations

import itertools
from typing import Any

from dparray import devices as _devices
from dparray import dtypes as _dtypes
from dparray._checks import check_bool, check_int, check_number, check_tensor, describe
from dparray.backend import Backend, get_backend
from dparray.generator import Generator, stream
from dparray.tensor import Tensor


def tensor(data: Any, dtype: Any = None, requires_grad: bool = False,
           backend: str | Backend | None = None, *, device: Any = None) -> Tensor:
    """A tensor holding ``data`` (nested lists, a number, a NumPy or other backend array).

    Data that cannot be a dparray tensor is refused with its reason: a TypeError for values
    that are not numbers (strings, ``None``, complex numbers, arbitrary objects) or arrays of a
    dtype dparray does not have; a ValueError for ragged nested lists and for Python integers
    beyond int64 (NumPy would silently store them as uint64, float64 or objects).

    Examples:
        >>> import dparray
        >>> t = dparray.tensor([[1.0, 2.0]], requires_grad=True)
        >>> t.shape, t.dtype, t.is_variable
        ((1, 2), dparray.float32, True)
    """
    if isinstance(data, Tensor):
        source = data.detach()
        if backend is not None or device is not None:
            target, _ = _placed(backend, device, "tensor")
            source = source.to(target if device is None else device)
        result = source if dtype is None else source.astype(dtype)
        return _finish(Tensor(result.data, result.backend), requires_grad)
    target, place = _placed(backend, device, "tensor")
    native = None if dtype is None else _dtypes.native_dtype(target, dtype)
    if not _is_array_like(data):
        problem = _python_data_problem(data, int64_only=dtype is None)
        if problem is not None:
            raise problem
    array = _convert(target, data, native)
    if dtype is None and not hasattr(data, "dtype"):
        array = _with_default_float(target, array)
    return _finish(Tensor(_devices.on_device(target, array, place), target), requires_grad)


def zeros(*shape: Any, dtype: Any = None, requires_grad: bool = False,
          backend: str | Backend | None = None, device: Any = None) -> Tensor:
    """A tensor of zeros; ``zeros(2, 3)`` and ``zeros((2, 3))`` alike."""
    size = _shape(shape, "zeros")
    target, native, place = _target(backend, dtype, device, "zeros")
    return _finish(Tensor(target.xp.zeros(size, dtype=native, device=place), target),
                   requires_grad)


def ones(*shape: Any, dtype: Any = None, requires_grad: bool = False,
         backend: str | Backend | None = None, device: Any = None) -> Tensor:
    """A tensor of ones; ``ones(2, 3)`` and ``ones((2, 3))`` alike."""
    size = _shape(shape, "ones")
    target, native, place = _target(backend, dtype, device, "ones")
    return _finish(Tensor(target.xp.ones(size, dtype=native, device=place), target),
                   requires_grad)


def empty(*shape: Any, dtype: Any = None, requires_grad: bool = False,
          backend: str | Backend | None = None, device: Any = None) -> Tensor:
    """PyTorch's ``empty``: a tensor of ``shape`` whose values are not meant to be read. Its
    values are zeros (dparray never hands out uninitialised memory: arrays are not written
    into later, so it would only save one fill, and would make results depend on garbage)."""
    size = _shape(shape, "empty")
    target, native, place = _target(backend, dtype, device, "empty")
    return _finish(Tensor(target.xp.zeros(size, dtype=native, device=place), target),
                   requires_grad)


def full(shape: Any, fill_value: float | int | bool, dtype: Any = None,
         requires_grad: bool = False, backend: str | Backend | None = None, *,
         device: Any = None) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value`` (its dtype follows the value).

    A value that ``dtype`` cannot hold is a ValueError rather than a silent wrap-around:
    ``full((2,), 1e6, dtype="int8")``, ``full((2,), 1.5, dtype="int64")``.

    Examples:
        >>> import dparray
        >>> dparray.full((2,), 7).tolist()
        [7, 7]
    """
    size = _shape((shape,), "full")
    if dtype is None:
        dtype = _scalar_dtype(fill_value, "fill_value", "full")
    target, native, place = _target(backend, dtype, device, "full")
    value = _dtypes.as_scalar(fill_value, _dtypes.from_native(target, native), "fill_value",
                              "full")
    array = target.xp.full(size, value, dtype=native, device=place)
    return _finish(Tensor(array, target), requires_grad)


def zeros_like(x: Tensor, dtype: Any = None, requires_grad: bool = False, *,
               device: Any = None) -> Tensor:
    """Zeros of ``x``'s shape, dtype and device (unless given)."""
    check_tensor(x, "x", "zeros_like")
    return zeros(x.shape, **_like(x, dtype, device), requires_grad=requires_grad)


def ones_like(x: Tensor, dtype: Any = None, requires_grad: bool = False, *,
              device: Any = None) -> Tensor:
    """Ones of ``x``'s shape, dtype and device (unless given)."""
    check_tensor(x, "x", "ones_like")
    return ones(x.shape, **_like(x, dtype, device), requires_grad=requires_grad)


def empty_like(x: Tensor, dtype: Any = None, requires_grad: bool = False, *,
               device: Any = None) -> Tensor:
    """``empty`` of ``x``'s shape, dtype and device (unless given): zeros."""
    check_tensor(x, "x", "empty_like")
    return empty(x.shape, **_like(x, dtype, device), requires_grad=requires_grad)


def full_like(x: Tensor, fill_value: float | int | bool, dtype: Any = None,
              requires_grad: bool = False, *, device: Any = None) -> Tensor:
    """``fill_value`` in ``x``'s shape, with ``x``'s dtype and device (unless given)."""
    check_tensor(x, "x", "full_like")
    return full(x.shape, fill_value, **_like(x, dtype, device), requires_grad=requires_grad)


def arange(start: float, stop: float | None = None, step: float = 1, dtype: Any = None,
           requires_grad: bool = False, backend: str | Backend | None = None, *,
           device: Any = None) -> Tensor:
    """Evenly spaced values in ``[start, stop)``; int64 for ints, the default float otherwise.

    ``step`` must not be zero, and the bounds and step must be finite numbers.
    """
    if stop is None:
        start, stop = 0, start
    for name, value in (("start", start), ("stop", stop), ("step", step)):
        check_number(value, name, "arange")
    if step == 0:
        raise ValueError("arange: step must not be zero")
    if dtype is None:
        integral = all(hasattr(v, "__index__") for v in (start, stop, step))
        dtype = _dtypes.int64 if integral else _dtypes.get_default_dtype()
    target, native, place = _target(backend, dtype, device, "arange")
    array = target.xp.arange(start, stop, step, dtype=native, device=place)
    return _finish(Tensor(array, target), requires_grad)


def eye(n_rows: int, n_cols: int | None = None, *, k: int = 0, dtype: Any = None,
        requires_grad: bool = False, backend: str | Backend | None = None,
        device: Any = None) -> Tensor:
    """An ``n_rows x n_cols`` matrix (square when ``n_cols`` is None) with ones on diagonal
    ``k`` (0 the main one, positive above it) and zeros elsewhere: PyTorch's ``eye(n, m)``
    with the array API's ``k``. The default float dtype unless ``dtype`` says otherwise.

    Examples:
        >>> import dparray
        >>> dparray.eye(2, 3, k=1).tolist()
        [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    rows = check_int(n_rows, "n_rows", "eye", minimum=0)
    columns = rows if n_cols is None else check_int(n_cols, "n_cols", "eye", minimum=0)
    k = check_int(k, "k", "eye")
    target, native, place = _target(backend, dtype, device, "eye")
    array = target.xp.eye(rows, columns, k=k, dtype=native, device=place)
    return _finish(Tensor(array, target), requires_grad)


def linspace(start: float, stop: float, num: int, *, endpoint: bool = True, dtype: Any = None,
             requires_grad: bool = False, backend: str | Backend | None = None,
             device: Any = None) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop``, ``stop`` included unless
    ``endpoint=False`` (the array API's ``linspace``; PyTorch calls ``num`` ``steps``). The
    default float dtype unless ``dtype`` says otherwise; an integer dtype gives PyTorch's
    integers: the bounds truncated to integers, the steps between them computed in double
    precision and truncated.

    Examples:
        >>> import dparray
        >>> dparray.linspace(0.0, 1.0, 5).tolist()
        [0.0, 0.25, 0.5, 0.75, 1.0]
        >>> dparray.linspace(0, 10, 5, dtype="int64").tolist()
        [0, 2, 5, 7, 10]
    """
    start = check_number(start, "start", "linspace")
    stop = check_number(stop, "stop", "linspace")
    num = check_int(num, "num", "linspace", minimum=0)
    endpoint = check_bool(endpoint, "endpoint", "linspace")
    target, native, place = _target(backend, dtype, device, "linspace")
    kind = _dtypes.from_native(target, native)
    if kind.is_floating:
        array = target.xp.linspace(start, stop, num, dtype=native, endpoint=endpoint,
                                   device=place)
    elif kind.kind == "bool":
        raise TypeError(f"linspace: dtype must be a number dtype, got {describe(dtype)}")
    else:
        values = _integer_linspace(int(start), int(stop), num + (not endpoint))[:num]
        low, high = _dtypes.value_range(kind)
        if values and not low <= min(values) <= max(values) <= high:
            raise ValueError(f"linspace: values from {start} to {stop} do not fit {kind.name}")
        array = target.xp.asarray(values, dtype=native, device=place)
    return _finish(Tensor(array, target), requires_grad)


def _integer_linspace(start: int, stop: int, num: int) -> list[int]:
    """PyTorch's integer ``linspace``: from both ends towards the middle, in double
    precision, each value truncated (so the ends are exact)."""
    if num == 1:
        return [start]
    step = (stop - start) / (num - 1)
    halfway = num // 2
    return [int(start + step * i) if i < halfway else int(stop - step * (num - i - 1))
            for i in range(num)]


def randn(*shape: Any, dtype: Any = None, seed: int | None = None, requires_grad: bool = False,
          backend: str | Backend | None = None, device: Any = None,
          generator: Generator | None = None) -> Tensor:
    """Standard normal samples; from ``generator`` or ``seed`` when given, else from the
    current stream."""
    size = _shape(shape, "randn")
    target, native, place = _target(backend, dtype, device, "randn")
    _require_floating(target, native, "randn")
    array = stream(target, generator, seed, "randn").normal(size, native)
    return _finish(Tensor(_devices.on_device(target, array, place), target), requires_grad)


def rand(*shape: Any, dtype: Any = None, seed: int | None = None, requires_grad: bool = False,
         backend: str | Backend | None = None, device: Any = None,
         generator: Generator | None = None) -> Tensor:
    """Uniform samples from ``[0, 1)``; from ``generator`` or ``seed`` when given, else the
    current stream."""
    size = _shape(shape, "rand")
    target, native, place = _target(backend, dtype, device, "rand")
    _require_floating(target, native, "rand")
    array = stream(target, generator, seed, "rand").uniform(size, native)
    return _finish(Tensor(_devices.on_device(target, array, place), target), requires_grad)


def randperm(n: int, seed: int | None = None, backend: str | Backend | None = None, *,
             generator: Generator | None = None, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype`` says otherwise); from
    ``generator`` or ``seed`` when given, else the current stream."""
    n = check_int(n, "n", "randperm", minimum=0)
    target, native, place = _target(backend, _dtypes.int64 if dtype is None else dtype,
                                    device, "randperm")
    array = stream(target, generator, seed, "randperm").permutation(n)
    if array.dtype != native:
        array = target.xp.astype(array, native)
    return _finish(Tensor(_devices.on_device(target, array, place), target), requires_grad)


def from_dlpack(x: Any, backend: str | Backend | None = None) -> Tensor:
    """A tensor sharing the memory of any DLPack-capable array (zero copy where possible)."""
    target = get_backend(backend)
    array = target.xp.from_dlpack(x)
    _supported_dtype(target, array, "from_dlpack")
    return Tensor(array, target)


def _placed(backend: str | Backend | None, device: Any, where: str) -> tuple[Backend, Any]:
    """The backend and native device of ``backend=`` and ``device=`` (either may be left
    out: the current backend and its default device; both must agree when both are given)."""
    if device is None:
        return get_backend(backend), None
    target, place = _devices.placement(device, where)
    if backend is not None and get_backend(backend) is not target:
        raise ValueError(f"{where}: backend={get_backend(backend).name!r} and device="
                         f"{str(_devices.as_device(device))!r} disagree; give one of them")
    return target, place


def _target(backend: str | Backend | None, dtype: Any, device: Any,
            where: str) -> tuple[Backend, Any, Any]:
    """The backend, native dtype and native device (None: the default) of a factory call."""
    target, place = _placed(backend, device, where)
    return target, _dtypes.native_dtype(target, _dtypes.get_default_dtype() if dtype is None
                                        else dtype), place


def _like(x: Tensor, dtype: Any, device: Any) -> dict[str, Any]:
    """The dtype and device arguments of a ``*_like`` factory: ``x``'s unless given."""
    return {"dtype": x.dtype if dtype is None else dtype,
            "device": x.device if device is None else device}


def _shape(args: tuple[Any, ...], where: str) -> tuple[int, ...]:
    """The shape of ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(3)``: non-negative ints."""
    shape = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
    return tuple(check_int(n, f"each size in shape {tuple(shape)!r}", where, minimum=0)
                 for n in shape)


def _scalar_dtype(value: Any, name: str, where: str) -> _dtypes.DType:
    """The dtype a Python scalar becomes: bool, int64, or the default float."""
    kind = getattr(getattr(value, "dtype", None), "kind", None)  # of NumPy scalars
    if isinstance(value, bool) or kind == "b":
        return _dtypes.bool_
    if isinstance(value, int) or kind in ("i", "u"):
        return _dtypes.int64
    if isinstance(value, float) or kind == "f":
        return _dtypes.get_default_dtype()
    raise TypeError(f"{where}: {name} must be a real number, got {describe(value)}")


_SEQUENCES = (list, tuple, range)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _is_array_like(data: Any) -> bool:
    """Whether the backend should convert ``data`` itself (arrays, NumPy scalars, DLPack)."""
    return any(hasattr(data, name) for name in
               ("dtype", "__array__", "__dlpack__", "__array_interface__"))


def _python_data_problem(data: Any, int64_only: bool) -> Exception | None:
    """Why nested Python sequences of numbers cannot become a tensor, or None when they can.

    Walks one nesting level at a time (no recursion, and per level only C-speed passes over
    the types and lengths): every level must be all sequences of one length or all values;
    values must be numbers or arrays, and, with ``int64_only``, Python ints must fit int64 (the
    dtype they would become).
    """
    level: list[Any] = [data]
    depth = 0
    while True:
        kinds = set(map(type, level))
        sequences = {kind for kind in kinds if issubclass(kind, _SEQUENCES)}
        if not sequences:
            break
        if sequences != kinds:
            return ValueError(f"tensor: the data is ragged: at nesting depth {depth} it mixes "
                              "sequences and single values")
        lengths = sorted(set(map(len, level)))
        if len(lengths) > 1:
            return ValueError(f"tensor: the data is ragged: the sequences at nesting depth "
                              f"{depth} have different lengths {lengths}")
        level = list(itertools.chain.from_iterable(level))
        depth += 1
    for kind in kinds:
        if issubclass(kind, (float, bool)):
            continue
        values: list[Any] = level if len(kinds) == 1 else [v for v in level if type(v) is kind]
        if issubclass(kind, int):
            if int64_only and not _INT64_MIN <= min(values) <= max(values) <= _INT64_MAX:
                value = next(v for v in values if not _INT64_MIN <= v <= _INT64_MAX)
                return ValueError(f"tensor: the integer {value} does not fit int64 (the "
                                  "largest integer dtype); pass a float or a dtype")
        elif not _is_array_like(values[0]):
            return TypeError(f"tensor: the data must be numbers (bool, int, float), arrays, or "
                             f"nested lists of them; found {describe(values[0])}")
    return None


def _convert(target: Backend, data: Any, native: Any) -> Any:
    """``target.asarray(data, dtype=native)``, with the backend's errors reworded as dparray's
    and the result's dtype checked to be one dparray has."""
    try:
        array = target.asarray(data, dtype=native)
    except OverflowError as error:
        raise ValueError(f"tensor: the data does not fit its dtype: {error}") from None
    except (TypeError, ValueError) as error:
        raise type(error)(f"tensor: cannot convert the data: {error}") from None
    _supported_dtype(target, array, "tensor")
    return array


def _supported_dtype(target: Backend, array: Any, where: str) -> None:
    try:
        _dtypes.dtype_of(target, array)
    except TypeError as error:
        raise TypeError(f"{where}: {error}") from None


def _with_default_float(backend: Backend, array: Any) -> Any:
    dtype = _dtypes.dtype_of(backend, array)
    default = _dtypes.get_default_dtype()
    if dtype.is_floating and dtype is not default:
        return backend.xp.astype(array, _dtypes.native_dtype(backend, default))
    return array


def _require_floating(backend: Backend, native: Any, op: str) -> None:
    if not _dtypes.from_native(backend, native).is_floating:
        raise TypeError(f"{op} draws floating values; got dtype {native}")


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.is_variable = True
    return t
