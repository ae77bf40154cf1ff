"""``torch.utils.data``'s name for ``dparray.data``: ``from dparray.utils.data import
DataLoader, TensorDataset`` gives the very objects ``dparray.data`` holds (see there)."""

from dparray.data import (
    BatchError,
    DataLoader,
    Dataset,
    DistributedSampler,
    LoaderIterator,
    RandomSampler,
    Sampler,
    SequentialSampler,
    Subset,
    TensorDataset,
    default_collate,
    load_digits,
    random_split,
)

__all__ = [
    "Dataset",
    "TensorDataset",
    "Subset",
    "random_split",
    "DataLoader",
    "LoaderIterator",
    "BatchError",
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "DistributedSampler",
    "default_collate",
    "load_digits",
]
