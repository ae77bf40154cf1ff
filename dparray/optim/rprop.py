"""Rprop: steps of a per-coordinate size that grows while the gradient keeps its sign."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from dparray._checks import check_number, describe
from dparray.optim._shared import OptionCheck
from dparray.optim.optimizer import Optimizer


def _pair(value: Any, name: str, where: str) -> tuple[float, float]:
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{where}: {name} must be a pair of numbers, got {describe(value)}")
    if len(value) != 2:
        raise ValueError(f"{where}: {name} must be a pair of numbers, got {value!r}")
    first, second = (check_number(v, f"{name}[{i}]", where) for i, v in enumerate(value))
    return first, second


def etas(value: Any, name: str, where: str) -> tuple[float, float]:
    """``(etaminus, etaplus)`` with ``0 < etaminus < 1 < etaplus``, as PyTorch requires."""
    minus, plus = _pair(value, name, where)
    if not 0.0 < minus < 1.0 < plus:
        raise ValueError(f"{where}: {name} must be (etaminus, etaplus) with 0 < etaminus < 1 < "
                         f"etaplus, got {value!r}")
    return minus, plus


def step_sizes(value: Any, name: str, where: str) -> tuple[float, float]:
    """``(minimum, maximum)`` step sizes with ``0 <= minimum <= maximum``."""
    low, high = _pair(value, name, where)
    if not 0.0 <= low <= high:
        raise ValueError(f"{where}: {name} must be (minimum, maximum) with 0 <= minimum <= "
                         f"maximum, got {value!r}")
    return low, high


class Rprop(Optimizer):
    """Resilient backpropagation (Riedmiller & Braun), as PyTorch computes it. Each
    coordinate has a step size, ``lr`` at its first step. Where the gradient keeps its sign
    from the last step the size is multiplied by ``etaplus``, where it flips by ``etaminus``
    (and that step is skipped: the gradient counts as 0, also for the next comparison), then
    clamped to ``step_sizes``; ``p -= sign(g) * step_size``. Only the gradient's sign is used,
    and a later change of ``lr`` does not reach sizes already made, as in PyTorch.

    The state holds PyTorch's entries ``step``, ``prev`` and ``step_size``.

    Examples:
        >>> import dparray as dp
        >>> w = dp.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = Rprop([w], lr=0.1)
        >>> opt.step((w * w).sum().backward())
        >>> [round(v, 4) for v in w.tolist()]
        [0.9, -1.9]
    """

    state_arrays = ("prev", "step_size")
    state_counts = ("step",)

    option_checks: ClassVar[Mapping[str, OptionCheck]] = {
        **Optimizer.option_checks,
        "etas": etas,
        "step_sizes": step_sizes,
    }

    def __init__(self, params: Iterable[Any], lr: float = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50)) -> None:
        super().__init__(params, {"lr": lr, "etas": etas, "step_sizes": step_sizes})

    def update(self, xp: Any, param: Any, grad: Any, state: dict[str, Any],
               group: dict[str, Any]) -> Any:
        (minus, plus), (smallest, largest) = group["etas"], group["step_sizes"]
        prev, size = state.get("prev"), state.get("step_size")
        if prev is None or size is None:
            prev, size = xp.zeros_like(param), xp.full_like(param, group["lr"])
        product = grad * prev
        # PyTorch's factors: etaplus, etaminus or 1 by the sign; a NaN product stays NaN
        factor = xp.where(product > 0, xp.full_like(param, plus), xp.where(
            product < 0, xp.full_like(param, minus),
            xp.where(product == 0, xp.ones_like(param), product)))
        size = xp.clip(size * factor, smallest, largest)
        grad = xp.where(product < 0, xp.zeros_like(grad), grad)
        state.update(step=state.get("step", 0) + 1, prev=grad, step_size=size)
        return param - xp.sign(grad) * size
