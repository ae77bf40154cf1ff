"""Whole-state checkpoints: the model, the optimizer, the LR scheduler, the random streams, the
step, the epoch and your metadata in one safetensors file, written atomically, restored in one
call that changes nothing unless all of it fits.

Nested state is flattened as ``dparray.save`` flattens it (``dparray._nested``): each tensor
is one entry of the file, named by its place (``model/fc1.weight``,
``optimizer/state/0/exp_avg``), and everything else -- numbers, strings, the nesting itself --
is JSON in the header's metadata (``dparray.checkpoint``), with a reference where each tensor
was. Nothing is pickled, so loading a checkpoint never runs code,
and the file is a plain safetensors file that ``dparray.load`` (or any safetensors reader)
opens. It carries ``dparray.io``'s checksum, so a damaged checkpoint is an error, never a
silently different state.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dparray import _nested
from dparray import io as _io
from dparray import random as _random
from dparray._checks import check_int, describe
from dparray.amp.grad_scaler import GradScaler
from dparray.backend import Backend, get_backend
from dparray.nn.module import Module
from dparray.optim.lr_scheduler import LRScheduler
from dparray.optim.optimizer import Optimizer
from dparray.tensor import Tensor

CHECKPOINT_KEY = "dparray.checkpoint"  # the header metadata entry holding the JSON state
FORMAT_VERSION = 1
_TOP_LEVEL = {"version", "model", "optimizer", "scheduler", "random", "step", "epoch"}
_OPTIONAL = {"scaler"}  # present only where save_checkpoint was given one


@dataclass(frozen=True)
class Checkpoint:
    """What ``load_checkpoint`` read besides the state it restored: the step and the epoch the
    checkpoint was saved at (None where ``save_checkpoint`` was given none) and the metadata."""

    step: int | None
    epoch: int | None
    metadata: dict[str, str] = field(default_factory=dict)


def save_checkpoint(path: str | os.PathLike[str], *, model: Module,
                    optimizer: Optimizer | None = None, scheduler: LRScheduler | None = None,
                    step: int | None = None, epoch: int | None = None,
                    metadata: Mapping[str, str] | None = None,
                    scaler: GradScaler | None = None) -> None:
    """Save everything a training run needs to resume bitwise: ``model``'s state dict, the
    ``optimizer``'s state and hyper-parameters, the ``scheduler``'s position, the current
    random streams (``dparray.random.get_state()``), ``step``, ``epoch`` and ``metadata`` (str
    to str, as for ``save``), in one safetensors file written atomically.

    ``model`` may be a ``DataParallel``: its state dict is the wrapped module's. A
    ``scaler`` (``dparray.amp.GradScaler``) saves its scale and schedule too.

    Raises:
        TypeError: an argument of the wrong type, or optimizer state that is neither a tensor
            nor JSON data (numbers, strings, lists, dicts).
        ValueError: a negative ``step`` or ``epoch``, or a reserved metadata key.
        OSError: ``path`` cannot be written.

    Examples:
        >>> import dparray as dp, tempfile, os
        >>> dp.manual_seed(0)
        >>> model = dp.nn.Linear(3, 2)
        >>> opt = dp.optim.Adam(model.parameters(), lr=1e-2)
        >>> path = os.path.join(tempfile.mkdtemp(), "run.ckpt.safetensors")
        >>> dp.save_checkpoint(path, model=model, optimizer=opt, step=100)
        >>> dp.load_checkpoint(path, model=model, optimizer=opt).step
        100
    """
    where = "save_checkpoint"
    _check_objects(where, model, optimizer, scheduler, scaler)
    counts = {"step": _optional_count(step, "step", where),
              "epoch": _optional_count(epoch, "epoch", where)}
    user = _io._user_metadata(metadata, where)
    state = {
        "version": FORMAT_VERSION,
        "model": model.state_dict(),
        "optimizer": None if optimizer is None else optimizer.state_dict(),
        "scheduler": None if scheduler is None else scheduler.state_dict(),
        "random": _random.get_state(),
        **counts,
    }
    if scaler is not None:
        state["scaler"] = scaler.state_dict()
    tensors: dict[str, Tensor] = {}
    described = _nested.encode(state, where, tensors)
    _io._write(tensors, path, user, {CHECKPOINT_KEY: json.dumps(described)},
               follow_symlinks=True)


def load_checkpoint(path: str | os.PathLike[str], *, model: Module,
                    optimizer: Optimizer | None = None,
                    scheduler: LRScheduler | None = None,
                    scaler: GradScaler | None = None) -> Checkpoint:
    """Restore what ``save_checkpoint`` wrote into ``model``, ``optimizer`` and ``scheduler``
    (each optional but the model; a part saved but not asked for is left alone), and make the
    random streams continue from where they were at the save. Returns the step, the epoch and
    the metadata.

    Everything is checked first -- that the file is an intact dparray checkpoint, that it has
    each part asked for, the model's names, shapes and dtypes, the optimizer's groups and
    state, the scheduler's and the random streams' state -- and a file that does not fit
    (truncated, foreign, another model's) is a ValueError that leaves the model, optimizer,
    scheduler and random streams as they were.

    Raises:
        TypeError: an argument of the wrong type.
        ValueError: the file is not an intact checkpoint, or does not fit what it is loaded
            into.
        OSError: the file cannot be read (or is not a regular file).
    """
    where = "load_checkpoint"
    _check_objects(where, model, optimizer, scheduler, scaler)
    name = os.fspath(path)
    saved = _io._read(path, _backend_of(model))
    state = _decode_checkpoint(saved, name)
    for part, given in (("optimizer", optimizer), ("scheduler", scheduler),
                        ("scaler", scaler)):
        if given is not None and state.get(part) is None:
            raise ValueError(f"{name} has no {part} state: it was saved without one")
    try:
        _random.RandomStreams.from_state(state["random"])  # checked now, installed last
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name}: its random streams' state is invalid: {error}") from None
    _restore(name, model, optimizer, scheduler, scaler, state)
    return Checkpoint(state["step"], state["epoch"], saved.metadata)


def _restore(name: str, model: Module, optimizer: Optimizer | None,
             scheduler: LRScheduler | None, scaler: GradScaler | None,
             state: dict[str, Any]) -> None:
    """Load each part (each checks its own state in full before changing); if one refuses,
    put back the parts already loaded, so the call changes nothing."""
    parts: list[tuple[str, Any]] = [("model", model), ("optimizer", optimizer),
                                    ("scheduler", scheduler), ("scaler", scaler)]
    undo: list[Callable[[], object]] = []
    try:
        for part, target in parts:
            if target is None:
                continue
            before = target.state_dict()
            try:
                target.load_state_dict(state[part])
            except (TypeError, ValueError) as error:
                raise ValueError(f"{name}: the checkpoint's {part} state does not fit this "
                                 f"{type(target).__name__}: {error}") from None
            undo.append(functools.partial(target.load_state_dict, before))
        _random.set_state(state["random"])
    except BaseException:
        for action in reversed(undo):
            action()
        raise


def _decode_checkpoint(saved: _io.SavedFile, name: str) -> dict[str, Any]:
    """The state ``save_checkpoint`` described in the file, with its tensors in place."""
    text = saved.reserved.get(CHECKPOINT_KEY)
    if text is None:
        raise ValueError(f"{name} is not a dparray checkpoint (no {CHECKPOINT_KEY} metadata); "
                         "dparray.load reads plain state dicts")
    try:
        used: set[str] = set()
        state = _nested.decode(json.loads(text), saved.tensors, used)
        _check_top_level(state)
        unused = sorted(set(saved.tensors) - used)
        if unused:
            raise _nested.NotEncoded(f"it holds tensors it does not describe: {unused[:5]}")
    except (ValueError, RecursionError, _nested.NotEncoded) as error:
        raise ValueError(f"{name} is not a valid dparray checkpoint: {error}") from None
    return dict(state)


def _check_top_level(state: Any) -> None:
    if not isinstance(state, dict) or set(state) - _OPTIONAL != _TOP_LEVEL:
        found = sorted(map(str, state)) if isinstance(state, dict) else describe(state)
        raise _nested.NotEncoded(f"its state has {found}, not {sorted(_TOP_LEVEL)}")
    if state["version"] != FORMAT_VERSION:
        raise _nested.NotEncoded(f"it has format {state['version']!r}; this dparray reads "
                              f"format {FORMAT_VERSION}")
    if not isinstance(state["model"], dict) or not isinstance(state["random"], dict):
        raise _nested.NotEncoded("it has no model or random state")
    for part in ("optimizer", "scheduler", "scaler"):
        if state.get(part) is not None and not isinstance(state[part], dict):
            raise _nested.NotEncoded(f"its {part} state is {describe(state[part])}")
    for count in ("step", "epoch"):
        value = state[count]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 0):
            raise _nested.NotEncoded(f"its {count} is {value!r}")


# ------------------------------------------------------------------------------- arguments
def _check_objects(where: str, model: Any, optimizer: Any, scheduler: Any,
                   scaler: Any = None) -> None:
    if not isinstance(model, Module):
        raise TypeError(f"{where}: model must be a dparray.nn.Module, got {describe(model)}")
    if optimizer is not None and not isinstance(optimizer, Optimizer):
        raise TypeError(f"{where}: optimizer must be a dparray.optim.Optimizer or None, got "
                        f"{describe(optimizer)}")
    if scheduler is not None and not isinstance(scheduler, LRScheduler):
        raise TypeError(f"{where}: scheduler must be a dparray.optim.LRScheduler or None, got "
                        f"{describe(scheduler)}")
    if scaler is not None and not isinstance(scaler, GradScaler):
        raise TypeError(f"{where}: scaler must be a dparray.amp.GradScaler or None, got "
                        f"{describe(scaler)}")


def _optional_count(value: Any, name: str, where: str) -> int | None:
    return None if value is None else check_int(value, name, where, minimum=0)


def _backend_of(model: Module) -> Backend:
    """Where the model's tensors live (the current backend for a model without any)."""
    tensors = model.parameters() + model.buffers()
    return tensors[0].backend if tensors else get_backend()
