"""Differentiable ops, grouped by kind; each is one small ``Function`` subclass plus a function.

Each module lists its public functions in its own ``__all__``; this package re-exports them
all (``dparray`` re-exports them in turn) and, once they are loaded, binds ``Tensor``'s
operators and methods to them (``dparray.tensor_methods``).
"""

import sys

from dparray import autograd as _autograd
from dparray import creation as _creation
from dparray import tensor_methods as _tensor_methods
from dparray._aliases import with_torch_names as _with_torch_names
from dparray.ops import activations as _activations
from dparray.ops import arithmetic as _arithmetic
from dparray.ops import bitwise as _bitwise
from dparray.ops import compare as _compare
from dparray.ops import construct as _construct
from dparray.ops import copysign as _copysign
from dparray.ops import counting as _counting
from dparray.ops import distance as _distance
from dparray.ops import einsum as _einsum
from dparray.ops import elementwise as _elementwise
from dparray.ops import elementwise_more as _elementwise_more
from dparray.ops import exponential as _exponential
from dparray.ops import graph_backward as _graph_backward  # noqa: F401  (binds create_graph)
from dparray.ops import index_put as _index_put
from dparray.ops import indexing as _indexing
from dparray.ops import indexing_more as _indexing_more
from dparray.ops import linalg as _linalg
from dparray.ops import logical as _logical
from dparray.ops import moments as _moments
from dparray.ops import nonzero as _nonzero
from dparray.ops import pad as _pad
from dparray.ops import products as _products
from dparray.ops import reduce as _reduce
from dparray.ops import reductions_more as _reductions_more
from dparray.ops import rounding as _rounding
from dparray.ops import scan as _scan
from dparray.ops import shape as _shape
from dparray.ops import shape_more as _shape_more
from dparray.ops import sorting as _sorting
from dparray.ops import transfer as _transfer
from dparray.ops import trigonometric as _trigonometric
from dparray.ops import unfold as _unfold
from dparray.ops.activations import *  # noqa: F403
from dparray.ops.arithmetic import *  # noqa: F403
from dparray.ops.bitwise import *  # noqa: F403
from dparray.ops.compare import *  # noqa: F403
from dparray.ops.construct import *  # noqa: F403
from dparray.ops.copysign import *  # noqa: F403
from dparray.ops.counting import *  # noqa: F403
from dparray.ops.distance import *  # noqa: F403
from dparray.ops.einsum import *  # noqa: F403
from dparray.ops.elementwise import *  # noqa: F403
from dparray.ops.elementwise_more import *  # noqa: F403
from dparray.ops.exponential import *  # noqa: F403
from dparray.ops.index_put import *  # noqa: F403
from dparray.ops.indexing import *  # noqa: F403
from dparray.ops.indexing_more import *  # noqa: F403
from dparray.ops.linalg import *  # noqa: F403
from dparray.ops.logical import *  # noqa: F403
from dparray.ops.moments import *  # noqa: F403
from dparray.ops.nonzero import *  # noqa: F403
from dparray.ops.pad import *  # noqa: F403
from dparray.ops.products import *  # noqa: F403
from dparray.ops.reduce import *  # noqa: F403
from dparray.ops.reductions_more import *  # noqa: F403
from dparray.ops.rounding import *  # noqa: F403
from dparray.ops.scan import *  # noqa: F403
from dparray.ops.shape import *  # noqa: F403
from dparray.ops.shape_more import *  # noqa: F403
from dparray.ops.sorting import *  # noqa: F403
from dparray.ops.transfer import *  # noqa: F403
from dparray.ops.trigonometric import *  # noqa: F403
from dparray.ops.unfold import *  # noqa: F403

__all__: list[str] = []
__all__ += _activations.__all__
__all__ += _arithmetic.__all__
__all__ += _bitwise.__all__
__all__ += _compare.__all__
__all__ += _construct.__all__
__all__ += _copysign.__all__
__all__ += _counting.__all__
__all__ += _distance.__all__
__all__ += _einsum.__all__
__all__ += _elementwise.__all__
__all__ += _elementwise_more.__all__
__all__ += _exponential.__all__
__all__ += _index_put.__all__
__all__ += _indexing.__all__
__all__ += _indexing_more.__all__
__all__ += _linalg.__all__
__all__ += _logical.__all__
__all__ += _moments.__all__
__all__ += _nonzero.__all__
__all__ += _pad.__all__
__all__ += _products.__all__
__all__ += _reduce.__all__
__all__ += _reductions_more.__all__
__all__ += _rounding.__all__
__all__ += _scan.__all__
__all__ += _shape.__all__
__all__ += _shape_more.__all__
__all__ += _sorting.__all__
__all__ += _transfer.__all__
__all__ += _trigonometric.__all__
__all__ += _unfold.__all__

_with_torch_names(globals(), __all__)  # dim= for axis=, keepdim= for keepdims= (_aliases.py)
_tensor_methods.bind(sys.modules[__name__], _autograd.backward, _creation)
