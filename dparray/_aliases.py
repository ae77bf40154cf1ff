"""PyTorch's argument names as aliases of the array API's: ``dim=`` for ``axis=``,
``keepdim=`` for ``keepdims=``.

One mechanism for every op: ``torch_names(function)`` wraps a function whose parameters are
called ``axis``, ``axis0``, ``start_axis``, ``axes``, ``keepdims``... so that it also takes
``dim``, ``dim0``, ``start_dim``, ``dims``, ``keepdim``. ``dparray/ops/__init__.py`` applies it
to every public op and ``dparray/tensor_methods.py`` to every Tensor method, once, at import;
a function without such parameters is returned unchanged. Passing a name and its alias
together is a TypeError, as passing one argument twice is.

A call that uses no alias pays one extra Python call and one set test (about 0.1 us).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_PARTS = (("axis", "dim"), ("axes", "dims"), ("keepdims", "keepdim"))
EXTRA_ALIASES: Mapping[str, Mapping[str, str]] = {
    "flip": {"dims": "axis"},
    "roll": {"dims": "axis", "shifts": "shift"},
}
"""PyTorch's names that the rule above does not derive, by function name."""


def aliases_of(function: Callable[..., Any]) -> dict[str, str]:
    """The PyTorch names ``function`` should accept, each mapped to its own parameter."""
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):  # builtins without a signature
        return {}
    found: dict[str, str] = {}
    for name, parameter in parameters.items():
        if parameter.kind in (parameter.VAR_KEYWORD, parameter.POSITIONAL_ONLY):
            continue
        alias = name
        for ours, theirs in _PARTS:
            if name == ours or name.startswith(ours) or name.endswith("_" + ours):
                alias = name.replace(ours, theirs)
                break
        if alias != name and alias not in parameters:
            found[alias] = name
    for alias, name in EXTRA_ALIASES.get(getattr(function, "__name__", ""), {}).items():
        if name in parameters and alias not in parameters:
            found[alias] = name
    return found


def torch_names(function: F) -> F:
    """``function``, also taking PyTorch's names for its axis arguments (see the module);
    ``function`` itself when it has none."""
    aliases = aliases_of(function)
    if not aliases:
        return function
    names = frozenset(aliases)
    parameters = inspect.signature(function).parameters
    trailing = {name for name, p in parameters.items() if p.kind == p.VAR_POSITIONAL}
    where = getattr(function, "__qualname__", getattr(function, "__name__", "function"))

    @functools.wraps(function)
    def accepting_torch_names(*args: Any, **kwargs: Any) -> Any:
        if kwargs and not names.isdisjoint(kwargs):
            for alias in names.intersection(kwargs):
                name = aliases[alias]
                if name in kwargs:
                    raise TypeError(f"{where}() got both {name}= and its alias {alias}=; "
                                    "pass one")
                if name in trailing:  # permute(*axes) called as permute(dims=(1, 0))
                    args = (*args, kwargs.pop(alias))
                else:
                    kwargs[name] = kwargs.pop(alias)
        return function(*args, **kwargs)

    accepting_torch_names.torch_aliases = aliases  # type: ignore[attr-defined]
    return accepting_torch_names  # type: ignore[return-value]


def with_torch_names(namespace: dict[str, Any], names: list[str]) -> None:
    """Wrap each function ``namespace[name]`` with ``torch_names``, in place."""
    for name in names:
        value = namespace[name]
        if inspect.isfunction(value):
            namespace[name] = torch_names(value)
