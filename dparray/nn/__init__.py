"""Neural-network building blocks: ``Module``, layers, losses; ``functional`` holds the
function forms."""

from typing import TYPE_CHECKING

from dparray.nn import functional as functional
from dparray.nn import init as init
from dparray.nn import utils as utils
from dparray.nn.activation import CELU as CELU
from dparray.nn.activation import ELU as ELU
from dparray.nn.activation import SELU as SELU
from dparray.nn.activation import Hardsigmoid as Hardsigmoid
from dparray.nn.activation import Hardswish as Hardswish
from dparray.nn.activation import Hardtanh as Hardtanh
from dparray.nn.activation import LeakyReLU as LeakyReLU
from dparray.nn.activation import LogSigmoid as LogSigmoid
from dparray.nn.activation import Mish as Mish
from dparray.nn.activation import PReLU as PReLU
from dparray.nn.activation import ReLU6 as ReLU6
from dparray.nn.activation import SiLU as SiLU
from dparray.nn.activation import Softmin as Softmin
from dparray.nn.activation import Softplus as Softplus
from dparray.nn.activation import Softsign as Softsign
from dparray.nn.activation_more import GLU as GLU
from dparray.nn.activation_more import Hardshrink as Hardshrink
from dparray.nn.activation_more import LocalResponseNorm as LocalResponseNorm
from dparray.nn.activation_more import RReLU as RReLU
from dparray.nn.activation_more import Softmax2d as Softmax2d
from dparray.nn.activation_more import Softshrink as Softshrink
from dparray.nn.activation_more import Tanhshrink as Tanhshrink
from dparray.nn.activation_more import Threshold as Threshold
from dparray.nn.adaptive_pooling import AdaptiveAvgPool1d as AdaptiveAvgPool1d
from dparray.nn.adaptive_pooling import AdaptiveAvgPool3d as AdaptiveAvgPool3d
from dparray.nn.adaptive_pooling import AdaptiveMaxPool1d as AdaptiveMaxPool1d
from dparray.nn.adaptive_pooling import AdaptiveMaxPool3d as AdaptiveMaxPool3d
from dparray.nn.attention import MultiheadAttention as MultiheadAttention
from dparray.nn.bilinear import Bilinear as Bilinear
from dparray.nn.channel_dropout import AlphaDropout as AlphaDropout
from dparray.nn.channel_dropout import Dropout1d as Dropout1d
from dparray.nn.channel_dropout import Dropout2d as Dropout2d
from dparray.nn.channel_dropout import Dropout3d as Dropout3d
from dparray.nn.channel_dropout import FeatureAlphaDropout as FeatureAlphaDropout
from dparray.nn.containers import ModuleDict as ModuleDict
from dparray.nn.containers import ModuleList as ModuleList
from dparray.nn.containers import Sequential as Sequential
from dparray.nn.conv import Conv1d as Conv1d
from dparray.nn.conv import Conv2d as Conv2d
from dparray.nn.conv import Conv3d as Conv3d
from dparray.nn.conv import ConvTranspose1d as ConvTranspose1d
from dparray.nn.conv import ConvTranspose2d as ConvTranspose2d
from dparray.nn.conv import ConvTranspose3d as ConvTranspose3d
from dparray.nn.distance import CosineSimilarity as CosineSimilarity
from dparray.nn.distance import PairwiseDistance as PairwiseDistance
from dparray.nn.embedding_bag import EmbeddingBag as EmbeddingBag
from dparray.nn.fold import Fold as Fold
from dparray.nn.fold import Unfold as Unfold
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
from dparray.nn.layers import Unflatten as Unflatten
from dparray.nn.loss import BCELoss as BCELoss
from dparray.nn.loss import BCEWithLogitsLoss as BCEWithLogitsLoss
from dparray.nn.loss import CosineEmbeddingLoss as CosineEmbeddingLoss
from dparray.nn.loss import CrossEntropyLoss as CrossEntropyLoss
from dparray.nn.loss import HuberLoss as HuberLoss
from dparray.nn.loss import KLDivLoss as KLDivLoss
from dparray.nn.loss import L1Loss as L1Loss
from dparray.nn.loss import MarginRankingLoss as MarginRankingLoss
from dparray.nn.loss import MSELoss as MSELoss
from dparray.nn.loss import NLLLoss as NLLLoss
from dparray.nn.loss import SmoothL1Loss as SmoothL1Loss
from dparray.nn.loss_more import GaussianNLLLoss as GaussianNLLLoss
from dparray.nn.loss_more import HingeEmbeddingLoss as HingeEmbeddingLoss
from dparray.nn.loss_more import MultiLabelSoftMarginLoss as MultiLabelSoftMarginLoss
from dparray.nn.loss_more import MultiMarginLoss as MultiMarginLoss
from dparray.nn.loss_more import PoissonNLLLoss as PoissonNLLLoss
from dparray.nn.loss_more import SoftMarginLoss as SoftMarginLoss
from dparray.nn.loss_more import TripletMarginLoss as TripletMarginLoss
from dparray.nn.lp_pooling import LPPool1d as LPPool1d
from dparray.nn.lp_pooling import LPPool2d as LPPool2d
from dparray.nn.lp_pooling import LPPool3d as LPPool3d
from dparray.nn.module import IncompatibleKeys as IncompatibleKeys
from dparray.nn.module import Module as Module
from dparray.nn.module import Parameter as Parameter
from dparray.nn.normalization import BatchNorm1d as BatchNorm1d
from dparray.nn.normalization import BatchNorm2d as BatchNorm2d
from dparray.nn.normalization import BatchNorm3d as BatchNorm3d
from dparray.nn.normalization import GroupNorm as GroupNorm
from dparray.nn.normalization import InstanceNorm1d as InstanceNorm1d
from dparray.nn.normalization import InstanceNorm2d as InstanceNorm2d
from dparray.nn.normalization import InstanceNorm3d as InstanceNorm3d
from dparray.nn.normalization import LayerNorm as LayerNorm
from dparray.nn.normalization import RMSNorm as RMSNorm
from dparray.nn.padding import CircularPad1d as CircularPad1d
from dparray.nn.padding import CircularPad2d as CircularPad2d
from dparray.nn.padding import CircularPad3d as CircularPad3d
from dparray.nn.padding import ConstantPad1d as ConstantPad1d
from dparray.nn.padding import ConstantPad2d as ConstantPad2d
from dparray.nn.padding import ConstantPad3d as ConstantPad3d
from dparray.nn.padding import ReflectionPad1d as ReflectionPad1d
from dparray.nn.padding import ReflectionPad2d as ReflectionPad2d
from dparray.nn.padding import ReflectionPad3d as ReflectionPad3d
from dparray.nn.padding import ReplicationPad1d as ReplicationPad1d
from dparray.nn.padding import ReplicationPad2d as ReplicationPad2d
from dparray.nn.padding import ReplicationPad3d as ReplicationPad3d
from dparray.nn.padding import ZeroPad1d as ZeroPad1d
from dparray.nn.padding import ZeroPad2d as ZeroPad2d
from dparray.nn.padding import ZeroPad3d as ZeroPad3d
from dparray.nn.parameter_containers import ParameterDict as ParameterDict
from dparray.nn.parameter_containers import ParameterList as ParameterList
from dparray.nn.pooling import AdaptiveAvgPool2d as AdaptiveAvgPool2d
from dparray.nn.pooling import AdaptiveMaxPool2d as AdaptiveMaxPool2d
from dparray.nn.pooling import AvgPool1d as AvgPool1d
from dparray.nn.pooling import AvgPool2d as AvgPool2d
from dparray.nn.pooling import AvgPool3d as AvgPool3d
from dparray.nn.pooling import MaxPool1d as MaxPool1d
from dparray.nn.pooling import MaxPool2d as MaxPool2d
from dparray.nn.pooling import MaxPool3d as MaxPool3d
from dparray.nn.pooling import MaxUnpool2d as MaxUnpool2d
from dparray.nn.rnn import GRU as GRU
from dparray.nn.rnn import LSTM as LSTM
from dparray.nn.rnn import RNN as RNN
from dparray.nn.rnn_cells import GRUCell as GRUCell
from dparray.nn.rnn_cells import LSTMCell as LSTMCell
from dparray.nn.rnn_cells import RNNCell as RNNCell
from dparray.nn.shuffle import ChannelShuffle as ChannelShuffle
from dparray.nn.shuffle import PixelShuffle as PixelShuffle
from dparray.nn.shuffle import PixelUnshuffle as PixelUnshuffle
from dparray.nn.sync_batchnorm import SyncBatchNorm as SyncBatchNorm
from dparray.nn.transformer import TransformerDecoder as TransformerDecoder
from dparray.nn.transformer import TransformerDecoderLayer as TransformerDecoderLayer
from dparray.nn.transformer import TransformerEncoder as TransformerEncoder
from dparray.nn.transformer import TransformerEncoderLayer as TransformerEncoderLayer
from dparray.nn.transformer_model import Transformer as Transformer
from dparray.nn.upsample import Upsample as Upsample
from dparray.nn.upsample import UpsamplingBilinear2d as UpsamplingBilinear2d
from dparray.nn.upsample import UpsamplingNearest2d as UpsamplingNearest2d

