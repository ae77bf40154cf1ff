"""The API reference (docs/reference/*.md) covers every public name.

A name is public when it is in the ``__all__`` of a public module. It is covered when a
``::: path`` directive of the reference names it, or names the module (or class) that defines
it -- with no ``members:`` list, or with the name in that list. Values that are not classes or
functions (the dtypes, constants) are covered when the reference mentions them by name.
"""

from __future__ import annotations

import importlib
import inspect
import pathlib
import re
import types

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference"
PUBLIC_MODULES = ["dparray", "dparray.nn", "dparray.nn.functional", "dparray.optim",
                  "dparray.data", "dparray.distributed", "dparray.random", "dparray.kernels",
                  "dparray.testing", "dparray.func"]
DIRECTIVE = re.compile(r"^::: ([\w.]+)\n((?:[ \t]+.*\n)*)", flags=re.MULTILINE)
MEMBERS = re.compile(r"members:\s*\[([^\]]*)\]")


def _directives() -> tuple[dict[str, set[str] | None], str]:
    """Each directive's path -> its members list (None: all members), and all the text."""
    found: dict[str, set[str] | None] = {}
    text = ""
    for page in sorted(REFERENCE.glob("*.md")):
        content = page.read_text()
        text += content
        for path, options in DIRECTIVE.findall(content + "\n"):
            listed = MEMBERS.search(options)
            members = None if listed is None else {m.strip() for m in listed.group(1).split(",")}
            previous = found.get(path, set())
            found[path] = None if members is None or previous is None else previous | members
    return found, text


def _home(obj: object) -> tuple[str, str] | None:
    """The defining module and qualified name of a class or function (None for values)."""
    target = inspect.unwrap(obj) if callable(obj) else obj
    if isinstance(target, type) or inspect.isfunction(target) or inspect.isbuiltin(target):
        return target.__module__, target.__qualname__
    return None


def _covered(name: str, obj: object, directives: dict[str, set[str] | None], text: str) -> bool:
    if isinstance(obj, types.ModuleType):
        return any(path == obj.__name__ or path.startswith(obj.__name__ + ".")
                   for path in directives)
    home = _home(obj)
    if home is None:
        return re.search(rf"`(?:dp\.|dparray\.)?{re.escape(name)}`", text) is not None
    module, qualname = home
    full = f"{module}.{qualname}"
    if full in directives:
        return True
    parts = full.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        container = ".".join(parts[:cut])
        if container in directives:
            members = directives[container]
            return members is None or parts[cut] in members
    return False


def _public_names() -> list[tuple[str, str]]:
    names = []
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        names.extend((module_name, name) for name in module.__all__ if not name.startswith("_"))
    return names


@pytest.mark.parametrize(("module_name", "name"), _public_names(),
                         ids=lambda value: str(value))
def test_every_public_name_is_in_the_reference(module_name, name):
    directives, text = _directives()
    obj = getattr(importlib.import_module(module_name), name)
    assert _covered(name, obj, directives, text), (
        f"{module_name}.{name} is public but missing from docs/reference/")


def test_the_check_finds_a_missing_name():
    directives, text = _directives()
    assert not _covered("nowhere", test_the_check_finds_a_missing_name, directives, text)
