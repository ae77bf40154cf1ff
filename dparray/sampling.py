"""PyTorch's random functions: randint, the ``*_like`` draws, bernoulli, multinomial, normal.

Each takes ``generator=`` (a ``dparray.Generator``) where PyTorch does, else draws from the
current streams, and ``device=`` where PyTorch does. The draws are dparray's own (the same
distributions as PyTorch's, not PyTorch's numbers). Their results are constants: PyTorch's
gradients through ``bernoulli``, ``multinomial`` and ``normal`` are zero or undefined.

Bad probabilities and standard deviations are refused before anything is drawn, which reads
their extremes on the host once per call (on a GPU, a synchronisation), as PyTorch's checks do.
"""

from __future__ import annotations

import math
from typing import Any

from dparray import dtypes as _dtypes
from dparray._checks import check_int, check_number, check_probability, check_tensor, describe
from dparray.backend import Backend, RandomGenerator
from dparray.creation import _finish, _like, _shape, _target, rand, randn
from dparray.devices import on_device
from dparray.generator import Generator, stream
from dparray.tensor import Tensor

__all__ = ["bernoulli", "multinomial", "normal", "rand_like", "randint", "randint_like",
           "randn_like"]

_EXACT_INTEGERS = 2**53  # float64 holds every integer up to this: the widest range drawn evenly


def randint(low: int, high: int | None = None, size: Any = None, *,
            generator: Generator | None = None, dtype: Any = None, device: Any = None,
            backend: str | Backend | None = None, requires_grad: bool = False,
            seed: int | None = None) -> Tensor:
    """Integers drawn uniformly from ``[low, high)`` in the shape ``size``, PyTorch's
    ``randint(low=0, high, size)``: ``randint(10, (3,))`` and ``randint(5, 10, (3,))``.
    int64 unless ``dtype`` says otherwise.

    Examples:
        >>> import dparray as dp
        >>> x = dp.randint(5, 10, (4,), generator=dp.Generator().manual_seed(0))
        >>> x.dtype, all(5 <= v < 10 for v in x.tolist())
        (dparray.int64, True)
    """
    if size is None:
        low, high, size = 0, low, high
    if size is None:
        raise TypeError("randint: the size is missing; call randint(high, size) or "
                        "randint(low, high, size)")
    shape = _shape(tuple(size) if isinstance(size, (list, tuple)) else (size,), "randint")
    target, native, place = _target(backend, _dtypes.int64 if dtype is None else dtype,
                                    device, "randint")
    draws = stream(target, generator, seed, "randint")
    array = _integers(target, draws, low, high, shape, native, "randint")
    return _finish(Tensor(on_device(target, array, place), target), requires_grad)


