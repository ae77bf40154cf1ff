"""PyTorch's step of a workload, run in a process of its own: the comparison column.

In one process the two libraries change each other's speed. PyTorch's OpenMP threads busy-wait
after every op (its default), taking a core from dparray's next kernel: with ``torch``
imported, dparray's W3 and W4 steps took about 1.5x as long. And dparray asks OpenMP threads
to sleep (``OMP_WAIT_POLICY=PASSIVE``, for its Numba kernels): set before PyTorch loads, that
slows PyTorch (W2 about 2x, W6 1.25x). So PyTorch runs in a child process with its own
defaults: the child inherits this process's environment, so it puts back the user's
settings of the variables dparray sets (OpenMP's wait policy, OpenBLAS's spin) before it loads
PyTorch. The parent asks it for one step at a time and waits for the
answer, so the two never run at once and drift still hits both alike; the child times each
step itself, so the round trip between the processes is not counted.
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
import time
from multiprocessing.connection import Connection
from typing import Any

from dparray.backends import _openblas_setup

from dparray.tensor import Tensor

_STEP, _CLOSE = "step", "close"
_WAIT_POLICY = "OMP_WAIT_POLICY"
# The user's settings: the wait policy before dparray's kernels set theirs (this module is
# imported with the benchmarks, before any of them runs), OpenBLAS's unless dparray set it.
_USERS_SETTINGS = {
    _WAIT_POLICY: os.environ.get(_WAIT_POLICY),
    _openblas_setup.VARIABLE: None if _openblas_setup.set_here
    else os.environ.get(_openblas_setup.VARIABLE),
}


def available() -> bool:
    return importlib.util.find_spec("torch") is not None


class TorchStep:
    """``step()`` runs one PyTorch training step of workload ``name`` on ``inputs`` and
    ``targets`` in the child process and returns the seconds it took there."""

    def __init__(self, name: str, inputs: Tensor, targets: Tensor) -> None:
        context = multiprocessing.get_context("spawn")  # a fresh interpreter, not a fork
        self._connection, child_end = context.Pipe()
        self._process = context.Process(target=_serve, daemon=True,
                                        args=(child_end, name, inputs.numpy(), targets.numpy(),
                                              _USERS_SETTINGS))
        self._process.start()
        child_end.close()
        self._receive()  # built (or the child's error)

    def __call__(self) -> float:
        self._connection.send(_STEP)
        return float(self._receive())

    def close(self) -> None:
        if self._process.is_alive():
            self._connection.send(_CLOSE)
            self._process.join(timeout=10)
        self._connection.close()

    def _receive(self) -> Any:
        try:
            kind, value = self._connection.recv()
        except EOFError:
            kind, value = "error", f"it ended (exit code {self._process.exitcode})"
        if kind == "error":
            self.close()
            raise RuntimeError(f"the PyTorch process failed: {value}")
        return value


def _serve(connection: Connection, name: str, inputs: Any, targets: Any,
           settings: dict[str, str | None]) -> None:
    for variable, value in settings.items():  # read by the libraries as they load, below
        if value is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = value
    try:
        from dparray.cli.workloads import WORKLOADS, torch_step

        step = torch_step(WORKLOADS[name], inputs, targets)
        if step is None:
            raise RuntimeError("PyTorch is not installed")
    except Exception as error:  # reported to the parent, which raises it
        connection.send(("error", f"{type(error).__name__}: {error}"))
        return
    connection.send(("ready", None))
    while connection.recv() == _STEP:
        start = time.perf_counter()
        step()
        connection.send(("seconds", time.perf_counter() - start))
