"""Testing helpers for ops and backends: gradients against central finite differences.

Used by dparray's own suite and meant for anyone writing an op or a backend: a gradient that
passes ``gradcheck`` in float64 on small random inputs is right.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dparray.autograd import no_grad
from dparray.tensor import Tensor

__all__ = ["gradcheck"]

def gradcheck(function: Callable[..., Tensor], inputs: Sequence[Tensor], *, eps: float = 1e-6,
              atol: float = 1e-6, rtol: float = 1e-5, seed: int = 0) -> None:
    """Check ``backward`` of ``function`` at ``inputs`` against central differences.

    The output is contracted with a fixed random cotangent ``w``, ``L(x) = sum(f(x) * w)``, so
    every output element takes part; each element of each variable input is then perturbed by
    ``+-eps`` and ``(L(x + eps) - L(x - eps)) / (2 eps)`` compared with the analytic gradient.
    Inputs should be float64 and away from kinks (ReLU at 0, ties of max).

    Raises:
        AssertionError: naming the input, the element and both values, when they differ by more
            than ``atol + rtol * |numeric|``.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([0.5, 1.5], dtype="float64", requires_grad=True)
        >>> gradcheck(lambda t: t.exp() * t, [x])
    """
    variables = [t for t in inputs if isinstance(t, Tensor) and t.is_variable]
    if not variables:
        raise ValueError("gradcheck needs at least one variable input (requires_grad=True)")
    out = function(*inputs)
    backend = out.backend
    xp = backend.xp
    cotangent = Tensor(backend.random(seed).normal(out.shape, out.data.dtype), backend)
    grads = (out * cotangent).sum().backward()

    def objective(replaced: dict[int, Any]) -> float:
        arguments = [
            Tensor(replaced[i], backend) if i in replaced else t for i, t in enumerate(inputs)
        ]
        with no_grad():
            return float((function(*arguments) * cotangent).sum().item())

    for position, tensor in enumerate(inputs):
        if not (isinstance(tensor, Tensor) and tensor.is_variable):
            continue
        analytic = grads[tensor].numpy() if tensor in grads else None
        size = tensor.elem_count()
        flat_positions = xp.reshape(xp.arange(size), tensor.shape)
        for j in range(size):
            step = xp.astype(flat_positions == j, tensor.data.dtype) * eps
            plus = objective({position: tensor.data + step})
            minus = objective({position: tensor.data - step})
            numeric = (plus - minus) / (2.0 * eps)
            value = 0.0 if analytic is None else float(analytic.reshape(-1)[j])
            if abs(value - numeric) > atol + rtol * abs(numeric):
                raise AssertionError(
                    f"gradient of input {position} (shape {tensor.shape}) at flat index {j}: "
                    f"analytic {value!r}, numeric {numeric!r}"
                )
