"""The optimizer base: parameter groups, per-parameter state, checked steps, state dicts.

Nothing here ever half-applies. ``step(grads)`` checks everything it will read first -- that
every gradient belongs to a parameter of this optimizer and has its shape and backend, every
group's options, every parameter's saved state -- and only then updates. ``load_state_dict``
checks and converts the whole state dict before it changes anything. A refused call (a
TypeError for a wrong type, a ValueError for a wrong value) leaves the optimizer and the
parameters as they were.

Updates compute new arrays with the backend's namespace and rebind ``param.data``: parameters
keep their identity and no array is ever modified in place. A gradient of another floating
dtype is cast to its parameter's dtype first, so parameters and state keep their dtype (what
PyTorch's in-place updates do).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from dparray import dtypes as _dtypes
from dparray._checks import check_int, check_number, describe
from dparray.creation import tensor as _to_tensor
from dparray.gradients import Gradients
from dparray.kernels import resolve
from dparray.optim._shared import OptionCheck, non_negative
from dparray.tensor import GRADIENTS_HINT, Tensor


class Optimizer:
    """Base class: subclasses pass their ``defaults``, extend ``option_checks`` and implement
    ``update``.

    ``params`` is an iterable of tensors, or of dicts ``{"params": [...], **options}`` for
    groups with their own options (PyTorch's parameter groups); a scheduler changes a group's
    ``"lr"``. A parameter's state holds either nothing (before its first update) or every
    entry the subclass names: ``state_arrays`` (arrays of the parameter's shape and dtype),
    ``state_counts`` (non-negative ints, such as Adam's ``"step"``) and ``state_scalars``
    (finite floats, such as NAdam's ``"mu_product"``); ``state_keys`` narrows the required
    entries where they depend on the group's options.
    """

    state_arrays: tuple[str, ...] = ()
    state_counts: tuple[str, ...] = ()
    state_scalars: tuple[str, ...] = ()

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        name = type(self).__name__
        self.defaults = self.check_options(defaults, name)
        self.param_groups: list[dict[str, Any]] = []
        self.state: dict[Tensor, dict[str, Any]] = {}
        seen: set[int] = set()
        for i, group in enumerate(_parameter_groups(params, name)):
            where = f"{name}: parameter group {i}"
            options = self.check_options({**self.defaults, **group}, where)
            members = _group_params(group["params"], where)
            for p in members:
                if id(p) in seen:
                    raise ValueError(f"{name}: a parameter appears twice")
                seen.add(id(p))
            self.param_groups.append({**options, "params": members})

    def __getattr__(self, name: str) -> Any:
        if name == "zero_grad":
            raise AttributeError(f"{type(self).__name__} has no zero_grad(): {GRADIENTS_HINT}")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __repr__(self) -> str:
        options = {k: v for k, v in self.param_groups[0].items() if k != "params"}
        return f"{type(self).__name__}({options})"

    option_checks: ClassVar[Mapping[str, OptionCheck]] = {"lr": non_negative,
                                                         "weight_decay": non_negative}
    """How each known option is checked (``dparray.optim._shared``); a subclass extends it."""

    def check_options(self, options: Mapping[str, Any], where: str) -> dict[str, Any]:
        """``options`` with the known ones (``option_checks``) checked and normalised; other
        keys pass unchanged, as in PyTorch."""
        checked = {k: v for k, v in options.items() if k != "params"}
        for key, check in self.option_checks.items():
            if key in checked:
                checked[key] = check(checked[key], key, where)
        return checked

    def state_keys(self, group: Mapping[str, Any]) -> tuple[str, ...]:
        """The state entries a parameter of ``group`` (its checked options) holds once
        updated: every declared one, unless a subclass keeps some only under some options
        (RMSprop's ``"momentum_buffer"`` with ``momentum > 0``). Other declared entries may
        be present too, as PyTorch keeps a buffer after its option is turned off."""
        return (*self.state_arrays, *self.state_counts, *self.state_scalars)

    def step(self, grads: Gradients | None = None) -> None:
        """Update every parameter that has a gradient in ``grads``."""
        where = f"{type(self).__name__}.step"
        if grads is None:
            raise TypeError(f"{where} needs the gradients: {GRADIENTS_HINT}")
        if not isinstance(grads, Gradients):
            raise TypeError(f"{where} needs the Gradients that backward() returns, got "
                            f"{type(grads).__name__}")
        mine = {id(p) for group in self.param_groups for p in group["params"]}
        unknown = [v for v in grads if id(v) not in mine]
        if unknown:
            raise ValueError(
                f"{where}: {len(unknown)} gradient(s) for tensors this optimizer does not "
                f"update (shapes {[v.shape for v in unknown]}); pass their parameters to the "
                "optimizer, or ask backward for this optimizer's parameters only "
                "(loss.backward(inputs=model.parameters()))"
            )
        plan = []
        index = 0
        for gi, group in enumerate(self.param_groups):
            options = self.check_options(group, f"{where}: parameter group {gi}")
            for p in group["params"]:
                g = grads.get(p)
                if g is not None:
                    if g.shape != p.shape or g.backend is not p.backend:
                        raise ValueError(
                            f"{where}: gradient of shape {g.shape} on {g.backend.name!r} for a "
                            f"parameter of shape {p.shape} on {p.backend.name!r}"
                        )
                    state = self._checked_state(self.state.get(p, {}), p, index, where,
                                                options)
                    plan.append((p, _in_dtype_of(p, g), state, options))
                index += 1
        reference = type(self).update  # a kernel replaces it where it declares a name for one
        for p, grad, state, options in plan:  # each assigned at once: its old arrays can go
            update = resolve(p.backend, reference)
            new_value = update(self, p.backend.xp, p.data, grad, state, options)
            p.data, self.state[p] = new_value, state

    def update(self, xp: Any, param: Any, grad: Any, state: dict[str, Any],
               group: dict[str, Any]) -> Any:
        """The new value of one parameter, computed with its backend's namespace ``xp``.

        ``grad`` has the parameter's dtype; ``state`` is this parameter's (a checked copy:
        write the new entries into it); ``group`` holds the checked options.
        """
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        """The state and options, parameters named by their position (as in PyTorch)."""
        index: dict[Tensor, int] = {}
        groups = []
        for group in self.param_groups:
            ids = []
            for p in group["params"]:
                index[p] = len(index)
                ids.append(index[p])
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": ids})
        state = {
            index[p]: {k: Tensor(v, p.backend) if k in self.state_arrays else v
                       for k, v in s.items()}
            for p, s in self.state.items() if p in index
        }
        return {"state": state, "param_groups": copy.deepcopy(groups)}

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore what ``state_dict`` returned.

        Everything is checked and converted first -- the groups and their options, every
        state entry's keys, the shapes and dtypes of its tensors against the parameter (a
        floating tensor is cast to the parameter's dtype and moved to its backend), counts --
        so a refused state dict changes nothing and an accepted one cannot make the next
        ``step()`` fail.
        """
        where = f"{type(self).__name__}.load_state_dict"
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"{where} needs a mapping, got {type(state_dict).__name__}")
        missing = [key for key in ("state", "param_groups") if key not in state_dict]
        if missing:
            raise ValueError(f"{where}: the state dict has no {' or '.join(map(repr, missing))}")
        groups, saved_state = state_dict["param_groups"], state_dict["state"]
        if not isinstance(groups, (list, tuple)):
            raise TypeError(f"{where}: 'param_groups' must be a list, got "
                            f"{type(groups).__name__}")
        if not isinstance(saved_state, Mapping):
            raise TypeError(f"{where}: 'state' must be a mapping, got "
                            f"{type(saved_state).__name__}")
        if len(groups) != len(self.param_groups):
            raise ValueError(f"{where}: the state dict's groups do not match this optimizer's "
                             f"({len(groups)} groups, not {len(self.param_groups)})")
        by_id: dict[int, tuple[Tensor, int, int]] = {}
        new_options = []
        index = 0
        for gi, (saved, group) in enumerate(zip(groups, self.param_groups, strict=True)):
            group_where = f"{where}: parameter group {gi}"
            if not isinstance(saved, Mapping):
                raise TypeError(f"{group_where} must be a mapping, got {type(saved).__name__}")
            if "params" not in saved:
                raise ValueError(f"{group_where} has no 'params'")
            ids = saved["params"]
            if not isinstance(ids, (list, tuple)):
                raise TypeError(f"{group_where}: 'params' must be a list of ids, got "
                                f"{describe(ids)}")
            if len(ids) != len(group["params"]):
                raise ValueError(f"{where}: the state dict's groups do not match this "
                                 f"optimizer's (group {gi} has {len(ids)} parameters, not "
                                 f"{len(group['params'])})")
            for saved_id, p in zip(ids, group["params"], strict=True):
                saved_id = check_int(saved_id, "each parameter id", group_where)
                if saved_id in by_id:
                    raise ValueError(f"{where}: parameter id {saved_id} appears twice")
                by_id[saved_id] = (p, index, gi)
                index += 1
            current = {k: v for k, v in group.items() if k != "params"}
            saved_options = {k: v for k, v in saved.items() if k != "params"}
            new_options.append(self.check_options({**current, **saved_options}, group_where))
        new_state: dict[Tensor, dict[str, Any]] = {}
        for key, entry in saved_state.items():
            saved_id = check_int(key, "each state key", where)
            if saved_id not in by_id:
                raise ValueError(f"{where}: state for parameter id {saved_id}, which no group "
                                 "lists")
            p, position, gi = by_id[saved_id]
            new_state[p] = self._checked_state(entry, p, position, where, new_options[gi],
                                               loading=True)
        for group, options in zip(self.param_groups, new_options, strict=True):
            group.update(options)
        self.state = new_state

    def _checked_state(self, entry: Any, p: Tensor, position: int, where: str,
                       group: Mapping[str, Any], *, loading: bool = False) -> dict[str, Any]:
        """A checked copy of one parameter's state: no entries, or those ``state_keys(group)``
        requires and no undeclared one; arrays of the parameter's shape in its dtype (Tensors
        from a state dict converted to its backend); counts as non-negative ints; scalars as
        finite floats. ``position`` names the parameter."""
        if not isinstance(entry, Mapping):
            raise TypeError(f"{where}: the state of parameter {position} must be a mapping, "
                            f"got {type(entry).__name__}")
        if not entry:
            return {}
        declared = (*self.state_arrays, *self.state_counts, *self.state_scalars)
        expected = self.state_keys(group)
        problems = state_key_problems(entry, declared, expected)
        if problems:
            raise ValueError(f"{where}: the state of parameter {position} for "
                             f"{type(self).__name__} needs {', '.join(map(repr, expected))}: "
                             f"{problems}")
        checked: dict[str, Any] = {}
        for key in self.state_counts:
            if key not in entry:
                continue
            value = entry[key]
            checked[key] = value if type(value) is int and value >= 0 else check_int(
                value, f"{key} of parameter {position}", where, minimum=0)
        for key in self.state_scalars:
            if key in entry:
                checked[key] = check_number(entry[key], f"{key} of parameter {position}", where)
        for key in self.state_arrays:
            if key not in entry:
                continue
            value = entry[key]
            if (not loading and getattr(value, "dtype", None) == p.data.dtype
                    and tuple(getattr(value, "shape", ())) == p.shape):
                checked[key] = value  # what the last step() wrote: the common case, kept fast
            else:
                checked[key] = _checked_array(value, p, f"{key} of parameter {position}",
                                              where, loading)
        return checked


def state_key_problems(entry: Mapping[str, Any], declared: Iterable[str],
                       required: Iterable[str]) -> str:
    """What is wrong with a state entry's keys (``"unknown 'a'; missing 'b'"``), or ``""``:
    keys not ``declared``, and ``required`` keys that are absent."""
    known = set(declared)
    unknown = [repr(k) for k in entry if k not in known]
    absent = [repr(k) for k in required if k not in entry]
    return "; ".join(([f"unknown {', '.join(unknown)}"] if unknown else [])
                     + ([f"missing {', '.join(absent)}"] if absent else []))


def _checked_array(value: Any, p: Tensor, name: str, where: str, loading: bool) -> Any:
    """A state array of ``p``'s shape, as an array of ``p``'s backend and dtype."""
    if loading and not isinstance(value, Tensor):
        raise TypeError(f"{where}: {name} must be a Tensor, got {describe(value)}")
    if not hasattr(value, "shape") or not hasattr(value, "dtype"):
        raise TypeError(f"{where}: {name} must be an array, got {describe(value)}")
    shape = tuple(value.shape)
    if shape != p.shape:
        raise ValueError(f"{where}: {name} has shape {shape}, not {p.shape}")
    try:
        dtype = value.dtype if isinstance(value, Tensor) else _dtypes.dtype_of(p.backend, value)
    except TypeError as error:
        raise TypeError(f"{where}: {name}: {error}") from None
    if not dtype.is_floating:
        raise ValueError(f"{where}: {name} has dtype {dtype.name}; optimizer state is floating")
    if isinstance(value, Tensor):
        return _to_tensor(value, dtype=p.dtype, backend=p.backend).data
    return p.backend.xp.astype(value, p.data.dtype)


def _in_dtype_of(p: Tensor, g: Tensor) -> Any:
    """``g``'s array in ``p``'s dtype: a float64 gradient must not make a float32 parameter
    float64."""
    if g.data.dtype == p.data.dtype:
        return g.data
    return p.backend.xp.astype(g.data, p.data.dtype)


def _parameter_groups(params: Any, name: str) -> list[Mapping[str, Any]]:
    """``params`` as a list of group mappings, each with its ``"params"``."""
    if isinstance(params, (Tensor, Mapping)) or not isinstance(params, Iterable):
        raise TypeError(f"{name} needs an iterable of Tensors or of parameter-group dicts, "
                        f"got {type(params).__name__}")
    items = list(params)
    if not items:
        raise ValueError(f"{name} got an empty parameter list")
    grouped = isinstance(items[0], Mapping)
    for i, item in enumerate(items):
        if isinstance(item, Mapping) != grouped:
            raise TypeError(f"{name}: give either Tensors or parameter-group dicts, not both; "
                            f"item 0 is a {type(items[0]).__name__}, item {i} a "
                            f"{type(item).__name__}")
    if not grouped:
        return [{"params": items}]
    for i, item in enumerate(items):
        if "params" not in item:
            raise ValueError(f"{name}: parameter group {i} has no 'params' (a group is a dict "
                             "{'params': [tensors...], **options})")
    return items


def _group_params(params: Any, where: str) -> list[Tensor]:
    """A group's ``"params"``: one Tensor or an iterable of Tensors, as a list."""
    if isinstance(params, Tensor):
        return [params]
    if isinstance(params, (str, Mapping)) or not isinstance(params, Iterable):
        raise TypeError(f"{where}: 'params' must be an iterable of Tensors, got "
                        f"{type(params).__name__}")
    members = list(params)
    for p in members:
        if not isinstance(p, Tensor):
            raise TypeError(f"{where}: optimizes Tensors, got {type(p).__name__}")
    return members

