"""Tensor: one backend array, its backend, and its place in the autograd graph.

A tensor is either a *variable* (a trainable leaf: ``is_variable=True``, alias
``requires_grad``), a *result* of differentiable ops on variables (it holds the op that made
it, ``grad_fn``), or a *constant*. ``loss.backward()`` returns the gradients of every variable
the loss depends on; nothing is stored on the tensors themselves.

dparray never mutates an array in place: ops and optimizers make new arrays, so a tensor's data
can be shared (``detach``, ``freeze``) without copying.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from dparray import dtypes as _dtypes
from dparray.backend import Backend, get_backend

if TYPE_CHECKING:
    from dparray.autograd import Function
    from dparray.gradients import Gradients
    from dparray.ops.sorting import ValuesIndices

_variable_order = itertools.count()

GRADIENTS_HINT = (
    "dparray keeps no gradients on tensors: loss.backward() returns them as a Gradients "
    "mapping (grads = loss.backward(); grads[p] is p's gradient), optimizers take that "
    "(opt.step(grads)), and there is nothing to zero"
)


class Tensor:
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
    def device(self) -> Any:
        return self.data.device

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

    # ---------------------------------------------------------------------- graph and values
    def backward(self, grad: Tensor | None = None, *, retain_graph: bool = False) -> Gradients:
        """Gradients of this tensor with respect to every variable it depends on.

        ``grad`` is the gradient flowing in (ones when omitted, which needs a single-element
        tensor). The graph's saved arrays are freed on the way unless ``retain_graph``.
        """
        return _autograd.backward(self, grad, retain_graph=retain_graph)

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

    def to(self, target: Any) -> Tensor:
        """This tensor on another backend (by name or object), or cast to a dtype.

        Moving between backends is differentiable: the gradient moves back.
        """
        if isinstance(target, _dtypes.DType) or (
            isinstance(target, str) and target in _dtypes.ALL_DTYPES
        ):
            return self.astype(target)
        return _ops.to_backend(self, get_backend(target))

    def astype(self, dtype: Any) -> Tensor:
        """This tensor cast to ``dtype``; differentiable between floating dtypes."""
        return _ops.astype(self, dtype)

    # ------------------------------------------------------------------ Python protocols
    def __repr__(self) -> str:
        text = repr(self.numpy())  # NumPy's "array([...], dtype=...)": keep the brackets
        end = text.rfind(", dtype=")
        body = text[text.index("(") + 1:end if end != -1 else -1].replace("\n", "\n ")
        extra = ", is_variable=True" if self._is_variable else ""
        extra += f", grad_fn={type(self._node).__name__}" if self._node is not None else ""
        return f"tensor({body}, dtype={self.dtype.name}, backend={self.backend.name}{extra})"

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

    def _copy_with(self, data: Any) -> Tensor:
        return Tensor(data, self.backend, is_variable=self._is_variable)

    def __setitem__(self, key: Any, value: Any) -> None:
        raise TypeError(
            "dparray tensors are immutable; build a new one, e.g. with dparray.where(mask, a, b)"
        )

    # ------------------------------------------------------------------ operators
    def __add__(self, other: Any) -> Tensor:
        return _ops.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _ops.add(other, self)

    def __sub__(self, other: Any) -> Tensor:
        return _ops.sub(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _ops.sub(other, self)

    def __mul__(self, other: Any) -> Tensor:
        return _ops.mul(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _ops.mul(other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return _ops.div(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _ops.div(other, self)

    def __pow__(self, other: Any) -> Tensor:
        return _ops.pow(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return _ops.pow(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return _ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _ops.matmul(other, self)

    def __neg__(self) -> Tensor:
        return _ops.neg(self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return _ops.abs(self)

    def __getitem__(self, key: Any) -> Tensor:
        return _ops.getitem(self, key)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _ops.equal(self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _ops.not_equal(self, other)

    def __lt__(self, other: Any) -> Tensor:
        return _ops.less(self, other)

    def __le__(self, other: Any) -> Tensor:
        return _ops.less_equal(self, other)

    def __gt__(self, other: Any) -> Tensor:
        return _ops.greater(self, other)

    def __ge__(self, other: Any) -> Tensor:
        return _ops.greater_equal(self, other)

    def __mod__(self, other: Any) -> Tensor:
        return _ops.remainder(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return _ops.remainder(other, self)

    def __floordiv__(self, other: Any) -> Tensor:
        return _ops.floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return _ops.floor_divide(other, self)

    def __and__(self, other: Any) -> Tensor:
        return _ops.bitwise_and(self, other)

    def __rand__(self, other: Any) -> Tensor:
        return _ops.bitwise_and(other, self)

    def __or__(self, other: Any) -> Tensor:
        return _ops.bitwise_or(self, other)

    def __ror__(self, other: Any) -> Tensor:
        return _ops.bitwise_or(other, self)

    def __xor__(self, other: Any) -> Tensor:
        return _ops.bitwise_xor(self, other)

    def __rxor__(self, other: Any) -> Tensor:
        return _ops.bitwise_xor(other, self)

    def __lshift__(self, other: Any) -> Tensor:
        return _ops.bitwise_left_shift(self, other)

    def __rlshift__(self, other: Any) -> Tensor:
        return _ops.bitwise_left_shift(other, self)

    def __rshift__(self, other: Any) -> Tensor:
        return _ops.bitwise_right_shift(self, other)

    def __rrshift__(self, other: Any) -> Tensor:
        return _ops.bitwise_right_shift(other, self)

    def __invert__(self) -> Tensor:
        return _ops.bitwise_invert(self)

    # ------------------------------------------------------------------ methods mirroring ops
    def exp(self) -> Tensor:
        return _ops.exp(self)

    def log(self) -> Tensor:
        return _ops.log(self)

    def sqrt(self) -> Tensor:
        return _ops.sqrt(self)

    def abs(self) -> Tensor:
        return _ops.abs(self)

    def tanh(self) -> Tensor:
        return _ops.tanh(self)

    def sigmoid(self) -> Tensor:
        return _ops.sigmoid(self)

    def relu(self) -> Tensor:
        return _ops.relu(self)

    def gelu(self, approximate: str = "none") -> Tensor:
        return _ops.gelu(self, approximate=approximate)

    def softplus(self, beta: float = 1.0) -> Tensor:
        return _ops.softplus(self, beta=beta)

    def clip(self, min: float | None = None, max: float | None = None) -> Tensor:
        return _ops.clip(self, min, max)

    def maximum(self, other: Any) -> Tensor:
        return _ops.maximum(self, other)

    def minimum(self, other: Any) -> Tensor:
        return _ops.minimum(self, other)

    def sum(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.mean(self, axis=axis, keepdims=keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.max(self, axis=axis, keepdims=keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.min(self, axis=axis, keepdims=keepdims)

    def var(self, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Tensor:
        return _ops.var(self, axis=axis, correction=correction, keepdims=keepdims)

    def logsumexp(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.logsumexp(self, axis=axis, keepdims=keepdims)

    def softmax(self, axis: int = -1) -> Tensor:
        return _ops.softmax(self, axis=axis)

    def log_softmax(self, axis: int = -1) -> Tensor:
        return _ops.log_softmax(self, axis=axis)

    def all(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.all(self, axis=axis, keepdims=keepdims)

    def any(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.any(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis: int | None = None, keepdims: bool = False) -> Tensor:
        return _ops.argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis: int | None = None, keepdims: bool = False) -> Tensor:
        return _ops.argmin(self, axis=axis, keepdims=keepdims)

    def prod(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.prod(self, axis=axis, keepdims=keepdims)

    def std(self, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Tensor:
        return _ops.std(self, axis=axis, correction=correction, keepdims=keepdims)

    def cumsum(self, axis: int | None = None) -> Tensor:
        return _ops.cumsum(self, axis)

    def cumprod(self, axis: int | None = None) -> Tensor:
        return _ops.cumprod(self, axis)

    def cummax(self, axis: int | None = None) -> ValuesIndices:
        return _ops.cummax(self, axis)

    def cummin(self, axis: int | None = None) -> ValuesIndices:
        return _ops.cummin(self, axis)

    def logcumsumexp(self, axis: int | None = None) -> Tensor:
        return _ops.logcumsumexp(self, axis)

    def sort(self, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
        return _ops.sort(self, axis=axis, descending=descending, stable=stable)

    def argsort(self, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
        return _ops.argsort(self, axis=axis, descending=descending, stable=stable)

    def topk(self, k: int, axis: int = -1, largest: bool = True,
             sorted: bool = True) -> ValuesIndices:
        return _ops.topk(self, k, axis=axis, largest=largest, sorted=sorted)

    def sin(self) -> Tensor:
        return _ops.sin(self)

    def cos(self) -> Tensor:
        return _ops.cos(self)

    def tan(self) -> Tensor:
        return _ops.tan(self)

    def asin(self) -> Tensor:
        return _ops.asin(self)

    def acos(self) -> Tensor:
        return _ops.acos(self)

    def atan(self) -> Tensor:
        return _ops.atan(self)

    def sinh(self) -> Tensor:
        return _ops.sinh(self)

    def cosh(self) -> Tensor:
        return _ops.cosh(self)

    def asinh(self) -> Tensor:
        return _ops.asinh(self)

    def acosh(self) -> Tensor:
        return _ops.acosh(self)

    def atanh(self) -> Tensor:
        return _ops.atanh(self)

    def floor(self) -> Tensor:
        return _ops.floor(self)

    def ceil(self) -> Tensor:
        return _ops.ceil(self)

    def trunc(self) -> Tensor:
        return _ops.trunc(self)

    def sign(self) -> Tensor:
        return _ops.sign(self)

    def exp2(self) -> Tensor:
        return _ops.exp2(self)

    def expm1(self) -> Tensor:
        return _ops.expm1(self)

    def log2(self) -> Tensor:
        return _ops.log2(self)

    def log10(self) -> Tensor:
        return _ops.log10(self)

    def log1p(self) -> Tensor:
        return _ops.log1p(self)

    def rsqrt(self) -> Tensor:
        return _ops.rsqrt(self)

    def erf(self) -> Tensor:
        return _ops.erf(self)

    def isnan(self) -> Tensor:
        return _ops.isnan(self)

    def isinf(self) -> Tensor:
        return _ops.isinf(self)

    def isfinite(self) -> Tensor:
        return _ops.isfinite(self)

    def logical_not(self) -> Tensor:
        return _ops.logical_not(self)

    def round(self, decimals: int = 0) -> Tensor:
        return _ops.round(self, decimals=decimals)

    def atan2(self, other: Any) -> Tensor:
        return _ops.atan2(self, other)

    def logaddexp(self, other: Any) -> Tensor:
        return _ops.logaddexp(self, other)

    def lerp(self, end: Any, weight: Any) -> Tensor:
        return _ops.lerp(self, end, weight)

    def remainder(self, other: Any) -> Tensor:
        return _ops.remainder(self, other)

    def floor_divide(self, other: Any) -> Tensor:
        return _ops.floor_divide(self, other)

    def logical_and(self, other: Any) -> Tensor:
        return _ops.logical_and(self, other)

    def logical_or(self, other: Any) -> Tensor:
        return _ops.logical_or(self, other)

    def logical_xor(self, other: Any) -> Tensor:
        return _ops.logical_xor(self, other)

    def isclose(self, other: Any, rtol: float = 1e-05, atol: float = 1e-08,
                equal_nan: bool = False) -> Tensor:
        return _ops.isclose(self, other, rtol=rtol, atol=atol, equal_nan=equal_nan)

    def allclose(self, other: Any, rtol: float = 1e-05, atol: float = 1e-08,
                 equal_nan: bool = False) -> bool:
        return _ops.allclose(self, other, rtol=rtol, atol=atol, equal_nan=equal_nan)

    def reshape(self, *shape: Any) -> Tensor:
        return _ops.reshape(self, _shape_arg(shape))

    def permute(self, *axes: Any) -> Tensor:
        return _ops.permute(self, _shape_arg(axes))

    def transpose(self, axis0: int = -2, axis1: int = -1) -> Tensor:
        return _ops.transpose(self, axis0, axis1)

    @property
    def T(self) -> Tensor:
        """All axes reversed (NumPy's ``.T``)."""
        return _ops.permute(self, tuple(reversed(range(self.ndim))))

    @property
    def mT(self) -> Tensor:
        """The last two axes swapped (the array API's ``.mT``)."""
        return _ops.transpose(self, -2, -1)

    def expand(self, *shape: Any) -> Tensor:
        return _ops.expand(self, _shape_arg(shape))

    def broadcast_to(self, shape: tuple[int, ...]) -> Tensor:
        return _ops.broadcast_to(self, shape)

    def squeeze(self, axis: Any = None) -> Tensor:
        return _ops.squeeze(self, axis)

    def unsqueeze(self, axis: int) -> Tensor:
        return _ops.unsqueeze(self, axis)

    def flatten(self, start_axis: int = 0, end_axis: int = -1) -> Tensor:
        return _ops.flatten(self, start_axis, end_axis)

    def split(self, split_size_or_sections: Any, axis: int = 0) -> tuple[Tensor, ...]:
        return _ops.split(self, split_size_or_sections, axis=axis)

    def chunk(self, chunks: int, axis: int = 0) -> tuple[Tensor, ...]:
        return _ops.chunk(self, chunks, axis=axis)

    # ------------------------------------------------- PyTorch conveniences, indexing, layout
    def view(self, *shape: Any) -> Tensor:
        """The same as ``reshape``: dparray never writes into an array, so a view and a copy
        of a tensor cannot be told apart, and ``view`` works whatever the memory layout."""
        return _ops.reshape(self, _shape_arg(shape))

    def size(self, dim: int | None = None) -> Any:
        """The shape as a tuple (PyTorch's ``torch.Size``), or the length of axis ``dim``."""
        if dim is None:
            return self.shape
        return self.shape[_normalize_axis(dim, self.ndim, "size")]

    def dim(self) -> int:
        """The number of dimensions (``ndim``)."""
        return self.ndim

    def clone(self) -> Tensor:
        """A differentiable copy (``dparray.clone``)."""
        return _ops.clone(self)

    def flip(self, axis: Any = None) -> Tensor:
        return _ops.flip(self, axis)

    def roll(self, shift: Any, axis: Any = None) -> Tensor:
        return _ops.roll(self, shift, axis)

    def tile(self, *repetitions: Any) -> Tensor:
        return _ops.tile(self, _shape_arg(repetitions))

    def repeat(self, *sizes: Any) -> Tensor:
        """PyTorch's ``Tensor.repeat``: whole copies of the tensor, ``sizes[i]`` along axis
        ``i`` (``dparray.tile``; not the array API's ``repeat``, which is
        ``repeat_interleave``). ``sizes`` has at least as many entries as the tensor has axes."""
        sizes = _shape_arg(sizes)
        if len(sizes) < self.ndim:
            raise ValueError(
                f"repeat: {len(sizes)} sizes for a tensor of {self.ndim} dimensions; give at "
                "least one per axis"
            )
        return _ops.tile(self, sizes)

    def repeat_interleave(self, repeats: Any, axis: int | None = None) -> Tensor:
        return _ops.repeat_interleave(self, repeats, axis)

    def gather(self, axis: int, index: Any) -> Tensor:
        return _ops.gather(self, axis, index)

    def scatter(self, axis: int, index: Any, src: Any = None, *, value: Any = None) -> Tensor:
        return _ops.scatter(self, axis, index, src, value=value)

    def scatter_add(self, axis: int, index: Any, src: Tensor) -> Tensor:
        return _ops.scatter_add(self, axis, index, src)

    def index_select(self, axis: int, index: Any) -> Tensor:
        return _ops.index_select(self, axis, index)

    def masked_fill(self, mask: Tensor, value: Any) -> Tensor:
        return _ops.masked_fill(self, mask, value)

    def tril(self, k: int = 0) -> Tensor:
        return _ops.tril(self, k)

    def triu(self, k: int = 0) -> Tensor:
        return _ops.triu(self, k)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
        return _ops.diagonal(self, offset, axis1, axis2)

    def diag(self, offset: int = 0) -> Tensor:
        return _ops.diag(self, offset)

    def matmul(self, other: Any) -> Tensor:
        return _ops.matmul(self, other)


def _shape_arg(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Accept both ``t.reshape(2, 3)`` and ``t.reshape((2, 3))``."""
    if len(args) == 1 and not isinstance(args[0], int):
        return tuple(args[0])
    return args


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

# Imported last: both modules use Tensor, defined above.
from dparray import autograd as _autograd  # noqa: E402
from dparray import ops as _ops  # noqa: E402
from dparray.ops._util import normalize_axis as _normalize_axis  # noqa: E402
