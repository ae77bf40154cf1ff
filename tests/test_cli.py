"""``python -m dparray``: the demo trains, info reports, errors are one clear line."""

from __future__ import annotations

import re
import subprocess
import sys


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dparray", *args], capture_output=True,
                          text=True, timeout=300)


def test_demo_loss_falls():
    result = _run("demo", "--steps", "200")
    assert result.returncode == 0, result.stderr
    first, last = map(float, re.search(r"loss fell from ([\d.]+) to ([\d.]+)",
                                       result.stdout).groups())
    assert last < first / 3


def test_demo_runs_on_the_strict_backend():
    result = _run("demo", "--steps", "20", "--backend", "array_api_strict")
    assert result.returncode == 0, result.stderr
    assert "backend 'array_api_strict'" in result.stdout


def test_info_lists_backends():
    result = _run("info")
    assert result.returncode == 0
    assert re.search(r"numpy\s+available", result.stdout)
    assert re.search(r"cupy\s+(available|unavailable: .+)", result.stdout)


def test_unknown_backend_is_one_line_and_exit_2():
    result = _run("demo", "--backend", "nope")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dparray: error: unknown backend 'nope'")
