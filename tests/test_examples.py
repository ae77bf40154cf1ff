"""The scripts in examples/ run and do what they say."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest

import dparray as dp

pytestmark = pytest.mark.integration  # each test runs a script of examples/

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


def test_train_distributed_reaches_the_same_accuracy_on_two_ranks(tmp_path):
    mpiexec = pathlib.Path(sys.executable).with_name("mpiexec")
    script = str(EXAMPLES / "train_distributed.py")
    one = _run("train_distributed.py", "--epochs", "5", cwd=tmp_path)
    two = subprocess.run([str(mpiexec), "-n", "2", sys.executable, script, "--epochs", "5"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert two.returncode == 0, two.stderr
    accuracy = [float(re.search(r"accuracy ([\d.]+)%", out).group(1))
                for out in (one, two.stdout)]
    assert "1 rank(s)" in one and "2 rank(s)" in two.stdout
    assert accuracy[0] > 85.0 and abs(accuracy[0] - accuracy[1]) < 0.5
