"""The PyTorch twins of the real-program models (``models.py``): the same architectures with
the same parameter names, shapes and order, built from the ``torch`` module passed in (PyTorch
is optional: nothing here imports it). Used by the benchmarks' comparison column and by the
fixture script ``tests/data/make_workload_fixtures.py``.
"""

from __future__ import annotations

import math
from typing import Any


def gpt(t: Any, vocabulary: int = 65, block: int = 64, layers: int = 2, heads: int = 4,
        width: int = 128) -> Any:
    nn, F = t.nn, t.nn.functional

    class CausalSelfAttention(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.c_attn = nn.Linear(width, 3 * width)
            self.c_proj = nn.Linear(width, width)

        def forward(self, x: Any) -> Any:
            batch, length, _ = x.shape
            q, k, v = self.c_attn(x).split(width, dim=2)
            q, k, v = (s.view(batch, length, heads, width // heads).transpose(1, 2)
                       for s in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.c_proj(y.transpose(1, 2).contiguous().view(batch, length, width))

    class MLP(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.c_fc = nn.Linear(width, 4 * width)
            self.c_proj = nn.Linear(4 * width, width)

        def forward(self, x: Any) -> Any:
            return self.c_proj(F.gelu(self.c_fc(x)))

    class Block(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.ln_1 = nn.LayerNorm(width)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(width)
            self.mlp = MLP()

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.wte = nn.Embedding(vocabulary, width)
            self.wpe = nn.Embedding(block, width)
            self.h = nn.ModuleList([Block() for _ in range(layers)])
            self.ln_f = nn.LayerNorm(width)
            self.lm_head = nn.Linear(width, vocabulary, bias=False)
            self.lm_head.weight = self.wte.weight

        def forward(self, tokens: Any) -> Any:
            positions = t.arange(tokens.shape[1])
            x = self.wte(tokens) + self.wpe(positions)
            for layer in self.h:
                x = layer(x)
            return self.lm_head(self.ln_f(x))

    return GPT()


def decay_groups(model: Any, weight_decay: float) -> list[dict[str, Any]]:
    params = list(model.parameters())
    return [{"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
            {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]


def resnet18(t: Any, classes: int = 10, base: int = 64) -> Any:
    nn, F = t.nn, t.nn.functional

    class BasicBlock(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self, inputs: int, outputs: int, stride: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(inputs, outputs, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(outputs)
            self.conv2 = nn.Conv2d(outputs, outputs, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(outputs)
            self.downsample = None
            if stride != 1 or inputs != outputs:
                self.downsample = nn.Sequential(
                    nn.Conv2d(inputs, outputs, 1, stride=stride, bias=False),
                    nn.BatchNorm2d(outputs))

        def forward(self, x: Any) -> Any:
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            identity = x if self.downsample is None else self.downsample(x)
            return F.relu(out + identity)

    class ResNet18(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, base, 7, stride=2, padding=3, bias=False)
            self.bn1 = nn.BatchNorm2d(base)
            self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
            inputs = base
            for index, width in enumerate((base, 2 * base, 4 * base, 8 * base)):
                stride = 1 if index == 0 else 2
                setattr(self, f"layer{index + 1}", nn.Sequential(
                    BasicBlock(inputs, width, stride), BasicBlock(width, width, 1)))
                inputs = width
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(8 * base, classes)

        def forward(self, x: Any) -> Any:
            x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
            for index in range(1, 5):
                x = getattr(self, f"layer{index}")(x)
            return self.fc(t.flatten(self.avgpool(x), 1))

    return ResNet18()


def lstm_language_model(t: Any, vocabulary: int = 8500, width: int = 200, layers: int = 2,
                        dropout: float = 0.2) -> Any:
    nn = t.nn

    class LSTMLanguageModel(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(vocabulary, width)
            self.rnn = nn.LSTM(width, width, layers, dropout=dropout, batch_first=True)
            self.decoder = nn.Linear(width, vocabulary)

        def forward(self, tokens: Any) -> Any:
            output, _ = self.rnn(self.drop(self.encoder(tokens)))
            return self.decoder(self.drop(output))

    return LSTMLanguageModel()


def transformer_language_model(t: Any, vocabulary: int = 8500, width: int = 200,
                               heads: int = 2, hidden: int = 200, layers: int = 2,
                               dropout: float = 0.2, length: int = 35) -> Any:
    nn, F = t.nn, t.nn.functional

    class TransformerLanguageModel(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            position = t.arange(length, dtype=t.get_default_dtype()).unsqueeze(1)
            frequency = t.exp(t.arange(0, width, 2, dtype=t.get_default_dtype())
                              * (-math.log(10000.0) / width))
            pe = t.zeros(length, width)
            pe[:, 0::2] = t.sin(position * frequency)
            pe[:, 1::2] = t.cos(position * frequency)
            self.register_buffer("pe", pe)
            self.pos_drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(vocabulary, width)
            layer = nn.TransformerEncoderLayer(width, heads, hidden, dropout, batch_first=True)
            self.transformer_encoder = nn.TransformerEncoder(layer, layers,
                                                             enable_nested_tensor=False)
            self.decoder = nn.Linear(width, vocabulary)

        def forward(self, tokens: Any) -> Any:
            steps = tokens.shape[1]
            x = self.encoder(tokens) * math.sqrt(width) + self.pe[:steps]
            mask = nn.Transformer.generate_square_subsequent_mask(steps, dtype=x.dtype)
            x = self.transformer_encoder(self.pos_drop(x), mask=mask, is_causal=True)
            return F.log_softmax(self.decoder(x), dim=-1)

    return TransformerLanguageModel()


def mnist_net(t: Any, channels: tuple[int, int] = (32, 64), hidden: int = 128,
              image: int = 28) -> Any:
    nn, F = t.nn, t.nn.functional

    class MnistNet(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(1, channels[0], 3, 1)
            self.conv2 = nn.Conv2d(channels[0], channels[1], 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(channels[1] * ((image - 4) // 2) ** 2, hidden)
            self.fc2 = nn.Linear(hidden, 10)

        def forward(self, x: Any) -> Any:
            x = F.relu(self.conv2(F.relu(self.conv1(x))))
            x = self.dropout1(F.max_pool2d(x, 2))
            x = self.dropout2(F.relu(self.fc1(t.flatten(x, 1))))
            return F.log_softmax(self.fc2(x), dim=1)

    return MnistNet()


def vae(t: Any, pixels: int = 784, hidden: int = 400, latent: int = 20) -> Any:
    nn, F = t.nn, t.nn.functional

    class VAE(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = nn.Linear(pixels, hidden)
            self.fc21 = nn.Linear(hidden, latent)
            self.fc22 = nn.Linear(hidden, latent)
            self.fc3 = nn.Linear(latent, hidden)
            self.fc4 = nn.Linear(hidden, pixels)

        def forward(self, x: Any, noise: Any = None) -> Any:
            h = F.relu(self.fc1(x.view(-1, pixels)))
            mean, log_variance = self.fc21(h), self.fc22(h)
            if noise is None:
                noise = t.randn_like(mean)
            z = mean + noise * t.exp(0.5 * log_variance)
            return t.sigmoid(self.fc4(F.relu(self.fc3(z)))), mean, log_variance

    return VAE()


def vae_loss(t: Any, reconstruction: Any, x: Any, mean: Any, log_variance: Any) -> Any:
    target = x.view(-1, reconstruction.shape[-1])
    bce = t.nn.functional.binary_cross_entropy(reconstruction, target, reduction="sum")
    kld = -0.5 * t.sum(1 + log_variance - mean.pow(2) - log_variance.exp())
    return bce + kld
