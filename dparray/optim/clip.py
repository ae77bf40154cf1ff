"""Gradient clipping by global norm."""

from __future__ import annotations

from dparray.gradients import Gradients
from dparray.tensor import Tensor


def grad_norm(grads: Gradients) -> Tensor:
    """The 2-norm of all gradients taken together, as a 0-d tensor (no host round trip)."""
    if not isinstance(grads, Gradients) or not grads:
        raise ValueError("grad_norm needs a non-empty Gradients")
    squares = [(g * g).sum() for g in grads.values()]
    total = squares[0]
    for s in squares[1:]:
        total = total + s
    return total.sqrt()


def clip_grad_norm(grads: Gradients, max_norm: float) -> Gradients:
    """``grads`` scaled so that their global 2-norm is at most ``max_norm`` (unchanged when it
    already is), as PyTorch's ``clip_grad_norm_``, but returning new gradients.

    Examples:
        >>> import dparray as dp
        >>> w = dp.tensor([3.0, 4.0], requires_grad=True)
        >>> g = clip_grad_norm((w * w).sum().backward() / 2, max_norm=1.0)
        >>> [round(v, 4) for v in g[w].tolist()]
        [0.6, 0.8]
    """
    if isinstance(max_norm, bool) or not isinstance(max_norm, (int, float)) or max_norm <= 0:
        raise ValueError(f"clip_grad_norm: max_norm must be a positive number, got {max_norm!r}")
    norm = grad_norm(grads)
    xp = norm.backend.xp
    factor = xp.minimum(max_norm / (norm.data + 1e-6), 1.0)
    return Gradients({v: Tensor(g.data * xp.astype(factor, g.data.dtype), g.backend)
                      for v, g in grads.items()})
