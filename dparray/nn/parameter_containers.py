"""Parameter containers: ParameterList holds parameters under ``"0"``, ``"1"``, ...;
ParameterDict holds them by name. Each entry is a parameter of the container, so
``parameters()``, ``named_parameters()``, ``state_dict()``, ``load_state_dict()`` and the
optimizers that take them see it, under PyTorch's names (``params.0``, ``params.left``).

As in PyTorch, a tensor that is not a parameter becomes one when it goes in: a trainable leaf
(``is_variable``, what ``nn.Parameter`` makes) is kept as it is, any other tensor is replaced
by ``nn.Parameter(tensor)``, a new trainable leaf with its values. dparray has no Parameter
type, so a frozen parameter (``nn.Parameter(t, requires_grad=False)``) cannot be told from a
plain tensor and becomes trainable too: freeze it once it is in (``plist[0].requires_grad =
False``). Entries are tensors only; PyTorch also keeps other objects, which here are a
TypeError.
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from typing import Any

from dparray._checks import describe
from dparray.nn.containers import key_value_pairs
from dparray.nn.module import Module, Parameter
from dparray.tensor import Tensor

__all__ = ["ParameterDict", "ParameterList"]


class _Parameters(Module):
    """What both containers share: the entries' conversion, registration and repr."""

    def _entry(self, value: Any, where: str) -> Tensor:
        """``value`` as the parameter to store: itself if a trainable leaf, else a new one."""
        if not isinstance(value, Tensor):
            raise TypeError(f"{where}: values must be tensors, got {describe(value)}")
        return value if value.is_variable else Parameter(value)

    def _store(self, name: str, parameter: Tensor) -> None:
        self._parameter_names[name] = None  # registered even if frozen later
        object.__setattr__(self, name, parameter)

    def _entries(self) -> list[tuple[str, Tensor]]:
        return [(name, self.__dict__[name]) for name in self._parameter_names]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{type(self).__name__} holds parameters and cannot be called")

    def __repr__(self) -> str:
        lines = [f"  ({name}): {_described(p)}" for name, p in self._entries()]
        if not lines:
            return f"{type(self).__name__}()"
        return "\n".join([f"{type(self).__name__}(", *lines, ")"])


class ParameterList(_Parameters):
    """A list of parameters, registered under ``"0"``, ``"1"``, ... like PyTorch's: indexing
    (negative indices and slices, which give a new ParameterList of the same parameters),
    assignment to an index, ``len``, iteration, ``append``, ``extend`` and ``+=``.

    Examples:
        >>> import dparray as dp
        >>> params = dp.nn.ParameterList([dp.nn.Parameter(dp.ones(2, 3)), dp.zeros(3)])
        >>> params.append(dp.zeros(1))
        ParameterList(
          (0): Parameter containing: [float32 of size 2x3]
          (1): Parameter containing: [float32 of size 3]
          (2): Parameter containing: [float32 of size 1]
        )
        >>> [name for name, _ in params.named_parameters()], params[-1].requires_grad
        (['0', '1', '2'], True)
    """

    def __init__(self, values: Iterable[Tensor] | None = None) -> None:
        super().__init__()
        if values is not None:
            self.extend(values)

    def append(self, value: Tensor) -> ParameterList:
        """Add ``value`` (as a parameter) at the end; returns ``self``."""
        self._store(str(len(self)), self._entry(value, f"{type(self).__name__}.append"))
        return self

    def extend(self, values: Iterable[Tensor]) -> ParameterList:
        """Add every tensor of ``values`` at the end, each checked before any is added;
        returns ``self``."""
        where = f"{type(self).__name__}.extend"
        if isinstance(values, Tensor) or not isinstance(values, Iterable):
            raise TypeError(f"{where}: expected an iterable of tensors, got {describe(values)}")
        entries = [self._entry(value, where) for value in values]
        for entry in entries:
            self._store(str(len(self)), entry)
        return self

    def __iadd__(self, values: Iterable[Tensor]) -> ParameterList:
        return self.extend(values)

    def __len__(self) -> int:
        return len(self._parameter_names)

    def __iter__(self) -> Iterator[Tensor]:
        return iter([p for _, p in self._entries()])

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return type(self)(self[i] for i in range(*index.indices(len(self))))
        return self.__dict__[self._name(index)]

    def __setitem__(self, index: int, value: Tensor) -> None:
        name = self._name(index)
        self._store(name, self._entry(value, type(self).__name__))

    def _name(self, index: Any) -> str:
        """The entry's name (``"2"``) for an index, negative ones counting from the end."""
        where = type(self).__name__
        try:
            position = operator.index(index)
        except TypeError:
            raise TypeError(f"{where}: indices must be integers or slices, got "
                            f"{describe(index)}") from None
        if not -len(self) <= position < len(self):
            raise IndexError(f"{where}: index {position} is out of range for {len(self)} "
                             "parameters")
        return str(position % len(self))


