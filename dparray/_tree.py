"""Nested outputs as flat lists of tensors and back: how DataParallel gathers a module's
tuples, lists and dicts of tensors into the same structure.

``flatten(value)`` returns the tensors found in ``value`` (depth first; dict entries in their
order) and a ``Structure`` that ``rebuild`` fills with new tensors. Anything that is not a
tuple, list, dict or Tensor is a constant leaf, kept in the structure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dparray.tensor import Tensor


@dataclass(frozen=True)
class Structure:
    """The shape of a nested value: ``kind`` is "tensor", "constant", "tuple", "list" or
    "dict"; containers hold their children's structures (and dicts their keys)."""

    kind: str
    children: tuple[Structure, ...] = ()
    keys: tuple[Any, ...] = ()
    constant: Any = None
    rebuild_as: Callable[..., Any] | None = None  # a namedtuple's class


def flatten(value: Any) -> tuple[list[Tensor], Structure]:
    tensors: list[Tensor] = []
    return tensors, _flatten(value, tensors)


def _flatten(value: Any, tensors: list[Tensor]) -> Structure:
    if isinstance(value, Tensor):
        tensors.append(value)
        return Structure("tensor")
    if isinstance(value, tuple):
        children = tuple(_flatten(v, tensors) for v in value)
        rebuild = type(value) if hasattr(value, "_fields") else None
        return Structure("tuple", children, rebuild_as=rebuild)
    if isinstance(value, list):
        return Structure("list", tuple(_flatten(v, tensors) for v in value))
    if isinstance(value, dict):
        keys = tuple(value)
        return Structure("dict", tuple(_flatten(value[k], tensors) for k in keys), keys)
    return Structure("constant", constant=value)


def rebuild(structure: Structure, tensors: list[Tensor]) -> Any:
    """``structure`` with its tensor leaves taken from ``tensors``, in order."""
    leaves = iter(tensors)
    return _rebuild(structure, leaves)


def _rebuild(structure: Structure, leaves: Any) -> Any:
    kind = structure.kind
    if kind == "tensor":
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
