"""Module: the base of every layer and model, with the specification's API.

Parameters and sub-modules register themselves when assigned as attributes: a variable tensor
(``requires_grad=True``) becomes a parameter, a ``Module`` a child; buffers (running statistics)
are registered with ``Module.register_buffer``. Names join with ``.`` as PyTorch's do
(``fc1.weight``, ``0.bias``), so state dicts move between the two libraries unchanged.

A parameter stays a parameter when it is frozen (``is_variable = False``): it still counts in
``num_parameters`` and still appears in ``state_dict``, but no gradient reaches it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from dparray import devices as _devices
from dparray import dtypes as _dtypes
from dparray._checks import describe
from dparray.creation import tensor as _to_tensor
from dparray.tensor import GRADIENTS_HINT, Tensor


class IncompatibleKeys(NamedTuple):
    """What ``Module.load_state_dict`` with ``strict=False`` did not match."""

    missing_keys: list[str]
    unexpected_keys: list[str]


class Module:
    """Base class of layers and models: override ``forward``, assign parameters and
    sub-modules in ``__init__`` after calling ``super().__init__()``.

    Examples:
        >>> import dparray as dp
        >>> from dparray import nn
        >>> class TwoLayer(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc1 = nn.Linear(4, 8)
        ...         self.fc2 = nn.Linear(8, 2)
        ...     def forward(self, x):
        ...         return self.fc2(self.fc1(x).relu())
        >>> model = TwoLayer()
        >>> [name for name, _ in model.named_parameters()]
        ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']
        >>> model.num_parameters()
        58
    """

    _parameter_names: dict[str, None]  # registration order; values unused
    _buffer_names: dict[str, None]
    _module_names: dict[str, None]
    _training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "_parameter_names", {})
        object.__setattr__(self, "_buffer_names", {})
        object.__setattr__(self, "_module_names", {})
        object.__setattr__(self, "_training", True)

    # ------------------------------------------------------------------ registration
    def __setattr__(self, name: str, value: Any) -> None:
        if "_parameter_names" not in self.__dict__:
            raise RuntimeError(
                f"{type(self).__name__}.__init__ must call super().__init__() before assigning "
                "attributes"
            )
        params, buffers, modules = self._parameter_names, self._buffer_names, self._module_names
        if isinstance(value, Module):
            params.pop(name, None)
            buffers.pop(name, None)
            modules[name] = None
        elif isinstance(value, Tensor) and (value.is_variable or name in params):
            buffers.pop(name, None)
            modules.pop(name, None)
            params[name] = None
        elif name in buffers and (value is None or isinstance(value, Tensor)):
            pass
        elif name in params and value is None:
            pass  # an optional parameter (bias=False) stays registered, as None
        else:
            params.pop(name, None)
            buffers.pop(name, None)
            modules.pop(name, None)
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # only called for attributes not found the usual way: a hint for PyTorch habits
        if name == "zero_grad":
            raise AttributeError(f"{type(self).__name__} has no zero_grad(): {GRADIENTS_HINT}")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        for registry in (self._parameter_names, self._buffer_names, self._module_names):
            registry.pop(name, None)
        object.__delattr__(self, name)

    def register_buffer(self, name: str, value: Tensor | None) -> None:
        """Register ``value`` as a buffer: state that is saved but not trained (running
        statistics)."""
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"a buffer must be a Tensor or None, got {type(value).__name__}")
        self._parameter_names.pop(name, None)
        self._module_names.pop(name, None)
        self._buffer_names[name] = None
        object.__setattr__(self, name, value)

    # ------------------------------------------------------------------ running
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Compute the module's output; every subclass defines it."""
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # ------------------------------------------------------------------ the specification's API
    def parameters(self) -> list[Tensor]:
        """Every parameter, trainable or frozen, in registration order (shared ones once)."""
        return [p for _, p in self.named_parameters()]

    def named_parameters(self, *, remove_duplicate: bool = True) -> list[tuple[str, Tensor]]:
        """``(name, parameter)`` pairs, names joined with ``.`` as PyTorch joins them.

        A parameter shared by several modules (a tied weight) comes once, under its first
        name, as in PyTorch; ``remove_duplicate=False`` lists it under every name it has.
        """
        return self._named("_parameter_names", remove_duplicate)

    def set_training(self, training: bool) -> None:
        """Set training mode (dropout active, batch statistics) on this module and all below."""
        for _, module in self.named_modules():
            object.__setattr__(module, "_training", bool(training))

    def is_training(self) -> bool:
        """Whether the module is in training mode (True for a new module)."""
        return self._training

    @property
    def training(self) -> bool:
        """PyTorch's attribute: ``is_training()`` to read. Setting it changes this module only,
        as in PyTorch (``train()``, ``eval()`` and ``set_training`` reach every module below)."""
        return self.is_training()

    @training.setter
    def training(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(f"{type(self).__name__}.training must be a bool, got "
                            f"{describe(mode)}")
        object.__setattr__(self._names_owner(), "_training", mode)

    def train(self, mode: bool = True) -> Module:
        """Training mode on this module and all below; returns ``self``."""
        self.set_training(mode)
        return self

    def eval(self) -> Module:
        """Evaluation mode on this module and all below; returns ``self``."""
        self.set_training(False)
        return self

    def num_parameters(self) -> int:
        """The total number of scalars in all parameters."""
        return sum(p.elem_count() for p in self.parameters())

    def trainable_params_count(self) -> int:
        """The number of scalars in the trainable (variable) parameters."""
        return sum(p.elem_count() for p in self.parameters() if p.is_variable)

    def frozen_parameters(self) -> list[Tensor]:
        """New tensors with the parameters' values and ``is_variable = False``."""
        return [p.freeze() for p in self.parameters()]

    def state_dict(self) -> dict[str, Tensor]:
        """Name -> tensor: the parameters in ``named_parameters`` order, then the buffers.

        A tensor shared by several modules (a tied weight, a module used twice) appears under
        every name it has, as in PyTorch, so PyTorch's strict loading finds all of its keys.
        The tensors share the module's arrays, and dparray never changes an array in place,
        so a state dict is a snapshot: training after taking it does not alter it.
        """
        state = {name: p.detach() for name, p in self.named_parameters(remove_duplicate=False)}
        state.update((name, b.detach())
                     for name, b in self.named_buffers(remove_duplicate=False))
        return state

    # ------------------------------------------------------------------ conveniences
    def named_buffers(self, *, remove_duplicate: bool = True) -> list[tuple[str, Tensor]]:
        """``(name, buffer)`` pairs (running statistics and other saved, untrained state); a
        shared buffer once, unless ``remove_duplicate=False``."""
        return self._named("_buffer_names", remove_duplicate)

    def buffers(self) -> list[Tensor]:
        return [b for _, b in self.named_buffers()]

    def named_children(self) -> Iterator[tuple[str, Module]]:
        for name in self._module_names:
            module = self.__dict__.get(name)
            if module is not None:
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def named_modules(self, prefix: str = "", *,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """This module and every module below it, depth first, each once; a module that
        appears in several places comes under every path with ``remove_duplicate=False``
        (a module that contains itself is still visited once per path down to it)."""
        seen: set[int] = set()
        stack: list[tuple[str, Module, frozenset[int]]] = [(prefix, self._names_owner(),
                                                            frozenset())]
        while stack:
            name, module, above = stack.pop()
            if id(module) in (seen if remove_duplicate else above):
                continue
            seen.add(id(module))
            yield name, module
            children = list(module.named_children())
            path = above | {id(module)} if not remove_duplicate else above
            for child_name, child in reversed(children):
                stack.append((f"{name}.{child_name}" if name else child_name,
                              child._names_owner(), path))

    def couples_rows(self) -> bool:
        """Whether this module's output for one row of a batch depends on the other rows or on
        how the batch is split (batch statistics, random masks); DataParallel then never runs
        the batch as one piece instead of chunks. False for most modules."""
        return False

    def synchronizes_chunks(self) -> bool:
        """Whether the chunks of a DataParallel call must meet inside this module's forward
        and backward (SyncBatchNorm in training exchanges statistics); DataParallel then runs
        them on threads always, never one after another. False for most modules."""
        return False

    def _names_owner(self) -> Module:
        """The module whose parameters and children carry this one's names: itself, except
        for transparent wrappers (DataParallel), which name nothing of their own."""
        return self

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every module below this one, children before their parent (in
        registration order), then on this module itself; returns ``self``. A module shared
        by several parents is visited once. The usual use is initialisation.

        Examples:
            >>> import dparray as dp
            >>> model = dp.nn.Sequential(dp.nn.Linear(2, 3), dp.nn.ReLU())
            >>> seen = []
            >>> model.apply(lambda m: seen.append(type(m).__name__)) is model
            True
            >>> seen
            ['Linear', 'ReLU', 'Sequential']
        """
        if not callable(fn):
            raise TypeError(f"apply: fn must be callable, got {type(fn).__name__}")
        order: list[Module] = []
        seen: set[int] = set()
        stack: list[tuple[Module, bool]] = [(self._names_owner(), False)]
        while stack:  # iterative post-order: a module goes out after all of its children
            module, children_done = stack.pop()
            if children_done:
                order.append(module)
                continue
            if id(module) in seen:
                continue
            seen.add(id(module))
            stack.append((module, True))
            for child in reversed(list(module.children())):
                stack.append((child._names_owner(), False))
        if order[-1] is not self:
            order.append(self)  # a transparent wrapper (DataParallel) comes after its module
        for module in order:
            fn(module)
        return self

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Make every parameter trainable (or frozen); returns ``self``."""
        for p in self.parameters():
            p.is_variable = requires_grad
        return self

    def load_state_dict(self, state_dict: Mapping[str, Any],
                        strict: bool = True) -> IncompatibleKeys:
        """Copy values from ``state_dict`` into the parameters and buffers.

        Every name, shape and dtype is checked first; if any is wrong nothing is changed and a
        ValueError lists every problem. With ``strict=False`` missing and unexpected names are
        allowed and returned; shapes and dtypes must still match.

        A tensor with several names (a tied weight) is loaded from any of them: a state dict
        that lists it under every name (PyTorch's, or ``state_dict()``'s) and one that lists it
        once (a file saved without duplicates) both load under strict loading; names that are
        given must hold equal values.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"load_state_dict needs a mapping, got {type(state_dict).__name__}")
        targets = dict(self.named_parameters(remove_duplicate=False))
        targets.update(self.named_buffers(remove_duplicate=False))
        aliases: dict[int, list[str]] = {}
        for name, target in targets.items():
            aliases.setdefault(id(target), []).append(name)
        missing = [name for name, target in targets.items()
                   if not any(alias in state_dict for alias in aliases[id(target)])]
        unexpected = [name for name in state_dict if name not in targets]
        problems = []
        if strict and missing:
            problems.append(f"missing keys: {', '.join(missing)}")
        if strict and unexpected:
            problems.append(f"unexpected keys: {', '.join(map(str, unexpected))}")
        updates = []
        for names in aliases.values():
            given = [name for name in names if name in state_dict]
            target = targets[names[0]]
            # convert every value before assigning any, so a failure changes nothing
            values = [(name, _converted(name, state_dict[name], target, problems))
                      for name in given]
            ready = [(name, data) for name, data in values if data is not None]
            if len(ready) == len(given) and ready:
                first, data = ready[0]
                differing = [name for name, other in ready[1:]
                             if not _equal(target.backend.xp, data, other)]
                if differing:
                    problems.append(f"{first} and {', '.join(differing)} are one tensor here "
                                    "(tied), but their values in the state dict differ")
                else:
                    updates.append((target, data))
        if problems:
            raise ValueError(
                f"cannot load the state dict into {type(self).__name__}: " + "; ".join(problems)
            )
        for target, data in updates:
            target.data = data
        return IncompatibleKeys(missing, unexpected)

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move every parameter and buffer to a device, or cast the floating ones to a dtype,
        or both, with ``Tensor.to``'s arguments (``to("cuda:1")``, ``to(dp.float64)``,
        ``to(device, dtype)``, ``to(tensor)``); in place (the tensors keep their identity),
        returns ``self``. Every tensor is converted before any changes, so a failure leaves
        the module as it was."""
        target, dtype, _ = _devices.parse_to(args, kwargs, f"{type(self).__name__}.to")
        if target is not None:
            _devices.placement(target, f"{type(self).__name__}.to")  # refused before any move
        if dtype is not None:
            dtype = _dtypes.to_dtype(dtype)
            if not dtype.is_floating:
                raise TypeError(f"{type(self).__name__}.to: the dtype must be floating (only "
                                f"floating parameters and buffers are cast), got {dtype.name}")
        moved = []
        for t in [*self.parameters(), *self.buffers()]:
            new = t.detach()
            if target is not None:
                new = new.to(target)
            if dtype is not None and new.dtype.is_floating:
                new = new.to(dtype)
            moved.append((t, new))
        for t, new in moved:
            t.data, t.backend = new.data, new.backend
        return self

    def cpu(self) -> Module:
        """Every parameter and buffer on the CPU (the NumPy backend); returns ``self``."""
        return self.to("cpu")

    def cuda(self, device: Any = None) -> Module:
        """Every parameter and buffer on a CUDA device (the CuPy backend): the current one, or
        ``device`` (an index, ``"cuda:1"``); returns ``self``."""
        return self.to(_devices.cuda_device(device, f"{type(self).__name__}.cuda"))

    def double(self) -> Module:
        """Floating parameters and buffers cast to float64; returns ``self``."""
        return self.to(_dtypes.float64)

    def float(self) -> Module:
        """Floating parameters and buffers cast to float32; returns ``self``."""
        return self.to(_dtypes.float32)

    def half(self) -> Module:
        """Floating parameters and buffers cast to float16; returns ``self``."""
        return self.to(_dtypes.float16)

    def extra_repr(self) -> str:
        """The text inside this module's parentheses in ``repr`` (its settings)."""
        return ""

    def __repr__(self) -> str:
        children = list(self.named_children())
        if not children:
            return f"{type(self).__name__}({self.extra_repr()})"
        lines = [f"{type(self).__name__}("]
        if self.extra_repr():
            lines.append(f"  {self.extra_repr()}")
        for name, child in children:
            text = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {text}")
        lines.append(")")
        return "\n".join(lines)

    def _named(self, registry: str, remove_duplicate: bool = True) -> list[tuple[str, Tensor]]:
        result, seen = [], set()
        for prefix, module in self.named_modules(remove_duplicate=remove_duplicate):
            for name in getattr(module, registry):
                value = module.__dict__.get(name)
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                result.append((f"{prefix}.{name}" if prefix else name, value))
        return result


def _converted(name: str, value: Any, target: Tensor, problems: list[str]) -> Any:
    """``value`` as an array of ``target``'s shape, dtype and backend, or None after adding
    what is wrong with it to ``problems``."""
    shape = tuple(getattr(value, "shape", ()))
    try:
        dtype = _dtypes.to_dtype(value.dtype, getattr(value, "backend", None))
    except (AttributeError, TypeError):
        problems.append(f"{name}: expected a tensor, got {type(value).__name__}")
        return None
    if shape != target.shape:
        problems.append(f"{name}: shape {shape} in the state dict, {target.shape} here")
        return None
    if dtype != target.dtype:
        problems.append(f"{name}: dtype {dtype.name} in the state dict, "
                        f"{target.dtype.name} here")
        return None
    try:
        converted = _to_tensor(value, dtype=target.dtype, backend=target.backend)
    except (TypeError, ValueError, AttributeError, OverflowError) as error:
        problems.append(f"{name}: cannot convert the value: {error}")
        return None
    if converted.shape != target.shape:
        problems.append(f"{name}: the value converts to shape {converted.shape}, "
                        f"not {target.shape}")
        return None
    return converted.data


def _equal(xp: Any, a: Any, b: Any) -> bool:
    """Whether two arrays of one shape and dtype hold the same values (NaN equal to NaN)."""
    if a is b:
        return True
    same = a == b
    if xp.isdtype(a.dtype, "real floating"):
        same = xp.logical_or(same, xp.logical_and(xp.isnan(a), xp.isnan(b)))
    return bool(xp.all(same))


def Parameter(data: Any, requires_grad: bool = True) -> Tensor:
    """A new trainable leaf tensor with ``data``'s values (PyTorch's ``nn.Parameter``)."""
    source = data.detach() if isinstance(data, Tensor) else _to_tensor(data)
    return Tensor(source.data, source.backend, is_variable=requires_grad)