if TYPE_CHECKING:  # dparray.DataParallel, here too as in torch.nn: it runs layers, so it lives
    # above nn, which never imports it; dparray/__init__.py binds it here once both are loaded
    from dparray.parallel import DataParallel as DataParallel

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
    "CELU", "ELU", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU", "LogSigmoid", "Mish",
    "PReLU", "ReLU6", "SELU", "SiLU", "Softmin", "Softplus", "Softsign",
    "ModuleDict", "Unflatten",
    "BCELoss", "CosineEmbeddingLoss", "HuberLoss", "KLDivLoss", "MarginRankingLoss",
    "SmoothL1Loss",
    "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "AvgPool1d", "Conv1d", "ConvTranspose1d",
    "ConvTranspose2d", "MaxPool1d", "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d",
    "AvgPool3d", "Conv3d", "ConvTranspose3d", "MaxPool3d", "MaxUnpool2d",
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
    "ChannelShuffle", "PixelShuffle", "PixelUnshuffle", "Fold", "Unfold",
    "GRUCell", "LSTMCell", "RNNCell", "ParameterDict", "ParameterList",
    "AlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout",
    "CosineSimilarity", "PairwiseDistance", "GLU", "Hardshrink", "LocalResponseNorm", "RReLU",
    "Softmax2d", "Softshrink", "Tanhshrink", "Threshold", "GaussianNLLLoss",
    "HingeEmbeddingLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "PoissonNLLLoss",
    "SoftMarginLoss", "TripletMarginLoss",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool3d",
    "LPPool1d", "LPPool2d", "LPPool3d", "BatchNorm3d", "InstanceNorm3d", "Bilinear",
    "EmbeddingBag",
    "functional",
    "Transformer", "init",
]
