"""The base of the kernel classes: run the reference for the calls a kernel does not cover.

A kernel class lists ``Fallback`` before the reference it replaces (``class GeluKernel(Fallback,
Gelu)``), so ``super()`` inside ``Fallback`` is the reference. A kernel's ``forward`` calls
``reference_forward`` for an input it does not handle (a dtype, a layout); the node remembers
it, and its ``backward`` then calls ``reference_backward``, so the pair always matches.
"""

from __future__ import annotations

from typing import Any

from dparray.autograd import Function


class Fallback(Function):
    """See the module docstring."""

    fallback = False

    def reference_forward(self, *arrays: Any) -> Any:
        self.fallback = True
        return super().forward(*arrays)

    def reference_backward(self, grad: Any) -> Any:
        return super().backward(grad)
