"""``bench/gpu_low_precision.py`` run on NumPy: the GPU check's own code, where no GPU is (its
comparisons of CuPy with NumPy then compare NumPy with itself, so only its code is tested)."""

from __future__ import annotations

from bench import gpu_low_precision


def test_the_gpu_checks_run_and_pass_on_numpy(capsys):
    assert gpu_low_precision.check("numpy")
    printed = capsys.readouterr().out
    assert "16-bit dtypes on numpy: float16, bfloat16" in printed
    assert "float32 accumulation True, products to one rounding True" in printed


def test_the_gpu_timings_run_on_numpy(capsys):
    gpu_low_precision.time_products("numpy", n=64)
    gpu_low_precision.time_autocast_step("numpy", rounds=4)
    printed = capsys.readouterr().out
    assert printed.count("bfloat16") == 2 and printed.count("float16") == 4
