"""The documentation: every example runs and shows what it prints; the site builds strictly.

``pycon`` blocks run as doctests (their printed output is checked); ``python`` blocks run in
order, one namespace per page; a block titled for PyTorch runs where PyTorch is installed.
"""

from __future__ import annotations

import doctest
import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

# the pages run whole programs (training runs among them), and the site builds in a subprocess
pytestmark = pytest.mark.integration

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs").rglob("*.md"))
BLOCK = re.compile(r"```(python[^\n]*)\n(.*?)```", flags=re.DOTALL)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT / "docs")))
def test_every_example_on_the_page_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    result = doctest.testfile(str(page), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} doctest example(s) failed in {page.name}"
    namespace: dict = {}
    for info, code in BLOCK.findall(page.read_text()):
        if info != "python" and importlib.util.find_spec("torch") is None:
            continue  # the PyTorch side of an exchange
        exec(compile(code, str(page), "exec"), namespace)


def test_the_site_builds_without_warnings(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "reference" / "parallel" / "index.html").exists()
