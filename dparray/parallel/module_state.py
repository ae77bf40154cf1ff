"""Python state a module writes to itself while DataParallel runs it in chunks: found, and
warned about.

Every chunk of a call runs the same module object -- that is how they share its parameters --
so an attribute that ``forward`` assigns (``self.last_hidden = h``, a counter, a cache) is one
attribute for all of them: chunks running side by side read each other's values, and after the
call it holds whichever chunk wrote last. ``ModuleState.taken(module)`` notes, before the
chunks run, what each module's attributes are; ``changed_by_chunks`` then names those the
chunks assigned, so that DataParallel can say so (``ChunkStateWarning``). Registered parameters,
buffers and sub-modules are not Python state in this sense: buffers written by the first chunk
only (batch norm's running statistics) are how layers keep state under DataParallel.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from dparray.nn.module import Module


class ChunkStateWarning(UserWarning):
    """A module assigned an attribute of itself during a DataParallel call that ran in
    chunks, which share that attribute."""


@dataclass(frozen=True)
class ModuleState:
    """Each module's plain attributes (by object identity) at one moment."""

    attributes: tuple[tuple[Module, dict[str, Any]], ...]

    @classmethod
    def taken(cls, modules: list[Module]) -> ModuleState:
        """The attributes of ``modules`` (a module and every module inside it), now."""
        return cls(tuple((m, dict(vars(m))) for m in modules))

    def changed_by_chunks(self) -> list[tuple[Module, str]]:
        """The (module, attribute) pairs assigned since the state was taken -- new ones, or
        bound to another object -- other than registered parameters, buffers and modules."""
        changed = []
        for module, before in self.attributes:
            for name, value in vars(module).items():
                if before.get(name, _MISSING) is not value and not _registered(module, name):
                    changed.append((module, name))
        return changed


def _registered(module: Module, name: str) -> bool:
    return (name in module._parameter_names or name in module._buffer_names
            or name in module._module_names)


_MISSING = object()


def warn_about(changed: list[tuple[Module, str]], count: int, stacklevel: int) -> None:
    """One ``ChunkStateWarning`` per attribute the chunks assigned, saying what to do."""
    for module, name in changed:
        warnings.warn(
            f"DataParallel: {type(module).__name__}.forward set self.{name} while the batch ran "
            f"in {count} chunks, which share one module: a chunk may read another chunk's "
            f"value, and self.{name} keeps whichever chunk wrote last. Return the value from "
            "forward (DataParallel gathers outputs in their structure) or keep it in a local "
            "variable; a buffer (register_buffer) written only when "
            "dparray.nn.chunks.chunk_index() is 0 keeps state as batch norm does",
            ChunkStateWarning, stacklevel=stacklevel + 1)
