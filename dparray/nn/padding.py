"""Padding layers, PyTorch's ``ZeroPad``, ``ConstantPad``, ``ReflectionPad``,
``ReplicationPad`` and ``CircularPad`` in 1-D, 2-D and 3-D: each is ``F.pad``
(``dparray.ops.pad``) with its mode and widths fixed, so its gradients are ``F.pad``'s.

``padding`` is an int (the same width on every side) or ``2 * dims`` ints in ``F.pad``'s
order, last axis first: ``(left, right)``, ``(left, right, top, bottom)``,
``(left, right, top, bottom, front, back)``; a negative width crops. Unlike PyTorch, which
takes a tuple of any length here and pads as many axes as it covers, a tuple of another length
is a ValueError when the layer is made.
"""

from __future__ import annotations

from typing import Any, ClassVar

from dparray._checks import check_int_tuple, check_number, check_tensor
from dparray.nn.module import Module
from dparray.ops.pad import pad
from dparray.tensor import Tensor

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
    "ZeroPad3d",
]

_AXES = {1: "W", 2: "H, W", 3: "D, H, W"}


class _PadNd(Module):
    """What the padding layers share: ``dims`` padded axes, ``F.pad``'s ``_mode``, and the
    widths as ``padding`` (a tuple of ``2 * dims`` ints, as PyTorch keeps it)."""

    dims: ClassVar[int] = 1
    _mode: ClassVar[str] = "constant"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = check_int_tuple(padding, "padding", type(self).__name__, 2 * self.dims)

    def forward(self, x: Tensor) -> Tensor:
        self._check_input(x)
        return pad(x, self.padding, self._mode)

    def _check_input(self, x: Any) -> None:
        """PyTorch's rule for the non-constant modes: batched ``(N, C, *axes)`` or unbatched
        ``(C, *axes)`` input."""
        where = type(self).__name__
        check_tensor(x, "input", where)
        if x.ndim not in (self.dims + 1, self.dims + 2):
            axes = _AXES[self.dims]
            raise ValueError(f"{where}: expected a {self.dims + 1}-D (C, {axes}) or "
                             f"{self.dims + 2}-D (N, C, {axes}) input, got shape {x.shape}")

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    """Pads with ``value``. Like PyTorch's, it takes input of any number of axes, at least
    the ``dims`` it pads."""

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        check_number(value, "value", type(self).__name__, finite=False)
        self.value = value

    def forward(self, x: Tensor) -> Tensor:
        self._check_input(x)
        return pad(x, self.padding, "constant", self.value)

    def _check_input(self, x: Any) -> None:
        where = type(self).__name__
        check_tensor(x, "input", where)
        if x.ndim < self.dims:
            raise ValueError(f"{where}: expected an input of at least {self.dims} dimensions, "
                             f"got shape {x.shape}")

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last axis with ``value``: ``padding`` is an int or ``(left, right)``.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.ConstantPad1d((1, 2), 3.5)(dp.tensor([[1.0, 2.0]])).tolist()
        [[3.5, 1.0, 2.0, 3.5, 3.5]]
    """

    dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two axes with ``value``: ``padding`` is an int or
    ``(left, right, top, bottom)``.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.ConstantPad2d((1, 0, 0, 1), -1.0)(dp.ones(1, 1, 1)).tolist()
        [[[-1.0, 1.0], [-1.0, -1.0]]]
    """

    dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last three axes with ``value``: ``padding`` is an int or
    ``(left, right, top, bottom, front, back)``.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.ConstantPad3d((0, 0, 0, 0, 1, 1), 2.0)(dp.ones(1, 1, 1, 1)).shape
        (1, 3, 1, 1)
    """

    dims = 3


class _ZeroPadNd(_ConstantPadNd):
    """Pads with zeros (False for a bool tensor)."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def forward(self, x: Tensor) -> Tensor:
        self._check_input(x)
        return pad(x, self.padding, "constant")  # the tensor's own zero: False for bools

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd, ConstantPad1d):
    """Pads the last axis with zeros: ``padding`` is an int or ``(left, right)``.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.ZeroPad1d((2, -1))(dp.tensor([1.0, 2.0, 3.0])).tolist()
        [0.0, 0.0, 1.0, 2.0]
    """


