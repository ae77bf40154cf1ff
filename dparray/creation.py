"""Factories: tensors from data, constants, ranges and random draws.

Every factory takes ``dtype`` (a dparray dtype, its name, or a native dtype), ``backend`` (name
or object; the current backend when omitted) and ``requires_grad``. Python floats become the
default floating dtype (float32 unless changed); an array that has a dtype keeps it, so a
float64 NumPy array stays float64.
"""

from __future__ import annotations

from typing import Any

from dparray import dtypes as _dtypes
from dparray import random as _random
from dparray.backend import Backend, get_backend
from dparray.tensor import Tensor


def tensor(data: Any, dtype: Any = None, requires_grad: bool = False,
           backend: str | Backend | None = None) -> Tensor:
    """A tensor holding ``data`` (nested lists, a number, a NumPy or other backend array).

    Examples:
        >>> import dparray
        >>> t = dparray.tensor([[1.0, 2.0]], requires_grad=True)
        >>> t.shape, t.dtype, t.is_variable
        ((1, 2), dparray.float32, True)
    """
    if isinstance(data, Tensor):
        target = get_backend(backend) if backend is not None else data.backend
        source = data.detach() if target is data.backend else data.detach().to(target)
        result = source if dtype is None else source.astype(dtype)
        return _finish(Tensor(result.data, target), requires_grad)
    target = get_backend(backend)
    native = None if dtype is None else _dtypes.native_dtype(target, dtype)
    array = target.asarray(data, dtype=native)
    if dtype is None and not hasattr(data, "dtype"):
        array = _with_default_float(target, array)
    return _finish(Tensor(array, target), requires_grad)


def zeros(*shape: Any, dtype: Any = None, requires_grad: bool = False,
          backend: str | Backend | None = None) -> Tensor:
    """A tensor of zeros; ``zeros(2, 3)`` and ``zeros((2, 3))`` alike."""
    target, native = _target(backend, dtype)
    return _finish(Tensor(target.xp.zeros(_shape(shape), dtype=native), target), requires_grad)


def ones(*shape: Any, dtype: Any = None, requires_grad: bool = False,
         backend: str | Backend | None = None) -> Tensor:
    """A tensor of ones; ``ones(2, 3)`` and ``ones((2, 3))`` alike."""
    target, native = _target(backend, dtype)
    return _finish(Tensor(target.xp.ones(_shape(shape), dtype=native), target), requires_grad)


def full(shape: Any, fill_value: float | int | bool, dtype: Any = None,
         requires_grad: bool = False, backend: str | Backend | None = None) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value`` (its dtype follows the value)."""
    if dtype is None:
        dtype = _scalar_dtype(fill_value)
    target, native = _target(backend, dtype)
    array = target.xp.full(_shape((shape,)), fill_value, dtype=native)
    return _finish(Tensor(array, target), requires_grad)


def zeros_like(x: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Zeros of ``x``'s shape, dtype and backend."""
    return zeros(x.shape, dtype=dtype or x.dtype, requires_grad=requires_grad, backend=x.backend)


def ones_like(x: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Ones of ``x``'s shape, dtype and backend."""
    return ones(x.shape, dtype=dtype or x.dtype, requires_grad=requires_grad, backend=x.backend)


def arange(start: float, stop: float | None = None, step: float = 1, dtype: Any = None,
           requires_grad: bool = False, backend: str | Backend | None = None) -> Tensor:
    """Evenly spaced values in ``[start, stop)``; int64 for ints, the default float otherwise."""
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = _scalar_dtype(start if isinstance(start, float) else stop if isinstance(
            stop, float) else step)
    target, native = _target(backend, dtype)
    array = target.xp.arange(start, stop, step, dtype=native)
    return _finish(Tensor(array, target), requires_grad)


def randn(*shape: Any, dtype: Any = None, seed: int | None = None, requires_grad: bool = False,
          backend: str | Backend | None = None) -> Tensor:
    """Standard normal samples; from ``seed`` when given, else from the current stream."""
    target, native = _target(backend, dtype)
    _require_floating(target, native, "randn")
    array = _generator(target, seed).normal(_shape(shape), native)
    return _finish(Tensor(array, target), requires_grad)


def rand(*shape: Any, dtype: Any = None, seed: int | None = None, requires_grad: bool = False,
         backend: str | Backend | None = None) -> Tensor:
    """Uniform samples from ``[0, 1)``; from ``seed`` when given, else the current stream."""
    target, native = _target(backend, dtype)
    _require_floating(target, native, "rand")
    array = _generator(target, seed).uniform(_shape(shape), native)
    return _finish(Tensor(array, target), requires_grad)


def randperm(n: int, seed: int | None = None,
             backend: str | Backend | None = None) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64); from ``seed`` when given, else the
    current stream."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"randperm: n must be a non-negative int, got {n!r}")
    target = get_backend(backend)
    return Tensor(_generator(target, seed).permutation(n), target)


def from_dlpack(x: Any, backend: str | Backend | None = None) -> Tensor:
    """A tensor sharing the memory of any DLPack-capable array (zero copy where possible)."""
    target = get_backend(backend)
    return Tensor(target.xp.from_dlpack(x), target)


def _target(backend: str | Backend | None, dtype: Any) -> tuple[Backend, Any]:
    target = get_backend(backend)
    return target, _dtypes.native_dtype(target, _dtypes.get_default_dtype() if dtype is None
                                        else dtype)


def _shape(args: tuple[Any, ...]) -> tuple[int, ...]:
    shape = args[0] if len(args) == 1 and not isinstance(args[0], int) else args
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    for n in shape:
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"a shape needs non-negative ints, got {shape!r}")
    return shape


def _scalar_dtype(value: Any) -> _dtypes.DType:
    if isinstance(value, bool):
        return _dtypes.bool_
    if isinstance(value, int):
        return _dtypes.int64
    return _dtypes.get_default_dtype()


def _with_default_float(backend: Backend, array: Any) -> Any:
    dtype = _dtypes.dtype_of(backend, array)
    default = _dtypes.get_default_dtype()
    if dtype.is_floating and dtype is not default:
        return backend.xp.astype(array, _dtypes.native_dtype(backend, default))
    return array


def _require_floating(backend: Backend, native: Any, op: str) -> None:
    if not _dtypes.from_native(backend, native).is_floating:
        raise TypeError(f"{op} draws floating values; got dtype {native}")


def _generator(backend: Backend, seed: int | None) -> Any:
    if seed is None:
        return _random.generator(backend)
    return backend.random(_random.check_seed(seed))


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.is_variable = True
    return t
