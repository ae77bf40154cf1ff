"""The indexing patterns of ``tests/data/index_patterns.safetensors``, shared by the script that
records PyTorch's results (``tests/data/make_index_fixtures.py``) and the test that replays them
(``tests/test_index_patterns.py``): a key is a tuple of *kinds* of entries, made concrete for
the shape it indexes, so that the fixture stores only the kinds.

The kinds: ``"0"`` and ``"-1"`` (ints), ``":"`` and ``"1:"`` (slices), ``"None"``, ``"..."``,
``"t0"`` (a 0-d integer tensor), ``"t1"`` and ``"t2"`` (integer tensors of shapes (2,) and
(2, 1)), ``"list"`` (a list of ints), ``"mask"`` and ``"mask2"`` (bool masks over one and two
axes, of the sizes of the axes they cover).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

KINDS_3D = ("0", "-1", ":", "1:", "None", "...", "t0", "t1", "t2", "list", "mask", "mask2")
KINDS_4D = ("0", ":", "None", "...", "t1", "t2")
NAMED = {"None": 0, "...": 0, "mask2": 2}  # how many axes a kind uses up; the others 1


def keys() -> list[tuple[tuple[int, ...], tuple[str, ...]]]:
    """Every (shape, kinds) of the table: keys of one to three entries on a 3-D tensor, of four
    (from fewer kinds) on a 4-D one, at most one ``...`` but for two keys that have two."""
    found = []
    for length in (1, 2, 3):
        found += [((2, 3, 4), kinds) for kinds in itertools.product(KINDS_3D, repeat=length)]
    found += [((2, 3, 4, 5), kinds) for kinds in itertools.product(KINDS_4D, repeat=4)]
    found = [(shape, kinds) for shape, kinds in found if kinds.count("...") <= 1]
    return [*found, ((2, 3, 4), ("...", "0", "...")), ((2, 3, 4), ("...", "..."))]


def mask(shape: tuple[int, ...]) -> list[Any]:
    """A fixed pattern of True and False of ``shape`` (1-D or 2-D), never all False."""
    if len(shape) == 1:
        return [i % 3 != 1 for i in range(shape[0])]
    return [[(i + j) % 2 == 0 for j in range(shape[1])] for i in range(shape[0])]


def concrete(kinds: tuple[str, ...], shape: tuple[int, ...],
             make_tensor: Callable[[Any, str], Any]) -> tuple[Any, ...]:
    """The key of ``kinds`` for a tensor of ``shape``; ``make_tensor(data, dtype)`` makes the
    index tensors ("int64" or "bool") of the library under test."""
    named = sum(NAMED.get(k, 1) for k in kinds)
    fill = max(len(shape) - named, 0)
    axis, key = 0, []
    for kind in kinds:
        covers = NAMED.get(kind, 1)
        if kind == "...":
            key.append(Ellipsis)
            axis += fill
            continue
        if kind in ("0", "-1"):
            key.append(int(kind))
        elif kind in (":", "1:"):
            key.append(slice(None) if kind == ":" else slice(1, None))
        elif kind == "None":
            key.append(None)
        elif kind in ("t0", "t1", "t2"):
            key.append(make_tensor({"t0": 1, "t1": [1, 0], "t2": [[0], [-1]]}[kind], "int64"))
        elif kind == "list":
            key.append([1, 1, 0])
        else:
            covered = tuple(shape[axis:axis + covers])
            if len(covered) < covers:
                covered = (2,) * covers  # past the last axis: refused anyway
            key.append(make_tensor(mask(covered), "bool"))
        axis += covers
    return tuple(key)
