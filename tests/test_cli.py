"""``python -m dparray``: info, demo and bench, and their errors (one line, exit status 2)."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

import dparray as dp
from dparray.cli.demo import build_model

pytestmark = pytest.mark.integration  # each test runs python -m dparray

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
OUTPUTS = ("digits_cnn.safetensors", "training_curves.png")


def _run(*args: str, timeout: int = 300, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dparray", *args], capture_output=True,
                          text=True, timeout=timeout, env=env)


def test_demo_trains_saves_and_plots_replacing_links_planted_in_its_output_folder(tmp_path):
    outside, out = tmp_path / "outside", tmp_path / "run"
    outside.mkdir()
    out.mkdir()
    for name in OUTPUTS:  # links named as the outputs, to files elsewhere
        (outside / name).write_text("keep me")
        (out / name).symlink_to(outside / name)
    result = _run("demo", "--epochs", "3", "--workers", "2", "--out", str(out))
    assert result.returncode == 0, result.stderr
    accuracy = float(re.search(r"test accuracy: ([\d.]+)%", result.stdout).group(1))
    assert accuracy > 80.0  # three epochs; the default twenty reach about 98%
    # not a terminal: one line per epoch, not a progress bar's redraws
    epochs = [line for line in result.stderr.splitlines() if line.startswith("epoch ")]
    assert [line.split(":")[0] for line in epochs] == ["epoch  1/3", "epoch  2/3", "epoch  3/3"]
    assert "\r" not in result.stderr
    table = r"^\s+{}\s+[\d.]+\s+[\d.]+x\s+{}$"  # the speed table: label, ms, ratio, how it ran
    assert re.search(table.format("1 worker, 1 core", "whole"), result.stdout, flags=re.MULTILINE)
    assert re.search(table.format("2 workers", "threads"), result.stdout, flags=re.MULTILINE)
    for name in OUTPUTS:  # replaced, never written through
        assert (outside / name).read_text() == "keep me"
        assert not (out / name).is_symlink()
    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUTS)
    assert (out / "training_curves.png").read_bytes().startswith(PNG_SIGNATURE)
    assert "test_accuracy" in dp.load(out / "digits_cnn.safetensors", with_metadata=True)[1]
    model = build_model()
    model.load_state_dict(dp.load(out / "digits_cnn.safetensors"))


@pytest.mark.parametrize("args, message", [
    (["demo", "--backend", "nope"], "unknown backend 'nope'"),
    (["demo", "--workers", "0"], "--workers and --epochs must be at least 1"),
    (["bench", "--workloads", "W99"], "bench: workloads are W1, W2, W3, W4"),
])
def test_errors_are_one_line_and_exit_2(args, message):
    result = _run(*args)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert lines[0].startswith("dparray: error: ") and message in lines[0]


@pytest.mark.skipif("cupy" in dp.available_backends(), reason="this machine has a GPU")
def test_an_unavailable_backend_is_one_line():
    result = _run("demo", "--backend", "cupy")
    assert result.returncode == 2
    assert result.stderr.startswith("dparray: error: ") and "CuPy" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_an_unwritable_out_folder_is_one_line(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    result = _run("demo", "--epochs", "1", "--out", str(blocker / "sub"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"dparray: error: cannot write to --out '{blocker / 'sub'}'")


def test_info_reports_backends_and_blas():
    result = _run("info")
    assert result.returncode == 0
    assert re.search(r"^dparray \d+\.\d+\.\d+", result.stdout)
    assert re.search(r"numpy\s+available \(library numpy, version \d", result.stdout)
    assert re.search(r"cupy\s+(available|unavailable: .+)", result.stdout)
    assert re.search(r"^BLAS: \w+", result.stdout, flags=re.MULTILINE)
    assert re.search(r"CPU cores available: \d+", result.stdout)


@pytest.mark.parametrize("coretype", [None, "Haswell"])
def test_info_says_when_openblas_kernels_were_forced(coretype):
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    if coretype is not None:
        env["OPENBLAS_CORETYPE"] = coretype
    result = _run("info", env=env)
    assert result.returncode == 0, result.stderr
    openblas = [line for line in result.stdout.splitlines() if line.startswith("BLAS: openblas")]
    assert openblas  # NumPy's wheels bring OpenBLAS
    forced = f"(chosen by OPENBLAS_CORETYPE={coretype}, not by OpenBLAS's look at the CPU)"
    for line in openblas:
        assert (forced in line) is (coretype is not None)
        if coretype is not None:
            assert f"kernel {coretype} {forced}" in line


def test_bench_prints_the_ratio_table():
    result = _run("bench", "--workloads", "W2", "--rounds", "2")
    assert result.returncode == 0, result.stderr
    assert re.search(r"^\s+W2\s+[\d.]+\s+[\d.]+\s+[\d.]+x", result.stdout, flags=re.MULTILINE)


@pytest.mark.parametrize("command", ["info", "demo", "bench"])
def test_every_subcommand_has_help(command):
    result = _run(command, "--help")
    assert result.returncode == 0 and "usage: dparray" in result.stdout


def test_the_dparray_command_is_installed():
    script = pathlib.Path(sys.executable).with_name("dparray")
    result = subprocess.run([str(script), "info"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.startswith("dparray ")
