"""Every Python block in docs/ runs as printed."""

from __future__ import annotations

import pathlib
import re

import pytest

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
BLOCKS = [(page.name, i, block) for page in sorted(DOCS.glob("*.md"))
          for i, block in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(),
                                               flags=re.DOTALL))]


@pytest.mark.parametrize("page, index, code", BLOCKS, ids=[f"{p}:{i}" for p, i, _ in BLOCKS])
def test_doc_block_runs(page, index, code):
    exec(compile(code, f"{page} block {index}", "exec"), {})
