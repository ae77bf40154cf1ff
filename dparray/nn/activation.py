"""Activation layers with PyTorch's names, arguments and defaults: LeakyReLU, PReLU, ELU, SELU,
CELU, SiLU, Mish, Hardswish, Hardsigmoid, Hardtanh, ReLU6, Softplus, Softsign, LogSigmoid and
Softmin (ReLU, GELU, Tanh, Sigmoid and Softmax are in ``dparray.nn.layers``).

Each checks its settings in its constructor and calls its function in
``dparray.ops.activations``: one graph node per call, the backend's kernel where it has one.
``inplace`` is accepted for PyTorch's code and changes nothing: dparray never writes into an
array, so the result is always a new tensor.
"""

from __future__ import annotations

from typing import Any

from dparray import ops
from dparray._checks import check_bool, check_int, check_number, check_tensor
from dparray.nn import init as _init
from dparray.nn.layers import _AlongDim
from dparray.nn.module import Module
from dparray.ops import activations as _act
from dparray.tensor import Tensor


class _Elementwise(Module):
    """An activation whose ``forward`` calls its function in ``dparray.ops.activations``
    (which picks the backend's kernel, if it has one) on the checked input."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = check_bool(inplace, "inplace", type(self).__name__)

    def _checked(self, input: Any) -> Tensor:
        return check_tensor(input, "input", type(self).__name__)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(_Elementwise):
    """``x`` where positive, else ``negative_slope * x``.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.LeakyReLU(0.25)(dp.tensor([-1.0, 2.0])).tolist()
        [-0.25, 2.0]
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.negative_slope = check_number(negative_slope, "negative_slope", "LeakyReLU")

    def forward(self, input: Tensor) -> Tensor:
        return _act.leaky_relu(self._checked(input), self.negative_slope)

    def extra_repr(self) -> str:
        return ", ".join(filter(None, [f"negative_slope={self.negative_slope}",
                                       super().extra_repr()]))


class ELU(_Elementwise):
    """``x`` where positive, else ``alpha * (exp(x) - 1)``."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.alpha = check_number(alpha, "alpha", "ELU")

    def forward(self, input: Tensor) -> Tensor:
        return _act.elu(self._checked(input), self.alpha)

    def extra_repr(self) -> str:
        return ", ".join(filter(None, [f"alpha={self.alpha}", super().extra_repr()]))


class SELU(_Elementwise):
    """The self-normalising ELU: ``scale * elu(x, alpha)`` with PyTorch's constants."""

    def forward(self, input: Tensor) -> Tensor:
        return _act.selu(self._checked(input))


class CELU(_Elementwise):
    """``x`` where positive, else ``alpha * (exp(x / alpha) - 1)``; ``alpha`` is not 0."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.alpha = _act.check_celu_alpha(alpha, "CELU")

    def forward(self, input: Tensor) -> Tensor:
        return _act.celu(self._checked(input), self.alpha)

    def extra_repr(self) -> str:
        return ", ".join(filter(None, [f"alpha={self.alpha}", super().extra_repr()]))


class SiLU(_Elementwise):
    """``x * sigmoid(x)`` (the swish)."""

    def forward(self, input: Tensor) -> Tensor:
        return _act.silu(self._checked(input))


class Mish(_Elementwise):
    """``x * tanh(softplus(x))``."""

    def forward(self, input: Tensor) -> Tensor:
        return _act.mish(self._checked(input))


class Hardswish(_Elementwise):
    """``x * relu6(x + 3) / 6``."""

    def forward(self, input: Tensor) -> Tensor:
        return _act.hardswish(self._checked(input))


class Hardsigmoid(_Elementwise):
    """``relu6(x + 3) / 6``."""

    def forward(self, input: Tensor) -> Tensor:
        return _act.hardsigmoid(self._checked(input))


class Hardtanh(_Elementwise):
    """``x`` limited to ``[min_val, max_val]``; no gradient at or beyond the bounds.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.Hardtanh(-2.0, 2.0)(dp.tensor([-5.0, 1.0, 5.0])).tolist()
        [-2.0, 1.0, 2.0]
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0,
                 inplace: bool = False) -> None:
        super().__init__(inplace)
        self.min_val, self.max_val = _act.check_bounds(min_val, max_val,
                                                                type(self).__name__)

    def forward(self, input: Tensor) -> Tensor:
        return _act.hardtanh(self._checked(input), self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return ", ".join(filter(None, [f"min_val={self.min_val}, max_val={self.max_val}",
                                       super().extra_repr()]))


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``: ``Hardtanh(0, 6)``, as in PyTorch."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _Elementwise.extra_repr(self)


class Softplus(_Elementwise):
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``
    (which keeps large inputs exact), as in PyTorch; ``beta`` must be positive."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = _act.check_softplus(beta, threshold, "Softplus")

    def forward(self, input: Tensor) -> Tensor:
        return _act.softplus(self._checked(input), self.beta,
                             self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softsign(_Elementwise):
    """``x / (1 + |x|)``."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return _act.softsign(self._checked(input))


class LogSigmoid(_Elementwise):
    """``log(sigmoid(x))``, finite for every finite input."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return _act.logsigmoid(self._checked(input))


class PReLU(Module):
    """Leaky ReLU whose negative slope is learned: a parameter ``weight`` of
    ``num_parameters`` slopes (1, or one per channel of axis 1), starting at ``init``.

    Examples:
        >>> import dparray as dp
        >>> layer = dp.nn.PReLU(num_parameters=2)
        >>> layer(dp.tensor([[-1.0, -2.0], [3.0, 4.0]])).tolist()
        [[-0.25, -0.5], [3.0, 4.0]]
        >>> [name for name, _ in layer.named_parameters()]
        ['weight']
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, dtype: Any = None) -> None:
        super().__init__()
        where = "PReLU"
        count = check_int(num_parameters, "num_parameters", where, minimum=1)
        self.init = check_number(init, "init", where)
        # the count is weight.shape[0]: ``num_parameters()`` is Module's method (all scalars)
        self.weight = _init.constant((count,), self.init, dtype)

    def forward(self, input: Tensor) -> Tensor:
        where = "PReLU"
        check_tensor(input, "input", where)
        return _act.Prelu()(input, _act.prelu_weight(input, self.weight, where))

    def extra_repr(self) -> str:
        return f"num_parameters={self.weight.shape[0]}"


class Softmin(_AlongDim):
    """``softmax(-x)`` along ``dim`` (default -1, as this library's ``Softmax``): weights that
    favour the smallest entries.

    Examples:
        >>> import dparray as dp
        >>> [round(p, 4) for p in dp.nn.Softmin()(dp.tensor([0.0, 1.0])).tolist()]
        [0.7311, 0.2689]
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__(check_int(dim, "dim", "Softmin"))

    def forward(self, input: Tensor) -> Tensor:
        return ops.softmax(-check_tensor(input, "input", "Softmin"), axis=self.dim)

