"""Print dparray's version, every registered backend (available or why not), the array
libraries' versions, the BLAS library with its kernel and threads, the CPU cores, and the CUDA
devices CuPy sees.

An OpenBLAS kernel forced by ``OPENBLAS_CORETYPE`` is marked as such: a setting inherited from
the environment can hold OpenBLAS to older kernels than the CPU runs (``Haswell``'s AVX2 ones
on a CPU with AVX-512 ran every product markedly slower), and nothing else says so."""

from __future__ import annotations

import os
import platform

import dparray as dp
from dparray._system import available_cores
from dparray.backend import describe


def run() -> int:
    print(f"dparray {dp.__version__} (Python {platform.python_version()})")
    print(f"CPU cores available: {available_cores()}")
    print("backends:")
    for name in dp.registered_backends():
        try:
            facts = describe(dp.get_backend(name))
        except (dp.BackendUnavailableError, TypeError) as error:
            print(f"  {name:<18} unavailable: {error}")
            continue
        details = ", ".join(f"{key} {value}" for key, value in facts.items())
        print(f"  {name:<18} available ({details})")
    for library in _blas():
        print(f"BLAS: {library}")
    return 0


def _blas() -> list[str]:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        return ["unknown (threadpoolctl missing)"]
    dp.get_backend("numpy")  # load NumPy, and its BLAS, first
    found = []
    for entry in threadpool_info():
        if entry.get("user_api") != "blas":
            continue
        details = [f"{entry.get('internal_api')} {entry.get('version')}"]
        if entry.get("architecture"):  # MKL does not report one
            details.append(f"kernel {entry['architecture']}{_forced(entry)}")
        details.append(f"{entry.get('num_threads')} threads")
        found.append(f"{', '.join(details)} ({entry.get('filepath')})")
    return found or ["none found"]


def _forced(entry: dict[str, str]) -> str:
    chosen = os.environ.get("OPENBLAS_CORETYPE")
    if entry.get("internal_api") != "openblas" or not chosen:
        return ""
    return f" (chosen by OPENBLAS_CORETYPE={chosen}, not by OpenBLAS's look at the CPU)"
