"""The tensor namespace: dparray's differentiable ops as an array-API namespace, for
``create_graph``.

Every op's ``forward`` and ``backward`` compute with ``self.xp`` on the arrays they are given.
To differentiate a backward, the engine (``dparray.ops.graph_backward``) runs it again with
``self.xp`` set to a ``TensorNamespace`` and every array replaced by a ``GraphArray``: a tensor
that looks like an array of its backend -- a native ``dtype``, ``shape``, the operators, item
assignment -- while every function and operator on it is a dparray op, so the backward records
a graph of its own; item assignment is ``index_put``, out of place. ``GraphBackend`` stands
in for the node's backend: its kernel table is empty (fused ops run their array-API
references), and the hooks a backward calls (``scatter_add``, ``erf``) are differentiable ops
too.

Functions whose results are constants (comparisons, ``argsort``, ``nonzero``, ...) and array
creation run on the backend's own namespace and come back as constant ``GraphArray``s.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from dparray import dtypes as _dtypes
from dparray.backend import Backend
from dparray.ops import arithmetic as _arith
from dparray.ops import compare as _compare
from dparray.ops import construct as _construct
from dparray.ops import copysign as _copysign
from dparray.ops import elementwise as _elementwise
from dparray.ops import exponential as _exponential
from dparray.ops import indexing as _indexing
from dparray.ops import linalg as _linalg
from dparray.ops import reduce as _reduce
from dparray.ops import rounding as _rounding
from dparray.ops import scan as _scan
from dparray.ops import shape as _shape
from dparray.ops import trigonometric as _trig
from dparray.ops.functional_updates import ScatterRows
from dparray.ops.index_put import index_put
from dparray.tensor import Tensor

_SCALARS = (int, float, bool)  # exactly these: a NumPy scalar (a float subclass) is an array


class GraphArray:
    """A ``Tensor`` seen as an array of its backend: what ``forward`` and ``backward`` receive
    under ``create_graph``. ``tensor`` is the tensor it stands for; item assignment replaces
    it with a new one (dparray never writes into an array)."""

    __slots__ = ("tensor",)
    __array_ufunc__ = None  # NumPy defers to the reflected operators below
    __array_priority__ = 1000

    def __init__(self, tensor: Tensor) -> None:
        self.tensor = tensor

    # ------------------------------------------------------------------ array attributes
    @property
    def shape(self) -> tuple[int, ...]:
        return self.tensor.shape

    @property
    def ndim(self) -> int:
        return self.tensor.ndim

    @property
    def dtype(self) -> Any:
        return self.tensor.data.dtype  # native, as forward and backward compare it

    @property
    def device(self) -> Any:
        return self.tensor.data.device

    @property
    def size(self) -> int:
        return self.tensor.elem_count()

    @property
    def T(self) -> GraphArray:
        return GraphArray(_shape.transpose(self.tensor))

    @property
    def mT(self) -> GraphArray:
        return GraphArray(_shape.transpose(self.tensor, -2, -1))

    def __repr__(self) -> str:
        return f"GraphArray({self.tensor!r})"

    # ------------------------------------------------------------------ indexing
    def __getitem__(self, key: Any) -> GraphArray:
        if key is Ellipsis:
            return self
        return GraphArray(_indexing.getitem(self.tensor, index_key(key)))

    def __setitem__(self, key: Any, value: Any) -> None:
        self.tensor = index_put(self.tensor, index_key(key), operand(value, self.tensor))

    # ------------------------------------------------------------------ Python protocols
    def __bool__(self) -> bool:
        return bool(self.tensor)

    def __float__(self) -> float:
        return float(self.tensor)

    def __int__(self) -> int:
        return int(self.tensor)

    def __index__(self) -> int:
        return self.tensor.__index__()

    def __len__(self) -> int:
        return len(self.tensor)

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    __hash__ = object.__hash__

    # ------------------------------------------------------------------ operators
    def __add__(self, other: Any) -> GraphArray:
        return _binary(_arith.add, self, other)

    def __radd__(self, other: Any) -> GraphArray:
        return _binary(_arith.add, other, self)

    def __sub__(self, other: Any) -> GraphArray:
        return _binary(_arith.sub, self, other)

    def __rsub__(self, other: Any) -> GraphArray:
        return _binary(_arith.sub, other, self)

    def __mul__(self, other: Any) -> GraphArray:
        return _binary(_arith.mul, self, other)

    def __rmul__(self, other: Any) -> GraphArray:
        return _binary(_arith.mul, other, self)

    def __truediv__(self, other: Any) -> GraphArray:
        return _binary(_arith.div, self, other)

    def __rtruediv__(self, other: Any) -> GraphArray:
        return _binary(_arith.div, other, self)

    def __pow__(self, other: Any) -> GraphArray:
        return _binary(_arith.pow, self, other)

    def __rpow__(self, other: Any) -> GraphArray:
        return _binary(_arith.pow, other, self)

    def __floordiv__(self, other: Any) -> GraphArray:
        return _binary(_arith.floor_divide, self, other)

    def __rfloordiv__(self, other: Any) -> GraphArray:
        return _binary(_arith.floor_divide, other, self)

    def __mod__(self, other: Any) -> GraphArray:
        return _binary(_arith.remainder, self, other)

    def __rmod__(self, other: Any) -> GraphArray:
        return _binary(_arith.remainder, other, self)

    def __matmul__(self, other: Any) -> GraphArray:
        return _binary(_linalg.matmul, self, other)

    def __rmatmul__(self, other: Any) -> GraphArray:
        return _binary(_linalg.matmul, other, self)

    def __neg__(self) -> GraphArray:
        return GraphArray(_arith.neg(self.tensor))

    def __pos__(self) -> GraphArray:
        return self

    def __abs__(self) -> GraphArray:
        return GraphArray(_elementwise.abs(self.tensor))

    def __eq__(self, other: Any) -> GraphArray:  # type: ignore[override]
        return _binary(_compare.equal, self, other)

    def __ne__(self, other: Any) -> GraphArray:  # type: ignore[override]
        return _binary(_compare.not_equal, self, other)

    def __lt__(self, other: Any) -> GraphArray:
        return _binary(_compare.less, self, other)

    def __le__(self, other: Any) -> GraphArray:
        return _binary(_compare.less_equal, self, other)

    def __gt__(self, other: Any) -> GraphArray:
        return _binary(_compare.greater, self, other)

    def __ge__(self, other: Any) -> GraphArray:
        return _binary(_compare.greater_equal, self, other)

    def __and__(self, other: Any) -> GraphArray:
        return _constant_binary(lambda a, b: a & b, self, other)

    def __rand__(self, other: Any) -> GraphArray:
        return _constant_binary(lambda a, b: a & b, other, self)

    def __or__(self, other: Any) -> GraphArray:
        return _constant_binary(lambda a, b: a | b, self, other)

    def __ror__(self, other: Any) -> GraphArray:
        return _constant_binary(lambda a, b: a | b, other, self)

    def __xor__(self, other: Any) -> GraphArray:
        return _constant_binary(lambda a, b: a ^ b, self, other)

    def __rxor__(self, other: Any) -> GraphArray:
        return _constant_binary(lambda a, b: a ^ b, other, self)

    def __invert__(self) -> GraphArray:
        return GraphArray(Tensor(~self.tensor.data, self.tensor.backend))


def operand(value: Any, like: Tensor) -> Any:
    """``value`` as an operand of a dparray op beside ``like``: a GraphArray's tensor, a Python
    number as it is, a backend array (a constant the op kept) as a constant tensor."""
    if isinstance(value, GraphArray):
        return value.tensor
    if isinstance(value, Tensor) or type(value) in _SCALARS or value is None:
        return value
    return Tensor(like.backend.xp.asarray(value), like.backend)


def index_key(key: Any) -> Any:
    """A key for ``Tensor.__getitem__``: GraphArrays in it as their tensors."""
    if isinstance(key, tuple):
        return tuple(k.tensor if isinstance(k, GraphArray) else k for k in key)
    return key.tensor if isinstance(key, GraphArray) else key


def _binary(op: Callable[[Any, Any], Tensor], a: Any, b: Any) -> GraphArray:
    like = a.tensor if isinstance(a, GraphArray) else b.tensor
    return GraphArray(op(operand(a, like), operand(b, like)))


def _constant_binary(op: Callable[[Any, Any], Any], a: Any, b: Any) -> GraphArray:
    like = a.tensor if isinstance(a, GraphArray) else b.tensor
    return GraphArray(Tensor(op(raw(a), raw(b)), like.backend))


def raw(value: Any) -> Any:
    """The backend array behind ``value`` (for functions whose results are constants)."""
    if isinstance(value, GraphArray):
        return value.tensor.data
    if isinstance(value, Tensor):
        return value.data
    if isinstance(value, (list, tuple)):
        return type(value)(raw(v) for v in value)
    return value


def _tensor(value: Any, backend: Backend) -> Any:
    """``value`` as a dparray op's tensor argument (a backend array becomes a constant)."""
    if isinstance(value, GraphArray):
        return value.tensor
    if isinstance(value, Tensor) or type(value) in _SCALARS:
        return value
    return Tensor(backend.xp.asarray(value), backend)


