"""Differentiable ops, grouped by kind; each is one small ``Function`` subclass plus a function.

The functions are re-exported by ``dparray`` and used by ``Tensor``'s operators and methods.
"""

from dparray.ops.arithmetic import add as add
from dparray.ops.arithmetic import div as div
from dparray.ops.arithmetic import mul as mul
from dparray.ops.arithmetic import neg as neg
from dparray.ops.arithmetic import pow as pow
from dparray.ops.arithmetic import sub as sub
from dparray.ops.compare import equal as equal
from dparray.ops.compare import greater as greater
from dparray.ops.compare import greater_equal as greater_equal
from dparray.ops.compare import less as less
from dparray.ops.compare import less_equal as less_equal
from dparray.ops.compare import not_equal as not_equal
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
from dparray.ops.indexing import getitem as getitem
from dparray.ops.indexing import take as take
from dparray.ops.linalg import matmul as matmul
from dparray.ops.reduce import all as all
from dparray.ops.reduce import any as any
from dparray.ops.reduce import argmax as argmax
from dparray.ops.reduce import log_softmax as log_softmax
from dparray.ops.reduce import logsumexp as logsumexp
from dparray.ops.reduce import max as max
from dparray.ops.reduce import mean as mean
from dparray.ops.reduce import min as min
from dparray.ops.reduce import softmax as softmax
from dparray.ops.reduce import sum as sum
from dparray.ops.reduce import var as var
from dparray.ops.shape import broadcast_to as broadcast_to
from dparray.ops.shape import cat as cat
from dparray.ops.shape import chunk as chunk
from dparray.ops.shape import concat as concat
from dparray.ops.shape import expand as expand
from dparray.ops.shape import flatten as flatten
from dparray.ops.shape import permute as permute
from dparray.ops.shape import reshape as reshape
from dparray.ops.shape import split as split
from dparray.ops.shape import squeeze as squeeze
from dparray.ops.shape import stack as stack
from dparray.ops.shape import transpose as transpose
from dparray.ops.shape import unsqueeze as unsqueeze
from dparray.ops.transfer import to_backend as to_backend

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
    "to_backend",
]
