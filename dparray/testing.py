"""Testing helpers for ops and backends: gradients against central finite differences.

Used by dparray's own suite and meant for anyone writing an op or a backend: a gradient that
passes ``gradcheck`` in float64 on small random inputs is right. ``gradcheck`` perturbs every
input element in turn (two forwards each), so it names the element that is wrong;
``directional_gradcheck`` costs two forwards and one backward whatever the inputs' size, for
functions too slow to differentiate element by element (a recurrent layer in training).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dparray.autograd import no_grad
from dparray.dtypes import float64
from dparray.tensor import Tensor

__all__ = ["directional_gradcheck", "gradcheck"]


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


def directional_gradcheck(function: Callable[..., Tensor], inputs: Sequence[Tensor], *,
                          eps: float = 1e-6, atol: float = 1e-9, rtol: float = 1e-6,
                          seed: int = 0) -> None:
    """Check ``backward`` of ``function`` at ``inputs`` along one random direction.

    As HIPS autograd's ``check_vjp``: a random cotangent ``u`` in output space and a random
    direction ``v`` in input space (one standard normal array per variable input). One backward
    gives ``J^T u``, hence ``<J^T u, v>``; a central difference of ``<u, f(x + t v)>`` at
    ``t = 0`` gives ``<u, J v>``. The two are the same number when the gradient is right, so
    each check costs two forwards and one backward, whatever the size of the inputs. A wrong
    gradient changes ``<J^T u, v>`` unless the random ``u`` and ``v`` happen to nearly miss
    where it is wrong: an error in a single element of a large input escapes about one seed in
    400 when it is 10% of that element, while an error spread over many elements (a missed
    mask, a wrong scale or sign) is caught at any seed. The central difference along one
    direction is accurate to about ``1e-8`` relative in float64 (less where large terms
    cancel), so the default ``rtol`` is tighter than ``gradcheck``'s. Inputs and output must
    be float64, away from kinks (ReLU at 0, ties of max); ``function`` must give the same
    output on every call (reseed any dropout inside it).

    Raises:
        ValueError: no input is a variable (``requires_grad=True``), or a variable input or the
            output is not float64.
        AssertionError: naming both values and their difference, when they differ by more than
            ``atol + rtol * |numeric|``.

    Examples:
        >>> import dparray
        >>> x = dparray.tensor([[0.5, 1.5], [2.0, -1.0]], dtype="float64", requires_grad=True)
        >>> directional_gradcheck(lambda t: (t @ t).exp(), [x])
    """
    positions = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.is_variable]
    if not positions:
        raise ValueError(
            "directional_gradcheck needs at least one variable input (requires_grad=True)")
    for i in positions:
        if inputs[i].dtype != float64:
            raise ValueError(f"directional_gradcheck: input {i} must be float64 (finite "
                             f"differences in lower precision are noise), got "
                             f"{inputs[i].dtype.name}")
    out = function(*inputs)
    if out.dtype != float64:
        raise ValueError(f"directional_gradcheck: the output must be float64, got {out.dtype.name}")
    backend = out.backend
    xp = backend.xp
    generator = backend.random(seed)
    cotangent = Tensor(generator.normal(out.shape, out.data.dtype), backend)
    directions = {i: generator.normal(inputs[i].shape, inputs[i].data.dtype) for i in positions}
    grads = (out * cotangent).sum().backward()
    analytic = sum(float(xp.sum(grads[inputs[i]].data * directions[i]))
                   for i in positions if inputs[i] in grads)

    def along(step: float) -> float:
        arguments = [Tensor(t.data + step * directions[i], backend) if i in directions else t
                     for i, t in enumerate(inputs)]
        with no_grad():
            return float((function(*arguments) * cotangent).sum().item())

    numeric = (along(eps) - along(-eps)) / (2.0 * eps)
    if not abs(analytic - numeric) <= atol + rtol * abs(numeric):  # NaN fails too
        shapes = ", ".join(f"input {i} {tuple(inputs[i].shape)}" for i in positions)
        raise AssertionError(
            f"directional derivative along a random direction (seed {seed}; {shapes}): "
            f"backward gives <J^T u, v> = {analytic!r}, central differences give <u, J v> = "
            f"{numeric!r}; difference {analytic - numeric!r} exceeds "
            f"{atol:g} + {rtol:g} * |numeric|"
        )
