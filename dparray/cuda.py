"""``dparray.cuda``: PyTorch's ``torch.cuda`` questions, answered by the CuPy backend.

``"cuda"`` devices are the CuPy backend's (``dparray/devices.py``), so CUDA is available when
CuPy imports and sees a device. Nothing here imports CuPy unless it is asked.
"""

from __future__ import annotations

from dparray import random as _random
from dparray.backend import Backend, BackendUnavailableError, get_backend
from dparray.devices import BACKEND_OF_TYPE, native_devices

__all__ = ["device_count", "is_available", "manual_seed", "manual_seed_all", "synchronize"]


def _backend() -> Backend | None:
    try:
        return get_backend(BACKEND_OF_TYPE["cuda"])
    except BackendUnavailableError:
        return None


def is_available() -> bool:
    """Whether a CUDA device can be used here (through CuPy).

    Examples:
        >>> import dparray as dp
        >>> device = dp.device("cuda" if dp.cuda.is_available() else "cpu")
        >>> dp.zeros(2, device=device).device == device
        True
    """
    return _backend() is not None


def device_count() -> int:
    """The number of CUDA devices CuPy sees (0 without CuPy or a device)."""
    backend = _backend()
    return 0 if backend is None else len(native_devices(backend))


def synchronize() -> None:
    """Wait for every queued GPU kernel to finish (nothing to wait for without CUDA)."""
    backend = _backend()
    if backend is not None:
        backend.synchronize()


def manual_seed(seed: int) -> None:
    """Restart the random streams from ``seed``: ``dparray.manual_seed``, which seeds every
    backend's stream at once (PyTorch's seeds only CUDA's), so ``manual_seed(s)`` followed by
    ``cuda.manual_seed(s)`` does what it does in PyTorch."""
    _random.manual_seed(seed)


manual_seed_all = manual_seed
