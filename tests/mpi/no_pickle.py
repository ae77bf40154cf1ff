"""Make mpi4py's pickle-based calls fail, so a scenario proves dparray never unpickles."""

from mpi4py import MPI


def _refuse(*args, **kwargs):
    raise RuntimeError("dparray.distributed used mpi4py's pickle")


def forbid_pickle():
    MPI.pickle.__init__(_refuse, _refuse)
