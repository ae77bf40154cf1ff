"""The import order of the package, kept: every module imports only its own layer or lower ones,
and the imports form no cycle -- top-level and function-level imports alike.

The layers, lowest first, are written once below (docs/architecture.md draws the same). A new
module must be placed in one; a cycle or an upward import fails here with the import's line.
"""

from __future__ import annotations

import ast
import pathlib
from graphlib import CycleError, TopologicalSorter

ROOT = pathlib.Path(__file__).resolve().parent.parent

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("dparray._checks", "dparray._system", "dparray._files", "dparray._tree",
                    "dparray.dtypes", "dparray.backend", "dparray.kernels", "dparray.random",
                    "dparray._aliases", "dparray.devices", "dparray.generator", "dparray.cuda",
                    "dparray.accelerator", "dparray.precision")),
    ("core", ("dparray.tensor_methods", "dparray.tensor", "dparray.gradients",
              "dparray.autograd", "dparray.creation", "dparray.sampling")),
    ("ops", ("dparray.ops",)),
    ("adapters", ("dparray.backends",)),
    ("library", ("dparray.nn", "dparray.optim", "dparray._nested", "dparray.io",
                 "dparray.checkpoint", "dparray.func", "dparray.amp")),
    ("parallel", ("dparray.parallel", "dparray.distributed")),
    ("data", ("dparray.data", "dparray.utils")),  # above distributed: a DistributedSampler
    # asks MPI's world; dparray.utils.data is torch.utils.data's name for dparray.data
    ("entry points", ("dparray.cli", "dparray.__main__", "dparray.testing", "dparray")),
]


def _modules() -> dict[str, pathlib.Path]:
    """Every module of the package by its dotted name (``backends/`` is ``dparray.backends``)."""
    found = {}
    for folder, package in ((ROOT / "dparray", "dparray"), (ROOT / "backends", "dparray.backends")):
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


MODULES = _modules()


def layer_of(module: str) -> int:
    """The index of the layer ``module`` belongs to: the longest prefix that names it."""
    best, length = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = index, len(prefix)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")
    return best


def _is_type_checking(test: ast.expr) -> bool:
    return "TYPE_CHECKING" in ast.unparse(test)


def imports(module: str) -> list[tuple[str, int]]:
    """The package modules ``module`` imports, with the line of each import; imports under
    ``if TYPE_CHECKING:`` do not run and are left out."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.append((submodule if submodule in MODULES else base, node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), filename=str(path)))
    return [(target, line) for target, line in found if target in MODULES]


def test_every_module_has_a_layer():
    for module in MODULES:
        layer_of(module)


def test_no_module_imports_a_layer_above_its_own():
    upward = []
    for module in MODULES:
        own = layer_of(module)
        for target, line in imports(module):
            if layer_of(target) > own:
                upward.append(f"{MODULES[module].relative_to(ROOT)}:{line} ({LAYERS[own][0]}) "
                              f"imports {target} ({LAYERS[layer_of(target)][0]})")
    assert upward == []


def test_the_imports_form_no_cycle():
    graph = {module: {target for target, _ in imports(module) if target != module}
             for module in MODULES}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as error:
        raise AssertionError(f"an import cycle: {' -> '.join(error.args[1])}") from None


def test_the_walk_sees_function_level_and_relative_imports():
    seen = dict(imports("dparray.backends._numpy_kernels"))
    assert "dparray.backends._numba_loops" in seen  # `from . import _numba_loops` in a function
    assert "dparray.ops.normalization" in seen
    assert layer_of("dparray.ops.shape") == layer_of("dparray.ops")
    assert layer_of("dparray") == len(LAYERS) - 1
