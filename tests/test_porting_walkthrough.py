"""The port in docs/from-pytorch.md changes only the imports and the gradient lines.

The docs tests run the dparray side (and the PyTorch side where PyTorch is installed); this
test reads both and checks what the page claims: every other line is PyTorch's, unchanged.
"""

from __future__ import annotations

import difflib
import pathlib
import re

PAGE = pathlib.Path(__file__).resolve().parent.parent / "docs" / "from-pytorch.md"
BLOCK = re.compile(r"```(python[^\n]*)\n(.*?)```", flags=re.DOTALL)
GRADIENT_LINES = {"optimizer.zero_grad()", "loss.backward()", "optimizer.step()",
                  "optimizer.step(loss.backward())"}


def _the_two_scripts() -> tuple[list[str], list[str]]:
    blocks = BLOCK.findall(PAGE.read_text())
    index = next(i for i, (info, _) in enumerate(blocks) if info == 'python title="PyTorch"')
    (_, original), (info, port) = blocks[index], blocks[index + 1]
    assert info == "python"  # the port is the next block, run by the docs tests
    return original.splitlines(), port.splitlines()


def test_the_port_changes_only_imports_and_gradient_lines():
    original, port = _the_two_scripts()
    changed = [line for line in difflib.ndiff(original, port) if line.startswith(("- ", "+ "))]
    assert changed, "the two scripts are the same"
    for line in changed:
        code = line[2:].strip()
        assert code.startswith(("import ", "from ")) or code in GRADIENT_LINES, line
    assert len(original) - len(port) == 2  # three gradient lines became one


def test_the_port_imports_dparray_under_pytorchs_names():
    _, port = _the_two_scripts()
    assert "import dparray as torch" in port and "from dparray import nn" in port
