"""Function transforms with the names of ``torch.func`` and JAX: ``grad``, ``value_and_grad``,
``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``, ``hvp`` and ``functional_call``.

Each takes a function of tensors -- or of pytrees of tensors: tuples, lists and dicts nested in
any way -- and returns its derivatives in the same structure. They are built on
``dparray.autograd.grad``: reverse mode, and forward-mode products through the double-vjp
identity (``J v`` is the gradient, with respect to ``u``, of ``u . J v``'s transpose: of the
vjp ``J^T u``, linear in ``u``). Transforms nest (``hessian`` is ``jacrev`` of ``jacrev``): an
argument that is already in a graph keeps its place in it, and a derivative is itself built as
a graph whenever something outside the transform may differentiate it -- the argument was
tracked, or the function reads tracked tensors (a model's parameters) -- and as plain values
otherwise, which costs one backward pass less. The variables a transform makes for its arguments
are constants again once it returns, so ``backward()`` of a loss built from its results gives
gradients for the model's parameters only.

``functional_call(module, params, args)`` runs a module with some of its parameters and
buffers replaced, so a model's loss becomes a function of a dict of parameters that the
transforms differentiate.

Examples:
    >>> import dparray as dp
    >>> f = lambda x: (x ** 3).sum()
    >>> x = dp.tensor([1.0, 2.0])
    >>> dp.func.grad(f)(x).tolist()
    [3.0, 12.0]
    >>> dp.func.hessian(f)(x).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from dparray import _tree
from dparray.autograd import (
    Function,
    enable_grad,
    is_grad_enabled,
    next_sequence_number,
)
from dparray.autograd import grad as _grad
from dparray.creation import zeros_like
from dparray.nn.module import Module
from dparray.ops.shape import reshape, stack
from dparray.tensor import Tensor

__all__ = [
    "grad",
    "value_and_grad",
    "vjp",
    "jvp",
    "jacrev",
    "jacfwd",
    "hessian",
    "hvp",
    "functional_call",
]

Argnums = int | tuple[int, ...]


# ------------------------------------------------------------------------------ transforms
def grad(f: Callable[..., Any], argnums: Argnums = 0,
         has_aux: bool = False) -> Callable[..., Any]:
    """The gradient of ``f`` (whose value is a single-element tensor) with respect to its
    arguments ``argnums`` (an int: that argument's structure; a tuple: a tuple of them). With
    ``has_aux``, ``f`` returns ``(value, aux)`` and the function returns ``(grad, aux)``.

    Examples:
        >>> import dparray as dp
        >>> g = dp.func.grad(lambda p: (p["w"] * p["b"]).sum())
        >>> {k: v.tolist() for k, v in g({"w": dp.tensor([2.0]), "b": dp.tensor([3.0])}).items()}
        {'w': [3.0], 'b': [2.0]}
    """
    def gradient(*args: Any, **kwargs: Any) -> Any:
        (_, aux), grads = _value_and_grad(f, argnums, has_aux, args, kwargs)
        return (grads, aux) if has_aux else grads
    return gradient


def value_and_grad(f: Callable[..., Any], argnums: Argnums = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """``f``'s value and its gradient (as ``grad`` gives it), in one evaluation: JAX's
    ``value_and_grad``, returning ``(value, grad)``, or ``((value, aux), grad)`` with
    ``has_aux``.

    Examples:
        >>> import dparray as dp
        >>> value, g = dp.func.value_and_grad(lambda x: (x * x).sum())(dp.tensor([3.0]))
        >>> value.item(), g.tolist()
        (9.0, [6.0])
    """
    def both(*args: Any, **kwargs: Any) -> Any:
        (value, aux), grads = _value_and_grad(f, argnums, has_aux, args, kwargs)
        return ((value, aux), grads) if has_aux else (value, grads)
    return both


def vjp(f: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``f(*primals)`` and a function of cotangents (one per output, in the output's
    structure) returning the vector-Jacobian products, one per primal: ``(output, vjp_fn)``,
    or ``(output, vjp_fn, aux)`` with ``has_aux``. ``vjp_fn`` may be called many times.

    Examples:
        >>> import dparray as dp
        >>> out, vjp_fn = dp.func.vjp(lambda x: x * x, dp.tensor([1.0, 2.0]))
        >>> vjp_fn(dp.tensor([1.0, 10.0]))[0].tolist()
        [2.0, 40.0]
    """
    call = _Call(f, primals, tuple(range(len(primals))), {})
    out, aux = call.split(call.run(), has_aux)
    outputs, structure = _tree.flatten(out, Tensor)
    graph = call.needs_graph(outputs)

    def vjp_fn(cotangents: Any) -> tuple[Any, ...]:
        given, other = _tree.flatten(cotangents, Tensor)
        if len(given) != len(outputs) or not _tree.same_structure(structure, other):
            raise ValueError(f"vjp: the cotangents must have the output's structure ("
                             f"{len(outputs)} tensors), got {len(given)}")
        for o, c in zip(outputs, given, strict=True):
            if o.shape != c.shape:
                raise ValueError(f"vjp: a cotangent of shape {c.shape} for an output of shape "
                                 f"{o.shape}")
        tracked = [(o, c) for o, c in zip(outputs, given, strict=True) if _is_tracked(o)]
        if not tracked:
            return call.rebuild_all([None] * len(call.leaves))
        found = _grad([o for o, _ in tracked], call.leaves, [c for _, c in tracked],
                      retain_graph=True, create_graph=graph, allow_unused=True)
        return call.rebuild_all(list(found))

    value = out if graph else _detached(out)
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def jvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple[Any, ...]:
    """``f(*primals)`` and the Jacobian-vector product with ``tangents`` (one per primal, in
    its structure): ``(output, jvp_out)``, as ``torch.func.jvp``; ``(output, jvp_out, aux)``
    with ``has_aux``. Computed by the double-vjp identity (two reverse passes).

    Examples:
        >>> import dparray as dp
        >>> out, tangent = dp.func.jvp(lambda x: x.sin(), (dp.tensor([0.0, 1.0]),),
        ...                            (dp.tensor([1.0, 2.0]),))
        >>> [round(v, 6) for v in tangent.tolist()]
        [1.0, 1.080605]
    """
    primals, tangents = _pair("jvp", primals, tangents)
    with _Call(f, tuple(primals), tuple(range(len(primals))), {}) as call:
        out, aux = call.split(call.run(), has_aux)
        directions = _tangent_leaves("jvp", call, tangents)
        forward = _Forward(call, out)
        result = forward.product(directions)
        value = out if forward.graph else _detached(out)
    return (value, result, aux) if has_aux else (value, result)


def jacrev(f: Callable[..., Any], argnums: Argnums = 0,
           has_aux: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``f`` with respect to its arguments ``argnums``, one reverse pass per
    output element: for an output of shape ``S`` and an argument of shape ``T`` a tensor of
    shape ``S + T``; for pytrees, the output's structure holding, at each tensor, the
    arguments' structure. With ``has_aux`` the function returns ``(jacobian, aux)``.

    Examples:
        >>> import dparray as dp
        >>> dp.func.jacrev(lambda x: x ** 2)(dp.tensor([1.0, 3.0])).tolist()
        [[2.0, 0.0], [0.0, 6.0]]
    """
    return _transform(_reverse_jacobian, f, argnums, has_aux)


def _transform(run: Callable[[_Call, bool], Any], f: Callable[..., Any], argnums: Argnums,
               has_aux: bool) -> Callable[..., Any]:
    """The function of the arguments that ``run`` makes of one call of ``f``."""
    def transformed(*args: Any, **kwargs: Any) -> Any:
        with _Call(f, args, argnums, kwargs) as call:
            return run(call, has_aux)
    return transformed


def _reverse_jacobian(call: _Call, has_aux: bool) -> Any:
    """``jacrev``'s Jacobian of one call: one reverse pass per output element."""
    out, aux = call.split(call.run(), has_aux)
    outputs, structure = _tree.flatten(out, Tensor)
    graph = call.needs_graph(outputs)
    blocks = []
    for o in outputs:
        rows: list[list[Tensor]] = [[] for _ in call.leaves]
        for k in range(o.elem_count()):
            if _is_tracked(o):
                found = _grad(o, call.leaves, _one_hot(o, k), retain_graph=True,
                              create_graph=graph, allow_unused=True)
            else:
                found = tuple(None for _ in call.leaves)
            for row, g, leaf in zip(rows, found, call.leaves, strict=True):
                row.append(zeros_like(leaf) if g is None else g)
        blocks.append([_stacked(row, o.shape, leaf.shape)
                       for row, leaf in zip(rows, call.leaves, strict=True)])
    result = _tree.rebuild(structure, [call.rebuild(block) for block in blocks])
    return (result, aux) if has_aux else result


def jacfwd(f: Callable[..., Any], argnums: Argnums = 0,
           has_aux: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``f`` (in ``jacrev``'s layout) one Jacobian-vector product per element
    of the arguments: cheaper than ``jacrev`` when the arguments are smaller than the output.

    Examples:
        >>> import dparray as dp
        >>> dp.func.jacfwd(lambda x: x.sum(axis=0))(dp.ones(2, 2)).tolist()
        [[[1.0, 0.0], [1.0, 0.0]], [[0.0, 1.0], [0.0, 1.0]]]
    """
    return _transform(_forward_jacobian, f, argnums, has_aux)


def _forward_jacobian(call: _Call, has_aux: bool) -> Any:
    """``jacfwd``'s Jacobian of one call: one Jacobian-vector product per argument element."""
    out, aux = call.split(call.run(), has_aux)
    outputs, structure = _tree.flatten(out, Tensor)
    forward = _Forward(call, out)
    columns: list[list[list[Tensor]]] = [[[] for _ in call.leaves] for _ in outputs]
    for i, leaf in enumerate(call.leaves):
        for k in range(leaf.elem_count()):
            directions = [_one_hot(leaf, k) if j == i else None for j in range(len(call.leaves))]
            for o, product in enumerate(forward.product(directions, structured=False)):
                columns[o][i].append(product)
    blocks = [[_stacked_columns(columns[o][i], out_leaf.shape, leaf.shape)
               for i, leaf in enumerate(call.leaves)] for o, out_leaf in enumerate(outputs)]
    result = _tree.rebuild(structure, [call.rebuild(block) for block in blocks])
    return (result, aux) if has_aux else result


def hessian(f: Callable[..., Any], argnums: Argnums = 0) -> Callable[..., Any]:
    """The Hessian of ``f`` (a single-element value) with respect to ``argnums``: ``jacrev``
    of ``jacrev``, of shape ``T + T`` for an argument of shape ``T``.

    Examples:
        >>> import dparray as dp
        >>> dp.func.hessian(lambda x: (x[0] * x[1]) ** 2)(dp.tensor([1.0, 2.0])).tolist()
        [[8.0, 8.0], [8.0, 2.0]]
    """
    return jacrev(jacrev(f, argnums), argnums)


def hvp(f: Callable[..., Any], primals: Sequence[Any],
        tangents: Sequence[Any]) -> tuple[Any, Any]:
    """``f(*primals)`` (a single-element value) and its Hessian-vector product with
    ``tangents`` (one per primal, in its structure): ``(value, hvp_out)``, ``hvp_out`` a tuple
    with one product per primal. Two reverse passes, the first building a graph (reverse over
    reverse); no Hessian is formed.

    Examples:
        >>> import dparray as dp
        >>> value, (product,) = dp.func.hvp(lambda x: (x ** 3).sum(), (dp.tensor([1.0, 2.0]),),
        ...                                 (dp.tensor([1.0, 1.0]),))
        >>> value.item(), product.tolist()
        (9.0, [6.0, 12.0])
    """
    primals, tangents = _pair("hvp", primals, tangents)
    with _Call(f, tuple(primals), tuple(range(len(primals))), {}) as call:
        return _hessian_vector_product(call, tangents)


def _hessian_vector_product(call: _Call, tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    out = call.run()
    _check_scalar("hvp", out)
    directions = _tangent_leaves("hvp", call, tangents)
    graph = call.needs_graph([out])
    if not _is_tracked(out):
        return _detached(out), call.rebuild_all([None] * len(call.leaves))
    first = _grad(out, call.leaves, create_graph=True, allow_unused=True)
    terms = [(g * d).sum() for g, d in zip(first, directions, strict=True)
             if g is not None and d is not None and _is_tracked(g)]
    if not terms:
        return _detached(out), call.rebuild_all([None] * len(call.leaves))
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    second = _grad(total, call.leaves, create_graph=graph, allow_unused=True)
    value = out if graph else _detached(out)
    return value, call.rebuild_all(list(second))


def functional_call(module: Module, parameters_and_buffers: Mapping[str, Tensor]
                    | Sequence[Mapping[str, Tensor]], args: Any = (),
                    kwargs: Mapping[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameters_and_buffers`` (a dict of ``named_parameters``/``named_buffers`` names to
    tensors, or a sequence of such dicts) in place of the module's own, as
    ``torch.func.functional_call``: the module is unchanged afterwards. A parameter registered
    under several names is replaced everywhere (``tie_weights``); ``strict`` requires every
    parameter and buffer to be given. ``args`` is a tuple of positional arguments, or one
    argument. The swap is not thread-safe: do not call the module elsewhere meanwhile.

    Examples:
        >>> import dparray as dp
        >>> layer = dp.nn.Linear(2, 1)
        >>> params = {"weight": dp.tensor([[1.0, 2.0]]), "bias": dp.tensor([0.5])}
        >>> dp.func.functional_call(layer, params, dp.tensor([[1.0, 1.0]])).tolist()
        [[3.5]]
        >>> g = dp.func.grad(lambda p: dp.func.functional_call(layer, p, dp.ones(1, 2)).sum())
        >>> g(params)["weight"].tolist()
        [[1.0, 1.0]]
    """
    if not isinstance(module, Module):
        raise TypeError(f"functional_call: module must be a Module, got {type(module).__name__}")
    replacements = _merged(parameters_and_buffers)
    places = _registrations(module)
    unknown = sorted(set(replacements) - set(places))
    if unknown:
        raise ValueError(f"functional_call: {', '.join(map(repr, unknown))} name no parameter "
                         f"or buffer of {type(module).__name__}")
    if strict:
        given = {id(_value(places[name])) for name in replacements} if tie_weights else set()
        missing = sorted(name for name, place in places.items()
                         if name not in replacements and _value(place) is not None
                         and id(_value(place)) not in given)
        if missing:
            raise ValueError(f"functional_call: strict, but {', '.join(map(repr, missing))} "
                             "not given")
    positional = args if isinstance(args, tuple) else (args,)
    with _swapped(places, replacements, tie_weights):
        return module(*positional, **dict(kwargs or {}))


# ------------------------------------------------------------------------------ internals
class _Call:
    """One call of a transformed function, with the tensors of its arguments ``argnums`` as
    the leaves to differentiate: tensors already in a graph as they are, the others as new
    variables (so the caller's tensors are never changed)."""

    def __init__(self, f: Callable[..., Any], args: tuple[Any, ...], argnums: Argnums,
                 kwargs: Mapping[str, Any]) -> None:
        if not callable(f):
            raise TypeError(f"expected a function to transform, got {type(f).__name__}")
        self.f, self.kwargs = f, dict(kwargs)
        self.single = isinstance(argnums, int)
        self.args = list(args)
        self.leaves: list[Tensor] = []
        self.structures: list[tuple[_tree.Structure, int]] = []
        self.fresh: set[int] = set()  # the ids of the variables made here
        self.duals: list[Tensor] = []  # jvp's variables of the outputs' shapes
        self.tracked = False  # some leaf was in a graph already
        for i in _positions(argnums, len(args)):
            found, structure = _tree.flatten(self.args[i], Tensor)
            if not found:
                raise TypeError(f"argument {i} holds no tensor to differentiate")
            made = [self._leaf(t, i) for t in found]
            self.args[i] = _tree.rebuild(structure, made)
            self.structures.append((structure, len(made)))
            self.leaves.extend(made)
        self.mark = 0

    def _leaf(self, t: Tensor, position: int) -> Tensor:
        if _is_tracked(t):
            self.tracked = True
            return t
        if not t.dtype.is_floating:
            raise TypeError(f"argument {position} holds a {t.dtype.name} tensor: only floating "
                            "tensors can be differentiated")
        leaf = Tensor(t.data, t.backend, is_variable=True)
        self.fresh.add(id(leaf))
        return leaf

    def __enter__(self) -> _Call:
        return self

    def __exit__(self, *exc: object) -> None:
        self.retire()

    def retire(self) -> None:
        """Make the variables this call made constants again: a ``backward()`` through the
        transform's results then reports no gradient for them (``vjp``, whose function may be
        called later, keeps them)."""
        for leaf in self.leaves + self.duals:
            if id(leaf) in self.fresh:
                leaf.is_variable = False

    def run(self) -> Any:
        self.mark = next_sequence_number()
        with enable_grad():
            return self.f(*self.args, **self.kwargs)

    def split(self, result: Any, has_aux: bool) -> tuple[Any, Any]:
        if not has_aux:
            return result, None
        if not (isinstance(result, tuple) and len(result) == 2):
            raise TypeError("has_aux=True: the function must return a pair (value, aux), got "
                            f"{type(result).__name__}")
        return result

    def needs_graph(self, outputs: Sequence[Tensor]) -> bool:
        """Whether the derivatives must be a graph: grad mode is on and something outside this
        call may differentiate them -- a leaf was tracked already, or the outputs depend on a
        tracked tensor that is not a leaf made here (a parameter, an outer transform's)."""
        if not is_grad_enabled():
            return False
        if self.tracked:
            return True
        stack: list[Function] = []
        for o in outputs:
            if o._node is not None:
                stack.append(o._node)
            elif o.is_variable and id(o) not in self.fresh:
                return True
        seen = set(stack)
        while stack:
            node = stack.pop()
            if node.sequence < self.mark:
                return True
            for parent in node.parents or ():
                if isinstance(parent, Function):
                    if parent not in seen:
                        seen.add(parent)
                        stack.append(parent)
                elif isinstance(parent, Tensor) and id(parent) not in self.fresh:
                    return True
        return False

    def rebuild(self, values: Sequence[Any]) -> Any:
        """One value per leaf, in the arguments' structures: one structure for an int
        ``argnums``, a tuple of them otherwise."""
        parts, start = [], 0
        for structure, count in self.structures:
            parts.append(_tree.rebuild(structure, list(values[start:start + count])))
            start += count
        return parts[0] if self.single else tuple(parts)

    def rebuild_all(self, grads: Sequence[Tensor | None]) -> Any:
        """``rebuild`` with zeros for the leaves that got no gradient."""
        return self.rebuild([zeros_like(leaf) if g is None else g
                             for g, leaf in zip(grads, self.leaves, strict=True)])


class _Forward:
    """Jacobian-vector products of one call by the double-vjp identity: with ``u`` a variable
    of each output's shape, ``g = J^T u`` is built as a graph once; ``J v`` is then the
    gradient of ``g . v`` with respect to ``u``, one reverse pass per product."""

    def __init__(self, call: _Call, out: Any) -> None:
        self.call = call
        self.outputs, self.structure = _tree.flatten(out, Tensor)
        self.graph = call.needs_graph(self.outputs)
        tracked = [o for o in self.outputs if _is_tracked(o)]
        self.duals = [Tensor(o.backend.xp.zeros_like(o.data), o.backend, is_variable=True)
                      for o in tracked]
        call.duals.extend(self.duals)
        call.fresh.update(id(u) for u in self.duals)
        self.transposed: tuple[Tensor | None, ...] = tuple(None for _ in call.leaves)
        if tracked:
            self.transposed = _grad(tracked, call.leaves, self.duals, create_graph=True,
                                    allow_unused=True)

    def product(self, directions: Sequence[Tensor | None], structured: bool = True) -> Any:
        pairs = [(g, d) for g, d in zip(self.transposed, directions, strict=True)
                 if g is not None and d is not None and _is_tracked(g)]
        found: Sequence[Tensor | None] = [None] * len(self.duals)
        if pairs:
            found = _grad([g for g, _ in pairs], self.duals, [d for _, d in pairs],
                          retain_graph=True, create_graph=self.graph, allow_unused=True)
        values = iter(found)
        products = []
        for o in self.outputs:
            value = next(values) if _is_tracked(o) else None
            products.append(zeros_like(o) if value is None else value)
        return _tree.rebuild(self.structure, products) if structured else products


def _value_and_grad(f: Callable[..., Any], argnums: Argnums, has_aux: bool,
                    args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
    with _Call(f, args, argnums, kwargs) as call:
        out, aux = call.split(call.run(), has_aux)
        _check_scalar("grad", out)
        if not _is_tracked(out):
            return (_detached(out), aux), call.rebuild_all([None] * len(call.leaves))
        graph = call.needs_graph([out])
        found = _grad(out, call.leaves, create_graph=graph, allow_unused=True)
        return (out if graph else _detached(out), aux), call.rebuild_all(list(found))


def _positions(argnums: Argnums, count: int) -> list[int]:
    numbers = (argnums,) if isinstance(argnums, int) else argnums
    if isinstance(argnums, bool) or not isinstance(numbers, tuple) or not numbers or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in numbers):
        raise TypeError(f"argnums must be an int or a non-empty tuple of ints, got {argnums!r}")
    positions = []
    for n in numbers:
        if not -count <= n < count:
            raise ValueError(f"argnums {n} is out of range for {count} positional argument(s)")
        positions.append(n % count)
    if len(set(positions)) != len(positions):
        raise ValueError(f"argnums {argnums!r} names an argument twice")
    return positions


def _pair(name: str, primals: Any, tangents: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    for label, value in (("primals", primals), ("tangents", tangents)):
        if not isinstance(value, (tuple, list)):
            raise TypeError(f"{name}: {label} must be a tuple (one entry per argument), got "
                            f"{type(value).__name__}")
    if len(primals) != len(tangents):
        raise ValueError(f"{name}: {len(primals)} primals but {len(tangents)} tangents")
    return tuple(primals), tuple(tangents)


def _tangent_leaves(name: str, call: _Call, tangents: tuple[Any, ...]) -> list[Tensor]:
    leaves: list[Tensor] = []
    for i, ((structure, count), tangent) in enumerate(zip(call.structures, tangents,
                                                         strict=True)):
        found, other = _tree.flatten(tangent, Tensor)
        if len(found) != count or not _tree.same_structure(structure, other):
            raise ValueError(f"{name}: tangent {i} must have primal {i}'s structure ({count} "
                             f"tensors), got {len(found)}")
        leaves.extend(found)
    for leaf, tangent in zip(call.leaves, leaves, strict=True):
        if tangent.shape != leaf.shape:
            raise ValueError(f"{name}: a tangent of shape {tangent.shape} for a primal of "
                             f"shape {leaf.shape}")
    return leaves


def _check_scalar(name: str, out: Any) -> None:
    if not isinstance(out, Tensor) or out.elem_count() != 1:
        shape = out.shape if isinstance(out, Tensor) else type(out).__name__
        raise ValueError(f"{name}: the function must return a single-element tensor, got "
                         f"{shape}")


def _is_tracked(t: Tensor) -> bool:
    return t._node is not None or t.is_variable


def _one_hot(t: Tensor, k: int) -> Tensor:
    """A constant of ``t``'s shape and dtype: 1 at flat position ``k``, 0 elsewhere."""
    xp = t.backend.xp
    flat = xp.astype(xp.arange(t.elem_count()) == k, t.data.dtype)
    return Tensor(xp.reshape(flat, t.shape), t.backend)


def _stacked(rows: list[Tensor], outer: tuple[int, ...], inner: tuple[int, ...]) -> Tensor:
    """Blocks of ``inner`` shape, one per element of ``outer``, as one ``outer + inner``."""
    if not rows:
        return _empty(outer + inner)
    return reshape(stack(rows, axis=0), outer + inner)


def _stacked_columns(columns: list[Tensor], outer: tuple[int, ...],
                     inner: tuple[int, ...]) -> Tensor:
    """Blocks of ``outer`` shape, one per element of ``inner``, as one ``outer + inner``."""
    if not columns:
        return _empty(outer + inner)
    return reshape(stack(columns, axis=-1), outer + inner)


def _empty(shape: tuple[int, ...]) -> Tensor:
    from dparray.creation import zeros
    return zeros(*shape)


def _detached(value: Any) -> Any:
    leaves, structure = _tree.flatten(value, Tensor)
    return _tree.rebuild(structure, [t.detach() for t in leaves])


def _merged(given: Any) -> dict[str, Tensor]:
    dicts = [given] if isinstance(given, Mapping) else list(given)
    merged: dict[str, Tensor] = {}
    for d in dicts:
        if not isinstance(d, Mapping):
            raise TypeError("functional_call: parameters_and_buffers must be a dict of names to "
                            f"tensors, or a sequence of them, got {type(d).__name__}")
        for name, value in d.items():
            if not isinstance(value, Tensor):
                raise TypeError(f"functional_call: {name!r} must map to a Tensor, got "
                                f"{type(value).__name__}")
            if name in merged:
                raise ValueError(f"functional_call: {name!r} is given twice")
            merged[name] = value
    return merged


def _registrations(module: Module) -> dict[str, tuple[Module, str]]:
    """Every parameter and buffer name, tied ones under each of their names, with the module
    that holds it and its attribute there."""
    places: dict[str, tuple[Module, str]] = {}
    for prefix, owner in module.named_modules():
        for registry in (owner._parameter_names, owner._buffer_names):
            for attr in registry:
                places[f"{prefix}.{attr}" if prefix else attr] = (owner, attr)
    return places


def _value(place: tuple[Module, str]) -> Any:
    owner, attr = place
    return owner.__dict__.get(attr)


@contextmanager
def _swapped(places: dict[str, tuple[Module, str]], replacements: dict[str, Tensor],
             tie_weights: bool) -> Iterator[None]:
    by_original: dict[int, Tensor] = {}
    targets: dict[tuple[int, str], tuple[Module, str, Tensor]] = {}
    for name, value in replacements.items():
        owner, attr = places[name]
        targets[(id(owner), attr)] = (owner, attr, value)
        original = owner.__dict__.get(attr)
        if tie_weights and original is not None:
            by_original[id(original)] = value
    if tie_weights:
        for owner, attr in places.values():
            original = owner.__dict__.get(attr)
            if original is not None and id(original) in by_original:
                targets.setdefault((id(owner), attr), (owner, attr, by_original[id(original)]))
    saved = [(owner, attr, owner.__dict__.get(attr)) for owner, attr, _ in targets.values()]
    try:
        for owner, attr, replacement in targets.values():
            object.__setattr__(owner, attr, replacement)
        yield
    finally:
        for owner, attr, original in saved:
            object.__setattr__(owner, attr, original)
