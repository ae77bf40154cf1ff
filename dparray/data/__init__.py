"""Data loading: datasets, samplers and a DataLoader that prepares batches ahead on a thread.

``TensorDataset`` holds tensors whose rows are the samples; ``DataLoader`` reads any dataset
in batches (shuffled from its own seeded random stream, sharded across ranks by
``DistributedSampler``, collated by ``default_collate``), preparing the next batches on a
background thread while the model computes. ``load_digits`` gives the handwritten digits that
ship with scikit-learn, for demos and tutorials.

Examples:
    >>> import dparray as dp
    >>> data = dp.data.TensorDataset(dp.randn(10, 3), dp.arange(10))
    >>> for x, y in dp.data.DataLoader(data, batch_size=4, shuffle=True, drop_last=True):
    ...     print(x.shape, y.shape)
    (4, 3) (4,)
    (4, 3) (4,)
"""

from dparray.data.collate import default_collate as default_collate
from dparray.data.dataset import Dataset as Dataset
from dparray.data.dataset import Subset as Subset
from dparray.data.dataset import TensorDataset as TensorDataset
from dparray.data.dataset import random_split as random_split
from dparray.data.digits import load_digits as load_digits
from dparray.data.loader import BatchError as BatchError
from dparray.data.loader import DataLoader as DataLoader
from dparray.data.loader import LoaderIterator as LoaderIterator
from dparray.data.sampler import DistributedSampler as DistributedSampler
from dparray.data.sampler import RandomSampler as RandomSampler
from dparray.data.sampler import Sampler as Sampler
from dparray.data.sampler import SequentialSampler as SequentialSampler

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
