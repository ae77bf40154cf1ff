"""Nested values as flat lists of leaves and back: how DataParallel gathers a module's
tuples, lists and dicts of tensors into the same structure, and how the DataLoader moves a
batch's tensors to a device.

``flatten(value, Tensor)`` returns the leaves of that type found in ``value`` (depth first;
dict entries in their order) and a ``Structure`` that ``rebuild`` fills with new leaves.
Anything that is not a tuple, list, dict or leaf is a constant, kept in the structure. The
leaf type is the caller's, so this module sits with the foundation and imports nothing of
dparray.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

Leaf = TypeVar("Leaf")


@dataclass(frozen=True)
class Structure:
    """The shape of a nested value: ``kind`` is "leaf", "constant", "tuple", "list" or "dict";
    containers hold their children's structures (and dicts their keys)."""

    kind: str
    children: tuple[Structure, ...] = ()
    keys: tuple[Any, ...] = ()
    constant: Any = None
    rebuild_as: Callable[..., Any] | None = None  # a namedtuple's class


def flatten(value: Any, leaf: type[Leaf]) -> tuple[list[Leaf], Structure]:
    """The instances of ``leaf`` in ``value``, depth first, and the structure around them."""
    leaves: list[Leaf] = []
    return leaves, _flatten(value, leaf, leaves)


def _flatten(value: Any, leaf: type[Leaf], leaves: list[Leaf]) -> Structure:
    if isinstance(value, leaf):
        leaves.append(value)
        return Structure("leaf")
    if isinstance(value, tuple):
        children = tuple(_flatten(v, leaf, leaves) for v in value)
        rebuild = type(value) if hasattr(value, "_fields") else None
        return Structure("tuple", children, rebuild_as=rebuild)
    if isinstance(value, list):
        return Structure("list", tuple(_flatten(v, leaf, leaves) for v in value))
    if isinstance(value, dict):
        keys = tuple(value)
        return Structure("dict", tuple(_flatten(value[k], leaf, leaves) for k in keys), keys)
    return Structure("constant", constant=value)


def rebuild(structure: Structure, leaves: Sequence[Any]) -> Any:
    """``structure`` with its leaves taken from ``leaves``, in order."""
    return _rebuild(structure, iter(leaves))


def _rebuild(structure: Structure, leaves: Any) -> Any:
    kind = structure.kind
    if kind == "leaf":
        return next(leaves)
    if kind == "constant":
        return structure.constant
    children = [_rebuild(child, leaves) for child in structure.children]
    if kind == "list":
        return children
    if kind == "dict":
        return dict(zip(structure.keys, children, strict=True))
    if structure.rebuild_as is not None:
        return structure.rebuild_as(*children)
    return tuple(children)


def same_structure(a: Structure, b: Structure) -> bool:
    """Whether two chunks' outputs have one structure (constants compared by equality)."""
    if a.kind != b.kind or a.keys != b.keys or len(a.children) != len(b.children):
        return False
    if a.kind == "constant":
        try:
            return bool(a.constant == b.constant)
        except Exception:  # an object whose == is not a plain bool
            return a.constant is b.constant
    return all(same_structure(x, y) for x, y in zip(a.children, b.children, strict=True))
