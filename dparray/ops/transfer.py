"""Moving a tensor to another backend, differentiably: the gradient moves back."""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function
from dparray.backend import Backend
from dparray.tensor import Tensor

__all__ = [
    "to_backend",
]


class ToBackend(Function):
    """``x`` copied to backend ``target`` (through the host: the common ground of all)."""

    def __init__(self, target: Backend) -> None:
        self.target = target

    def forward(self, x: Any) -> Any:
        return self.target.asarray(self.backend.to_numpy(x))

    def backward(self, grad: Any) -> Any:
        return self.backend.asarray(self.target.to_numpy(grad))

    def graph_backward(self, grad: Tensor) -> Tensor:
        """The backward under ``create_graph``: the gradient moved back, differentiably."""
        return to_backend(grad, self.backend)


def to_backend(x: Tensor, target: Backend) -> Tensor:
    """``x`` on backend ``target``; ``x`` itself when it is there already."""
    if x.backend is target:
        return x
    out = ToBackend(target)(x)
    out.backend = target  # the one op whose output lives on another backend than its input
    return out
