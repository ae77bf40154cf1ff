"""Gradients: what ``backward()`` returns and what optimizers take.

A read-only mapping from each variable tensor (by identity) to its gradient tensor, in the
order the variables were created -- for a model, the order of its parameters. Nothing is
stored on the variables, so nothing needs zeroing and two backward passes can run at once.
Gradients of several passes combine with ``+`` (a variable missing on one side counts as
zero), and scale with ``*`` and ``/`` by a number. Gradients made by
``backward(create_graph=True)`` are tensors in a graph, and their sums and multiples stay in it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from dparray.tensor import Tensor

_NUMBER = (int, float)


class Gradients(Mapping[Tensor, Tensor]):
    """Variable tensor -> gradient tensor of the same shape.

    Examples:
        >>> import dparray
        >>> w = dparray.tensor([1.0, 2.0], requires_grad=True)
        >>> g = (w * w).sum().backward() + (3.0 * w).sum().backward()
        >>> (g * 0.5)[w].tolist()
        [2.5, 3.5]
    """

    __slots__ = ("_grads",)

    def __init__(self, grads: dict[Tensor, Tensor] | None = None) -> None:
        self._grads: dict[Tensor, Tensor] = dict(grads or {})
        for variable, grad in self._grads.items():
            if not isinstance(variable, Tensor) or not isinstance(grad, Tensor):
                raise TypeError(f"Gradients map tensors to tensors, got "
                                f"{type(variable).__name__} -> {type(grad).__name__}")

    def __getitem__(self, variable: Tensor) -> Tensor:
        try:
            return self._grads[variable]
        except KeyError:
            raise KeyError(
                f"no gradient for this tensor (shape {getattr(variable, 'shape', '?')}): it is "
                "not a variable the differentiated value depends on"
            ) from None
        except TypeError:
            raise TypeError(
                f"Gradients are keyed by Tensor, got {type(variable).__name__}"
            ) from None

    def __iter__(self) -> Iterator[Tensor]:
        return iter(self._grads)

    def __len__(self) -> int:
        return len(self._grads)

    def __contains__(self, variable: object) -> bool:
        try:
            return variable in self._grads
        except TypeError:
            return False

    __eq__ = object.__eq__  # Mapping's value comparison would compare tensors elementwise
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shapes = ", ".join(str(t.shape) for t in self._grads)
        return f"Gradients({len(self)} variables: {shapes})"

    def __add__(self, other: Gradients) -> Gradients:
        if not isinstance(other, Gradients):
            return NotImplemented
        merged = dict(self._grads)
        for variable, grad in other._grads.items():
            mine = merged.get(variable)
            merged[variable] = grad if mine is None else _combine(mine, grad)
        ordered = sorted(merged, key=lambda t: t._order)
        return Gradients({t: merged[t] for t in ordered})

    def __mul__(self, factor: float) -> Gradients:
        if isinstance(factor, bool) or not isinstance(factor, _NUMBER):
            return NotImplemented
        return self._map(lambda data: data * factor)

    __rmul__ = __mul__

    def __truediv__(self, divisor: float) -> Gradients:
        if isinstance(divisor, bool) or not isinstance(divisor, _NUMBER):
            return NotImplemented
        return self._map(lambda data: data / divisor)

    def _map(self, function: Any) -> Gradients:
        return Gradients({v: function(g) if g._node is not None else
                          Tensor(function(g.data), g.backend) for v, g in self._grads.items()})


def _combine(a: Tensor, b: Tensor) -> Tensor:
    if a.backend is not b.backend:
        raise ValueError(
            f"cannot add gradients of backends {a.backend.name!r} and {b.backend.name!r}"
        )
    if a._node is not None or b._node is not None:  # create_graph gradients: stay in the graph
        return a + b
    return Tensor(a.data + b.data, a.backend)
