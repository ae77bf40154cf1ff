"""The models of the real-program benchmarks (W7-W12), written in dparray from the standard
descriptions of each architecture: a nanoGPT-style GPT, ResNet-18, word-level LSTM and
Transformer language models, the classic MNIST CNN and the classic VAE. Their PyTorch twins
(``torch_models.py``) have the same parameter names, shapes and order, so a state dict moves
between the two unchanged (the fixtures in ``tests/data/make_workload_fixtures.py`` do so).

Every model takes its batch first (axis 0), so DataParallel can split any of them.
"""

from __future__ import annotations

import math
from typing import Any

from dparray import creation, nn, ops
from dparray.nn import functional as F
from dparray.tensor import Tensor

# ----------------------------------------------------------------------------- GPT


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention in which position ``t`` sees positions ``0 .. t``: one
    ``(d, 3d)`` projection to queries, keys and values, one attention node, one output
    projection."""

    def __init__(self, width: int, heads: int, dtype: Any = None) -> None:
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(width, 3 * width, dtype=dtype)
        self.c_proj = nn.Linear(width, width, dtype=dtype)

    def forward(self, x: Tensor) -> Tensor:
        batch, length, width = x.shape
        q, k, v = self.c_attn(x).split(width, axis=2)
        shape = (batch, length, self.heads, width // self.heads)
        q, k, v = (t.reshape(shape).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).reshape(batch, length, width))


class MLP(nn.Module):
    """The transformer's feed-forward block: ``d -> 4d``, GELU, ``4d -> d``."""

    def __init__(self, width: int, dtype: Any = None) -> None:
        super().__init__()
        self.c_fc = nn.Linear(width, 4 * width, dtype=dtype)
        self.c_proj = nn.Linear(4 * width, width, dtype=dtype)

    def forward(self, x: Tensor) -> Tensor:
        return self.c_proj(F.gelu(self.c_fc(x)))


