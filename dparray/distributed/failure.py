"""How a job of several ranks fails as a whole: an uncaught exception (or ``abort_on_error``)
prints the traceback marked with the rank and aborts every rank, instead of leaving the others
waiting in a collective."""

from __future__ import annotations

import os
import sys
import time
import traceback
from typing import Any

_FORWARD_S = 0.25  # time for mpiexec to forward a failing rank's last words before the abort

_hooked: list[Any] = []  # the communicator an uncaught exception aborts, once set


def abort_on_uncaught_exceptions(comm: Any) -> None:
    """Chain a ``sys.excepthook`` that aborts the job, the first time ``comm`` has several
    ranks (one process keeps Python's usual behaviour, interactive sessions included)."""
    if _hooked or not is_mpi(comm) or comm.Get_size() < 2:
        return
    _hooked.append(comm)
    previous = sys.excepthook

    def abort_the_job(kind: type[BaseException], error: BaseException, tb: Any) -> None:
        if previous is not sys.__excepthook__:
            previous(kind, error, tb)  # the user's own hook still runs
        abort(comm, error)

    sys.excepthook = abort_the_job


def abort(comm: Any, error: BaseException) -> None:
    """Print ``error``'s traceback, each line marked with the rank, and abort the job."""
    lines = traceback.format_exception(type(error), error, error.__traceback__)
    abort_with(comm, "".join(lines), exit_status(error))


def abort_with(comm: Any, text: str, status: int = 1) -> None:
    marked = "".join(f"[rank {comm.Get_rank()}] {line}" for line in text.splitlines(True))
    sys.stdout.flush()
    sys.stderr.write(marked if marked.endswith("\n") else marked + "\n")
    sys.stderr.flush()
    if is_mpi(comm):
        time.sleep(_FORWARD_S)  # the launcher drops output it has not forwarded when aborting
    comm.Abort(status)
    if is_mpi(comm):
        os._exit(status)  # MPICH's Abort may return before the launcher ends this process


def is_mpi(comm: Any) -> bool:
    MPI = sys.modules.get("mpi4py.MPI")
    return MPI is not None and isinstance(comm, MPI.Comm)


def exit_status(error: BaseException) -> int:
    if isinstance(error, KeyboardInterrupt):
        return 130  # what a shell reports for Ctrl-C
    if isinstance(error, SystemExit) and isinstance(error.code, int) and error.code > 0:
        return error.code
    return 1
