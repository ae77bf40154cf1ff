"""The optimizer base: parameter groups, per-parameter state, checked steps, state dicts.

``step(grads)`` takes the ``dparray.Gradients`` that ``backward()`` returns. It checks
everything first -- that every gradient belongs to a parameter of this optimizer and has its
shape -- and only then updates, so a bad call changes nothing. Updates compute new arrays with
the backend's namespace and rebind ``param.data``: parameters keep their identity, and no
array is ever modified in place.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from dparray.creation import tensor as _to_tensor
from dparray.gradients import Gradients
from dparray.tensor import Tensor


class Optimizer:
    """Base class: subclasses set ``defaults`` and implement ``update``.

    ``params`` is an iterable of tensors, or of dicts ``{"params": [...], **options}`` for
    groups with their own options (PyTorch's parameter groups); a scheduler changes a group's
    ``"lr"``.
    """

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        _check_hyperparameters(type(self).__name__, defaults)
        items = list(params)
        if not items:
            raise ValueError(f"{type(self).__name__} got an empty parameter list")
        groups = items if isinstance(items[0], Mapping) else [{"params": items}]
        self.defaults = dict(defaults)
        self.param_groups: list[dict[str, Any]] = []
        self.state: dict[Tensor, dict[str, Any]] = {}
        seen: set[int] = set()
        for group in groups:
            group = {**defaults, **group, "params": list(group["params"])}
            _check_hyperparameters(type(self).__name__, group)
            for p in group["params"]:
                if not isinstance(p, Tensor):
                    raise TypeError(f"{type(self).__name__} optimizes Tensors, got "
                                    f"{type(p).__name__}")
                if id(p) in seen:
                    raise ValueError(f"{type(self).__name__}: a parameter appears twice")
                seen.add(id(p))
            self.param_groups.append(group)

    def __repr__(self) -> str:
        options = {k: v for k, v in self.param_groups[0].items() if k != "params"}
        return f"{type(self).__name__}({options})"

    def step(self, grads: Gradients) -> None:
        """Update every parameter that has a gradient in ``grads``."""
        if not isinstance(grads, Gradients):
            raise TypeError(f"{type(self).__name__}.step needs the Gradients that backward() "
                            f"returns, got {type(grads).__name__}")
        mine = {id(p) for group in self.param_groups for p in group["params"]}
        unknown = [v for v in grads if id(v) not in mine]
        if unknown:
            raise ValueError(
                f"{type(self).__name__}.step: {len(unknown)} gradient(s) for tensors this "
                f"optimizer does not update (shapes {[v.shape for v in unknown]}); pass their "
                "parameters to the optimizer or leave them out of the loss's variables"
            )
        for group in self.param_groups:
            for p in group["params"]:
                g = grads.get(p)
                if g is not None and (g.shape != p.shape or g.backend is not p.backend):
                    raise ValueError(
                        f"{type(self).__name__}.step: gradient of shape {g.shape} on "
                        f"{g.backend.name!r} for a parameter of shape {p.shape} on "
                        f"{p.backend.name!r}"
                    )
        for group in self.param_groups:
            for p in group["params"]:
                g = grads.get(p)
                if g is not None:
                    state = self.state.setdefault(p, {})
                    p.data = self.update(p.backend.xp, p.data, g.data, state, group)

    def update(self, xp: Any, param: Any, grad: Any, state: dict[str, Any],
               group: dict[str, Any]) -> Any:
        """The new value of one parameter, computed with its backend's namespace ``xp``;
        ``state`` is this parameter's, kept between steps."""
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
            index[p]: {k: Tensor(v, p.backend) if _is_array(v) else v for k, v in s.items()}
            for p, s in self.state.items() if p in index
        }
        return {"state": state, "param_groups": copy.deepcopy(groups)}

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore what ``state_dict`` returned; checked in full before anything changes."""
        groups = state_dict.get("param_groups")
        saved_state = state_dict.get("state")
        if not isinstance(groups, list) or not isinstance(saved_state, Mapping):
            raise ValueError("an optimizer state dict has 'state' and 'param_groups'")
        if len(groups) != len(self.param_groups) or any(
            len(g["params"]) != len(mine["params"]) for g, mine in zip(groups, self.param_groups,
                                                                     strict=True)
        ):
            raise ValueError(f"{type(self).__name__}.load_state_dict: the state dict's groups "
                             "do not match this optimizer's")
        params = [p for group in self.param_groups for p in group["params"]]
        new_state: dict[Tensor, dict[str, Any]] = {}
        for i, entry in saved_state.items():
            if not 0 <= int(i) < len(params):
                raise ValueError(f"{type(self).__name__}.load_state_dict: no parameter {i}")
            p = params[int(i)]
            restored = {}
            for key, value in entry.items():
                if isinstance(value, Tensor):
                    if value.shape != p.shape:
                        raise ValueError(f"{type(self).__name__}.load_state_dict: {key} of "
                                         f"parameter {i} has shape {value.shape}, not {p.shape}")
                    value = _to_tensor(value, dtype=p.dtype, backend=p.backend).data
                restored[key] = value
            new_state[p] = restored
        options = [{k: v for k, v in saved.items() if k != "params"} for saved in groups]
        for group_options in options:
            _check_hyperparameters(type(self).__name__, group_options)
        for mine, group_options in zip(self.param_groups, options, strict=True):
            mine.update(group_options)
        self.state = new_state


def _is_array(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype")


def _check_hyperparameters(name: str, options: Mapping[str, Any]) -> None:
    """Learning rates, momenta and decays must be non-negative numbers."""
    for key in ("lr", "momentum", "dampening", "weight_decay", "eps"):
        value = options.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or value < 0):
            raise ValueError(f"{name}: {key} must be a non-negative number, got {value!r}")
    betas = options.get("betas")
    if betas is not None and not (len(betas) == 2 and all(0.0 <= b < 1.0 for b in betas)):
        raise ValueError(f"{name}: betas must be two numbers in [0, 1), got {betas!r}")
