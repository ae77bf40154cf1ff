"""The README's example runs, and prints what it says it prints."""

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
    lines = output.getvalue().splitlines()
    assert re.fullmatch(r"loss [\d.]+ after 8 steps \(whole\)", lines[0])
    assert re.fullmatch(r"loss [\d.]+ after 8 steps \(threads\)", lines[1])
    assert float(lines[1].split()[1]) < float(lines[0].split()[1])  # it went on learning
    assert re.fullmatch(r"[\d.]+ ms a step with 1 worker, [\d.]+ ms with 2: [\d.]+x", lines[2])
    assert (tmp_path / "model.safetensors").exists()
