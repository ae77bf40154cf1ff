"""The README's example runs as printed, and its claim about the loss holds."""

from __future__ import annotations

import contextlib
import io
import pathlib
import re

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def test_readme_example_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    assert len(blocks) == 1
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(blocks[0], str(README), "exec"), {})
    losses = [float(line.split()[3]) for line in output.getvalue().splitlines()]
    assert len(losses) == 3 and losses[2] < losses[0]
    assert (tmp_path / "model.safetensors").exists()
