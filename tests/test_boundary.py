"""The core never imports an array library: backends/ is the only place that does."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest

CORE = pathlib.Path(__file__).resolve().parent.parent / "dparray"
FORBIDDEN = {"numpy", "cupy", "cupyx"}
ALLOWED = {"io.py"}  # writes files through NumPy as the host interchange format


def _imported_roots(path: pathlib.Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_no_core_module_imports_numpy_or_cupy():
    offenders = {
        str(path.relative_to(CORE)): sorted(_imported_roots(path) & FORBIDDEN)
        for path in CORE.rglob("*.py")
        if path.name not in ALLOWED and _imported_roots(path) & FORBIDDEN
    }
    assert offenders == {}


def test_the_check_above_sees_an_import():
    assert _imported_roots(pathlib.Path(__file__)) >= {"ast", "subprocess"}


@pytest.mark.integration
def test_importing_dparray_loads_no_array_library():
    code = (
        "import sys, dparray;"
        "print(sorted(m for m in ('numpy', 'cupy', 'array_api_strict') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "[]"
