"""The handwritten digits that ship with scikit-learn, as tensors: 1,797 images of 8 x 8 pixels.

No download: scikit-learn carries the file. It is imported only when the digits are asked for
(``pip install "dparray[demo]"`` installs it), so dparray itself does not need it.
"""

from __future__ import annotations

from typing import Any

from dparray._checks import check_choice, check_number
from dparray.backend import Backend, get_backend
from dparray.creation import randperm
from dparray.creation import tensor as _tensor
from dparray.data._seeds import derive_seed
from dparray.ops.indexing import take
from dparray.random import check_seed
from dparray.tensor import Tensor

SPLITS = ("all", "train", "test")
PIXEL_MAX = 16.0  # the digits' pixels run from 0 to 16


def load_digits(split: str = "all", *, test_fraction: float = 0.2, seed: int = 0,
                dtype: Any = "float32", backend: str | Backend | None = None
                ) -> tuple[Tensor, Tensor]:
    """The digits as ``(images, labels)``: images ``(n, 64)`` scaled to ``[0, 1]``, labels
    ``(n,)`` int64 from 0 to 9.

    They land on ``backend`` (default: the current one). ``split="train"`` and ``"test"`` are
    the two parts of one split fixed by ``seed``: ``test_fraction`` of the digits (rounded
    down) go to ``"test"``, the rest to ``"train"``; both keep the digits' original order, and
    for a given ``seed`` they never overlap.

    Examples:
        >>> import dparray as dp
        >>> x, y = dp.data.load_digits("train")
        >>> x.shape, y.shape, x.dtype, y.dtype
        ((1438, 64), (1438,), dparray.float32, dparray.int64)
        >>> loader = dp.data.DataLoader(dp.data.TensorDataset(x, y), batch_size=64)
    """
    where = "load_digits"
    split = check_choice(split, "split", where, SPLITS)
    test_fraction = check_number(test_fraction, "test_fraction", where, minimum=0.0,
                                 below=1.0)
    seed = check_seed(seed, where)
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError as error:
        raise ImportError('dparray.data.load_digits reads the digits that ship with '
                          'scikit-learn, which is not installed: pip install "dparray[demo]"'
                          ) from error
    digits = sklearn_digits()
    images = _tensor(digits.data, dtype="float64", backend="numpy") / PIXEL_MAX
    labels = _tensor(digits.target, dtype="int64", backend="numpy")
    if split != "all":
        n = labels.shape[0]
        order = randperm(n, seed=derive_seed(seed, "digits"), backend="numpy").tolist()
        cut = n - int(n * test_fraction)
        chosen = sorted(order[:cut] if split == "train" else order[cut:])
        index = _tensor(chosen, dtype="int64", backend="numpy")
        images, labels = take(images, index), take(labels, index)
    target = get_backend(backend)
    return _tensor(images, dtype=dtype, backend=target), _tensor(labels, backend=target)
