"""Tensor's operators and the methods that mirror ops: one-line forwarders to ``dparray.ops``.

``Tensor`` (``tensor.py``, the data model) inherits them. This module sits beside ``tensor.py``
in the import order, below the ops, so it cannot import them: ``dparray/ops/__init__.py`` calls
``bind`` once every op is loaded, handing over the ops package and the engine's ``backward``.
Every method here only forwards; the op's own docstring says what it computes.
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from dparray import devices as _devices
from dparray import dtypes as _dtypes
from dparray._aliases import torch_names
from dparray._checks import TensorBase

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
_creation: Any = _Unbound()


def bind(ops: ModuleType, backward: Callable[..., Gradients],
         creation: ModuleType | None = None) -> None:
    """Connect the forwarders to the ops package, the engine and the factories (for
    ``new_zeros`` and its kin); ``dparray.ops`` calls it."""
    global _ops, _backward, _creation
    _ops, _backward = ops, backward
    if creation is not None:
        _creation = creation


class _Conversions(TensorBase):
    """PyTorch's dtype methods (``x.float()``, ``x.long()``, ``x.type(...)``), kept in a class
    of their own: their names (``int``, ``float``, ``bool``, ``type``) would hide the builtins
    from the annotations of the class that defines them."""

    __slots__ = ()

    if TYPE_CHECKING:  # defined by TensorMethods and Tensor
        def to(self, *args: Any, **kwargs: Any) -> Tensor: ...

        @property
        def is_cuda(self) -> builtins.bool: ...

        @property
        def dtype(self) -> _dtypes.DType: ...

    def type(self, dtype: Any = None) -> Any:
        """Without an argument, PyTorch's name of the tensor's type (``"dparray.FloatTensor"``;
        ``"dparray.cuda.FloatTensor"`` on CUDA); with one, this tensor cast to that dtype (a
        dtype, its name, or a type name such as ``"torch.DoubleTensor"``)."""
        if dtype is None:
            prefix = "dparray.cuda" if self.is_cuda else "dparray"
            return f"{prefix}.{_TYPE_NAMES.get(self.dtype.name, self.dtype.name)}"
        if isinstance(dtype, str) and dtype not in _dtypes.ALL_DTYPES:
            dtype = _dtype_of_type_name(dtype)
        return self.to(dtype)

    def type_as(self, other: Tensor) -> Tensor:
        """This tensor cast to ``other``'s dtype."""
        return self.to(other.dtype)

    def float(self) -> Tensor:
        """Cast to float32 (PyTorch's ``torch.float``)."""
        return self.to(_dtypes.float32)

    def double(self) -> Tensor:
        """Cast to float64."""
        return self.to(_dtypes.float64)

    def half(self) -> Tensor:
        """Cast to float16."""
        return self.to(_dtypes.float16)

    def long(self) -> Tensor:
        """Cast to int64."""
        return self.to(_dtypes.int64)

    def int(self) -> Tensor:
        """Cast to int32."""
        return self.to(_dtypes.int32)

    def short(self) -> Tensor:
        """Cast to int16."""
        return self.to(_dtypes.int16)

    def byte(self) -> Tensor:
        """Cast to uint8."""
        return self.to(_dtypes.uint8)

    def bool(self) -> Tensor:
        """Cast to bool (non-zero is True)."""
        return self.to(_dtypes.bool_)



