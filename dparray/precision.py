"""Mixed precision: ``autocast``, which runs the matrix products in bfloat16 or float16.

Inside ``with dparray.autocast(dtype=dparray.bfloat16):`` the ops in ``POLICY`` cast their
floating inputs before they run: the products (``matmul``, ``linear``, convolutions,
``einsum``, attention) to the low-precision dtype -- they accumulate in float32 and return the
low-precision dtype, as PyTorch's autocast does -- and the ops that need range or precision
(reductions, softmax, normalisation, losses) to float32. Every other op runs in the dtype it is
given, and mixing dtypes promotes as anywhere else (bfloat16 with float32 gives float32).
Parameters are never cast in place: a product casts its own copy, whose gradient the engine
casts back, so parameters, their gradients and the optimizer's state stay float32 (the master
weights). float64 tensors are never cast, as in PyTorch.

``POLICY`` is the one table of what is cast where; the "Mixed precision" page lists it beside
PyTorch's lists (``torch.amp``'s "lower_precision_fp" and "fp32" ops), which it follows for the
products and the losses. It differs from PyTorch's CPU lists, which leave softmax, sums and
normalisation in the low-precision dtype: here they run in float32, as PyTorch's CUDA lists
keep several of them, since they lose the most from 16-bit arithmetic and cost little.

The state is a context variable: the block's own thread and every DataParallel worker it starts
(they run in a copy of the caller's context) see it; other threads do not. Inside a listed op,
autocast is off, so the ops it is built from (``einsum``'s sums) run as the op decided.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

from dparray import dtypes as _dtypes
from dparray._checks import check_bool

LOW = "low precision"
FLOAT32 = "float32"

POLICY: dict[str, str] = {
    # products: in the low-precision dtype, accumulated in float32
    "matmul": LOW,
    "linear": LOW,
    "conv1d": LOW,
    "conv2d": LOW,
    "conv3d": LOW,
    "conv_transpose": LOW,
    "conv_transpose3d": LOW,
    "einsum": LOW,
    "addmm": LOW,
    "baddbmm": LOW,
    "scaled_dot_product_attention": LOW,
    "attention_weights": LOW,
    # reductions
    "sum": FLOAT32,
    "mean": FLOAT32,
    "var": FLOAT32,
    "std": FLOAT32,
    "prod": FLOAT32,
    "logsumexp": FLOAT32,
    "cumsum": FLOAT32,
    "cumprod": FLOAT32,
    "logcumsumexp": FLOAT32,
    # softmax
    "softmax": FLOAT32,
    "log_softmax": FLOAT32,
    # normalisation
    "layer_norm": FLOAT32,
    "batch_norm": FLOAT32,
    "group_norm": FLOAT32,
    "instance_norm": FLOAT32,
    "rms_norm": FLOAT32,
    # losses
    "cross_entropy": FLOAT32,
    "nll_loss": FLOAT32,
    "mse_loss": FLOAT32,
    "l1_loss": FLOAT32,
    "huber_loss": FLOAT32,
    "smooth_l1_loss": FLOAT32,
    "binary_cross_entropy": FLOAT32,
    "binary_cross_entropy_with_logits": FLOAT32,
    "kl_div": FLOAT32,
    "cosine_embedding_loss": FLOAT32,
    "margin_ranking_loss": FLOAT32,
    "hinge_embedding_loss": FLOAT32,
    "soft_margin_loss": FLOAT32,
    "multilabel_soft_margin_loss": FLOAT32,
    "multi_margin_loss": FLOAT32,
    "triplet_margin_loss": FLOAT32,
    "poisson_nll_loss": FLOAT32,
    "gaussian_nll_loss": FLOAT32,
    # distances
    "cdist": FLOAT32,
}
"""What each op casts its floating inputs to under autocast: ``LOW`` (the autocast dtype) or
``FLOAT32``. Ops not listed run in the dtypes they are given."""

DEVICE_TYPES = {"cpu": _dtypes.bfloat16, "cuda": _dtypes.float16}
"""The device types ``autocast`` takes, PyTorch's first argument, and the dtype each defaults
to (PyTorch's defaults)."""

_active: contextvars.ContextVar[_dtypes.DType | None] = contextvars.ContextVar(
    "dparray_autocast", default=None
)


class autocast(contextlib.ContextDecorator):
    """Within the block (or the decorated function), the products run in ``dtype`` --
    ``dparray.bfloat16`` (the default) or ``dparray.float16`` -- with float32 accumulation,
    and reductions, softmax, normalisation and losses in float32; ``enabled=False`` turns
    autocast off inside an enclosing block. See ``POLICY``.

    PyTorch's signature is taken as it is written: ``autocast("cuda", dtype=...)``,
    ``autocast(device_type="cpu")``. The device type picks the default dtype as PyTorch's does
    (float16 for ``"cuda"``, bfloat16 for ``"cpu"``) and nothing else: the block applies to
    the tensors of every backend. ``dparray.autocast(dparray.float16)`` (the dtype first) works
    too. ``cache_enabled`` is accepted and ignored: each product casts its own copy of a
    parameter, so there is no cast to cache.

    float16 has a narrow range: train under it with ``dparray.amp.GradScaler``, which scales
    the loss so that small gradients do not underflow. bfloat16 has float32's range and needs
    no scaler.

    Examples:
        >>> import dparray as dp
        >>> w = dp.randn(4, 3, requires_grad=True)
        >>> with dp.autocast(dtype=dp.bfloat16):
        ...     y = dp.randn(2, 3) @ w.T
        ...     loss = (y * y).mean()
        >>> y.dtype, loss.dtype, loss.backward()[w].dtype
        (dparray.bfloat16, dparray.float32, dparray.float32)
        >>> dp.autocast("cuda").dtype, dp.autocast(device_type="cpu").dtype
        (dparray.float16, dparray.bfloat16)
    """

    def __init__(self, device_type: Any = None, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if dtype is None and device_type is not None and device_type not in DEVICE_TYPES \
                and _names_a_dtype(device_type):
            device_type, dtype = None, device_type  # the dtype given first, dparray's way
        if device_type is not None and device_type not in DEVICE_TYPES:
            raise ValueError(f"autocast: device_type must be one of {sorted(DEVICE_TYPES)}, got "
                             f"{device_type!r}")
        if dtype is None:
            dtype = DEVICE_TYPES[device_type] if device_type is not None else _dtypes.bfloat16
        try:
            chosen = _dtypes.to_dtype(dtype)
        except TypeError as error:
            raise TypeError(f"autocast: dtype must be dparray.bfloat16 or dparray.float16; "
                            f"{error}") from None
        if chosen not in _dtypes.LOW_PRECISION:
            raise ValueError(f"autocast: dtype must be bfloat16 or float16, got {chosen.name}")
        self.dtype = chosen
        self.enabled = check_bool(enabled, "enabled", "autocast")
        if cache_enabled is not None:
            check_bool(cache_enabled, "cache_enabled", "autocast")
        self._tokens: list[contextvars.Token[_dtypes.DType | None]] = []

    def __repr__(self) -> str:
        return f"autocast(dtype={self.dtype!r}, enabled={self.enabled})"

    def __enter__(self) -> autocast:
        self._tokens.append(_active.set(self.dtype if self.enabled else None))
        return self

    def __exit__(self, *exc_info: object) -> None:
        _active.reset(self._tokens.pop())

    def _recreate_cm(self) -> autocast:
        """A fresh context for each call of a decorated function, so that calls on several
        threads at once keep their own tokens."""
        return autocast(dtype=self.dtype, enabled=self.enabled)


def _names_a_dtype(value: Any) -> bool:
    if not isinstance(value, str):
        return True  # (a dtype object, or something the dtype check refuses by name)
    try:
        _dtypes.to_dtype(value)
    except TypeError:
        return False
    return True


def active_dtype() -> _dtypes.DType | None:
    """The dtype autocast runs products in here, or None outside autocast."""
    return _active.get()


def is_enabled() -> bool:
    """Whether autocast is on in the current context (PyTorch's ``is_autocast_enabled``)."""
    return _active.get() is not None


@contextlib.contextmanager
def suspended() -> Iterator[None]:
    """Within the block, autocast is off: a listed op runs its own inner ops uncast."""
    token = _active.set(None)
    try:
        yield
    finally:
        _active.reset(token)
