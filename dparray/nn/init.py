"""Initial values for parameters, drawn from the current random stream (``dparray.manual_seed``
makes them repeat). The defaults match PyTorch's layers.

Two families. The layers build their parameters with the shape-based functions (``uniform``,
``fan_in_uniform``, ``xavier_uniform``, ``normal``, ``constant``), which return new
parameters. PyTorch's in-place initialisers (``normal_``, ``xavier_uniform_``,
``kaiming_normal_``, ``orthogonal_``, ...) take an existing tensor and replace its value,
keeping its identity: a weight tied between two layers stays one tensor, so
``model.apply(init_fn)`` re-initialises it once for both. As under PyTorch's ``no_grad``, the
replacement is not recorded in any graph; it needs a leaf tensor (a parameter, a buffer, a
constant), not one computed from others.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from dparray import creation
from dparray._checks import check_choice, check_number, check_tensor
from dparray.nn.module import Parameter
from dparray.tensor import Tensor

__all__ = [
    "calculate_gain", "constant_", "eye_", "kaiming_normal_", "kaiming_uniform_", "normal_",
    "ones_", "orthogonal_", "trunc_normal_", "uniform_", "xavier_normal_", "xavier_uniform_",
    "zeros_",
    "constant", "fan_in_uniform", "normal", "uniform", "xavier_uniform",
]

LINEAR_GAINS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                "conv_transpose3d", "sigmoid")
NONLINEARITIES = (*LINEAR_GAINS, "tanh", "relu", "leaky_relu", "selu")


# --------------------------------------------------------------------------- new parameters
def uniform(shape: tuple[int, ...], bound: float, dtype: Any = None) -> Tensor:
    """A trainable tensor of samples from ``U(-bound, bound)``."""
    samples = creation.rand(shape, dtype=dtype)
    return Parameter(samples * (2.0 * bound) - bound)


def fan_in_uniform(shape: tuple[int, ...], fan_in: int, dtype: Any = None) -> Tensor:
    """``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``: what PyTorch's ``kaiming_uniform_(a=sqrt(5))``
    gives weights, and its layers give biases."""
    return uniform(shape, 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0, dtype)


def xavier_uniform(shape: tuple[int, ...], dtype: Any = None, gain: float = 1.0) -> Tensor:
    """``U(-b, b)`` with ``b = gain * sqrt(6 / (fan_in + fan_out))`` for a weight of shape
    ``(out, in, *kernel)``: PyTorch's ``xavier_uniform_`` (Glorot), which its attention layers
    give their input projections."""
    fan_in, fan_out = _fans(shape) if len(shape) > 1 else (shape[0], shape[0])
    total = fan_in + fan_out
    return uniform(shape, gain * math.sqrt(6.0 / total) if total > 0 else 0.0, dtype)


def normal(shape: tuple[int, ...], dtype: Any = None) -> Tensor:
    """A trainable tensor of standard normal samples."""
    return Parameter(creation.randn(shape, dtype=dtype))


def constant(shape: tuple[int, ...], value: float, dtype: Any = None) -> Tensor:
    """A trainable tensor filled with ``value``."""
    return Parameter(creation.full(shape, float(value), dtype=dtype))


# --------------------------------------------------------------------------- gains and fans
def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The factor PyTorch recommends scaling a layer's initial weights by, for the
    nonlinearity that follows it: 1 for the linear and convolution layers and ``sigmoid``,
    ``5/3`` for ``tanh``, ``sqrt(2)`` for ``relu``, ``sqrt(2 / (1 + slope ** 2))`` for
    ``leaky_relu`` (``param`` is the slope, 0.01 by default), ``3/4`` for ``selu``.

    Examples:
        >>> from dparray.nn import init
        >>> init.calculate_gain("tanh"), round(init.calculate_gain("leaky_relu", 0.2), 4)
        (1.6666666666666667, 1.3868)
    """
    where = "calculate_gain"
    if not isinstance(nonlinearity, str) or nonlinearity not in NONLINEARITIES:
        raise ValueError(f"{where}: unsupported nonlinearity {nonlinearity!r}; expected one of "
                         f"{', '.join(map(repr, NONLINEARITIES))}")
    if nonlinearity in LINEAR_GAINS:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "selu":
        return 3.0 / 4
    slope = 0.01 if param is None else check_number(param, "param (the negative slope)", where)
    return math.sqrt(2.0 / (1 + slope**2))


