"""dparray: a small deep-learning library written once against the Python array API standard.

The public surface, re-exported from the modules that define it. Start with
``tensor``, ``Tensor.backward`` and ``use_backend``.
"""

from importlib import metadata as _metadata

from dparray import accelerator as accelerator
from dparray import amp as amp
from dparray import autograd as autograd
from dparray import cuda as cuda
from dparray import data as data
from dparray import distributed as distributed
from dparray import func as func
from dparray import nn as nn
from dparray import ops as _ops
from dparray import optim as optim
from dparray import random as random
from dparray import utils as utils
from dparray.autograd import Function as Function
from dparray.autograd import enable_grad as enable_grad
from dparray.autograd import is_grad_enabled as is_grad_enabled
from dparray.autograd import no_grad as no_grad
from dparray.autograd import set_grad_enabled as set_grad_enabled
from dparray.backend import Backend as Backend
from dparray.backend import BackendUnavailableError as BackendUnavailableError
from dparray.backend import available_backends as available_backends
from dparray.backend import get_backend as get_backend
from dparray.backend import register_backend as register_backend
from dparray.backend import registered_backends as registered_backends
from dparray.backend import set_backend as set_backend
from dparray.backend import unregister_backend as unregister_backend
from dparray.backend import use_backend as use_backend
from dparray.checkpoint import Checkpoint as Checkpoint
from dparray.checkpoint import load_checkpoint as load_checkpoint
from dparray.checkpoint import save_checkpoint as save_checkpoint
from dparray.creation import arange as arange
from dparray.creation import empty as empty
from dparray.creation import empty_like as empty_like
from dparray.creation import eye as eye
from dparray.creation import from_dlpack as from_dlpack
from dparray.creation import full as full
from dparray.creation import full_like as full_like
from dparray.creation import linspace as linspace
from dparray.creation import ones as ones
from dparray.creation import ones_like as ones_like
from dparray.creation import rand as rand
from dparray.creation import randn as randn
from dparray.creation import randperm as randperm
from dparray.creation import tensor as tensor
from dparray.creation import zeros as zeros
from dparray.creation import zeros_like as zeros_like
from dparray.devices import device as device
from dparray.dtypes import DType as DType
from dparray.dtypes import bfloat16 as bfloat16
from dparray.dtypes import bool_ as bool
from dparray.dtypes import float16 as float16
from dparray.dtypes import float16 as half  # PyTorch's names (dtypes.TORCH_ALIASES)
from dparray.dtypes import float32 as float
from dparray.dtypes import float32 as float32
from dparray.dtypes import float64 as double
from dparray.dtypes import float64 as float64
from dparray.dtypes import get_default_dtype as get_default_dtype
from dparray.dtypes import int8 as int8
from dparray.dtypes import int16 as int16
from dparray.dtypes import int16 as short
from dparray.dtypes import int32 as int
from dparray.dtypes import int32 as int32
from dparray.dtypes import int64 as int64
from dparray.dtypes import int64 as long
from dparray.dtypes import set_default_dtype as set_default_dtype
from dparray.dtypes import uint8 as uint8
from dparray.generator import Generator as Generator
from dparray.gradients import Gradients as Gradients
from dparray.io import load as load
from dparray.io import save as save
from dparray.ops import *  # noqa: F403 - every op function, listed in ops.__all__
from dparray.parallel import ChunkError as ChunkError
from dparray.parallel import DataParallel as DataParallel
from dparray.precision import autocast as autocast
from dparray.random import fork_rng as fork_rng
from dparray.random import manual_seed as manual_seed
from dparray.sampling import bernoulli as bernoulli
from dparray.sampling import multinomial as multinomial
from dparray.sampling import normal as normal
from dparray.sampling import rand_like as rand_like
from dparray.sampling import randint as randint
from dparray.sampling import randint_like as randint_like
from dparray.sampling import randn_like as randn_like
from dparray.tensor import Tensor as Tensor

setattr(nn, "DataParallel", DataParallel)  # noqa: B010 - torch.nn's place for it too, which nn
# cannot import (it sits below what runs it): bound here, once both are loaded

try:  # one source of truth: the version in pyproject.toml, as the installed metadata has it
    __version__ = _metadata.version("dparray")
except _metadata.PackageNotFoundError:  # a source tree on sys.path, never installed
    __version__ = "0+unknown"

__all__ = [
    "Backend",
    "BackendUnavailableError",
    "available_backends",
    "get_backend",
    "register_backend",
    "registered_backends",
    "set_backend",
    "unregister_backend",
    "use_backend",
    "DType",
    "bfloat16",
    "bool",
    "float16",
    "float32",
    "float64",
    "get_default_dtype",
    "int8",
    "int16",
    "int32",
    "int64",
    "set_default_dtype",
    "uint8",
    "double",
    "float",
    "half",
    "int",
    "long",
    "short",
    "device",
    "accelerator",
    "cuda",
    "Generator",
    "bernoulli",
    "multinomial",
    "normal",
    "rand_like",
    "randint",
    "randint_like",
    "randn_like",
    "empty",
    "empty_like",
    "full_like",
    "Tensor",
    "Function",
    "enable_grad",
    "is_grad_enabled",
    "no_grad",
    "set_grad_enabled",
    "Gradients",
    "arange",
    "eye",
    "from_dlpack",
    "full",
    "linspace",
    "ones",
    "ones_like",
    "rand",
    "randn",
    "randperm",
    "tensor",
    "zeros",
    "zeros_like",
    "load",
    "save",
    "Checkpoint",
    "load_checkpoint",
    "save_checkpoint",
    "ChunkError",
    "DataParallel",
    "autocast",
    "fork_rng",
    "manual_seed",
    "autograd",
    "amp",
    "data",
    "distributed",
    "func",
    "nn",
    "optim",
    "random",
    *_ops.__all__,
    "__version__",
]
