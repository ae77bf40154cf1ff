"""Mixed-precision training: ``autocast`` and the ``GradScaler`` that float16 needs.

PyTorch's ``torch.amp``, spelled the dparray way: ``dparray.amp.autocast`` is
``dparray.autocast``, and ``GradScaler.step(optimizer, grads)`` takes the ``Gradients`` that
``backward()`` returns.
"""

from dparray.amp.grad_scaler import GradScaler as GradScaler
from dparray.precision import POLICY as POLICY
from dparray.precision import autocast as autocast
from dparray.precision import is_enabled as is_autocast_enabled

__all__ = ["POLICY", "GradScaler", "autocast", "is_autocast_enabled"]
