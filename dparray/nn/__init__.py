"""Neural-network building blocks: ``Module``, layers, losses; ``functional`` holds the
function forms."""

from dparray.nn import functional as functional
from dparray.nn.attention import MultiheadAttention as MultiheadAttention
from dparray.nn.containers import ModuleList as ModuleList
from dparray.nn.containers import Sequential as Sequential
from dparray.nn.conv import AvgPool2d as AvgPool2d
from dparray.nn.conv import Conv2d as Conv2d
from dparray.nn.conv import MaxPool2d as MaxPool2d
from dparray.nn.layers import GELU as GELU
from dparray.nn.layers import Dropout as Dropout
from dparray.nn.layers import Embedding as Embedding
from dparray.nn.layers import Flatten as Flatten
from dparray.nn.layers import Identity as Identity
from dparray.nn.layers import Linear as Linear
from dparray.nn.layers import LogSoftmax as LogSoftmax
from dparray.nn.layers import ReLU as ReLU
from dparray.nn.layers import Sigmoid as Sigmoid
from dparray.nn.layers import Softmax as Softmax
from dparray.nn.layers import Tanh as Tanh
from dparray.nn.loss import BCEWithLogitsLoss as BCEWithLogitsLoss
from dparray.nn.loss import CrossEntropyLoss as CrossEntropyLoss
from dparray.nn.loss import L1Loss as L1Loss
from dparray.nn.loss import MSELoss as MSELoss
from dparray.nn.loss import NLLLoss as NLLLoss
from dparray.nn.module import IncompatibleKeys as IncompatibleKeys
from dparray.nn.module import Module as Module
from dparray.nn.module import Parameter as Parameter
from dparray.nn.normalization import BatchNorm1d as BatchNorm1d
from dparray.nn.normalization import BatchNorm2d as BatchNorm2d
from dparray.nn.normalization import GroupNorm as GroupNorm
from dparray.nn.normalization import InstanceNorm1d as InstanceNorm1d
from dparray.nn.normalization import InstanceNorm2d as InstanceNorm2d
from dparray.nn.normalization import LayerNorm as LayerNorm
from dparray.nn.normalization import RMSNorm as RMSNorm
from dparray.nn.rnn import GRU as GRU
from dparray.nn.rnn import LSTM as LSTM
from dparray.nn.rnn import RNN as RNN
from dparray.nn.sync_batchnorm import SyncBatchNorm as SyncBatchNorm
from dparray.nn.transformer import TransformerDecoder as TransformerDecoder
from dparray.nn.transformer import TransformerDecoderLayer as TransformerDecoderLayer
from dparray.nn.transformer import TransformerEncoder as TransformerEncoder
from dparray.nn.transformer import TransformerEncoderLayer as TransformerEncoderLayer
from dparray.parallel import DataParallel as DataParallel  # last: it imports the modules above

__all__ = [
    "AvgPool2d", "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "Conv2d", "CrossEntropyLoss",
    "DataParallel",
    "Dropout", "Embedding", "Flatten", "GELU", "Identity", "IncompatibleKeys", "L1Loss",
    "LayerNorm", "Linear", "LogSoftmax", "MSELoss", "MaxPool2d", "Module", "ModuleList",
    "NLLLoss", "Parameter", "ReLU", "Sequential", "Sigmoid", "Softmax", "SyncBatchNorm", "Tanh",
    "GRU", "LSTM", "RNN",
    "MultiheadAttention", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
    "TransformerEncoderLayer",
    "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "RMSNorm",
    "functional",
]
