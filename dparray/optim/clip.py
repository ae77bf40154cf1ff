"""Gradient clipping: by global norm, or elementwise by value."""

from __future__ import annotations

from dparray._checks import check_number
from dparray.gradients import Gradients
from dparray.kernels import resolve
from dparray.ops.sum_of_squares import sum_of_squares
from dparray.tensor import GRADIENTS_HINT, Tensor


def grad_norm(grads: Gradients) -> Tensor:
    """The 2-norm of all gradients taken together, as a 0-d tensor (no host round trip).

    Gradients made with ``create_graph=True`` give a norm that is itself differentiable (a
    gradient penalty); others are summed by ``sum_of_squares`` on their arrays, which a
    backend's kernel table may make faster, since no graph is needed."""
    _check_gradients(grads, "grad_norm")
    if any(g.requires_grad for g in grads.values()):
        squares = [(g * g).sum() for g in grads.values()]
    else:
        squares = [Tensor(resolve(g.backend, sum_of_squares)(g.backend, g.data), g.backend)
                   for g in grads.values()]
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
    _check_gradients(grads, "clip_grad_norm")
    max_norm = check_number(max_norm, "max_norm", "clip_grad_norm", above=0.0, finite=False)
    norm = grad_norm(grads)
    xp = norm.backend.xp
    factor = xp.minimum(max_norm / (norm.data + 1e-6), 1.0)
    return Gradients({v: Tensor(g.data * xp.astype(factor, g.data.dtype), g.backend)
                      for v, g in grads.items()})


def clip_grad_value(grads: Gradients, clip_value: float) -> Gradients:
    """``grads`` with every element clamped to ``[-clip_value, clip_value]`` (NaN stays NaN),
    as PyTorch's ``clip_grad_value_``, but returning new gradients. An infinite
    ``clip_value`` clips nothing; an empty ``Gradients`` gives an empty one.

    Examples:
        >>> import dparray as dp
        >>> w = dp.tensor([3.0, -0.5, -4.0], requires_grad=True)
        >>> g = clip_grad_value((w * w).sum().backward(), clip_value=1.0)
        >>> g[w].tolist()
        [1.0, -1.0, -1.0]
    """
    if not isinstance(grads, Gradients):
        raise TypeError(f"clip_grad_value needs the Gradients that backward() returns, got "
                        f"{type(grads).__name__}: {GRADIENTS_HINT}")
    bound = check_number(clip_value, "clip_value", "clip_grad_value", minimum=0.0, finite=False)
    return Gradients({v: Tensor(g.backend.xp.clip(g.data, -bound, bound), g.backend)
                      for v, g in grads.items()})


def _check_gradients(grads: Gradients, where: str) -> None:
    """A TypeError unless ``grads`` is a ``Gradients`` (as ``Optimizer.step``), a ValueError
    when it is empty (there is no norm to take)."""
    if not isinstance(grads, Gradients):
        raise TypeError(f"{where} needs the Gradients that backward() returns, got "
                        f"{type(grads).__name__}: {GRADIENTS_HINT}")
    if not grads:
        raise ValueError(f"{where} needs at least one gradient, got an empty Gradients")
