"""The scripts in examples/ run and do what they say."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import dparray as dp

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def _run(script: str, *args: str, cwd: pathlib.Path) -> str:
    result = subprocess.run([sys.executable, str(EXAMPLES / script), *args], cwd=cwd,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_train_digits(tmp_path):
    output = _run("train_digits.py", "--epochs", "4", "--out", "w.safetensors", cwd=tmp_path)
    assert float(re.search(r"held-out accuracy: ([\d.]+)%", output).group(1)) > 70.0
    assert list(dp.load(tmp_path / "w.safetensors")) == ["0.weight", "0.bias", "2.weight",
                                                         "2.bias"]


def test_finetune_frozen(tmp_path):
    output = _run("finetune_frozen.py", cwd=tmp_path)
    assert "frozen layers unchanged: True" in output
    trainable, total = map(int, re.search(r"trainable scalars: (\d+) of (\d+)", output).groups())
    assert trainable == 64 * 5 + 5 and total > trainable
    assert float(re.search(r"5-9 with frozen features, held out: ([\d.]+)%",
                           output).group(1)) > 50.0