def _unary(op: Callable[[Tensor], Tensor]) -> Callable[..., GraphArray]:
    def function(self: TensorNamespace, x: Any) -> GraphArray:
        return GraphArray(op(_tensor(x, self.backend)))
    function.__name__ = op.__name__
    return function


def _pairwise(op: Callable[[Any, Any], Tensor]) -> Callable[..., GraphArray]:
    def function(self: TensorNamespace, a: Any, b: Any) -> GraphArray:
        return GraphArray(op(_tensor(a, self.backend), _tensor(b, self.backend)))
    function.__name__ = op.__name__
    return function


def _reduction(op: Callable[..., Tensor]) -> Callable[..., GraphArray]:
    def function(self: TensorNamespace, x: Any, axis: Any = None,
                 keepdims: bool = False) -> GraphArray:
        return GraphArray(op(_tensor(x, self.backend), axis=axis, keepdims=keepdims))
    function.__name__ = op.__name__
    return function


def _constant(name: str) -> Callable[..., GraphArray]:
    """The backend's own function ``name`` on the arrays behind the arguments: for results
    that are constants (tests, positions, new arrays)."""
    def function(self: TensorNamespace, *args: Any, **kwargs: Any) -> Any:
        result = getattr(self.native, name)(*raw(args), **{k: raw(v) for k, v in kwargs.items()})
        if isinstance(result, tuple):
            return tuple(GraphArray(Tensor(r, self.backend)) for r in result)
        return GraphArray(Tensor(result, self.backend))
    function.__name__ = name
    return function