class Block(nn.Module):
    """A pre-norm transformer block: ``x + attn(ln_1(x))``, then ``x + mlp(ln_2(x))``."""

    def __init__(self, width: int, heads: int, dtype: Any = None) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(width, dtype=dtype)
        self.attn = CausalSelfAttention(width, heads, dtype)
        self.ln_2 = nn.LayerNorm(width, dtype=dtype)
        self.mlp = MLP(width, dtype)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """A decoder-only language model: token and position embeddings, ``layers`` blocks, a
    final LayerNorm and the output head, whose weight *is* the token embedding's (tied).
    ``gpt(tokens)`` maps ``(N, T)`` token ids to ``(N, T, vocabulary)`` logits."""

    def __init__(self, vocabulary: int = 65, block: int = 64, layers: int = 2, heads: int = 4,
                 width: int = 128, dtype: Any = None) -> None:
        super().__init__()
        self.wte = nn.Embedding(vocabulary, width, dtype=dtype)
        self.wpe = nn.Embedding(block, width, dtype=dtype)
        self.h = nn.ModuleList([Block(width, heads, dtype) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(width, dtype=dtype)
        self.lm_head = nn.Linear(width, vocabulary, bias=False, dtype=dtype)
        self.lm_head.weight = self.wte.weight  # tied: one parameter, two uses

    def forward(self, tokens: Tensor) -> Tensor:
        positions = creation.arange(tokens.shape[1], backend=tokens.backend)
        x = self.wte(tokens) + self.wpe(positions)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def decay_groups(model: nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """AdamW's parameter groups as nanoGPT makes them: matrices (every parameter of two or more
    axes: the linear layers' weights and the embeddings) decay, biases and LayerNorm's
    parameters do not."""
    params = model.parameters()
    return [{"params": [p for p in params if p.ndim >= 2], "weight_decay": weight_decay},
            {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}]


# ----------------------------------------------------------------------------- ResNet-18


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch norm, added to the input (through a 1x1 convolution and
    batch norm where the shape changes)."""

    def __init__(self, inputs: int, outputs: int, stride: int, dtype: Any = None) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, outputs, 3, stride=stride, padding=1, bias=False,
                               dtype=dtype)
        self.bn1 = nn.BatchNorm2d(outputs, dtype=dtype)
        self.conv2 = nn.Conv2d(outputs, outputs, 3, padding=1, bias=False, dtype=dtype)
        self.bn2 = nn.BatchNorm2d(outputs, dtype=dtype)
        self.downsample: nn.Module | None = None
        if stride != 1 or inputs != outputs:
            self.downsample = nn.Sequential(
                nn.Conv2d(inputs, outputs, 1, stride=stride, bias=False, dtype=dtype),
                nn.BatchNorm2d(outputs, dtype=dtype))

    def forward(self, x: Tensor) -> Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        return F.relu(out + identity)


class ResNet18(nn.Module):
    """ResNet-18: a 7x7 stride-2 stem and 3x3 max pool, four stages of two BasicBlocks (64,
    128, 256, 512 channels, stride 2 from the second stage on), global average pooling and
    one linear layer (``base`` is the first stage's width: 64 in ResNet-18)."""

    def __init__(self, classes: int = 10, base: int = 64, dtype: Any = None) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, base, 7, stride=2, padding=3, bias=False, dtype=dtype)
        self.bn1 = nn.BatchNorm2d(base, dtype=dtype)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        inputs = base
        for index, width in enumerate((base, 2 * base, 4 * base, 8 * base)):
            stride = 1 if index == 0 else 2
            setattr(self, f"layer{index + 1}", nn.Sequential(
                BasicBlock(inputs, width, stride, dtype), BasicBlock(width, width, 1, dtype)))
            inputs = width
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8 * base, classes, dtype=dtype)

    def forward(self, x: Tensor) -> Tensor:
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        for index in range(1, 5):
            x = getattr(self, f"layer{index}")(x)
        return self.fc(ops.flatten(self.avgpool(x), 1))


# ----------------------------------------------------------------------------- language models


class LSTMLanguageModel(nn.Module):
    """A word-level LSTM language model: embedding, dropout, a stacked LSTM (dropout between
    its layers), dropout, and a decoder to the vocabulary. ``model(tokens)`` maps ``(N, L)``
    token ids to ``(N, L, vocabulary)`` logits; each call starts from zero states."""

    def __init__(self, vocabulary: int = 8500, width: int = 200, layers: int = 2,
                 dropout: float = 0.2, dtype: Any = None) -> None:
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(vocabulary, width, dtype=dtype)
        self.rnn = nn.LSTM(width, width, layers, dropout=dropout, batch_first=True,
                           dtype=dtype)
        self.decoder = nn.Linear(width, vocabulary, dtype=dtype)

    def forward(self, tokens: Tensor) -> Tensor:
        output, _ = self.rnn(self.drop(self.encoder(tokens)))
        return self.decoder(self.drop(output))


def sinusoids(length: int, width: int, dtype: Any = None) -> Tensor:
    """The sinusoidal position encoding: ``sin`` in the even features, ``cos`` in the odd, at
    wavelengths ``2 pi * 10000^(2i / width)``; ``(length, width)``."""
    position = creation.arange(length, dtype=dtype or "float32").reshape(length, 1)
    frequency = ops.exp(creation.arange(0, width, 2, dtype=dtype or "float32")
                        * (-math.log(10000.0) / width))
    angles = position * frequency
    return ops.stack([ops.sin(angles), ops.cos(angles)], axis=2).reshape(length, width)


class TransformerLanguageModel(nn.Module):
    """A word-level Transformer language model: embedding scaled by ``sqrt(width)``, sinusoidal
    positions, dropout, ``layers`` post-norm encoder layers under a causal mask, and a decoder
    to the vocabulary. ``model(tokens)`` maps ``(N, L)`` token ids to ``(N, L, vocabulary)``
    log-probabilities."""

    def __init__(self, vocabulary: int = 8500, width: int = 200, heads: int = 2,
                 hidden: int = 200, layers: int = 2, dropout: float = 0.2, length: int = 35,
                 dtype: Any = None) -> None:
        super().__init__()
        self.width = width
        self.register_buffer("pe", sinusoids(length, width, dtype))
        self.pos_drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(vocabulary, width, dtype=dtype)
        layer = nn.TransformerEncoderLayer(width, heads, hidden, dropout, batch_first=True,
                                           dtype=dtype)
        self.transformer_encoder = nn.TransformerEncoder(layer, layers,
                                                         enable_nested_tensor=False)
        self.decoder = nn.Linear(width, vocabulary, dtype=dtype)

    def forward(self, tokens: Tensor) -> Tensor:
        length = tokens.shape[1]
        x = self.encoder(tokens) * math.sqrt(self.width) + self.pe[:length]
        x = self.transformer_encoder(self.pos_drop(x), is_causal=True)
        return F.log_softmax(self.decoder(x), dim=-1)


# ----------------------------------------------------------------------------- MNIST CNN, VAE


class MnistNet(nn.Module):
    """The classic MNIST network: two 3x3 convolutions (32 and 64 channels) with ReLU, a 2x2
    max pool, dropout 0.25, a 9216-128 linear layer with ReLU, dropout 0.5, a 128-10 layer
    and log-softmax (``channels``, ``hidden`` and ``image`` the sizes, for 28x28 images)."""

    def __init__(self, channels: tuple[int, int] = (32, 64), hidden: int = 128,
                 image: int = 28, dtype: Any = None) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, channels[0], 3, 1, dtype=dtype)
        self.conv2 = nn.Conv2d(channels[0], channels[1], 3, 1, dtype=dtype)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(channels[1] * ((image - 4) // 2) ** 2, hidden, dtype=dtype)
        self.fc2 = nn.Linear(hidden, 10, dtype=dtype)

    def forward(self, x: Tensor) -> Tensor:
        x = F.relu(self.conv2(F.relu(self.conv1(x))))
        x = self.dropout1(F.max_pool2d(x, 2))
        x = self.dropout2(F.relu(self.fc1(ops.flatten(x, 1))))
        return F.log_softmax(self.fc2(x), dim=1)


class VAE(nn.Module):
    """The classic variational autoencoder of 28x28 images: 784-400 encoder, a 20-dimensional
    Gaussian latent (mean and log-variance heads), 20-400-784 decoder with a sigmoid
    (``pixels``, ``hidden``, ``latent`` the sizes). ``vae(x, noise=None)`` returns
    ``(reconstruction, mean, log_variance)``; ``noise`` (``N(0, 1)``, the shape of the
    latent) is drawn from the current stream when not given."""

    def __init__(self, pixels: int = 784, hidden: int = 400, latent: int = 20,
                 dtype: Any = None) -> None:
        super().__init__()
        self.pixels = pixels
        self.fc1 = nn.Linear(pixels, hidden, dtype=dtype)
        self.fc21 = nn.Linear(hidden, latent, dtype=dtype)
        self.fc22 = nn.Linear(hidden, latent, dtype=dtype)
        self.fc3 = nn.Linear(latent, hidden, dtype=dtype)
        self.fc4 = nn.Linear(hidden, pixels, dtype=dtype)

    def forward(self, x: Tensor, noise: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
        h = F.relu(self.fc1(x.reshape(-1, self.pixels)))
        mean, log_variance = self.fc21(h), self.fc22(h)
        if noise is None:
            noise = creation.randn(*mean.shape, dtype=mean.dtype, backend=mean.backend)
        z = mean + noise * ops.exp(0.5 * log_variance)
        return F.sigmoid(self.fc4(F.relu(self.fc3(z)))), mean, log_variance


def vae_loss(reconstruction: Tensor, x: Tensor, mean: Tensor, log_variance: Tensor) -> Tensor:
    """The VAE's negative evidence lower bound: binary cross-entropy of the reconstruction,
    summed, plus the KL divergence of the latent from ``N(0, 1)``."""
    target = x.reshape(-1, reconstruction.shape[-1])
    bce = F.binary_cross_entropy(reconstruction, target, reduction="sum")
    kld = -0.5 * (1.0 + log_variance - mean * mean - ops.exp(log_variance)).sum()
    return bce + kld
