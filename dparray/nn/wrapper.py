"""Wrapper: a module that runs another one differently and is otherwise invisible.

DataParallel and DistributedDataParallel change *how* their module runs, not what it is: their
parameters, buffers, state dict names and training mode are the wrapped module's (no
``module.`` prefix, though a state dict saved with one loads too), and attributes they do not
define fall through to it. The wrapped module is not a child, so names never gain a level.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from dparray.nn.module import IncompatibleKeys, Module


class Wrapper(Module):
    """Base class of modules that wrap ``module`` transparently; see the module docstring."""

    def __init__(self, module: Module) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"{type(self).__name__} wraps a Module, got {type(module).__name__}")
        object.__setattr__(self, "module", module)  # not a child: the names stay the module's

    def forward(self, x: Any) -> Any:
        return self.module(x)

    def is_training(self) -> bool:
        return self.module.is_training()

    def named_children(self) -> Iterator[tuple[str, Module]]:
        return self.module.named_children()

    def _names_owner(self) -> Module:
        return self.module._names_owner()

    def load_state_dict(self, state_dict: Mapping[str, Any],
                        strict: bool = True) -> IncompatibleKeys:
        """The wrapped module's ``load_state_dict``; keys saved through a PyTorch wrapper
        (prefixed ``module.``) load too."""
        if state_dict and all(key.startswith("module.") for key in state_dict):
            state_dict = {key[len("module."):]: value for key, value in state_dict.items()}
        return self.module.load_state_dict(state_dict, strict)

    def __getattr__(self, name: str) -> Any:
        module = self.__dict__.get("module")
        if module is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(module, name)

    def __repr__(self) -> str:
        inner = repr(self.module).replace("\n", "\n  ")
        return f"{type(self).__name__}({self.extra_repr()},\n  (module): {inner}\n)"
