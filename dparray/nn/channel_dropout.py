"""Dropout of whole channels (``Dropout1d``, ``Dropout2d``, ``Dropout3d``) and alpha dropout
for self-normalising networks (``AlphaDropout``, ``FeatureAlphaDropout``), with their
functional forms, as PyTorch's: the same signatures, accepted input ranks, warnings and
formulas (``dparray.ops.channel_dropout``).

Each mask comes from the current random stream, so a seed makes it repeat and DataParallel's
chunks draw their own; in evaluation (``training=False``) and with ``p=0`` every one of them is
the identity. ``inplace`` is accepted for PyTorch's code and changes nothing: the result is
always a new tensor. ``p`` lies in ``[0, 1)``, as ``nn.Dropout``'s (PyTorch also takes 1).
"""

from __future__ import annotations

import warnings
from typing import Any

from dparray._checks import check_bool, check_probability, check_tensor
from dparray.nn.module import Module
from dparray.ops import channel_dropout as _ops
from dparray.tensor import Tensor

__all__ = [
    "AlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout",
    "alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout",
]


def _checked(input: Any, p: Any, inplace: Any, where: str) -> float:
    """``p``, once it, ``inplace`` and ``input`` (a floating-point tensor) are checked."""
    p = check_probability(p, "p", where)
    check_bool(inplace, "inplace", where)
    check_tensor(input, "input", where)
    if not input.dtype.is_floating:
        raise TypeError(f"{where}: input must be a floating-point tensor, got "
                        f"{input.dtype.name}")
    return p


def _warn_deprecated_rank(input: Tensor, where: str, layouts: str) -> None:
    """PyTorch's warning for input of a rank its channel dropout keeps for old code only."""
    warnings.warn(
        f"{where}: received a {input.ndim}-D input, which is deprecated (in PyTorch too) and "
        f"will be an error in a future release; use dropout instead, or give {where} "
        f"{layouts} input", UserWarning, stacklevel=3)


