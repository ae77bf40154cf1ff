"""Tensor's operators and the methods that mirror ops: one-line forwarders to ``dparray.ops``.

``Tensor`` (``tensor.py``, the data model) inherits them. This module sits beside ``tensor.py``
in the import order, below the ops, so it cannot import them: ``dparray/ops/__init__.py`` calls
``bind`` once every op is loaded, handing over the ops package and the engine's ``backward``.
Every method here only forwards; the op's own docstring says what it computes.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from dparray import dtypes as _dtypes
from dparray._checks import TensorBase
from dparray.backend import get_backend

if TYPE_CHECKING:
    from typing_extensions import Self

    from dparray.gradients import Gradients
    from dparray.ops.sorting import ValuesIndices
    from dparray.tensor import Tensor


class _Unbound:
    """What ``_ops`` and ``_backward`` are until ``bind`` runs: a clear error, not a None."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"dparray.ops is not loaded yet (Tensor needs ops.{name}): "
                           "import dparray")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("dparray.autograd is not loaded yet: import dparray")


_ops: Any = _Unbound()
_backward: Callable[..., Gradients] = _Unbound()


def bind(ops: ModuleType, backward: Callable[..., Gradients]) -> None:
    """Connect the forwarders to the ops package and the engine (``dparray.ops`` calls it)."""
    global _ops, _backward
    _ops, _backward = ops, backward


class TensorMethods(TensorBase):
    """The operators, ``backward``, ``to``/``astype`` and the op methods of ``Tensor``."""

    __slots__ = ()

    if TYPE_CHECKING:  # defined by Tensor; declared for the forwarders that read it
        @property
        def ndim(self) -> int: ...

    # ---------------------------------------------------------------------- graph and dtype
    def backward(self, grad: Tensor | None = None, *, retain_graph: bool | None = None,
                 create_graph: bool = False) -> Gradients:
        """Gradients of this tensor with respect to every variable it depends on.

        ``grad`` is the gradient flowing in (ones when omitted, which needs a single-element
        tensor). The graph's saved arrays are freed on the way unless ``retain_graph``. With
        ``create_graph=True`` the gradients are tensors in a graph of their own, to
        differentiate again (the graph is then kept unless ``retain_graph=False``).
        """
        return _backward(self, grad, retain_graph=retain_graph, create_graph=create_graph)

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

    def __pos__(self) -> Self:
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