class ParameterDict(_Parameters):
    """Parameters by name, in insertion order, with PyTorch's dict API (``[]``, ``in``,
    ``len``, iteration over the keys, ``reversed``, ``keys()``, ``values()``, ``items()``,
    ``get``, ``setdefault``, ``update``, ``pop``, ``popitem``, ``clear``, ``copy``,
    ``fromkeys``, ``|`` and ``|=``); each is a parameter of the container under its key.

    As PyTorch's, ``update`` (and so the constructor) adds a plain ``dict``'s entries in the
    sorted order of their keys, and an ``OrderedDict``'s, another ``ParameterDict``'s or a
    sequence of ``(key, tensor)`` pairs' in their own order. A key is a non-empty string
    without ``.`` that is not already an attribute of the ``ParameterDict`` (``"keys"``,
    ``"training"``): a ValueError otherwise (PyTorch raises KeyError), as for ``ModuleDict``.

    Examples:
        >>> import dparray as dp
        >>> params = dp.nn.ParameterDict({"right": dp.zeros(2), "left": dp.ones(3)})
        >>> list(params), params["left"].shape
        (['left', 'right'], (3,))
        >>> params["bias"] = dp.nn.Parameter(dp.zeros(1))
        >>> [name for name, _ in params.named_parameters()]
        ['left', 'right', 'bias']
    """

    def __init__(self, parameters: Mapping[str, Tensor] | ParameterDict
                 | Iterable[tuple[str, Tensor]] | None = None) -> None:
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Tensor:
        if not isinstance(key, str) or key not in self._parameter_names:
            raise KeyError(key)
        parameter: Tensor = self.__dict__[key]
        return parameter

    def __setitem__(self, key: str, value: Tensor) -> None:
        self._check_key(key)
        self._store(key, self._entry(value, type(self).__name__))

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._parameter_names)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._parameter_names))

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._parameter_names))

    def __contains__(self, key: object) -> bool:
        return key in self._parameter_names

    def keys(self) -> KeysView[str]:
        """The keys, in insertion order."""
        return dict(self._entries()).keys()

    def values(self) -> ValuesView[Tensor]:
        """The parameters, in insertion order."""
        return dict(self._entries()).values()

    def items(self) -> ItemsView[str, Tensor]:
        """``(key, parameter)`` pairs, in insertion order."""
        return dict(self._entries()).items()

    def get(self, key: str, default: Any = None) -> Any:
        """The parameter under ``key``, or ``default`` if there is none."""
        return self.__dict__[key] if key in self else default

    def setdefault(self, key: str, default: Tensor | None = None) -> Tensor:
        """The parameter under ``key``, after adding ``default`` there if there was none."""
        if key not in self:
            self[key] = default  # type: ignore[assignment]  # None is refused there
        return self[key]

    def pop(self, key: str) -> Tensor:
        """Remove the parameter under ``key`` and return it (KeyError if there is none)."""
        parameter = self[key]
        del self[key]
        return parameter

    def popitem(self) -> tuple[str, Tensor]:
        """Remove the last added ``(key, parameter)`` pair and return it (KeyError if
        empty)."""
        if not self._parameter_names:
            raise KeyError(f"popitem(): {type(self).__name__} is empty")
        key = next(reversed(self._parameter_names))
        return key, self.pop(key)

    def clear(self) -> None:
        """Remove every parameter."""
        for key in list(self._parameter_names):
            del self[key]

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameters (not copies) in the same order."""
        return ParameterDict(OrderedDict(self._entries()))

    def fromkeys(self, keys: Iterable[str], default: Tensor | None = None) -> ParameterDict:
        """A new ParameterDict with ``default`` under every key of ``keys`` (one parameter,
        under every name, when ``default`` is one)."""
        return ParameterDict([(key, default) for key in keys])  # type: ignore[misc]

    def update(self, parameters: Mapping[str, Tensor] | ParameterDict
               | Iterable[tuple[str, Tensor]]) -> None:
        """Add or replace parameters from a mapping or from ``(key, tensor)`` pairs (see the
        class for the order); every entry is checked before any is added."""
        where = f"{type(self).__name__}.update"
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            entries = list(parameters.items())
        elif isinstance(parameters, Mapping):
            entries = sorted(parameters.items(), key=lambda item: _sort_key(item[0], where))
        elif isinstance(parameters, Iterable) and not isinstance(parameters, (str, Tensor)):
            entries = key_value_pairs(parameters, where, "tensor")
        else:
            raise TypeError(f"{where}: expected a mapping or (key, tensor) pairs, got "
                            f"{describe(parameters)}")
        ready = []
        for key, value in entries:
            self._check_key(key)
            ready.append((key, self._entry(value, where)))
        for key, parameter in ready:
            self._store(key, parameter)

    def __or__(self, other: Mapping[str, Tensor] | ParameterDict) -> ParameterDict:
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other: Mapping[str, Tensor] | ParameterDict) -> ParameterDict:
        merged = ParameterDict(other)
        merged.update(self)
        return merged

    def __ior__(self, other: Mapping[str, Tensor] | ParameterDict) -> ParameterDict:
        self.update(other)
        return self

    def _check_key(self, key: Any) -> None:
        where = type(self).__name__
        if not isinstance(key, str):
            raise TypeError(f"{where}: keys must be strings, got {describe(key)}")
        if not key or "." in key:
            raise ValueError(f"{where}: a key must be a non-empty string without '.', got "
                             f"{key!r}")
        if key not in self._parameter_names and hasattr(self, key):
            raise ValueError(f"{where}: the key {key!r} is an attribute of {where}; choose "
                             "another")


def _sort_key(key: Any, where: str) -> str:
    """A plain dict's key, for sorting: refused first if it is not a string, so that keys of
    mixed types give the keys' error rather than sorting's."""
    if not isinstance(key, str):
        raise TypeError(f"{where}: keys must be strings, got {describe(key)}")
    return key


def _described(parameter: Tensor) -> str:
    """PyTorch's line for a parameter in a container's repr, with dparray's dtype names:
    ``Parameter containing: [float32 of size 2x3]``, and the device where it is not the CPU."""
    size = "x".join(str(n) for n in parameter.shape)
    device = "" if str(parameter.device) == "cpu" else f" ({parameter.device})"
    return f"Parameter containing: [{parameter.dtype.name} of size {size}{device}]"
