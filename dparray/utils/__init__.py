"""``dparray.utils``: the ``torch.utils`` names that PyTorch programs import, so that
``from torch.utils.data import DataLoader`` ports by its package name alone.

``dparray.utils.data`` is ``dparray.data``'s public surface under ``torch.utils.data``'s name:
the same classes and functions, not copies.
"""

from dparray.utils import data as data

__all__ = ["data"]
