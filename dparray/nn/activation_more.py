"""More of PyTorch's activation modules: GLU, the shrinks (hard, soft, tanh), Threshold, RReLU,
Softmax2d and LocalResponseNorm, each calling its function in
``dparray.nn.activation_functions`` (Softmax2d: ``softmax`` over the channels).
"""

from __future__ import annotations

from dparray import ops
from dparray._checks import check_int, check_number, check_tensor
from dparray.nn.activation import _Elementwise
from dparray.nn.activation_functions import (
    _check_response_norm,
    glu,
    hardshrink,
    local_response_norm,
    rrelu,
    softshrink,
    tanhshrink,
    threshold,
)
from dparray.nn.module import Module
from dparray.ops.activations import check_bounds
from dparray.tensor import Tensor

__all__ = [
    "GLU", "Hardshrink", "LocalResponseNorm", "RReLU", "Softmax2d", "Softshrink", "Tanhshrink",
    "Threshold",
]


class GLU(Module):
    """Module form of ``glu``: ``a * sigmoid(b)`` for the halves of the input along ``dim``.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.GLU()(dp.tensor([1.0, 2.0, 0.0, 0.0])).tolist()
        [0.5, 1.0]
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = check_int(dim, "dim", "GLU")

    def forward(self, input: Tensor) -> Tensor:
        return glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Hardshrink(Module):
    """Module form of ``hardshrink``."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = check_number(lambd, "lambd", "Hardshrink")

    def forward(self, input: Tensor) -> Tensor:
        return hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Softshrink(Module):
    """Module form of ``softshrink``; ``lambd`` is at least 0 (checked here, where PyTorch
    checks it at the first call)."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = check_number(lambd, "lambd", "Softshrink", minimum=0.0)

    def forward(self, input: Tensor) -> Tensor:
        return softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Tanhshrink(Module):
    """Module form of ``tanhshrink``: ``x - tanh(x)``."""

    def forward(self, input: Tensor) -> Tensor:
        return tanhshrink(input)


class Threshold(_Elementwise):
    """Module form of ``threshold``: ``value`` where the input is at most ``threshold``.

    Examples:
        >>> import dparray as dp
        >>> layer = dp.nn.Threshold(0.1, 20.0)
        >>> layer, layer(dp.tensor([0.0, 0.5])).tolist()
        (Threshold(threshold=0.1, value=20.0), [20.0, 0.5])
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.threshold = check_number(threshold, "threshold", "Threshold", finite=False)
        self.value = check_number(value, "value", "Threshold", finite=False)

    def forward(self, input: Tensor) -> Tensor:
        return threshold(input, self.threshold, self.value)

    def extra_repr(self) -> str:
        return ", ".join(filter(None, [f"threshold={self.threshold}, value={self.value}",
                                       super().extra_repr()]))


class RReLU(_Elementwise):
    """Module form of ``rrelu``: random negative slopes from ``[lower, upper)`` in training,
    their mean in evaluation (checked here, where PyTorch checks ``lower <= upper`` at the
    first call). In training each chunk of a DataParallel batch draws its own slopes.

    Examples:
        >>> import dparray as dp
        >>> layer = dp.nn.RReLU(0.1, 0.3)
        >>> out = layer(dp.tensor([-1.0, 1.0]))
        >>> -0.3 <= out[0].item() <= -0.1, out[1].item()
        (True, 1.0)
        >>> layer.eval()(dp.tensor([-1.0], dtype="float64")).item()
        -0.2
    """

    def __init__(self, lower: float = 1.0 / 8.0, upper: float = 1.0 / 3.0,
                 inplace: bool = False) -> None:
        super().__init__(inplace)
        self.lower, self.upper = check_bounds(lower, upper, "RReLU", ("lower", "upper"))

    def couples_rows(self) -> bool:
        return self.is_training()  # the slopes follow the chunks' streams

    def forward(self, input: Tensor) -> Tensor:
        return rrelu(input, self.lower, self.upper, self.is_training())

    def extra_repr(self) -> str:
        return ", ".join(filter(None, [f"lower={self.lower}, upper={self.upper}",
                                       super().extra_repr()]))


class Softmax2d(Module):
    """Softmax over the channels (axis -3) of ``(N, C, H, W)`` or ``(C, H, W)`` input, as
    PyTorch's ``nn.Softmax2d``: at each position the channels sum to 1.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.Softmax2d()(dp.zeros(2, 4, 3, 3)).sum(axis=1).tolist()[0][0]
        [1.0, 1.0, 1.0]
    """

    def forward(self, input: Tensor) -> Tensor:
        check_tensor(input, "input", "Softmax2d")
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected (C, H, W) or (N, C, H, W) input, got shape "
                             f"{input.shape}")
        return ops.softmax(input, axis=-3)


class LocalResponseNorm(Module):
    """Module form of ``local_response_norm``.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.LocalResponseNorm(2)
        LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = _check_response_norm(
            size, alpha, beta, k, "LocalResponseNorm")

    def forward(self, input: Tensor) -> Tensor:
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"

