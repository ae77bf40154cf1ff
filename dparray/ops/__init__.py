"""Differentiable ops, grouped by kind; each is one small ``Function`` subclass plus a function.

The functions are re-exported by ``dparray`` and used by ``Tensor``'s operators and methods.
"""

from dparray.ops.activations import celu as celu
from dparray.ops.activations import elu as elu
from dparray.ops.activations import hardsigmoid as hardsigmoid
from dparray.ops.activations import hardswish as hardswish
from dparray.ops.activations import hardtanh as hardtanh
from dparray.ops.activations import leaky_relu as leaky_relu
from dparray.ops.activations import logsigmoid as logsigmoid
from dparray.ops.activations import mish as mish
from dparray.ops.activations import prelu as prelu
from dparray.ops.activations import relu6 as relu6
from dparray.ops.activations import selu as selu
from dparray.ops.activations import silu as silu
from dparray.ops.activations import softsign as softsign
from dparray.ops.arithmetic import add as add
from dparray.ops.arithmetic import div as div
from dparray.ops.arithmetic import floor_divide as floor_divide
from dparray.ops.arithmetic import lerp as lerp
from dparray.ops.arithmetic import mul as mul
from dparray.ops.arithmetic import neg as neg
from dparray.ops.arithmetic import pow as pow
from dparray.ops.arithmetic import remainder as remainder
from dparray.ops.arithmetic import sub as sub
from dparray.ops.bitwise import bitwise_and as bitwise_and
from dparray.ops.bitwise import bitwise_invert as bitwise_invert
from dparray.ops.bitwise import bitwise_left_shift as bitwise_left_shift
from dparray.ops.bitwise import bitwise_or as bitwise_or
from dparray.ops.bitwise import bitwise_right_shift as bitwise_right_shift
from dparray.ops.bitwise import bitwise_xor as bitwise_xor
from dparray.ops.compare import allclose as allclose
from dparray.ops.compare import equal as equal
from dparray.ops.compare import greater as greater
from dparray.ops.compare import greater_equal as greater_equal
from dparray.ops.compare import isclose as isclose
from dparray.ops.compare import isfinite as isfinite
from dparray.ops.compare import isinf as isinf
from dparray.ops.compare import isnan as isnan
from dparray.ops.compare import less as less
from dparray.ops.compare import less_equal as less_equal
from dparray.ops.compare import not_equal as not_equal
from dparray.ops.construct import diag as diag
from dparray.ops.construct import diagonal as diagonal
from dparray.ops.construct import meshgrid as meshgrid
from dparray.ops.construct import one_hot as one_hot
from dparray.ops.construct import tril as tril
from dparray.ops.construct import triu as triu
from dparray.ops.einsum import einsum as einsum
from dparray.ops.elementwise import abs as abs
from dparray.ops.elementwise import astype as astype
from dparray.ops.elementwise import clip as clip
from dparray.ops.elementwise import exp as exp
from dparray.ops.elementwise import gelu as gelu
from dparray.ops.elementwise import log as log
from dparray.ops.elementwise import maximum as maximum
from dparray.ops.elementwise import minimum as minimum
from dparray.ops.elementwise import relu as relu
from dparray.ops.elementwise import sigmoid as sigmoid
from dparray.ops.elementwise import softplus as softplus
from dparray.ops.elementwise import sqrt as sqrt
from dparray.ops.elementwise import tanh as tanh
from dparray.ops.elementwise import where as where
from dparray.ops.exponential import erf as erf
from dparray.ops.exponential import exp2 as exp2
from dparray.ops.exponential import expm1 as expm1
from dparray.ops.exponential import log1p as log1p
from dparray.ops.exponential import log2 as log2
from dparray.ops.exponential import log10 as log10
from dparray.ops.exponential import logaddexp as logaddexp
from dparray.ops.exponential import rsqrt as rsqrt
from dparray.ops.indexing import gather as gather
from dparray.ops.indexing import getitem as getitem
from dparray.ops.indexing import index_select as index_select
from dparray.ops.indexing import masked_fill as masked_fill
from dparray.ops.indexing import scatter as scatter
from dparray.ops.indexing import scatter_add as scatter_add
from dparray.ops.indexing import take as take
from dparray.ops.linalg import matmul as matmul
from dparray.ops.logical import logical_and as logical_and
from dparray.ops.logical import logical_not as logical_not
from dparray.ops.logical import logical_or as logical_or
from dparray.ops.logical import logical_xor as logical_xor
from dparray.ops.pad import pad as pad
from dparray.ops.reduce import all as all
from dparray.ops.reduce import any as any
from dparray.ops.reduce import argmax as argmax
from dparray.ops.reduce import argmin as argmin
from dparray.ops.reduce import log_softmax as log_softmax
from dparray.ops.reduce import logsumexp as logsumexp
from dparray.ops.reduce import max as max
from dparray.ops.reduce import mean as mean
from dparray.ops.reduce import min as min
from dparray.ops.reduce import prod as prod
from dparray.ops.reduce import softmax as softmax
from dparray.ops.reduce import std as std
from dparray.ops.reduce import sum as sum
from dparray.ops.reduce import var as var
from dparray.ops.rounding import ceil as ceil
from dparray.ops.rounding import floor as floor
from dparray.ops.rounding import round as round
from dparray.ops.rounding import sign as sign
from dparray.ops.rounding import trunc as trunc
from dparray.ops.scan import cummax as cummax
from dparray.ops.scan import cummin as cummin
from dparray.ops.scan import cumprod as cumprod
from dparray.ops.scan import cumsum as cumsum
from dparray.ops.scan import logcumsumexp as logcumsumexp
from dparray.ops.shape import broadcast_to as broadcast_to
from dparray.ops.shape import cat as cat
from dparray.ops.shape import chunk as chunk
from dparray.ops.shape import clone as clone
from dparray.ops.shape import concat as concat
from dparray.ops.shape import expand as expand
from dparray.ops.shape import flatten as flatten
from dparray.ops.shape import flip as flip
from dparray.ops.shape import permute as permute
from dparray.ops.shape import repeat_interleave as repeat_interleave
from dparray.ops.shape import reshape as reshape
from dparray.ops.shape import roll as roll
from dparray.ops.shape import split as split
from dparray.ops.shape import squeeze as squeeze
from dparray.ops.shape import stack as stack
from dparray.ops.shape import tile as tile
from dparray.ops.shape import transpose as transpose
from dparray.ops.shape import unsqueeze as unsqueeze
from dparray.ops.sorting import ValuesIndices as ValuesIndices
from dparray.ops.sorting import argsort as argsort
from dparray.ops.sorting import sort as sort
from dparray.ops.sorting import topk as topk
from dparray.ops.transfer import to_backend as to_backend
from dparray.ops.trigonometric import acos as acos
from dparray.ops.trigonometric import acosh as acosh
from dparray.ops.trigonometric import asin as asin
from dparray.ops.trigonometric import asinh as asinh
from dparray.ops.trigonometric import atan as atan
from dparray.ops.trigonometric import atan2 as atan2
from dparray.ops.trigonometric import atanh as atanh
from dparray.ops.trigonometric import cos as cos
from dparray.ops.trigonometric import cosh as cosh
from dparray.ops.trigonometric import sin as sin
from dparray.ops.trigonometric import sinh as sinh
from dparray.ops.trigonometric import tan as tan