class TensorNamespace:
    """The array-API namespace of dparray's ops on ``GraphArray``s of one backend (the
    ``xp`` of a backward run under ``create_graph``). A function the ops do not need is an
    AttributeError naming it."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.native = backend.xp
        for name in _dtypes.ALL_DTYPES:  # the rest (NumPy's bfloat16) when first asked for
            native = getattr(self.native, name, None)
            if native is not None:
                setattr(self, name, native)

    inf = math.inf
    nan = math.nan
    pi = math.pi
    e = math.e

    def __getattr__(self, name: str) -> Any:
        if name in _dtypes.ALL_DTYPES:
            native = _dtypes.native_or_none(self.backend, name)
            if native is not None:
                setattr(self, name, native)
                return native
        raise AttributeError(
            f"create_graph: dparray's tensor namespace has no {name!r}, which this op's "
            "forward or backward calls; write it with the functions the namespace has, or "
            "give the op a graph_backward"
        )

    # ------------------------------------------------------------------ differentiable
    exp = _unary(_elementwise.exp)
    log = _unary(_elementwise.log)
    sqrt = _unary(_elementwise.sqrt)
    abs = _unary(_elementwise.abs)
    tanh = _unary(_elementwise.tanh)
    sin = _unary(_trig.sin)
    cos = _unary(_trig.cos)
    tan = _unary(_trig.tan)
    asin = _unary(_trig.asin)
    acos = _unary(_trig.acos)
    atan = _unary(_trig.atan)
    sinh = _unary(_trig.sinh)
    cosh = _unary(_trig.cosh)
    asinh = _unary(_trig.asinh)
    acosh = _unary(_trig.acosh)
    atanh = _unary(_trig.atanh)
    expm1 = _unary(_exponential.expm1)
    log1p = _unary(_exponential.log1p)
    log2 = _unary(_exponential.log2)
    log10 = _unary(_exponential.log10)
    floor = _unary(_rounding.floor)
    ceil = _unary(_rounding.ceil)
    trunc = _unary(_rounding.trunc)
    sign = _unary(_rounding.sign)
    negative = _unary(_arith.neg)
    maximum = _pairwise(_elementwise.maximum)
    minimum = _pairwise(_elementwise.minimum)
    logaddexp = _pairwise(_exponential.logaddexp)
    atan2 = _pairwise(_trig.atan2)
    add = _pairwise(_arith.add)
    subtract = _pairwise(_arith.sub)
    multiply = _pairwise(_arith.mul)
    divide = _pairwise(_arith.div)
    pow = _pairwise(_arith.pow)
    remainder = _pairwise(_arith.remainder)
    copysign = _pairwise(_copysign.copysign)
    matmul = _pairwise(_linalg.matmul)
    sum = _reduction(_reduce.sum)
    mean = _reduction(_reduce.mean)
    prod = _reduction(_reduce.prod)
    max = _reduction(_reduce.max)
    min = _reduction(_reduce.min)

    def round(self, x: Any) -> GraphArray:
        return GraphArray(_rounding.round(_tensor(x, self.backend)))

    def where(self, condition: Any, a: Any, b: Any) -> GraphArray:
        return GraphArray(_elementwise.where(_tensor(condition, self.backend),
                                             _tensor(a, self.backend), _tensor(b, self.backend)))

    def clip(self, x: Any, min: Any = None, max: Any = None) -> GraphArray:
        x = _tensor(x, self.backend)
        if isinstance(min, (GraphArray, Tensor)) or isinstance(max, (GraphArray, Tensor)):
            out = x if min is None else _elementwise.maximum(x, _tensor(min, self.backend))
            out = out if max is None else _elementwise.minimum(out, _tensor(max, self.backend))
            return GraphArray(out)
        return GraphArray(_elementwise.clip(x, min, max))

    def astype(self, x: Any, dtype: Any, copy: bool = True) -> GraphArray:
        return GraphArray(_elementwise.astype(_tensor(x, self.backend), dtype))

    def asarray(self, obj: Any, dtype: Any = None, copy: bool | None = None,
                device: Any = None) -> GraphArray:
        if isinstance(obj, (GraphArray, Tensor)):
            out = obj if isinstance(obj, GraphArray) else GraphArray(obj)
            return out if dtype is None else self.astype(out, dtype)
        return GraphArray(Tensor(self.native.asarray(raw(obj), dtype=dtype), self.backend))

    def reshape(self, x: Any, shape: Sequence[int], copy: bool | None = None) -> GraphArray:
        return GraphArray(_shape.reshape(_tensor(x, self.backend), shape))

    def permute_dims(self, x: Any, axes: Sequence[int]) -> GraphArray:
        return GraphArray(_shape.permute(_tensor(x, self.backend), axes))

    def matrix_transpose(self, x: Any) -> GraphArray:
        return GraphArray(_shape.transpose(_tensor(x, self.backend), -2, -1))

    def moveaxis(self, x: Any, source: int, destination: int) -> GraphArray:
        x = _tensor(x, self.backend)
        order = [a for a in range(x.ndim) if a != source % x.ndim]
        order.insert(destination % x.ndim, source % x.ndim)
        return GraphArray(_shape.permute(x, order))

    def expand_dims(self, x: Any, axis: int = 0) -> GraphArray:
        return GraphArray(_shape.unsqueeze(_tensor(x, self.backend), axis))

    def squeeze(self, x: Any, axis: Any) -> GraphArray:
        return GraphArray(_shape.squeeze(_tensor(x, self.backend), axis))

    def broadcast_to(self, x: Any, shape: Sequence[int]) -> GraphArray:
        return GraphArray(_shape.broadcast_to(_tensor(x, self.backend), shape))

    def flip(self, x: Any, axis: Any = None) -> GraphArray:
        return GraphArray(_shape.flip(_tensor(x, self.backend), axis))

    def roll(self, x: Any, shift: Any, axis: Any = None) -> GraphArray:
        return GraphArray(_shape.roll(_tensor(x, self.backend), shift, axis))

    def concat(self, arrays: Sequence[Any], axis: int | None = 0) -> GraphArray:
        tensors = [_tensor(a, self.backend) for a in arrays]
        if axis is None:
            tensors, axis = [_shape.reshape(t, (-1,)) for t in tensors], 0
        return GraphArray(_shape.cat(tensors, axis))

    def stack(self, arrays: Sequence[Any], axis: int = 0) -> GraphArray:
        return GraphArray(_shape.stack([_tensor(a, self.backend) for a in arrays], axis))

    def take(self, x: Any, indices: Any, axis: int | None = None) -> GraphArray:
        x = _tensor(x, self.backend)
        if axis is None:
            x, axis = _shape.reshape(x, (-1,)), 0
        return GraphArray(_indexing.take(x, _tensor(indices, self.backend), axis))

    def take_along_axis(self, x: Any, indices: Any, axis: int = -1) -> GraphArray:
        x, indices = _tensor(x, self.backend), _tensor(indices, self.backend)
        shape = tuple(n if a == axis % x.ndim else max(n, m)
                      for a, (n, m) in enumerate(zip(indices.shape, x.shape, strict=True)))
        if shape != indices.shape:
            indices = _shape.broadcast_to(indices, shape)
        return GraphArray(_indexing.gather(x, axis, indices))

    def cumulative_sum(self, x: Any, axis: int | None = None, dtype: Any = None,
                       include_initial: bool = False) -> GraphArray:
        return GraphArray(_scan.cumsum(_tensor(x, self.backend), axis))

    def cumulative_prod(self, x: Any, axis: int | None = None, dtype: Any = None,
                        include_initial: bool = False) -> GraphArray:
        return GraphArray(_scan.cumprod(_tensor(x, self.backend), axis))

    def tril(self, x: Any, k: int = 0) -> GraphArray:
        return GraphArray(_construct.tril(_tensor(x, self.backend), k))

    def triu(self, x: Any, k: int = 0) -> GraphArray:
        return GraphArray(_construct.triu(_tensor(x, self.backend), k))

    # ------------------------------------------------------------------ constants
    def zeros_like(self, x: Any, dtype: Any = None, device: Any = None) -> GraphArray:
        return self._like("zeros_like", x, dtype)

    def ones_like(self, x: Any, dtype: Any = None, device: Any = None) -> GraphArray:
        return self._like("ones_like", x, dtype)

    def full_like(self, x: Any, fill_value: Any, dtype: Any = None,
                  device: Any = None) -> GraphArray:
        return self._like("full_like", x, dtype, fill_value)

    def _like(self, name: str, x: Any, dtype: Any, *fill: Any) -> GraphArray:
        kwargs = {} if dtype is None else {"dtype": dtype}
        array = getattr(self.native, name)(raw(x), *fill, **kwargs)
        return GraphArray(Tensor(array, self.backend))

    zeros = _constant("zeros")
    ones = _constant("ones")
    full = _constant("full")
    empty = _constant("empty")
    eye = _constant("eye")
    arange = _constant("arange")
    linspace = _constant("linspace")
    isnan = _constant("isnan")
    isinf = _constant("isinf")
    isfinite = _constant("isfinite")
    signbit = _constant("signbit")
    logical_and = _constant("logical_and")
    logical_or = _constant("logical_or")
    logical_not = _constant("logical_not")
    logical_xor = _constant("logical_xor")
    bitwise_invert = _constant("bitwise_invert")
    argsort = _constant("argsort")
    argmax = _constant("argmax")
    argmin = _constant("argmin")
    nonzero = _constant("nonzero")
    searchsorted = _constant("searchsorted")
    any = _constant("any")
    all = _constant("all")
    equal = _constant("equal")
    not_equal = _constant("not_equal")
    less = _constant("less")
    less_equal = _constant("less_equal")
    greater = _constant("greater")
    greater_equal = _constant("greater_equal")

    def isdtype(self, dtype: Any, kind: Any) -> bool:
        return bool(self.native.isdtype(dtype, kind))

    def finfo(self, dtype: Any) -> Any:
        return self.native.finfo(raw(dtype))

    def iinfo(self, dtype: Any) -> Any:
        return self.native.iinfo(raw(dtype))

    def result_type(self, *values: Any) -> Any:
        return self.native.result_type(*(v.dtype if isinstance(v, GraphArray) else v
                                         for v in values))


class GraphBackend:
    """The backend a node sees while its forward and backward run again under
    ``create_graph``: ``backend``'s members, with ``xp`` the tensor namespace, no kernel table,
    and differentiable hooks."""

    def __init__(self, backend: Backend) -> None:
        self.kernels: dict[str, Any] = {}  # the kernel table stands aside: references only
        self.backend = backend
        self.name = backend.name
        self.xp = TensorNamespace(backend)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)

    def erf(self, x: Any) -> GraphArray:
        return GraphArray(_exponential.erf(_tensor(x, self.backend)))

    def scatter_add(self, target: Any, index: Any, values: Any) -> GraphArray:
        """``target`` plus each row ``values[i]`` added at row ``index[i]``, differentiable in
        ``target`` and ``values``."""
        backend = self.backend
        return GraphArray(ScatterRows()(_tensor(target, backend), _tensor(index, backend),
                                        _tensor(values, backend)))

    def asarray(self, data: Any, dtype: Any = None) -> GraphArray:
        return self.xp.asarray(data, dtype=dtype)


_graph_backends: dict[Backend, GraphBackend] = {}


def graph_backend(backend: Backend) -> GraphBackend:
    """The one ``GraphBackend`` of ``backend``."""
    found = _graph_backends.get(backend)
    if found is None:
        found = _graph_backends.setdefault(backend, GraphBackend(backend))
    return found
