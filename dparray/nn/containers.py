"""Containers: Sequential runs modules in order; ModuleList holds them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from dparray.nn.module import Module


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