class TensorMethods(_Conversions):
    """The operators, ``backward``, ``to``/``astype`` and the op methods of ``Tensor``."""

    __slots__ = ()

    if TYPE_CHECKING:  # defined by Tensor; declared for the forwarders that read them
        @property
        def ndim(self) -> int: ...

        @property
        def shape(self) -> tuple[int, ...]: ...

        @property
        def device(self) -> _devices.device: ...

        def elem_count(self) -> int: ...

    # ---------------------------------------------------------------------- graph and dtype
    def backward(self, grad: Tensor | None = None, *, retain_graph: bool | None = None,
                 create_graph: bool = False,
                 inputs: Tensor | Sequence[Tensor] | None = None) -> Gradients:
        """Gradients of this tensor with respect to every variable it depends on, or only to
        ``inputs`` (PyTorch's argument: ``loss.backward(inputs=generator.parameters())``
        leaves out a discriminator's parameters, and skips computing their gradients).

        ``grad`` is the gradient flowing in (ones when omitted, which needs a single-element
        tensor). The graph's saved arrays are freed on the way unless ``retain_graph``. With
        ``create_graph=True`` the gradients are tensors in a graph of their own, to
        differentiate again (the graph is then kept unless ``retain_graph=False``).

        Examples:
            >>> import dparray
            >>> a = dparray.tensor([1.0, 2.0], requires_grad=True)
            >>> b = dparray.tensor([3.0, 4.0], requires_grad=True)
            >>> grads = (a * b).sum().backward(inputs=[a])
            >>> len(grads), grads[a].tolist()
            (1, [3.0, 4.0])
        """
        return _backward(self, grad, retain_graph=retain_graph, create_graph=create_graph,
                         inputs=inputs)

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """This tensor on another device, or cast to another dtype, or both, with PyTorch's
        arguments: ``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(other)`` (its
        device and dtype), ``to(device=..., dtype=..., non_blocking=..., copy=...)``.

        A device is a ``dparray.device``, a string (``"cpu"``, ``"cuda:1"``, a backend's name)
        or a backend; ``non_blocking`` is accepted and has no effect. The tensor itself comes
        back when nothing changes (unless ``copy=True``), so ``x.to(x.device)`` is ``x``.
        Moving is differentiable: the gradient moves back.
        """
        target, dtype, copy = _devices.parse_to(args, kwargs, "Tensor.to")
        out: Any = self
        if target is not None:
            backend, native = _devices.placement(target, "Tensor.to")
            out = _ops.to_backend(out, backend, native)
        if dtype is not None and _dtypes.to_dtype(dtype, out.backend) is not out.dtype:
            out = out.astype(dtype)
        if copy and out is self:
            out = _ops.clone(self)
        return out

    def cpu(self) -> Tensor:
        """This tensor on the CPU (the NumPy backend); itself when it is there."""
        return self.to("cpu")

    def cuda(self, device: Any = None, non_blocking: bool = False) -> Tensor:
        """This tensor on a CUDA device (the CuPy backend): the current one, or ``device``
        (an index, ``"cuda:1"``, a ``dparray.device``); itself when it is there."""
        return self.to(_devices.cuda_device(device, "Tensor.cuda"), non_blocking=non_blocking)

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

    def clamp(self, min: float | None = None, max: float | None = None) -> Tensor:
        return _ops.clip(self, min, max)

    def maximum(self, other: Any) -> Tensor:
        return _ops.maximum(self, other)

    def minimum(self, other: Any) -> Tensor:
        return _ops.minimum(self, other)

    def sum(self, axis: Any = None, keepdims: bool = False, *, dtype: Any = None) -> Tensor:
        return _ops.sum(self, axis=axis, keepdims=keepdims, dtype=dtype)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.mean(self, axis=axis, keepdims=keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.max(self, axis=axis, keepdims=keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.min(self, axis=axis, keepdims=keepdims)

    def var(self, axis: Any = None, correction: float | bool | None = None,
            keepdims: bool = False, *, unbiased: bool | None = None) -> Tensor:
        return _ops.var(self, axis, correction, keepdims, unbiased=unbiased)

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

    def prod(self, axis: Any = None, keepdims: bool = False, *, dtype: Any = None) -> Tensor:
        return _ops.prod(self, axis=axis, keepdims=keepdims, dtype=dtype)

    def std(self, axis: Any = None, correction: float | bool | None = None,
            keepdims: bool = False, *, unbiased: bool | None = None) -> Tensor:
        return _ops.std(self, axis, correction, keepdims, unbiased=unbiased)

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

    def roll(self, shift: Any = None, axis: Any = None) -> Tensor:
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

    def scatter(self, axis: int, index: Any, src: Any = None, *, value: Any = None,
                reduce: str | None = None) -> Tensor:
        return _ops.scatter(self, axis, index, src, value=value, reduce=reduce)

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

    # --------------------------------------------------------- PyTorch's Tensor methods
    def contiguous(self) -> Self:
        """Itself: dparray's arrays have no strides to make contiguous."""
        return self

    def is_contiguous(self) -> bool:
        """True: dparray's arrays have no strides (see ``contiguous``)."""
        return True

    def t(self) -> Tensor:
        """A 2-D tensor transposed; a 0-d or 1-d tensor itself, as PyTorch's ``t()``."""
        if self.ndim > 2:
            raise ValueError(f"t() expects a tensor of at most 2 dimensions, got {self.ndim}; "
                             "use transpose(axis0, axis1) or .mT")
        return _ops.transpose(self, 0, 1) if self.ndim == 2 else self  # type: ignore[return-value]

    def narrow(self, axis: int, start: Any, length: int) -> Tensor:
        return _ops.narrow(self, axis, start, length)

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating one."""
        return self.dtype.is_floating

    def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
        """Zeros of ``size``, with this tensor's dtype and device unless given."""
        return _creation.zeros(*size, **self._like(dtype, device), requires_grad=requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Tensor:
        """Ones of ``size``, with this tensor's dtype and device unless given."""
        return _creation.ones(*size, **self._like(dtype, device), requires_grad=requires_grad)

    def new_empty(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
        """A tensor of ``size``, with this tensor's dtype and device unless given (its
        values are zeros: dparray has no uninitialised memory to hand out)."""
        return _creation.empty(*size, **self._like(dtype, device), requires_grad=requires_grad)

    def new_full(self, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Tensor:
        """``fill_value`` in the shape ``size``, with this tensor's dtype and device unless
        given."""
        return _creation.full(size, fill_value, **self._like(dtype, device),
                              requires_grad=requires_grad)

    def new_tensor(self, data: Any, *, dtype: Any = None, device: Any = None,
                   requires_grad: bool = False) -> Tensor:
        """A new tensor (a copy, outside any graph) holding ``data``, with this tensor's dtype
        and device unless given."""
        return _creation.tensor(data, **self._like(dtype, device), requires_grad=requires_grad)

    def _like(self, dtype: Any, device: Any) -> dict[str, Any]:
        return {"dtype": self.dtype if dtype is None else dtype,
                "device": self.device if device is None else device}

    def eq(self, other: Any) -> Tensor:
        return _ops.equal(self, other)

    def ne(self, other: Any) -> Tensor:
        return _ops.not_equal(self, other)

    def lt(self, other: Any) -> Tensor:
        return _ops.less(self, other)

    def le(self, other: Any) -> Tensor:
        return _ops.less_equal(self, other)

    def gt(self, other: Any) -> Tensor:
        return _ops.greater(self, other)

    def ge(self, other: Any) -> Tensor:
        return _ops.greater_equal(self, other)

    def pow(self, exponent: Any) -> Tensor:
        return _ops.pow(self, exponent)

    def add(self, other: Any, *, alpha: Any = 1) -> Tensor:
        """``self + alpha * other``, as PyTorch's ``add``."""
        return _ops.add(self, other if alpha == 1 else _ops.mul(other, alpha))

    def sub(self, other: Any, *, alpha: Any = 1) -> Tensor:
        """``self - alpha * other``, as PyTorch's ``sub``."""
        return _ops.sub(self, other if alpha == 1 else _ops.mul(other, alpha))

    def mul(self, other: Any) -> Tensor:
        return _ops.mul(self, other)

    def neg(self) -> Tensor:
        return _ops.neg(self)

    def view_as(self, other: Tensor) -> Tensor:
        """This tensor in ``other``'s shape (``reshape``; see ``view``)."""
        return _ops.reshape(self, other.shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        """This tensor in ``other``'s shape."""
        return _ops.reshape(self, other.shape)

    def expand_as(self, other: Tensor) -> Tensor:
        """This tensor broadcast to ``other``'s shape."""
        return _ops.expand(self, other.shape)

    def nelement(self) -> int:
        """The number of elements (``numel``)."""
        return self.elem_count()

    def __setitem__(self, key: Any, value: Any) -> None:
        """``x[key] = value``: rebinds ``x`` to a copy with those entries replaced
        (``dparray.index_put_``); tensors computed from ``x`` before keep their values."""
        _ops.index_put_(self, key, value)

    def index_put(self, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
        return _ops.index_put(self, indices, values, accumulate=accumulate)

    def index_put_(self, indices: Any, values: Any, accumulate: bool = False) -> Self:
        _ops.index_put_(self, indices, values, accumulate=accumulate)
        return self


    # ------------------------------------------------------- PyTorch's ops of the peer op tests
    def div(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        return _ops.div(self, other, rounding_mode=rounding_mode)

    def fmod(self, other: Any) -> Tensor:
        return _ops.fmod(self, other)

    def copysign(self, other: Any) -> Tensor:
        return _ops.copysign(self, other)

    def nonzero(self, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
        return _ops.nonzero(self, as_tuple=as_tuple)

    def masked_select(self, mask: Tensor) -> Tensor:
        return _ops.masked_select(self, mask)

    def unfold(self, axis: int, size: int, step: int) -> Tensor:
        return _ops.unfold(self, axis, size, step)

    def unflatten(self, axis: int, sizes: Any) -> Tensor:
        return _ops.unflatten(self, axis, sizes)

    def scatter_reduce(self, axis: int, index: Any, src: Tensor, reduce: str, *,
                       include_self: bool = True) -> Tensor:
        return _ops.scatter_reduce(self, axis, index, src, reduce, include_self=include_self)

    # ------------------------------------ PyTorch's products, reductions, shapes, searches
    def mm(self, mat2: Tensor) -> Tensor:
        return _ops.mm(self, mat2)

    def mv(self, vec: Tensor) -> Tensor:
        return _ops.mv(self, vec)

    def dot(self, tensor: Tensor) -> Tensor:
        return _ops.dot(self, tensor)

    def bmm(self, mat2: Tensor) -> Tensor:
        return _ops.bmm(self, mat2)

    def addmm(self, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return _ops.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def baddbmm(self, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
                alpha: Any = 1) -> Tensor:
        return _ops.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def outer(self, vec2: Tensor) -> Tensor:
        return _ops.outer(self, vec2)

    def kron(self, other: Tensor) -> Tensor:
        return _ops.kron(self, other)

    def trace(self) -> Tensor:
        return _ops.trace(self)

    def diag_embed(self, offset: int = 0, axis1: int = -2, axis2: int = -1) -> Tensor:
        return _ops.diag_embed(self, offset, axis1, axis2)

    def amax(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.amax(self, axis, keepdims)

    def amin(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.amin(self, axis, keepdims)

    def aminmax(self, *, axis: Any = None, keepdims: bool = False) -> Any:
        return _ops.aminmax(self, axis=axis, keepdims=keepdims)

    def nansum(self, axis: Any = None, keepdims: bool = False, *, dtype: Any = None) -> Tensor:
        return _ops.nansum(self, axis, keepdims, dtype=dtype)

    def nanmean(self, axis: Any = None, keepdims: bool = False, *,
                dtype: Any = None) -> Tensor:
        return _ops.nanmean(self, axis, keepdims, dtype=dtype)

    def count_nonzero(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return _ops.count_nonzero(self, axis, keepdims)

    def median(self, axis: int | None = None, keepdims: bool = False
               ) -> Tensor | ValuesIndices:
        return _ops.median(self, axis, keepdims)

    def norm(self, p: Any = "fro", axis: Any = None, keepdims: bool = False,
             dtype: Any = None) -> Tensor:
        return _ops.norm(self, p, axis, keepdims, dtype)

    def nan_to_num(self, nan: float = 0.0, posinf: float | None = None,
                   neginf: float | None = None) -> Tensor:
        return _ops.nan_to_num(self, nan, posinf, neginf)

    def hypot(self, other: Any) -> Tensor:
        return _ops.hypot(self, other)

    def clamp_min(self, min: float) -> Tensor:
        return _ops.clamp_min(self, min)

    def clamp_max(self, max: float) -> Tensor:
        return _ops.clamp_max(self, max)

    def erfinv(self) -> Tensor:
        return _ops.erfinv(self)

    def diff(self, n: int = 1, axis: int = -1, prepend: Tensor | None = None,
             append: Tensor | None = None) -> Tensor:
        return _ops.diff(self, n, axis, prepend, append)

    def unbind(self, axis: int = 0) -> tuple[Tensor, ...]:
        return _ops.unbind(self, axis)

    def movedim(self, source: Any, destination: Any) -> Tensor:
        return _ops.movedim(self, source, destination)

    def moveaxis(self, source: Any, destination: Any) -> Tensor:
        return _ops.movedim(self, source, destination)

    def swapaxes(self, axis0: int, axis1: int) -> Tensor:
        return _ops.swapaxes(self, axis0, axis1)

    def swapdims(self, axis0: int, axis1: int) -> Tensor:
        return _ops.swapaxes(self, axis0, axis1)

    def take_along_dim(self, indices: Any, axis: int | None = None) -> Tensor:
        return _ops.take_along_dim(self, indices, axis)

    def index_add(self, axis: int, index: Any, source: Tensor, *, alpha: Any = 1) -> Tensor:
        return _ops.index_add(self, axis, index, source, alpha=alpha)

    def bincount(self, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
        return _ops.bincount(self, weights, minlength)


_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
               "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
               "bool": "BoolTensor"}
_DTYPE_OF_TYPE_NAME = {name: dtype for dtype, name in _TYPE_NAMES.items()}


def _dtype_of_type_name(name: str) -> str:
    """The dtype of a PyTorch type name (``"torch.DoubleTensor"``, ``"dparray.LongTensor"``)."""
    prefix, _, kind = name.rpartition(".")
    if prefix in ("torch", "dparray") and kind in _DTYPE_OF_TYPE_NAME:
        return _DTYPE_OF_TYPE_NAME[kind]
    raise TypeError(f"Tensor.type: unknown dtype or type name {name!r}; give a dtype, its name "
                    f"({', '.join(_dtypes.ALL_DTYPES)}) or a name such as 'torch.FloatTensor'")


def _shape_arg(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Accept both ``t.reshape(2, 3)`` and ``t.reshape((2, 3))``."""
    if len(args) == 1 and not isinstance(args[0], int):
        return tuple(args[0])
    return args




for _name, _member in list(vars(TensorMethods).items()):  # dim= for axis=, keepdim= ...
    if inspect.isfunction(_member):
        setattr(TensorMethods, _name, torch_names(_member, f"Tensor.{_name}"))
