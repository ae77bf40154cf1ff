"""PyTorch's argument names as aliases of the array API's: ``dim=`` for ``axis=``,
``keepdim=`` for ``keepdims=``.

One mechanism for every op: ``torch_names(function)`` wraps a function whose parameters are
called ``axis``, ``axis0``, ``start_axis``, ``axes``, ``keepdims``... so that it also takes
``dim``, ``dim0``, ``start_dim``, ``dims``, ``keepdim``. ``dparray/ops/__init__.py`` applies it
to every public op and ``dparray/tensor_methods.py`` to every Tensor method, once, at import;
a function without such parameters is returned unchanged. Passing a name and its alias
together is a TypeError, as passing one argument twice is.

The wrapper has the function's own parameters plus the aliases (generated once), so a call
that uses no alias pays one extra Python call and a test per aliased parameter.
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


def torch_names(function: F, where: str | None = None) -> F:
    """``function``, also taking PyTorch's names for its axis arguments (see the module);
    ``function`` itself when it has none. ``where`` names it in error messages (its qualified
    name by default).

    The wrapper is generated with ``function``'s own parameters plus the aliases as keyword
    arguments (as ``dataclasses`` generates ``__init__``), so Python binds the arguments and a
    call pays one extra call, not the packing and unpacking of ``*args, **kwargs``.
    """
    aliases = aliases_of(function)
    if not aliases:
        return function
    parameters = list(inspect.signature(function).parameters.values())
    targets = set(aliases.values())
    where = where or getattr(function, "__qualname__", getattr(function, "__name__", "function"))
    defaults: dict[str, Any] = {}
    signature: list[str] = []
    call: list[str] = []
    body: list[str] = []
    sentinel_from = next(i for i, p in enumerate(parameters) if p.name in targets)
    starred_names = {p.name for p in parameters if p.kind == p.VAR_POSITIONAL}
    starred = False
    for i, p in enumerate(parameters):
        name = p.name
        if p.kind == p.VAR_POSITIONAL:
            signature.append(f"*{name}")
            call.append(f"*{name}")
            starred = True
            continue
        if p.kind == p.VAR_KEYWORD:
            continue  # added after the aliases
        if p.kind == p.KEYWORD_ONLY and not starred:
            signature.append("*")
            starred = True
        if p.default is not p.empty:
            defaults[name] = p.default
        if i >= sentinel_from:  # from the first aliased parameter on, defaults are _UNSET
            signature.append(f"{name}=_UNSET")
            fallback = (f"_defaults[{name!r}]" if name in defaults else
                        f"_missing({where!r}, {name!r})")
            body.append(f"    if {name} is _UNSET:\n        {name} = {fallback}")
        elif name in defaults:
            signature.append(f"{name}=_defaults[{name!r}]")
        else:
            signature.append(name)
        call.append(name if p.kind != p.KEYWORD_ONLY else f"{name}={name}")
    if not starred:
        signature.append("*")
    for alias, name in aliases.items():
        signature.append(f"{alias}=_UNSET")
        given, value = (name, f"({alias},)") if name in starred_names else \
            (f"{name} is not _UNSET", alias)  # permute(*axes) called as permute(dims=(1, 0))
        body.insert(0, f"    if {alias} is not _UNSET:\n"
                       f"        if {given}:\n"
                       f"            raise _both({where!r}, {name!r}, {alias!r})\n"
                       f"        {name} = {value}")
    keywords = next((p.name for p in parameters if p.kind == p.VAR_KEYWORD), None)
    if keywords is not None:
        signature.append(f"**{keywords}")
        call.append(f"**{keywords}")
    source = (f"def accepting_torch_names({', '.join(signature)}):\n" + "\n".join(body) +
              f"\n    return _function({', '.join(call)})\n")
    namespace: dict[str, Any] = {"_UNSET": _UNSET, "_defaults": defaults, "_function": function,
                                 "_both": _both, "_missing": _missing}
    exec(source, namespace)  # the source is made of the function's own parameter names
    wrapper: Any = functools.wraps(function)(namespace["accepting_torch_names"])
    wrapper.torch_aliases = aliases
    return wrapper


class _Unset:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<not given>"


_UNSET = _Unset()


def _both(where: str, name: str, alias: str) -> TypeError:
    return TypeError(f"{where}() got both {name}= and its alias {alias}=; pass one")


def _missing(where: str, name: str) -> Any:
    raise TypeError(f"{where}() missing 1 required argument: {name!r}")


def with_torch_names(namespace: dict[str, Any], names: list[str]) -> None:
    """Wrap each function ``namespace[name]`` with ``torch_names``, in place."""
    for name in names:
        value = namespace[name]
        if inspect.isfunction(value):
            namespace[name] = torch_names(value)
