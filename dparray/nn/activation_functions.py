"""More of PyTorch's activations as functions (re-exported by ``dparray.nn.functional``; their
modules are in ``dparray.nn.activation_more``): GLU, the shrinks (hard, soft, tanh), threshold,
RReLU, local response normalisation, and ``gumbel_softmax``.

Each is composed of differentiable ops, so its gradient, and its gradient's gradient, come from
the engine; the piecewise ones (shrinks, threshold) give PyTorch's values and gradients at
their kinks and at NaN. ``inplace`` is accepted for PyTorch's code and changes nothing:
dparray never writes into an array.
"""

from __future__ import annotations

import warnings

from dparray import dtypes as _dtypes
from dparray import ops
from dparray._checks import check_bool, check_int, check_number, check_tensor, normalize_axis
from dparray.ops.activations import check_bounds
from dparray.sampling import rand_like
from dparray.tensor import Tensor, from_op

__all__ = [
    "glu", "gumbel_softmax", "hardshrink", "local_response_norm", "rrelu", "softshrink",
    "tanhshrink", "threshold",
]


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """The gated linear unit: ``a * sigmoid(b)``, ``a`` and ``b`` the two halves of ``input``
    along ``dim`` (whose size must be even), as PyTorch's ``F.glu``.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.functional.glu(dp.tensor([[2.0, -4.0, 0.0, 100.0]])).tolist()
        [[1.0, -4.0]]
    """
    where = "glu"
    check_tensor(input, "input", where)
    if input.ndim == 0:
        raise ValueError(f"{where}: input must have at least one dimension to halve, got a "
                         "0-d tensor")
    axis = normalize_axis(check_int(dim, "dim", where), input.ndim, where)
    size = input.shape[axis]
    if size % 2:
        raise ValueError(f"{where}: dimension {axis} must have an even size to halve, got "
                         f"{size} (input of shape {input.shape})")
    first, second = ops.split(input, size // 2, axis)
    return first * ops.sigmoid(second)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """0 where ``-lambd <= input <= lambd``, else ``input``, as PyTorch's ``F.hardshrink``;
    the gradient is 1 outside, 0 inside and at NaN (whose value stays NaN), as PyTorch's
    vectorised kernel gives it (its loop over the last few entries gives 1 at NaN).

    Examples:
        >>> import dparray as dp
        >>> dp.nn.functional.hardshrink(dp.tensor([-1.0, 0.25, 0.5, 2.0])).tolist()
        [-1.0, 0.0, 0.0, 2.0]
    """
    where = "hardshrink"
    lambd = check_number(lambd, "lambd", where)
    check_tensor(input, "input", where)
    return ops.where(ops.abs(input) > lambd, input, input * 0.0)  # NaN * 0: NaN, slope 0


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``input`` moved ``lambd`` towards 0, and 0 where it is within ``lambd`` of 0, as
    PyTorch's ``F.softshrink``; ``lambd`` is at least 0. The gradient is 1 outside, 0 inside
    and at NaN (whose value stays NaN), as for ``hardshrink``.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.functional.softshrink(dp.tensor([-1.0, 0.25, 2.0])).tolist()
        [-0.5, 0.0, 1.5]
    """
    where = "softshrink"
    lambd = check_number(lambd, "lambd", where, minimum=0.0)
    check_tensor(input, "input", where)
    shrunk = ops.where(input < -lambd, input + lambd, input * 0.0)  # NaN * 0: NaN, slope 0
    return ops.where(input > lambd, input - lambd, shrunk)


def tanhshrink(input: Tensor) -> Tensor:
    """``input - tanh(input)``, as PyTorch's ``F.tanhshrink``.

    Examples:
        >>> import dparray as dp
        >>> round(dp.nn.functional.tanhshrink(dp.tensor([1.0])).item(), 4)
        0.2384
    """
    check_tensor(input, "input", "tanhshrink")
    return input - ops.tanh(input)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``value`` where ``input <= threshold``, else ``input``, as PyTorch's ``F.threshold``;
    the gradient passes only where ``input`` is kept (and at NaN, which is kept).

    Examples:
        >>> import dparray as dp
        >>> dp.nn.functional.threshold(dp.tensor([0.5, 1.0, 3.0]), 1.0, -1.0).tolist()
        [-1.0, -1.0, 3.0]
    """
    where = "threshold"
    limit = check_number(threshold, "threshold", where, finite=False)
    fill = check_number(value, "value", where, finite=False)
    check_bool(inplace, "inplace", where)
    check_tensor(input, "input", where)
    return ops.where(input <= limit, fill, input)


def rrelu(input: Tensor, lower: float = 1.0 / 8.0, upper: float = 1.0 / 3.0,
          training: bool = False, inplace: bool = False) -> Tensor:
    """The randomized leaky ReLU, as PyTorch's ``F.rrelu``: ``input`` where positive, else
    ``a * input``. In evaluation ``a`` is ``(lower + upper) / 2``; in training each entry
    draws its own ``a`` uniformly from ``[lower, upper)`` (from the current random stream, so
    a seed makes it repeat), and its gradient is that ``a``.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.functional.rrelu(dp.tensor([-3.0, 2.0]), 0.25, 0.75).tolist()
        [-1.5, 2.0]
    """
    where = "rrelu"
    low, high = check_bounds(lower, upper, where, ("lower", "upper"))
    check_bool(training, "training", where)
    check_bool(inplace, "inplace", where)
    check_tensor(input, "input", where)
    if not training:
        return ops.leaky_relu(input, (low + high) / 2.0)
    floating = input.dtype if input.dtype.is_floating else _dtypes.get_default_dtype()
    slopes = low + (high - low) * rand_like(input, dtype=floating)
    return ops.where(input > 0, input, input * slopes)


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """A sample of the Gumbel-softmax (concrete) distribution over ``dim``, as PyTorch's
    ``F.gumbel_softmax``: ``softmax((logits + g) / tau)`` with Gumbel noise ``g = -log(-log
    u)``, ``u`` uniform from the current random stream (kept above the dtype's smallest normal
    number, so ``g`` is finite). With ``hard``, the one-hot of the sample's largest entry
    (the first, at a tie), whose gradient is the soft sample's (the straight-through
    estimator): ``y_hard - y_soft.detach() + y_soft``.

    ``tau`` must be positive (PyTorch gives NaN for 0). ``eps`` is deprecated and unused, as
    in PyTorch, which warns when it is given.

    Examples:
        >>> import dparray as dp
        >>> y = dp.nn.functional.gumbel_softmax(dp.zeros(2, 5), tau=0.5, hard=True)
        >>> y.sum(axis=-1).tolist(), sorted(set(y.flatten().tolist()))
        ([1.0, 1.0], [0.0, 1.0])
    """
    where = "gumbel_softmax"
    check_tensor(logits, "logits", where)
    tau = check_number(tau, "tau", where, above=0.0)
    check_bool(hard, "hard", where)
    if check_number(eps, "eps", where) != 1e-10:
        warnings.warn("gumbel_softmax: eps is deprecated and has no effect", UserWarning,
                      stacklevel=2)
    if not logits.dtype.is_floating:
        raise TypeError(f"{where}: logits must be floating, got {logits.dtype.name}")
    axis = normalize_axis(check_int(dim, "dim", where), logits.ndim or 1, where)
    xp = logits.backend.xp
    smallest = float(xp.finfo(logits.data.dtype).smallest_normal)
    uniform = ops.clip(rand_like(logits), min=smallest)  # u = 0 would give g = -inf
    soft = ops.softmax((logits - ops.log(-ops.log(uniform))) / tau, axis=axis)
    if not hard:
        return soft
    shape = [1] * soft.ndim
    shape[axis] = soft.shape[axis]
    classes = from_op(xp.reshape(xp.arange(soft.shape[axis]), tuple(shape)), soft.backend,
                      None)
    chosen = ops.astype(classes == ops.argmax(soft, axis=axis, keepdims=True), soft.dtype)
    return chosen - soft.detach() + soft


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """Local response normalisation across channels (AlexNet's), as PyTorch's
    ``F.local_response_norm``: each entry of ``(N, C, ...)`` input divided by ``(k + alpha *
    mean(x ** 2)) ** beta``, the mean over a window of ``size`` channels around it
    (``size // 2`` before, ``(size - 1) // 2`` after), counting the zeros past the first and
    last channel.

    Examples:
        >>> import dparray as dp
        >>> x = dp.tensor([[[1.0], [2.0], [3.0]]], dtype="float64")  # (N, C, L) = (1, 3, 1)
        >>> out = dp.nn.functional.local_response_norm(x, 2, alpha=1.0, beta=1.0)
        >>> out.flatten().tolist()  # divided by 1 + (0 + 1) / 2, 1 + (1 + 4) / 2, 1 + (4 + 9) / 2
        [0.6666666666666666, 0.5714285714285714, 0.4]
    """
    where = "local_response_norm"
    check_tensor(input, "input", where)
    size, alpha, beta, k = _check_response_norm(size, alpha, beta, k, where)
    if input.ndim < 3:
        raise ValueError(f"{where}: expected (N, C, ...) input of at least 3 dimensions, got "
                         f"shape {input.shape}")
    if not input.dtype.is_floating:
        raise TypeError(f"{where}: input must be floating, got {input.dtype.name}")
    if input.elem_count() == 0:
        return input
    # pad's (before, after) pairs run from the last axis back: the channels' pair comes last
    widths = (0, 0) * (input.ndim - 2) + (size // 2, (size - 1) // 2)
    windows = ops.unfold(ops.pad(input * input, widths), 1, size, 1)  # (N, C, ..., size)
    return input / (ops.mean(windows, axis=-1) * alpha + k) ** beta


def _check_response_norm(size: int, alpha: float, beta: float, k: float,
                         where: str) -> tuple[int, float, float, float]:
    return (check_int(size, "size", where, minimum=1), check_number(alpha, "alpha", where),
            check_number(beta, "beta", where), check_number(k, "k", where))


# ------------------------------------------------------------------ modules