def _fans(shape: tuple[int, ...], where: str = "init") -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight ``(out, in, *kernel)``: ``in`` and ``out`` times the
    kernel's size, as PyTorch computes them."""
    if len(shape) < 2:
        raise ValueError(f"{where}: fan in and fan out need a tensor of at least 2 dimensions, "
                         f"got shape {shape}")
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def _fan(shape: tuple[int, ...], mode: str, where: str) -> int:
    fan_in, fan_out = _fans(shape, where)
    return fan_in if check_choice(mode, "mode", where, ("fan_in", "fan_out")) == "fan_in" \
        else fan_out


# --------------------------------------------------------------------------- in place
def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Fill ``tensor`` with samples from ``U(a, b)``; returns it.

    Examples:
        >>> import dparray as dp
        >>> w = dp.nn.Linear(3, 2).weight
        >>> dp.nn.init.uniform_(w, -0.1, 0.1) is w
        True
    """
    where = "uniform_"
    target = _random_target(tensor, where)
    low, high = check_number(a, "a", where), check_number(b, "b", where)
    if low > high:
        raise ValueError(f"{where}: a must not exceed b, got a={a!r}, b={b!r}")
    return _replace(target, _uniform(target, low, high))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fill ``tensor`` with samples from ``N(mean, std ** 2)``; returns it."""
    where = "normal_"
    target = _random_target(tensor, where)
    mean = check_number(mean, "mean", where)
    std = check_number(std, "std", where, minimum=0.0)
    return _replace(target, _normal(target, mean, std))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0) -> Tensor:
    """Fill ``tensor`` with samples from ``N(mean, std ** 2)`` truncated to ``[a, b]`` (the
    bounds are absolute, not in units of ``std``), as PyTorch draws them: uniform samples of
    the normal's CDF between ``a`` and ``b``, mapped back through its inverse. Like PyTorch it
    warns when ``mean`` lies more than two ``std`` outside ``[a, b]``."""
    where = "trunc_normal_"
    target = _random_target(tensor, where)
    mean = check_number(mean, "mean", where)
    std = check_number(std, "std", where, above=0.0)
    low, high = check_number(a, "a", where), check_number(b, "b", where)
    if not low < high:
        raise ValueError(f"{where}: a must be less than b, got a={a!r}, b={b!r}")
    if mean < low - 2 * std or mean > high + 2 * std:
        warnings.warn("trunc_normal_: mean is more than 2 std from [a, b]; the distribution of "
                      "the values may be incorrect", stacklevel=2)
    xp = target.backend.xp
    # uniform in erf's range between the bounds, then erfinv: 2 * cdf(z) - 1 = erf(z / sqrt(2))
    lower = math.erf((low - mean) / (std * math.sqrt(2.0)))
    upper = math.erf((high - mean) / (std * math.sqrt(2.0)))
    standard = _erfinv(target, _uniform(target, lower, upper))
    return _replace(target, xp.clip(standard * (std * math.sqrt(2.0)) + mean, low, high))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` with ``val`` (any dtype that can hold it); returns it."""
    target = _leaf_target(tensor, "constant_")
    try:
        filled = creation.full(target.shape, val, dtype=target.dtype, backend=target.backend)
    except (TypeError, ValueError) as error:
        raise type(error)(f"constant_: {error}") from None
    return _replace(target, filled.data)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with zeros; returns it."""
    target = _leaf_target(tensor, "zeros_")
    return _replace(target, target.backend.xp.zeros_like(target.data))


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with ones; returns it."""
    target = _leaf_target(tensor, "ones_")
    return _replace(target, target.backend.xp.ones_like(target.data))


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D ``tensor`` with the identity (ones on the diagonal); returns it."""
    target = _leaf_target(tensor, "eye_")
    if target.ndim != 2:
        raise ValueError(f"eye_: needs a 2-D tensor, got shape {target.shape}")
    identity = creation.eye(*target.shape, dtype=target.dtype, backend=target.backend)
    return _replace(target, identity.data)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot's uniform initialisation: ``U(-b, b)`` with ``b = gain * sqrt(6 / (fan_in +
    fan_out))``, the fans of a weight ``(out, in, *kernel)``; returns ``tensor``."""
    where = "xavier_uniform_"
    target = _random_target(tensor, where)
    std = _xavier_std(target, gain, where)
    if std is None:
        return target
    return _replace(target, _uniform(target, -math.sqrt(3.0) * std, math.sqrt(3.0) * std))


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot's normal initialisation: ``N(0, std ** 2)`` with ``std = gain * sqrt(2 / (fan_in
    + fan_out))``; returns ``tensor``."""
    where = "xavier_normal_"
    target = _random_target(tensor, where)
    std = _xavier_std(target, gain, where)
    if std is None:
        return target
    return _replace(target, _normal(target, 0.0, std))


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu") -> Tensor:
    """He's uniform initialisation: ``U(-b, b)`` with ``b = gain * sqrt(3 / fan)``, ``gain =
    calculate_gain(nonlinearity, a)`` and ``fan`` the weight's ``fan_in`` or ``fan_out``
    (``mode``); returns ``tensor``. ``a`` is the negative slope of a following
    ``leaky_relu``.

    Examples:
        >>> import dparray as dp
        >>> w = dp.nn.Conv2d(3, 8, 3).weight
        >>> w = dp.nn.init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu")
        >>> bool(abs(w).max() <= (2.0 * 3 / (8 * 9)) ** 0.5)
        True
    """
    where = "kaiming_uniform_"
    target = _random_target(tensor, where)
    std = _kaiming_std(target, a, mode, nonlinearity, where)
    if std is None:
        return target
    return _replace(target, _uniform(target, -math.sqrt(3.0) * std, math.sqrt(3.0) * std))


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu") -> Tensor:
    """He's normal initialisation: ``N(0, std ** 2)`` with ``std = gain / sqrt(fan)``, as
    ``kaiming_uniform_`` defines them; returns ``tensor``."""
    where = "kaiming_normal_"
    target = _random_target(tensor, where)
    std = _kaiming_std(target, a, mode, nonlinearity, where)
    if std is None:
        return target
    return _replace(target, _normal(target, 0.0, std))


def orthogonal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """A (semi-)orthogonal matrix times ``gain``, as PyTorch draws it: the ``Q`` of a
    standard normal matrix's QR decomposition, its columns' signs fixed by ``R``'s diagonal
    (so it is uniformly distributed). ``tensor`` has at least 2 dimensions and is seen as
    ``(shape[0], rest)``: its rows are orthonormal when it has fewer rows than columns, else
    its columns; returns ``tensor``."""
    where = "orthogonal_"
    target = _random_target(tensor, where)
    if target.ndim < 2:
        raise ValueError(f"{where}: needs a tensor of at least 2 dimensions, got shape "
                         f"{target.shape}")
    gain = check_number(gain, "gain", where)
    if target.elem_count() == 0:
        return target
    xp = target.backend.xp
    linalg = getattr(xp, "linalg", None)
    if linalg is None or not hasattr(linalg, "qr"):
        raise TypeError(f"{where}: the {target.backend.name!r} backend's namespace has no "
                        "linalg.qr (the array API's linalg extension)")
    rows = target.shape[0]
    columns = target.elem_count() // rows
    native = target.data.dtype
    exact = native if target.dtype.name in ("float32", "float64") else xp.float32
    flat = xp.astype(creation.randn((rows, columns), dtype=target.dtype,
                                    backend=target.backend).data, exact)
    if rows < columns:
        flat = xp.matrix_transpose(flat)
    q, r = linalg.qr(flat)
    q = q * xp.sign(linalg.diagonal(r))
    if rows < columns:
        q = xp.matrix_transpose(q)
    return _replace(target, xp.astype(xp.reshape(q * gain, target.shape), native))


# --------------------------------------------------------------------------- helpers
def _xavier_std(target: Tensor, gain: Any, where: str) -> float | None:
    """``gain * sqrt(2 / (fan_in + fan_out))``, or None for a tensor without elements."""
    fan_in, fan_out = _fans(target.shape, where)
    gain = check_number(gain, "gain", where)
    if target.elem_count() == 0:
        return None
    return gain * math.sqrt(2.0 / (fan_in + fan_out))


def _kaiming_std(target: Tensor, a: Any, mode: Any, nonlinearity: Any,
                 where: str) -> float | None:
    """``gain / sqrt(fan)``, or None (with PyTorch's warning) for a tensor without elements."""
    fan = _fan(target.shape, mode, where)
    if nonlinearity not in NONLINEARITIES:
        raise ValueError(f"{where}: unsupported nonlinearity {nonlinearity!r}; expected one of "
                         f"{', '.join(map(repr, NONLINEARITIES))}")
    gain = calculate_gain(nonlinearity, check_number(a, "a", where))
    if target.elem_count() == 0:
        warnings.warn(f"{where}: initializing a tensor without elements is a no-op",
                      stacklevel=3)
        return None
    return gain / math.sqrt(fan)


def _leaf_target(tensor: Any, where: str) -> Tensor:
    """``tensor``, checked to be a leaf whose value may be replaced."""
    check_tensor(tensor, "tensor", where)
    if tensor.grad_fn is not None:
        raise ValueError(f"{where}: the tensor was computed by {type(tensor.grad_fn).__name__}; "
                         "initialise a parameter or another leaf tensor (use .detach() for a "
                         "new one)")
    result: Tensor = tensor
    return result


def _random_target(tensor: Any, where: str) -> Tensor:
    """A leaf tensor of a floating dtype: random initial values are floating."""
    target = _leaf_target(tensor, where)
    if not target.dtype.is_floating:
        raise TypeError(f"{where}: draws floating values, got a tensor of dtype "
                        f"{target.dtype.name}")
    return target


def _replace(target: Tensor, array: Any) -> Tensor:
    """Give ``target`` the value ``array`` (of its shape, dtype and backend) and return it."""
    target.data = array
    return target


def _uniform(target: Tensor, low: float, high: float) -> Any:
    """An array of ``target``'s shape and dtype drawn from ``U(low, high)``."""
    samples = creation.rand(target.shape, dtype=target.dtype, backend=target.backend).data
    return samples * (high - low) + low


def _normal(target: Tensor, mean: float, std: float) -> Any:
    """An array of ``target``'s shape and dtype drawn from ``N(mean, std ** 2)``."""
    samples = creation.randn(target.shape, dtype=target.dtype, backend=target.backend).data
    return samples * std + mean


def _erfinv(target: Tensor, y: Any) -> Any:
    """The inverse error function of ``y`` (in ``(-1, 1)``): Giles' single-precision
    approximation ("Approximating the erfinv function", 2010), then two Newton steps on
    ``erf``, which bring it to the dtype's precision."""
    xp, backend = target.backend.xp, target.backend
    eps = float(xp.finfo(y.dtype).eps)
    y = xp.clip(y, -1.0 + eps, 1.0 - eps)  # erfinv(+-1) is infinite: the outermost quantiles
    w = -xp.log((1.0 - y) * (1.0 + y))
    central, tail = w - 2.5, xp.sqrt(w) - 3.0
    p_central = _polynomial(central, (2.81022636e-08, 3.43273939e-07, -3.5233877e-06,
                                      -4.39150654e-06, 0.00021858087, -0.00125372503,
                                      -0.00417768164, 0.246640727, 1.50140941))
    p_tail = _polynomial(tail, (-0.000200214257, 0.000100950558, 0.00134934322,
                                -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                                1.00167406, 2.83297682))
    x = xp.where(w < 5.0, p_central, p_tail) * y
    for _ in range(2):
        slope = (2.0 / math.sqrt(math.pi)) * xp.exp(-(x * x))
        usable = slope > 0
        step = (backend.erf(x) - y) / xp.where(usable, slope, xp.ones_like(slope))
        x = xp.where(usable, x - step, x)
    return x


def _polynomial(w: Any, coefficients: tuple[float, ...]) -> Any:
    """Horner's rule, highest coefficient first."""
    result = w * 0.0 + coefficients[0]
    for c in coefficients[1:]:
        result = result * w + c
    return result
