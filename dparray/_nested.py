"""Nested state -- dicts, lists and tuples of tensors and JSON values -- as a flat mapping of
tensors and a JSON description of everything else, and back: how ``dparray.save`` writes
``{"model": model.state_dict(), "optimizer": opt.state_dict(), "step": n}`` and
``dparray.save_checkpoint`` a whole training state into one safetensors file, without pickle.

``encode`` names each tensor by its place (``model/fc1.weight``, ``optimizer/state/0/exp_avg``)
and replaces it by ``{"tensor": name}``; dicts, lists and tuples are tagged (``{"dict": [[key,
value], ...]}``, ``{"list": [...]}``, ``{"tuple": [...]}``), so they come back as they were --
int keys stay ints, tuples stay tuples; numbers, strings, bools and None are themselves.
``decode`` rebuilds the value from the description and the tensors, and refuses a description
that ``encode`` could not have written (a ``NotEncoded`` saying why).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dparray._checks import describe
from dparray.tensor import Tensor

SEPARATOR = "/"  # between the keys of a tensor's place


class NotEncoded(Exception):
    """A description that ``encode`` did not write; the message says what is wrong."""


def encode(value: Any, where: str, tensors: dict[str, Tensor], key: str = "") -> Any:
    """``value`` as JSON data, each tensor stored in ``tensors`` under its place (``key``
    joined with the keys leading to it) and replaced by a reference. ``where`` names the
    caller in errors: a TypeError for a value that is neither a tensor nor JSON data (or a key
    that is not a str or an int), a ValueError when two tensors would get one name."""
    if isinstance(value, Tensor):
        if key in tensors:
            raise ValueError(f"{where}: two entries of the state are named {key!r} (a key "
                             f"containing {SEPARATOR!r} meets a nested one)")
        tensors[key] = value
        return {"tensor": key}
    if isinstance(value, Mapping):
        pairs = []
        for k, v in value.items():
            if isinstance(k, bool) or not isinstance(k, (str, int)):
                raise TypeError(f"{where}: {key or 'the state'} has a key {describe(k)}; "
                                "keys must be str or int")
            pairs.append([k, encode(v, where, tensors, f"{key}{SEPARATOR}{k}" if key else str(k))])
        return {"dict": pairs}
    if isinstance(value, (list, tuple)):
        items = [encode(v, where, tensors, f"{key}{SEPARATOR}{i}") for i, v in enumerate(value)]
        return {"tuple" if isinstance(value, tuple) else "list": items}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "state_dict"):  # a Module, an optimizer: their state is what to save
        shown, hint = f"a {type(value).__name__}", "; save its state_dict() instead"
    else:
        shown, hint = describe(value), ""
    raise TypeError(f"{where}: {key or 'the state'} is {shown}; dparray saves tensors, "
                    "numbers, strings, None, and lists, tuples and dicts of them (never "
                    f"pickled objects){hint}")


def decode(value: Any, tensors: Mapping[str, Tensor], used: set[str]) -> Any:
    """The value ``encode`` described, with its tensors taken from ``tensors`` (each name
    added to ``used``; a reference to a missing tensor, or to one already used, is refused)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if not isinstance(value, dict) or len(value) != 1:
        raise NotEncoded(f"an entry is {describe(value)}")
    ((tag, content),) = value.items()
    if tag == "tensor":
        if not isinstance(content, str) or content not in tensors or content in used:
            raise NotEncoded(f"a reference to tensor {content!r}, which it does not hold "
                             "(or twice)")
        used.add(content)
        return tensors[content]
    if tag in ("list", "tuple") and isinstance(content, list):
        items = [decode(item, tensors, used) for item in content]
        return tuple(items) if tag == "tuple" else items
    if tag == "dict" and isinstance(content, list):
        result = {}
        for pair in content:
            if (not isinstance(pair, list) or len(pair) != 2 or isinstance(pair[0], bool)
                    or not isinstance(pair[0], (str, int))):
                raise NotEncoded(f"a dict entry is {describe(pair)}")
            result[pair[0]] = decode(pair[1], tensors, used)
        return result
    raise NotEncoded(f"an entry is tagged {tag!r}")