class ZeroPad2d(_ZeroPadNd, ConstantPad2d):
    """Pads the last two axes with zeros: ``padding`` is an int or
    ``(left, right, top, bottom)``.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.ZeroPad2d(1)(dp.ones(1, 1, 1)).tolist()
        [[[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]]
    """


class ZeroPad3d(_ZeroPadNd, ConstantPad3d):
    """Pads the last three axes with zeros: ``padding`` is an int or
    ``(left, right, top, bottom, front, back)``.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.ZeroPad3d(1)(dp.ones(1, 1, 1, 1)).shape
        (1, 3, 3, 3)
    """


class ReflectionPad1d(_PadNd):
    """Pads the last axis of ``(C, W)`` or ``(N, C, W)`` input with its mirror image,
    leaving out the edge entry; each width must be less than the axis's length.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.ReflectionPad1d(2)(dp.tensor([[1.0, 2.0, 3.0]])).tolist()
        [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]]
    """

    dims, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Pads the last two axes of ``(C, H, W)`` or ``(N, C, H, W)`` input with their mirror
    image (see ``ReflectionPad1d``).

    Examples:
        >>> import dparray as dp
        >>> x = dp.arange(4.0).reshape(1, 2, 2)
        >>> dp.nn.ReflectionPad2d((1, 0, 0, 1))(x).tolist()
        [[[1.0, 0.0, 1.0], [3.0, 2.0, 3.0], [1.0, 0.0, 1.0]]]
    """

    dims, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Pads the last three axes of ``(C, D, H, W)`` or ``(N, C, D, H, W)`` input with their
    mirror image (see ``ReflectionPad1d``).

    Examples:
        >>> import dparray as dp
        >>> dp.nn.ReflectionPad3d(1)(dp.ones(1, 1, 2, 2, 2)).shape
        (1, 1, 4, 4, 4)
    """

    dims, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Pads the last axis of ``(C, W)`` or ``(N, C, W)`` input by repeating its edge entries.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.ReplicationPad1d((1, 2))(dp.tensor([[1.0, 2.0]])).tolist()
        [[1.0, 1.0, 2.0, 2.0, 2.0]]
    """

    dims, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Pads the last two axes of ``(C, H, W)`` or ``(N, C, H, W)`` input by repeating their
    edge entries.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.ReplicationPad2d((0, 1, 1, 0))(dp.arange(4.0).reshape(1, 2, 2)).tolist()
        [[[0.0, 1.0, 1.0], [0.0, 1.0, 1.0], [2.0, 3.0, 3.0]]]
    """

    dims, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Pads the last three axes of ``(C, D, H, W)`` or ``(N, C, D, H, W)`` input by
    repeating their edge entries.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.ReplicationPad3d((1, 1, 0, 0, 0, 2))(dp.ones(1, 1, 2, 2, 2)).shape
        (1, 1, 4, 2, 4)
    """

    dims, _mode = 3, "replicate"


class CircularPad1d(_PadNd):
    """Pads the last axis of ``(C, W)`` or ``(N, C, W)`` input by wrapping around: the
    entries at one end continue past the other. Each width must be at most the axis's length.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.CircularPad1d((2, 1))(dp.tensor([[1.0, 2.0, 3.0]])).tolist()
        [[2.0, 3.0, 1.0, 2.0, 3.0, 1.0]]
    """

    dims, _mode = 1, "circular"


class CircularPad2d(_PadNd):
    """Pads the last two axes of ``(C, H, W)`` or ``(N, C, H, W)`` input by wrapping around
    (see ``CircularPad1d``).

    Examples:
        >>> import dparray as dp
        >>> dp.nn.CircularPad2d((1, 0, 1, 0))(dp.arange(4.0).reshape(1, 2, 2)).tolist()
        [[[3.0, 2.0, 3.0], [1.0, 0.0, 1.0], [3.0, 2.0, 3.0]]]
    """

    dims, _mode = 2, "circular"


class CircularPad3d(_PadNd):
    """Pads the last three axes of ``(C, D, H, W)`` or ``(N, C, D, H, W)`` input by wrapping
    around (see ``CircularPad1d``).

    Examples:
        >>> import dparray as dp
        >>> dp.nn.CircularPad3d(1)(dp.ones(1, 1, 2, 2, 2)).shape
        (1, 1, 4, 4, 4)
    """

    dims, _mode = 3, "circular"