# ------------------------------------------------------------------ whole channels
def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero each channel of ``(N, C, L)`` input (or unbatched ``(C, L)``) whole with
    probability ``p``, and scale the others by ``1 / (1 - p)``; one graph node. Input of
    another rank is a ValueError (PyTorch's RuntimeError).

    Examples:
        >>> import dparray as dp
        >>> y = dp.nn.functional.dropout1d(dp.ones(2, 8, 5), p=0.5)
        >>> len(set(y[0, 3].tolist())), y.max().item() in (0.0, 2.0)   # a channel is whole
        (1, True)
    """
    p = _checked(input, p, inplace, "dropout1d")
    if input.ndim not in (2, 3):
        raise ValueError(f"dropout1d: expected 3-D (N, C, L) or 2-D (C, L) input, got "
                         f"{input.ndim}-D input of shape {input.shape}")
    if not training or p == 0.0:
        return input
    return _ops.channel_dropout(input, p, leading=2 if input.ndim == 3 else 1)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero each channel of ``(N, C, H, W)`` input whole with probability ``p``, and scale
    the others by ``1 / (1 - p)``; one graph node.

    Other ranks are read as PyTorch reads them, with its warnings: 3-D input as ``(N, C, L)``
    (channel-wise 1-D dropout; PyTorch announces that it will read it as unbatched
    ``(C, H, W)`` one day), and any other rank from 2 up as ``(N, C, ...)`` with a warning
    that it is deprecated (2-D input is then dropped element by element). Input of fewer than
    two axes is a ValueError (PyTorch's RuntimeError).

    Examples:
        >>> import dparray as dp
        >>> y = dp.nn.functional.dropout2d(dp.ones(2, 3, 4, 4), p=0.5)
        >>> y.shape, sorted(set(y[0, 1].reshape(-1).tolist())) in ([0.0], [2.0])
        ((2, 3, 4, 4), True)
    """
    p = _checked(input, p, inplace, "dropout2d")
    if input.ndim < 2:
        raise ValueError(f"dropout2d: expected 4-D (N, C, H, W) input, got {input.ndim}-D "
                         f"input of shape {input.shape}")
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: received 3-D input, taken as (N, C, L) as PyTorch takes it "
            "(channel-wise 1-D dropout); use dropout1d for that, or give unbatched (C, H, W) "
            "input a batch axis", UserWarning, stacklevel=2)
    elif input.ndim != 4:
        _warn_deprecated_rank(input, "dropout2d", "(N, C, H, W)")
    if not training or p == 0.0:
        return input
    return _ops.channel_dropout(input, p)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero each channel of ``(N, C, D, H, W)`` input (or unbatched ``(C, D, H, W)``) whole
    with probability ``p``, and scale the others by ``1 / (1 - p)``; one graph node.

    Input of another rank is read as PyTorch reads it, with its warning that this is
    deprecated: as unbatched ``(C, ...)``, a draw for each entry of axis 0. A 0-d tensor is a
    ValueError (PyTorch's RuntimeError).

    Examples:
        >>> import dparray as dp
        >>> dp.nn.functional.dropout3d(dp.ones(3, 2, 2, 2), p=0.5).shape   # unbatched
        (3, 2, 2, 2)
    """
    p = _checked(input, p, inplace, "dropout3d")
    if input.ndim < 1:
        raise ValueError("dropout3d: expected 5-D (N, C, D, H, W) or 4-D (C, D, H, W) input, "
                         "got a 0-d tensor")
    if input.ndim not in (4, 5):
        _warn_deprecated_rank(input, "dropout3d", "(N, C, D, H, W) or (C, D, H, W)")
    if not training or p == 0.0:
        return input
    return _ops.channel_dropout(input, p, leading=2 if input.ndim == 5 else 1)


# ------------------------------------------------------------------ alpha dropout
def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout that keeps a self-normalising (SELU) network's mean and variance: each element
    is dropped with probability ``p`` to SELU's saturation ``alpha' = -1.7580993408473766``,
    then every one is mapped through ``a * y + b`` (``a = ((1 - p)(1 + p alpha'^2))^-1/2``,
    ``b = -a alpha' p``); one graph node. ``training`` defaults to False, as in PyTorch.

    Examples:
        >>> import dparray as dp
        >>> x = dp.randn(100_000, dtype="float64")
        >>> y = dp.nn.functional.alpha_dropout(x, p=0.2, training=True)
        >>> abs(y.mean().item()) < 0.02, abs(y.std().item() - 1.0) < 0.02
        (True, True)
    """
    p = _checked(input, p, inplace, "alpha_dropout")
    if not training or p == 0.0:
        return input
    return _ops.alpha_dropout(input, p)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """``alpha_dropout`` with one draw per channel: axis 1 of input ``(N, C, ...)`` of any
    rank from 2, as PyTorch reads it (so unbatched ``(C, D, H, W)`` input is read as
    ``(N, C, H, W)``, as in PyTorch). ``training`` defaults to False, as in PyTorch. Input of
    fewer than two axes is a ValueError even where nothing is dropped (PyTorch refuses it only
    in training).

    Examples:
        >>> import dparray as dp
        >>> y = dp.nn.functional.feature_alpha_dropout(dp.zeros(2, 3, 4), 0.5, training=True)
        >>> len(set(y[1, 2].tolist()))   # one value for the whole channel
        1
    """
    p = _checked(input, p, inplace, "feature_alpha_dropout")
    if input.ndim < 2:
        raise ValueError(f"feature_alpha_dropout: expected input (N, C, ...) of at least 2 "
                         f"axes, got {input.ndim}-D input of shape {input.shape}")
    if not training or p == 0.0:
        return input
    return _ops.alpha_dropout(input, p, channels=True)


# ------------------------------------------------------------------ the layers
class _DropoutNd(Module):
    """What the dropout layers share: ``p`` and ``inplace``, checked, and PyTorch's repr."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        where = type(self).__name__
        self.p = check_probability(p, "p", where)
        self.inplace = check_bool(inplace, "inplace", where)

    def couples_rows(self) -> bool:
        return self.is_training() and self.p > 0  # the masks follow the chunks' streams

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """``dropout1d`` in training, the identity in evaluation: each channel of ``(N, C, L)``
    (or ``(C, L)``) input zeroed whole with probability ``p``, the others scaled by
    ``1 / (1 - p)``.

    Examples:
        >>> import dparray as dp
        >>> layer = dp.nn.Dropout1d(0.3)
        >>> layer(dp.ones(4, 3, 5)).shape, layer.eval()(dp.ones(3, 5)).tolist()[0]
        ((4, 3, 5), [1.0, 1.0, 1.0, 1.0, 1.0])
    """

    def forward(self, input: Tensor) -> Tensor:
        return dropout1d(input, self.p, self.is_training(), self.inplace)


class Dropout2d(_DropoutNd):
    """``dropout2d`` in training, the identity in evaluation: each channel of
    ``(N, C, H, W)`` input zeroed whole with probability ``p``, the others scaled by
    ``1 / (1 - p)`` (3-D input as ``dropout2d`` takes it).

    Examples:
        >>> import dparray as dp
        >>> dp.nn.Dropout2d(p=0.2)
        Dropout2d(p=0.2, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return dropout2d(input, self.p, self.is_training(), self.inplace)


class Dropout3d(_DropoutNd):
    """``dropout3d`` in training, the identity in evaluation: each channel of
    ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) input zeroed whole with probability ``p``, the
    others scaled by ``1 / (1 - p)``.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.Dropout3d()(dp.ones(2, 4, 3, 3, 3)).shape
        (2, 4, 3, 3, 3)
    """

    def forward(self, input: Tensor) -> Tensor:
        return dropout3d(input, self.p, self.is_training(), self.inplace)


class AlphaDropout(_DropoutNd):
    """``alpha_dropout`` in training, the identity in evaluation: dropout for SELU networks
    that keeps zero mean and unit variance.

    Examples:
        >>> import dparray as dp
        >>> model = dp.nn.Sequential(dp.nn.Linear(4, 4), dp.nn.SELU(), dp.nn.AlphaDropout(0.1))
        >>> model(dp.randn(2, 4)).shape
        (2, 4)
    """

    def forward(self, input: Tensor) -> Tensor:
        return alpha_dropout(input, self.p, self.is_training(), self.inplace)


class FeatureAlphaDropout(_DropoutNd):
    """``feature_alpha_dropout`` in training, the identity in evaluation: alpha dropout of
    whole channels (axis 1) of ``(N, C, ...)`` input.

    Examples:
        >>> import dparray as dp
        >>> dp.nn.FeatureAlphaDropout(0.2)(dp.randn(2, 3, 4, 4)).shape
        (2, 3, 4, 4)
    """

    def forward(self, input: Tensor) -> Tensor:
        return feature_alpha_dropout(input, self.p, self.is_training(), self.inplace)
