"""``dparray.nn.utils``: where PyTorch keeps its in-place gradient clipping, and ``rnn``'s
``pad_sequence``.

PyTorch's ``clip_grad_norm_(model.parameters(), max_norm)`` clips the ``.grad`` stored on each
parameter. dparray stores no gradients on tensors, so these names exist only to say what to
write instead: ``grads = optim.clip_grad_norm(grads, max_norm)`` on the gradients that
``backward()`` returned.
"""

from __future__ import annotations

from typing import Any

from dparray.nn.utils import rnn as rnn
from dparray.tensor import GRADIENTS_HINT

__all__ = ["clip_grad_norm_", "clip_grad_value_", "rnn"]


def clip_grad_norm_(parameters: Any, max_norm: Any, *args: Any, **kwargs: Any) -> Any:
    """Not here: clip the returned gradients with ``optim.clip_grad_norm`` (a TypeError that
    says so)."""
    raise TypeError("nn.utils.clip_grad_norm_ clips gradients stored on the parameters: "
                    f"{GRADIENTS_HINT}; clip them as values: "
                    "grads = dparray.optim.clip_grad_norm(grads, max_norm)")


def clip_grad_value_(parameters: Any, clip_value: Any, *args: Any, **kwargs: Any) -> Any:
    """Not here: clip the returned gradients with ``optim.clip_grad_value`` (a TypeError that
    says so)."""
    raise TypeError("nn.utils.clip_grad_value_ clips gradients stored on the parameters: "
                    f"{GRADIENTS_HINT}; clip them as values: "
                    "grads = dparray.optim.clip_grad_value(grads, clip_value)")
