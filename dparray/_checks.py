"""Argument checks shared by the whole library: one wording, one exception type per mistake.

A value of the wrong *type* is a ``TypeError``; a value of the right type but outside what is
allowed (a negative size, a NaN learning rate, an unknown mode) is a ``ValueError``. Every
message names where the check ran, the argument, what was expected and what was given, so
``check_int(3.0, "num_workers", "DataParallel")`` says
``DataParallel: num_workers must be an int, got 3.0 (float)``.

Check each argument once, where it enters the library (the module's constructor, or the
functional form when there is no module); the functions below return the checked value so a
check and a conversion read as one line.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any


class TensorBase:
    """The base class of ``dparray.Tensor``, declared here so that the checks (and anything
    else below ``tensor.py`` in the import order) recognise a tensor with one ``isinstance``
    without importing it. It has no members of its own."""

    __slots__ = ()


def describe(value: Any) -> str:
    """``value`` for an error message: its repr (shortened) and, for non-builtins, its type."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    kind = type(value).__name__
    return text if kind in ("int", "str", "NoneType", "bool") else f"{text} ({kind})"


def check_int(value: Any, name: str, where: str, *, minimum: int | None = None,
              maximum: int | None = None) -> int:
    """``value`` as an int: a TypeError unless it is an int (bools are not), a ValueError
    outside ``[minimum, maximum]``."""
    if isinstance(value, bool) or not isinstance(value, int):
        if hasattr(value, "__index__") and not isinstance(value, bool) and not _is_tensor(value) \
                and getattr(value, "dtype", None) != "bool":
            value = value.__index__()  # NumPy integers and other integer scalars
        else:
            raise TypeError(f"{where}: {name} must be an int, got {describe(value)}")
    _check_range(value, name, where, minimum, maximum)
    return int(value)


def check_number(value: Any, name: str, where: str, *, minimum: float | None = None,
                 maximum: float | None = None, below: float | None = None,
                 above: float | None = None, finite: bool = True) -> float:
    """``value`` as a float: a TypeError unless it is a real number (an int or float, not a
    bool), a ValueError if it is NaN or infinite (unless ``finite=False``) or outside the
    bounds (``minimum``/``maximum`` inclusive, ``above``/``below`` exclusive)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        usable = hasattr(value, "__float__") and not isinstance(value, (bool, str)) \
            and not _is_tensor(value) and getattr(value, "dtype", None) != "bool"
        if not usable:
            raise TypeError(f"{where}: {name} must be a number, got {describe(value)}")
        value = float(value)  # NumPy scalars
    try:
        number = float(value)
    except OverflowError:
        raise ValueError(f"{where}: {name} must be a finite number, got {value!r:.60}") from None
    if math.isnan(number) or (finite and math.isinf(number)):
        raise ValueError(f"{where}: {name} must be a finite number, got {value!r}")
    _check_range(number, name, where, minimum, maximum)
    if below is not None and not number < below:
        raise ValueError(f"{where}: {name} must be less than {below}, got {value!r}")
    if above is not None and not number > above:
        raise ValueError(f"{where}: {name} must be greater than {above}, got {value!r}")
    return number


def check_probability(value: Any, name: str, where: str, *, allow_one: bool = False) -> float:
    """A probability in ``[0, 1)`` (``[0, 1]`` with ``allow_one``)."""
    number = check_number(value, name, where)
    if not (0.0 <= number <= 1.0 if allow_one else 0.0 <= number < 1.0):
        interval = "[0, 1]" if allow_one else "[0, 1)"
        raise ValueError(f"{where}: {name} must be in {interval}, got {value!r}")
    return number


def check_choice(value: Any, name: str, where: str, choices: Collection[Any]) -> Any:
    """``value`` itself when it is one of ``choices``, else a ValueError listing them (a
    TypeError when it is not even of the choices' type)."""
    kinds = {type(c) for c in choices}
    if kinds and not isinstance(value, tuple(kinds)):
        raise TypeError(f"{where}: {name} must be one of {_listing(choices)}, got "
                        f"{describe(value)}")
    if value not in choices:
        raise ValueError(f"{where}: {name} must be one of {_listing(choices)}, got {value!r}")
    return value


def check_bool(value: Any, name: str, where: str) -> bool:
    """``value`` when it is a bool, else a TypeError."""
    if not isinstance(value, bool):
        raise TypeError(f"{where}: {name} must be a bool, got {describe(value)}")
    return value


def check_tensor(value: Any, name: str, where: str) -> Any:
    """``value`` when it is a ``dparray.Tensor``, else a TypeError."""
    if not _is_tensor(value):
        raise TypeError(f"{where}: {name} must be a Tensor, got {describe(value)}")
    return value


def check_embedding_table(value: Any, name: str, where: str) -> Any:
    """``value`` must be a floating-point ``(num_embeddings, embedding_dim)`` tensor: the table
    an embedding layer is made from (``from_pretrained``)."""
    check_tensor(value, name, where)
    if value.ndim != 2:
        raise ValueError(f"{where}: {name} must be 2-dimensional (num_embeddings, "
                         f"embedding_dim), got shape {value.shape}")
    if not value.dtype.is_floating:
        raise TypeError(f"{where}: {name} must be floating, got {value.dtype.name}")
    return value


def check_int_tuple(value: Any, name: str, where: str, length: int, *,
                    minimum: int | None = None) -> tuple[int, ...]:
    """An int (repeated ``length`` times) or a sequence of ``length`` ints, as a tuple:
    PyTorch's ``kernel_size=3`` or ``kernel_size=(3, 5)``."""
    if isinstance(value, (list, tuple)):
        if len(value) != length:
            raise ValueError(f"{where}: {name} must be an int or {length} ints, got {value!r}")
        return tuple(check_int(v, name, where, minimum=minimum) for v in value)
    return (check_int(value, name, where, minimum=minimum),) * length


def normalize_axis(axis: Any, ndim: int, op: str) -> int:
    """One axis in ``[-ndim, ndim)`` as a non-negative int (a TypeError for a non-int)."""
    axis = check_int(axis, "axis", op)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{op}: axis {axis} is out of range for a tensor with {ndim} dimensions")
    return axis % ndim


def normalize_axes(axis: Any, ndim: int, op: str) -> tuple[int, ...]:
    """``axis`` (None, an int or a sequence of ints) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    result = [normalize_axis(a, ndim, op) for a in axes]
    if len(set(result)) != len(result):
        raise ValueError(f"{op}: repeated axis in {axis!r}")
    return tuple(sorted(result))


def _check_range(value: float, name: str, where: str, minimum: float | None,
                 maximum: float | None) -> None:
    if minimum is not None and value < minimum:
        raise ValueError(f"{where}: {name} must be at least {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{where}: {name} must be at most {maximum}, got {value!r}")


def _listing(choices: Collection[Any]) -> str:
    return ", ".join(repr(c) for c in choices)


def _is_tensor(value: Any) -> bool:
    return isinstance(value, TensorBase)