__all__ = [
    "add",
    "div",
    "mul",
    "neg",
    "pow",
    "sub",
    "equal",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "not_equal",
    "abs",
    "astype",
    "clip",
    "exp",
    "gelu",
    "log",
    "maximum",
    "minimum",
    "relu",
    "sigmoid",
    "softplus",
    "sqrt",
    "tanh",
    "where",
    "getitem",
    "take",
    "gather",
    "index_select",
    "masked_fill",
    "scatter",
    "scatter_add",
    "diag",
    "diagonal",
    "meshgrid",
    "one_hot",
    "tril",
    "triu",
    "einsum",
    "pad",
    "matmul",
    "all",
    "any",
    "argmax",
    "log_softmax",
    "logsumexp",
    "max",
    "mean",
    "min",
    "softmax",
    "sum",
    "var",
    "broadcast_to",
    "cat",
    "chunk",
    "concat",
    "expand",
    "flatten",
    "permute",
    "reshape",
    "split",
    "squeeze",
    "stack",
    "transpose",
    "unsqueeze",
    "clone",
    "flip",
    "repeat_interleave",
    "roll",
    "tile",
    "floor_divide",
    "lerp",
    "remainder",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "isclose",
    "allclose",
    "isnan",
    "isinf",
    "isfinite",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "floor",
    "ceil",
    "round",
    "trunc",
    "sign",
    "exp2",
    "expm1",
    "log2",
    "log10",
    "log1p",
    "rsqrt",
    "erf",
    "logaddexp",
    "prod",
    "std",
    "argmin",
    "cumsum",
    "cumprod",
    "cummax",
    "cummin",
    "logcumsumexp",
    "sort",
    "argsort",
    "topk",
    "ValuesIndices",
    "to_backend",
    "leaky_relu",
    "prelu",
    "elu",
    "selu",
    "celu",
    "silu",
    "mish",
    "hardswish",
    "hardsigmoid",
    "hardtanh",
    "relu6",
    "softsign",
    "logsigmoid",
]
