"""``dparray.accelerator``: PyTorch's ``torch.accelerator``, with CUDA (CuPy) as the one
accelerator dparray knows by PyTorch's name."""

from __future__ import annotations

from dparray import cuda as _cuda
from dparray.devices import device

__all__ = ["current_accelerator", "device_count", "is_available", "synchronize"]


def is_available() -> bool:
    """Whether an accelerator (a CUDA device, through CuPy) can be used here."""
    return _cuda.is_available()


def current_accelerator(check_available: bool = False) -> device | None:
    """``device("cuda")`` where CUDA is available, else None, as in PyTorch (whose
    ``check_available=False`` also names a build's accelerator that cannot run here: dparray
    has no build to name one)."""
    return device("cuda") if _cuda.is_available() else None


def device_count() -> int:
    """The number of accelerator devices (0 without one)."""
    return _cuda.device_count()


def synchronize() -> None:
    """Wait for every queued accelerator kernel to finish."""
    _cuda.synchronize()
