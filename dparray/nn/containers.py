"""Containers: Sequential runs modules in order; ModuleList holds them; ModuleDict holds them
by name."""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from typing import Any

from dparray._checks import describe
from dparray.nn.module import Module


def key_value_pairs(entries: Iterable[Any], where: str, kind: str) -> list[tuple[Any, Any]]:
    """``entries`` as ``(key, value)`` pairs, each checked to be a pair (``kind`` names the
    values in the message): what the dict containers' ``update`` takes besides a mapping."""
    pairs = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, (tuple, list)):
            raise TypeError(f"{where}: element {i} must be a (key, {kind}) pair, got "
                            f"{describe(entry)}")
        if len(entry) != 2:
            raise ValueError(f"{where}: element {i} must be a (key, {kind}) pair, got "
                             f"{len(entry)} items")
        pairs.append((entry[0], entry[1]))
    return pairs


class ModuleList(Module):
    """A list of modules, registered under ``"0"``, ``"1"``, ... like PyTorch's."""

    def __init__(self, modules: Iterable[Module] = ()) -> None:
        super().__init__()
        for module in modules:
            self.append(module)

    def append(self, module: Module) -> ModuleList:
        if not isinstance(module, Module):
            raise TypeError(f"{type(self).__name__} holds Modules, got {type(module).__name__}")
        setattr(self, str(len(self)), module)
        return self

    def __len__(self) -> int:
        return len(self._module_names)

    def __iter__(self) -> Iterator[Module]:
        return iter(self.children())

    def __getitem__(self, index: int | slice) -> Any:
        modules = list(self.children())
        if isinstance(index, slice):
            return self._of(modules[index])
        return modules[index]

    @classmethod
    def _of(cls, modules: list[Module]) -> ModuleList:
        return cls(modules)


class Sequential(ModuleList):
    """Modules applied one after another; indexable, iterable, ``append``-able.

    Examples:
        >>> import dparray as dp
        >>> model = dp.nn.Sequential(dp.nn.Linear(2, 4), dp.nn.ReLU(), dp.nn.Linear(4, 1))
        >>> [name for name, _ in model.named_parameters()]
        ['0.weight', '0.bias', '2.weight', '2.bias']
    """

    def __init__(self, *modules: Module) -> None:
        super().__init__(modules)

    @classmethod
    def _of(cls, modules: list[Module]) -> Sequential:
        return cls(*modules)

    def forward(self, x: Any) -> Any:
        for module in self:
            x = module(x)
        return x


class ModuleDict(Module):
    """Modules by name, in insertion order, with PyTorch's dict API (``[]``, ``in``, ``len``,
    iteration over the keys, ``keys()``, ``values()``, ``items()``, ``update``, ``pop``,
    ``clear``); each is a child under its key, so its parameters are named ``key.param``.

    A key is a non-empty string without ``.`` that is not already an attribute of the
    ``ModuleDict`` (``"keys"``, ``"forward"``): a ValueError otherwise (PyTorch raises KeyError).

    Examples:
        >>> import dparray as dp
        >>> heads = dp.nn.ModuleDict({"cls": dp.nn.Linear(4, 3), "box": dp.nn.Linear(4, 2)})
        >>> [name for name, _ in heads.named_parameters()]
        ['cls.weight', 'cls.bias', 'box.weight', 'box.bias']
        >>> heads["box"](dp.ones(1, 4)).shape, "cls" in heads, list(heads)
        ((1, 2), True, ['cls', 'box'])
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None
                 ) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        if not isinstance(key, str) or key not in self._module_names:
            raise KeyError(key)
        module: Module = self.__dict__[key]
        return module

    def __setitem__(self, key: str, module: Module) -> None:
        self._check_entry(key, module)
        setattr(self, key, module)

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._module_names)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __contains__(self, key: object) -> bool:
        return key in self._module_names

    def keys(self) -> KeysView[str]:
        """The keys, in insertion order."""
        return self._as_dict().keys()

    def values(self) -> ValuesView[Module]:
        """The modules, in insertion order."""
        return self._as_dict().values()

    def items(self) -> ItemsView[str, Module]:
        """``(key, module)`` pairs, in insertion order."""
        return self._as_dict().items()

    def pop(self, key: str) -> Module:
        """Remove the module under ``key`` and return it (KeyError if there is none)."""
        module = self[key]
        del self[key]
        return module

    def clear(self) -> None:
        """Remove every module."""
        for key in list(self._module_names):
            del self[key]

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add or replace modules from a mapping (a dict, another ``ModuleDict``) or from
        ``(key, module)`` pairs; every entry is checked before any is added."""
        where = f"{type(self).__name__}.update"
        if isinstance(modules, (Mapping, ModuleDict)):
            entries = list(modules.items())
        elif isinstance(modules, Iterable) and not isinstance(modules, str):
            entries = key_value_pairs(modules, where, "module")
        else:
            raise TypeError(f"{where}: expected a mapping or (key, module) pairs, got "
                            f"{describe(modules)}")
        for key, module in entries:
            self._check_entry(key, module)
        for key, module in entries:
            setattr(self, key, module)

    def _check_entry(self, key: Any, module: Any) -> None:
        where = type(self).__name__
        if not isinstance(key, str):
            raise TypeError(f"{where}: keys must be strings, got {describe(key)}")
        if not isinstance(module, Module):
            raise TypeError(f"{where}: values must be Modules, got {describe(module)}")
        if not key or "." in key:
            raise ValueError(f"{where}: a key must be a non-empty string without '.', got "
                             f"{key!r}")
        if key not in self._module_names and hasattr(self, key):
            raise ValueError(f"{where}: the key {key!r} is an attribute of {where}; choose "
                             "another")

    def _as_dict(self) -> dict[str, Module]:
        return {key: self.__dict__[key] for key in self._module_names}