def randint_like(x: Tensor, low: int, high: int | None = None, *,
                 generator: Generator | None = None, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Tensor:
    """Integers from ``[low, high)`` (``randint_like(x, high)``: from ``[0, high)``) in ``x``'s
    shape, with ``x``'s dtype and device unless given, as PyTorch's."""
    check_tensor(x, "x", "randint_like")
    if high is None:
        low, high = 0, low
    return randint(low, high, x.shape, generator=generator, **_like(x, dtype, device),
                   requires_grad=requires_grad)


def rand_like(x: Tensor, *, generator: Generator | None = None, dtype: Any = None,
              device: Any = None, requires_grad: bool = False) -> Tensor:
    """Uniform samples from ``[0, 1)`` in ``x``'s shape, dtype and device (unless given)."""
    check_tensor(x, "x", "rand_like")
    return rand(x.shape, generator=generator, **_like(x, dtype, device),
                requires_grad=requires_grad)


def randn_like(x: Tensor, *, generator: Generator | None = None, dtype: Any = None,
               device: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples in ``x``'s shape, dtype and device (unless given)."""
    check_tensor(x, "x", "randn_like")
    return randn(x.shape, generator=generator, **_like(x, dtype, device),
                 requires_grad=requires_grad)


def bernoulli(probabilities: Tensor, p: float | None = None, *,
              generator: Generator | None = None) -> Tensor:
    """1 with probability ``probabilities`` (each entry in ``[0, 1]``), else 0, in its shape
    and floating dtype; with ``p``, every entry is 1 with probability ``p`` instead, as
    PyTorch's ``bernoulli(input, p)``.

    Examples:
        >>> import dparray as dp
        >>> dp.bernoulli(dp.tensor([0.0, 1.0, 1.0])).tolist()
        [0.0, 1.0, 1.0]
    """
    check_tensor(probabilities, "input", "bernoulli")
    if not probabilities.dtype.is_floating:
        raise TypeError(f"bernoulli: input must be a floating tensor (the probabilities), got "
                        f"{probabilities.dtype.name}")
    backend, data = probabilities.backend, probabilities.data
    xp = backend.xp
    draws = stream(backend, generator, None, "bernoulli")
    if p is not None:
        chance = check_probability(p, "p", "bernoulli", allow_one=True)
        ones = draws.bernoulli(tuple(data.shape), chance)
    else:
        low, high = _extremes(xp, data)
        if not (low >= 0.0 and high <= 1.0):  # NaN fails too
            raise ValueError(f"bernoulli: the probabilities must lie in [0, 1], found values "
                             f"from {low} to {high}")
        ones = draws.uniform(tuple(data.shape), data.dtype) < data
    return Tensor(on_device(backend, xp.astype(ones, data.dtype), data.device), backend)


def multinomial(weights: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> Tensor:
    """Category indices drawn ``num_samples`` times from each row of ``weights`` (1-D: one
    distribution; 2-D: one per row), each category with a probability proportional to its
    non-negative weight: int64, of shape ``(num_samples,)`` or ``(rows, num_samples)``.
    Without ``replacement`` a category is drawn at most once per row, so a row needs at least
    ``num_samples`` non-zero weights (a ValueError otherwise; PyTorch documents the same
    limit).

    Examples:
        >>> import dparray as dp
        >>> dp.multinomial(dp.tensor([0.0, 3.0, 0.0, 1.0]), 2).sort().tolist()
        [1, 3]
    """
    where = "multinomial"
    check_tensor(weights, "input", where)
    if not weights.dtype.is_floating:
        raise TypeError(f"{where}: input must be a floating tensor of weights, got "
                        f"{weights.dtype.name}")
    if weights.ndim not in (1, 2):
        raise ValueError(f"{where}: input must be 1-D or 2-D, got shape {weights.shape}")
    count = check_int(num_samples, "num_samples", where, minimum=1)
    if not isinstance(replacement, bool):
        raise TypeError(f"{where}: replacement must be a bool, got {describe(replacement)}")
    backend = weights.backend
    xp = backend.xp
    rows = xp.reshape(weights.data, (-1, weights.shape[-1]))
    _check_weights(xp, rows, count, replacement)
    draws = stream(backend, generator, None, where)
    wide = _widest_float(backend, rows.dtype)
    rows = xp.astype(rows, wide)
    if replacement:
        picked = _with_replacement(xp, draws, rows, count, wide)
    else:
        picked = _without_replacement(xp, draws, rows, count, wide)
    picked = xp.astype(picked, xp.int64)
    shape = (count,) if weights.ndim == 1 else (weights.shape[0], count)
    return Tensor(on_device(backend, xp.reshape(picked, shape), weights.data.device), backend)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *,
           generator: Generator | None = None, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """Normal samples of mean ``mean`` and standard deviation ``std``, PyTorch's ``normal``:
    either may be a tensor (the result has their broadcast shape, dtype and device), or both
    numbers with ``size`` given. ``std`` must not be negative.

    Examples:
        >>> import dparray as dp
        >>> dp.normal(dp.tensor([0.0, 100.0]), 0.0).tolist()
        [0.0, 100.0]
        >>> dp.normal(2.0, 3.0, (2, 3)).shape
        (2, 3)
    """
    where = "normal"
    given = [t for t in (mean, std) if isinstance(t, Tensor)]
    if not given:
        if size is None:
            raise TypeError("normal: with a number for both mean and std, give size")
        m = check_number(mean, "mean", where)
        s = check_number(std, "std", where, minimum=0.0)
        noise = randn(_shape((size,), where), dtype=dtype, device=device, generator=generator)
        return _finish(m + s * noise, requires_grad)
    if size is not None or dtype is not None or device is not None:
        raise TypeError("normal: size, dtype and device go with numbers for mean and std; a "
                        "tensor mean or std gives its own shape, dtype and device")
    first = given[0]
    floating = next((t.dtype for t in given if t.dtype.is_floating), None)
    if floating is None:
        raise TypeError(f"normal: a tensor mean or std must be floating, got "
                        f"{first.dtype.name}")
    m_data = _as_array(mean, first, floating, "mean")
    s_data = _as_array(std, first, floating, "std")
    xp = first.backend.xp
    if isinstance(s_data, float):
        check_number(s_data, "std", where, minimum=0.0)
    elif math.prod(s_data.shape) and not float(xp.min(s_data)) >= 0.0:
        raise ValueError(f"normal: std must not be negative, found {float(xp.min(s_data))}")
    shape = tuple(xp.broadcast_arrays(*(a for a in (m_data, s_data)
                                        if not isinstance(a, float)))[0].shape)
    noise = randn(shape, dtype=floating, device=first.device, generator=generator).data
    return _finish(Tensor(m_data + s_data * noise, first.backend), requires_grad)


def _as_array(value: Any, like: Tensor, dtype: _dtypes.DType, name: str) -> Any:
    """A mean or std as an array of ``like``'s backend in ``dtype``, or a Python float."""
    if isinstance(value, Tensor):
        if value.backend is not like.backend:
            raise ValueError(f"normal: mean and std are on backends {like.backend.name!r} and "
                             f"{value.backend.name!r}; move one with .to(...)")
        return value.astype(dtype).data if value.dtype is not dtype else value.data
    return check_number(value, name, "normal")


def _integers(backend: Backend, draws: RandomGenerator, low: Any, high: Any,
              shape: tuple[int, ...], native: Any, where: str) -> Any:
    """Integers uniform in ``[low, high)``: the floor of a float64 uniform draw scaled to the
    range (every integer of a range up to 2**53 wide equally likely)."""
    low = check_int(low, "low", where)
    high = check_int(high, "high", where)
    if high <= low:
        raise ValueError(f"{where}: high ({high}) must be greater than low ({low})")
    width = high - low
    if width > _EXACT_INTEGERS:
        raise ValueError(f"{where}: the range [{low}, {high}) is wider than 2**53, more than "
                         "dparray draws evenly")
    lo, hi = _dtypes.value_range(_dtypes.from_native(backend, native))
    if low < lo or high - 1 > hi:
        raise ValueError(f"{where}: the range [{low}, {high}) does not fit "
                         f"{_dtypes.from_native(backend, native).name}")
    xp = backend.xp
    wide = _widest_float(backend, None)
    steps = xp.floor(draws.uniform(shape, wide) * float(width))
    steps = xp.clip(steps, 0.0, float(width - 1))  # a draw just below 1 may round up
    return xp.astype(xp.astype(steps, xp.int64) + low, native)


def _widest_float(backend: Backend, fallback: Any) -> Any:
    """float64 where the backend has it, else ``fallback`` (or float32)."""
    try:
        return _dtypes.native_dtype(backend, _dtypes.float64)
    except TypeError:
        return fallback if fallback is not None else _dtypes.native_dtype(backend,
                                                                          _dtypes.float32)


def _extremes(xp: Any, array: Any) -> tuple[float, float]:
    """The smallest and largest entry (NaN when there is one), read on the host; (0, 0) for
    an empty array."""
    if not math.prod(array.shape):
        return 0.0, 0.0
    if bool(xp.any(xp.isnan(array))):
        return math.nan, math.nan
    return float(xp.min(array)), float(xp.max(array))


def _check_weights(xp: Any, rows: Any, count: int, replacement: bool) -> None:
    where = "multinomial"
    if rows.shape[-1] == 0:
        raise ValueError(f"{where}: the weights are empty: there is no category to draw")
    low, high = _extremes(xp, rows)
    if not (low >= 0.0 and math.isfinite(high)):
        raise ValueError(f"{where}: the weights must be finite and non-negative, found values "
                         f"from {low} to {high}")
    if not float(xp.min(xp.sum(rows, axis=-1))) > 0.0:
        raise ValueError(f"{where}: every row of weights needs a positive sum (one is all "
                         "zeros)")
    if not replacement:
        least = int(xp.min(xp.sum(xp.astype(rows > 0, xp.int64), axis=-1)))
        if count > least:
            raise ValueError(f"{where}: without replacement, {count} samples need at least "
                             f"{count} non-zero weights per row; a row has {least}")


def _with_replacement(xp: Any, draws: RandomGenerator, rows: Any, count: int,
                      wide: Any) -> Any:
    """Inverse-CDF sampling per row: the first category whose cumulative weight (normalised
    so that the last is exactly 1) exceeds a uniform draw; zero weights are never drawn."""
    cumulative = xp.cumulative_sum(rows, axis=-1)
    cumulative = cumulative / cumulative[:, -1:]
    uniform = draws.uniform((rows.shape[0], count), wide)
    picks = [xp.searchsorted(cumulative[r, :], uniform[r, :], side="right")
             for r in range(rows.shape[0])]
    return xp.stack(picks)


def _without_replacement(xp: Any, draws: RandomGenerator, rows: Any, count: int,
                         wide: Any) -> Any:
    """The exponential race (as PyTorch draws it): each category's exponential draw divided
    by its weight, the ``count`` smallest win, in order; zero weights never win."""
    uniform = draws.uniform(tuple(rows.shape), wide)
    exponential = -xp.log1p(-uniform)
    positive = rows > 0
    keys = xp.where(positive, exponential / xp.where(positive, rows, 1.0), math.inf)
    return xp.argsort(keys, axis=-1, stable=True)[:, :count]

