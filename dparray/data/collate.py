"""The default collate: a list of samples made into one batch, axis 0 being the batch.

Tensors are stacked; Python numbers become a 1-D tensor (bools bool, ints int64, floats the
default float dtype, as ``dparray.tensor`` makes them); arrays (NumPy's, say) become tensors
and are stacked; strings stay a list. Tuples, lists and dicts are collated field by field into
the same structure, so a dataset of ``(image, label)`` pairs gives ``(images, labels)`` and one
of ``{"x": ..., "y": ...}`` gives ``{"x": xs, "y": ys}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dparray._checks import describe
from dparray.creation import tensor as _tensor
from dparray.ops.shape import stack
from dparray.tensor import Tensor

WHERE = "default_collate"


def default_collate(samples: Sequence[Any]) -> Any:
    """One batch from ``samples``, stacked along a new axis 0, in the samples' structure.

    Examples:
        >>> import dparray as dp
        >>> batch = default_collate([(dp.tensor([1.0, 2.0]), 0), (dp.tensor([3.0, 4.0]), 1)])
        >>> batch[0].shape, batch[1].tolist()
        ((2, 2), [0, 1])
        >>> default_collate([{"id": "a", "n": 1.5}, {"id": "b", "n": 2.5}])["id"]
        ['a', 'b']
    """
    if isinstance(samples, (str, bytes)) or not isinstance(samples, Sequence):
        raise TypeError(f"{WHERE}: samples must be a sequence (a list of samples), got "
                        f"{describe(samples)}")
    if not samples:
        raise ValueError(f"{WHERE}: there must be at least one sample to make a batch")
    return _collate(list(samples))


def _collate(samples: list[Any]) -> Any:
    first = samples[0]
    if isinstance(first, Tensor):
        return stack(_all_tensors(samples))
    if isinstance(first, (bool, int, float)):
        return _numbers(samples)
    if isinstance(first, (str, bytes)):
        _same_kind(samples, (str, bytes), "a string")
        return list(samples)
    if isinstance(first, Mapping):
        return _mappings(samples)
    if isinstance(first, (tuple, list)):
        return _sequences(samples)
    if hasattr(first, "shape") and hasattr(first, "dtype"):  # NumPy's and other arrays
        return stack([_tensor(sample) for sample in samples])
    raise TypeError(f"{WHERE}: a sample must be a tensor, an array, a number, a string, or a "
                    f"tuple, list or dict of them, got {describe(first)}")


def _all_tensors(samples: list[Any]) -> list[Tensor]:
    _same_kind(samples, Tensor, "a Tensor")
    shape = samples[0].shape
    for position, sample in enumerate(samples):
        if sample.shape != shape:
            raise ValueError(f"{WHERE}: tensors of one batch must have one shape; sample 0 "
                             f"has {shape}, sample {position} has {sample.shape}")
    return samples


def _numbers(samples: list[Any]) -> Tensor:
    is_bool = isinstance(samples[0], bool)
    for position, sample in enumerate(samples):
        if isinstance(sample, bool) != is_bool or not isinstance(sample, (bool, int, float)):
            kind = "a bool" if is_bool else "a number (not a bool)"
            raise TypeError(f"{WHERE}: sample {position} must be {kind} like sample 0, got "
                            f"{describe(sample)}")
    return _tensor(samples)


def _mappings(samples: list[Any]) -> dict[Any, Any]:
    _same_kind(samples, Mapping, "a dict")
    keys = list(samples[0])
    for position, sample in enumerate(samples):
        if set(sample) != set(keys):
            raise ValueError(f"{WHERE}: every sample must have the keys of sample 0 "
                             f"{sorted(map(str, keys))}; sample {position} has "
                             f"{sorted(map(str, sample))}")
    return {key: _collate([sample[key] for sample in samples]) for key in keys}


def _sequences(samples: list[Any]) -> Any:
    first = samples[0]
    _same_kind(samples, type(first), f"a {type(first).__name__}")
    for position, sample in enumerate(samples):
        if len(sample) != len(first):
            raise ValueError(f"{WHERE}: every sample must have the length of sample 0 "
                             f"({len(first)}); sample {position} has {len(sample)}")
    fields = [_collate([sample[i] for sample in samples]) for i in range(len(first))]
    if isinstance(first, list):
        return fields
    if hasattr(first, "_fields"):  # a namedtuple keeps its class and field names
        return type(first)(*fields)
    return tuple(fields)


def _same_kind(samples: list[Any], kind: Any, name: str) -> None:
    for position, sample in enumerate(samples):
        if not isinstance(sample, kind):
            raise TypeError(f"{WHERE}: sample {position} must be {name} like sample 0, got "
                            f"{describe(sample)}")
