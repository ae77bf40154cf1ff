"""Dynamic loss scaling for float16 training, as PyTorch's ``GradScaler`` does it.

float16 holds nothing below about 6e-8 (6e-5 at full precision), and the gradients of a loss
often are that small: they underflow to zero. So the loss is multiplied by a large ``scale``
before ``backward()``, which scales every gradient by it, and the gradients are divided by it
again before the optimizer's step. If any scaled gradient overflowed (an inf or a NaN), that
step is skipped -- the optimizer, its state and the parameters stay exactly as they were --
and the scale is multiplied by ``backoff_factor``; after ``growth_interval`` steps in a row
without an overflow it is multiplied by ``growth_factor``. The schedule is PyTorch's, step for
step, in float32 as PyTorch keeps it.

bfloat16 has float32's range and needs no scaler; ``enabled=False`` makes one that does
nothing, so the same loop runs either way.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

from dparray._checks import check_bool, check_int, check_number, describe
from dparray.dtypes import LOW_PRECISION, float32
from dparray.gradients import Gradients
from dparray.optim.optimizer import Optimizer
from dparray.precision import DEVICE_TYPES
from dparray.tensor import Tensor

_WHERE = "GradScaler"
_KEYS = ("scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker")


class GradScaler:
    """Scale the loss, unscale and check the gradients, step or skip, adapt the scale.

    A training step::

        with dp.autocast(dtype=dp.float16):
            loss = F.cross_entropy(model(x), y)
        grads = scaler.scale(loss).backward()
        scaler.step(opt, grads)     # unscales; steps unless a gradient overflowed

    To clip, unscale first and say so: ``scaler.step(opt, clip_grad_norm(
    scaler.unscale(grads), 1.0), unscaled=True)``. ``device`` (``"cuda"`` or ``"cpu"``,
    ``torch.amp.GradScaler``'s first argument) is accepted and changes nothing: the scale
    applies to the tensors of whichever backend the gradients are on.

    Examples:
        >>> import dparray as dp
        >>> w = dp.tensor([1.0, 2.0], requires_grad=True)
        >>> opt = dp.optim.SGD([w], lr=0.25)
        >>> scaler = dp.amp.GradScaler(init_scale=1024.0)
        >>> grads = scaler.scale((w * w).sum()).backward()
        >>> scaler.step(opt, grads), w.tolist(), scaler.get_scale()
        (True, [0.5, 1.0], 1024.0)
        >>> overflowing = scaler.scale((w * float("inf")).sum()).backward()
        >>> scaler.step(opt, overflowing), w.tolist(), scaler.get_scale()
        (False, [0.5, 1.0], 512.0)
    """

    def __init__(self, device: Any = None, init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        if device is not None and not isinstance(device, str):
            device, init_scale = None, device  # the scale given first, as torch.cuda.amp's
        if device is not None and device not in DEVICE_TYPES:
            raise ValueError(f"{_WHERE}: device must be one of {sorted(DEVICE_TYPES)}, got "
                             f"{device!r}")
        self._enabled = check_bool(enabled, "enabled", _WHERE)
        self._scale = _float32(check_number(init_scale, "init_scale", _WHERE, above=0.0))
        self._growth_factor = check_number(growth_factor, "growth_factor", _WHERE)
        if not self._growth_factor > 1.0:
            raise ValueError(f"{_WHERE}: growth_factor must be above 1, got {growth_factor!r}")
        self._backoff_factor = check_number(backoff_factor, "backoff_factor", _WHERE,
                                            above=0.0)
        if not self._backoff_factor < 1.0:
            raise ValueError(f"{_WHERE}: backoff_factor must be below 1, got "
                             f"{backoff_factor!r}")
        self._growth_interval = check_int(growth_interval, "growth_interval", _WHERE,
                                          minimum=1)
        self._growth_tracker = 0

    def __repr__(self) -> str:
        if not self._enabled:
            return "GradScaler(enabled=False)"
        return (f"GradScaler(scale={self._scale!r}, growth_factor={self._growth_factor!r}, "
                f"backoff_factor={self._backoff_factor!r}, "
                f"growth_interval={self._growth_interval})")

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        return self._scale if self._enabled else 1.0

    def scale(self, loss: Tensor) -> Tensor:
        """``loss`` times the current scale, in float32 (the scale would overflow float16);
        ``loss`` itself when disabled."""
        if not isinstance(loss, Tensor):
            raise TypeError(f"{_WHERE}.scale needs the loss Tensor, got {describe(loss)}")
        if not loss.dtype.is_floating:
            raise TypeError(f"{_WHERE}.scale needs a floating loss, got {loss.dtype.name}")
        if not self._enabled:
            return loss
        if loss.dtype in LOW_PRECISION:
            loss = loss.astype(float32)
        return loss * self._scale

    def unscale(self, grads: Gradients) -> Gradients:
        """``grads`` divided by the current scale (multiplied by its float32 reciprocal, as
        PyTorch does); unchanged when disabled."""
        _check_gradients(grads, f"{_WHERE}.unscale")
        if not self._enabled:
            return grads
        inverse = _float32(1.0 / self._scale)
        return Gradients({v: Tensor(g.data * inverse, g.backend) for v, g in grads.items()})

    def step(self, optimizer: Optimizer, grads: Gradients, *, unscaled: bool = False) -> bool:
        """Unscale ``grads`` (unless ``unscaled``: they went through ``unscale`` already), and
        if every one is finite, ``optimizer.step`` them; then adapt the scale. Returns whether
        the optimizer stepped.

        All or nothing: bad arguments, or an optimizer that refuses the gradients, raise before
        anything changes (the scale included); an overflow changes the scale and nothing else.
        """
        where = f"{_WHERE}.step"
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{where} needs an optimizer, got {describe(optimizer)}")
        _check_gradients(grads, where)
        check_bool(unscaled, "unscaled", where)
        if not self._enabled:
            optimizer.step(grads)
            return True
        if not unscaled:
            grads = self.unscale(grads)
        if not _all_finite(grads):
            self._update(found_inf=True)
            return False
        optimizer.step(grads)
        self._update(found_inf=False)
        return True

    def _update(self, found_inf: bool) -> None:
        """PyTorch's ``_amp_update_scale_``: back off after an overflow, grow after
        ``growth_interval`` clean steps (unless growing would overflow float32)."""
        if found_inf:
            self._scale = _float32(self._scale * self._backoff_factor)
            self._growth_tracker = 0
            return
        self._growth_tracker += 1
        if self._growth_tracker == self._growth_interval:
            grown = _float32(self._scale * self._growth_factor)
            if grown != float("inf"):
                self._scale = grown
            self._growth_tracker = 0

    def state_dict(self) -> dict[str, Any]:
        """The scale and the schedule, with PyTorch's keys (empty when disabled, as
        PyTorch's)."""
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore what ``state_dict`` returned (PyTorch's ``GradScaler.state_dict()`` too);
        checked whole before anything changes."""
        where = f"{_WHERE}.load_state_dict"
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"{where} needs a mapping, got {describe(state_dict)}")
        if not self._enabled:
            if state_dict:
                raise ValueError(f"{where}: this scaler is disabled; its state is empty")
            return
        missing = [key for key in _KEYS if key not in state_dict]
        unknown = [key for key in state_dict if key not in _KEYS]
        if missing or unknown:
            raise ValueError(f"{where}: the state needs {', '.join(_KEYS)}; "
                             f"missing {missing}, unknown {unknown}")
        probe = GradScaler(init_scale=_number(state_dict["scale"], "scale", where),
                           growth_factor=state_dict["growth_factor"],
                           backoff_factor=state_dict["backoff_factor"],
                           growth_interval=state_dict["growth_interval"])
        tracker = check_int(state_dict["_growth_tracker"], "_growth_tracker", where,
                            minimum=0)
        if tracker >= probe._growth_interval:
            raise ValueError(f"{where}: _growth_tracker {tracker} must be below "
                             f"growth_interval {probe._growth_interval}")
        self._scale, self._growth_factor = probe._scale, probe._growth_factor
        self._backoff_factor, self._growth_interval = probe._backoff_factor, \
            probe._growth_interval
        self._growth_tracker = tracker


def _float32(value: float) -> float:
    """``value`` rounded to float32, as PyTorch keeps the scale (inf beyond its range)."""
    try:
        return float(struct.unpack("f", struct.pack("f", value))[0])
    except OverflowError:
        return float("inf")


def _number(value: Any, name: str, where: str) -> float:
    """A scale from a state dict: a number, or a one-element tensor (PyTorch's is one)."""
    if isinstance(value, Tensor):
        if value.elem_count() != 1 or not value.dtype.is_floating:
            raise ValueError(f"{where}: {name} must be a number, got a tensor of shape "
                             f"{value.shape}")
        return float(value.item())
    return check_number(value, name, where, above=0.0)


def _check_gradients(grads: Any, where: str) -> None:
    if not isinstance(grads, Gradients):
        raise TypeError(f"{where} needs the Gradients that backward() returns, got "
                        f"{describe(grads)}")


def _all_finite(grads: Gradients) -> bool:
    """Whether every gradient is finite: one look at the host for all of them."""
    flags = []
    for g in grads.values():
        xp = g.backend.xp
        flags.append(xp.all(xp.isfinite(g.data)))
    if not flags:
        return True
    xp = next(iter(grads.values())).backend.xp
    return bool(xp.all(xp.stack(flags)))
