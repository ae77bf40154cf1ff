"""Moving a tensor to another backend or device, differentiably: the gradient moves back."""

from __future__ import annotations

from typing import Any

from dparray import devices as _devices
from dparray.autograd import Function
from dparray.backend import Backend
from dparray.tensor import Tensor

__all__ = [
    "to_backend",
]


class ToBackend(Function):
    """``x`` copied to backend ``target`` (through the host: the common ground of all), on its
    native device ``device`` (None: the backend's default)."""

    def __init__(self, target: Backend, device: Any = None) -> None:
        self.target = target
        self.device = device

    def forward(self, x: Any) -> Any:
        self.source_device = x.device
        if self.target is self.backend:
            return _devices.on_device(self.target, x, self.device)
        moved = self.target.asarray(self.backend.to_numpy(x))
        return _devices.on_device(self.target, moved, self.device)

    def backward(self, grad: Any) -> Any:
        if self.target is not self.backend:
            grad = self.backend.asarray(self.target.to_numpy(grad))
        return _devices.on_device(self.backend, grad, self.source_device)


def to_backend(x: Tensor, target: Backend, device: Any = None) -> Tensor:
    """``x`` on backend ``target`` and its native device ``device`` (None: wherever the
    backend puts new arrays); ``x`` itself when it is there already."""
    if x.backend is target and (device is None or x.data.device == device):
        return x
    out = ToBackend(target, device)(x)
    out.backend = target  # the one op whose output lives on another backend than its input
    return out
