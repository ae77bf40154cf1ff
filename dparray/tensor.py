"""Tensor: one backend array, its backend, and its place in the autograd graph.

A tensor is either a *variable* (a trainable leaf: ``is_variable=True``, alias
``requires_grad``), a *result* of differentiable ops on variables (it holds the op that made
it, ``grad_fn``), or a *constant*. ``loss.backward()`` returns the gradients of every variable
the loss depends on; nothing is stored on the tensors themselves.

dparray never mutates an array in place: ops and optimizers make new arrays, so a tensor's data
can be shared (``detach``, ``freeze``) without copying. Item assignment, ``x[key] = v``, keeps
that rule: it rebinds ``x`` to a new value (a copy with the entries replaced, recorded in the
graph as an index-put), and the tensors computed from ``x`` before stay as they were.

This module is the data model and nothing else: it imports neither the ops nor the engine. The
operators (``a + b``, ``x[key]``), the methods that mirror ops (``x.sum()``, ``x.reshape(...)``)
and ``backward`` are one-line forwarders inherited from ``TensorMethods``
(``dparray/tensor_methods.py``), bound to ``dparray.ops`` once that package has loaded.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from dparray import devices as _devices
from dparray import dtypes as _dtypes
from dparray._checks import normalize_axis
from dparray.backend import Backend, get_backend
from dparray.tensor_methods import TensorMethods

if TYPE_CHECKING:
    from dparray.autograd import Function

_variable_order = itertools.count()

GRADIENTS_HINT = (
    "dparray keeps no gradients on tensors: loss.backward() returns them as a Gradients "
    "mapping (grads = loss.backward(); grads[p] is p's gradient), optimizers take that "
    "(opt.step(grads)), and there is nothing to zero"
)


class Tensor(TensorMethods):
    """An n-dimensional array on a backend, tracked by autograd when it is or uses a variable.

    Make tensors with ``dparray.tensor`` and the other factories; ``Tensor(array, backend)``
    wraps an existing backend array without copying it.

    Examples:
        >>> import dparray
        >>> w = dparray.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        >>> loss = (w * w).sum()
        >>> grads = loss.backward()
        >>> grads[w].tolist()
        [[2.0, 4.0], [6.0, 8.0]]
    """

    __slots__ = ("__weakref__", "_is_variable", "_node", "_order", "backend", "data")
    __array_ufunc__ = None  # make NumPy defer to Tensor's reflected operators
    __hash__ = object.__hash__  # hashable by identity, so tensors can key a Gradients mapping

    def __init__(self, data: Any, backend: Backend | str | None = None, *,
                 is_variable: bool = False) -> None:
        self.data = data
        self.backend = get_backend(backend)
        self._node: Function | None = None
        self._is_variable = False
        self._order = -1
        if is_variable:
            self.is_variable = True

    # ----------------------------------------------------------------------------- properties
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.data.shape)

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def dtype(self) -> _dtypes.DType:
        return _dtypes.dtype_of(self.backend, self.data)

    @property
    def device(self) -> _devices.device:
        """Where the data lives, in PyTorch's words: ``device(type='cpu')`` on NumPy,
        ``cuda:N`` on CuPy, the backend's name elsewhere (``dparray/devices.py``)."""
        return _devices.device_of(self.backend, self.data)

    @property
    def is_cuda(self) -> bool:
        """Whether the data is on a CUDA device (the CuPy backend)."""
        return _devices.TYPE_OF_BACKEND.get(self.backend.name) == "cuda"

    @property
    def is_cpu(self) -> bool:
        """Whether the data is NumPy's, on the host."""
        return _devices.TYPE_OF_BACKEND.get(self.backend.name) == "cpu"

    @property
    def grad_fn(self) -> Function | None:
        """The op that produced this tensor, when it is part of a graph."""
        return self._node

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def is_variable(self) -> bool:
        """True for a trainable leaf: ``backward()`` returns a gradient for it."""
        return self._is_variable

    @is_variable.setter
    def is_variable(self, value: bool) -> None:
        if value and not self._is_variable:
            if self._node is not None:
                raise ValueError(
                    "only leaf tensors can be variables; this one was computed by "
                    f"{type(self._node).__name__} (use .detach() to make a new leaf)"
                )
            if not self.dtype.is_floating:
                raise TypeError(f"only floating tensors can be variables, got {self.dtype.name}")
            self._order = next(_variable_order)
        self._is_variable = bool(value)

    @property
    def requires_grad(self) -> bool:
        """True for variables and for every tensor computed from one (PyTorch's meaning).

        Setting it sets ``is_variable``.
        """
        return self._is_variable or self._node is not None

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.is_variable = value

    @property
    def grad(self) -> Tensor:
        """Not here: ``backward()`` returns the gradients (an AttributeError that says so)."""
        raise AttributeError(f"Tensor has no .grad: {GRADIENTS_HINT}")

    def requires_grad_(self, value: bool = True) -> Tensor:
        """Set ``requires_grad`` and return ``self``."""
        self.is_variable = value
        return self

    def elem_count(self) -> int:
        """The number of elements (the product of the shape)."""
        return math.prod(self.data.shape)

    numel = elem_count

    # ---------------------------------------------------------------------- values
    def detach(self) -> Tensor:
        """A constant sharing this tensor's data, outside any graph."""
        return Tensor(self.data, self.backend)

    def freeze(self) -> Tensor:
        """A copy of this tensor with ``is_variable=False``: gradients stop there."""
        return self.detach()

    def item(self) -> float | int | bool:
        """The value of a single-element tensor as a Python number."""
        if self.elem_count() != 1:
            raise ValueError(
                f"item() needs a tensor with exactly one element, got shape {self.shape}"
            )
        scalar = self.backend.xp.reshape(self.data, ())
        kind = self.dtype.kind
        if kind == "float":
            return float(scalar)
        if kind == "bool":
            return bool(scalar)
        return int(scalar)

    def tolist(self) -> Any:
        """The values as nested Python lists (a Python number for a 0-d tensor)."""
        return self.numpy().tolist()

    def numpy(self) -> Any:
        """The values as a NumPy array (on the CPU it may share memory: do not modify it)."""
        return self.backend.to_numpy(self.data)

    def size(self, dim: int | None = None) -> Any:
        """The shape as a tuple (PyTorch's ``torch.Size``), or the length of axis ``dim``."""
        if dim is None:
            return self.shape
        return self.shape[normalize_axis(dim, self.ndim, "size")]

    def dim(self) -> int:
        """The number of dimensions (``ndim``)."""
        return self.ndim

    # ------------------------------------------------------------------ Python protocols
    def __repr__(self) -> str:
        values = self.numpy()
        if self.dtype is _dtypes.bfloat16:  # ml_dtypes prints 1.0 as "1" and 0.1 as 0.100098;
            values = values.astype("float32")  # float32 holds every bfloat16 value exactly
        text = repr(values)  # NumPy's "array([...], dtype=...)": keep the brackets
        end = text.rfind(", dtype=")
        body = text[text.index("(") + 1:end if end != -1 else -1].replace("\n", "\n ")
        extra = ", is_variable=True" if self._is_variable else ""
        extra += f", grad_fn={type(self._node).__name__}" if self._node is not None else ""
        return f"tensor({body}, dtype={self.dtype.name}, backend={self.backend.name}{extra})"

    def __format__(self, spec: str) -> str:
        """A 0-d tensor formats as its value (``f"{loss:.4f}"``); other tensors only without
        a format spec, as in PyTorch."""
        if self.ndim == 0:
            return format(self.item(), spec)
        if not spec:
            return str(self)
        raise TypeError(f"unsupported format string {spec!r} for a tensor of shape "
                        f"{self.shape}: only 0-d tensors take one (format t.item() or t.tolist())")

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.data.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        for i in range(len(self)):
            yield self[i]

    def __bool__(self) -> bool:
        if self.elem_count() != 1:
            raise ValueError(
                f"the truth value of a tensor of shape {self.shape} is ambiguous; "
                "use .any() or .all()"
            )
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.kind not in ("int", "uint") or self.elem_count() != 1:
            raise TypeError(
                f"only single-element integer tensors can be used as an index, got "
                f"{self.dtype.name} of shape {self.shape}"
            )
        return int(self.item())

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        # asarray: NumPy hands back 0-d results as scalars, which have no __dlpack__
        return self.backend.xp.asarray(self.data).__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        return self.backend.xp.asarray(self.data).__dlpack_device__()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> Any:
        array = self.numpy()
        return array if dtype is None else array.astype(dtype)

    def __copy__(self) -> Tensor:
        """A new tensor sharing this one's data (a new variable if this is one)."""
        return self._copy_with(self.data)

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        """A new leaf tensor with its own copy of the data; the backend is shared."""
        if self._node is not None:
            raise RuntimeError(
                "only leaf tensors can be deep-copied; this one was computed by "
                f"{type(self._node).__name__} (copy its .detach())"
            )
        copied = self._copy_with(self.backend.xp.asarray(self.data, copy=True))
        memo[id(self)] = copied
        return copied

    def rebind(self, value: Tensor, *, keep_graph: bool = False) -> None:
        """Make this tensor object hold ``value``'s data and, unless ``keep_graph``, its place
        in the graph: what item assignment does (``dparray.index_put_``). The old data is
        left as it was, so tensors that shared it or were computed from it do not change.
        A variable stays the same variable (its data replaced)."""
        if value.backend is not self.backend:
            raise ValueError(f"rebind: the value is on backend {value.backend.name!r}, the "
                             f"tensor on {self.backend.name!r}")
        self.data = value.data
        if not keep_graph and not self._is_variable:
            self._node = value._node

    def _copy_with(self, data: Any) -> Tensor:
        return Tensor(data, self.backend, is_variable=self._is_variable)


def from_op(data: Any, backend: Backend, node: Function | None) -> Tensor:
    """Wrap an op's output array; the hot path of every op, so it skips ``__init__``."""
    tensor = _new_tensor(Tensor)
    tensor.data = data
    tensor.backend = backend
    tensor._node = node
    tensor._is_variable = False
    tensor._order = -1
    return tensor


_new_tensor = object.__new__
