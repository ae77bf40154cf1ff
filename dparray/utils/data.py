"""``torch.utils.data``'s name for ``dparray.data``: ``from dparray.utils.data import
DataLoader, TensorDataset`` gives the very objects ``dparray.data`` holds (see there), every
name of its ``__all__``."""

from dparray.data import *  # noqa: F403  (the whole public surface, under a second name)
from dparray.data import __all__ as __all__
