"""Where ``dparray.autocast`` takes effect: the ops listed in its ``POLICY`` cast their inputs.

``@autocast_op("linear")`` on an op's public function looks the op up in
``dparray.precision.POLICY`` once, at import (an op missing from the table is an error then),
and on each call under autocast casts every floating tensor argument of bfloat16, float16 or
float32 -- positional, keyword, or inside a list or tuple of tensors -- to the dtype the table
says, then runs the op with autocast suspended, so its own inner ops are not cast again.
Outside autocast the call costs one context-variable read.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

from dparray import dtypes as _dtypes
from dparray import precision
from dparray.ops.elementwise import astype
from dparray.tensor import Tensor

Op = TypeVar("Op", bound=Callable[..., Any])

_CASTABLE = (_dtypes.bfloat16, _dtypes.float16, _dtypes.float32)  # never float64, as PyTorch


def autocast_op(name: str) -> Callable[[Op], Op]:
    """Decorate the public function of op ``name`` (a key of ``POLICY``)."""
    rule = precision.POLICY[name]

    def decorate(function: Op) -> Op:
        @functools.wraps(function)
        def cast_then_run(*args: Any, **kwargs: Any) -> Any:
            low = precision.active_dtype()
            if low is None:
                return function(*args, **kwargs)
            target = low if rule == precision.LOW else _dtypes.float32
            args = tuple(_cast(value, target) for value in args)
            kwargs = {key: _cast(value, target) for key, value in kwargs.items()}
            with precision.suspended():
                return function(*args, **kwargs)

        cast_then_run.autocast_name = name  # type: ignore[attr-defined]
        return cast(Op, cast_then_run)

    return decorate


def _cast(value: Any, target: _dtypes.DType) -> Any:
    if isinstance(value, Tensor):
        dtype = value.dtype
        return astype(value, target) if dtype is not target and dtype in _CASTABLE else value
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], Tensor):
        return type(value)(_cast(item, target) for item in value)
    return value
