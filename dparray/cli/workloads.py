"""The DataParallel benchmark workloads (W1-W6), in dparray and, when installed, PyTorch.

Each workload is a model, a batch and a loss; a *step* is forward, loss, backward and an Adam
update. Both libraries get the same architecture, batch and hyper-parameters. Used by the
``bench/`` suite and by ``python -m dparray bench``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from dparray import creation, nn, optim
from dparray.nn import functional as F
from dparray.tensor import Tensor

Key = TypeVar("Key")


@dataclass
class Workload:
    name: str
    description: str
    build: Callable[[], nn.Module]
    batch: Callable[[], tuple[Tensor, Tensor]]  # drawn from the current random stream
    classify: bool  # cross-entropy on labels, else mean squared error to a target
    torch_build: Callable[[Any], Any]


def _mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                         nn.Linear(1024, 10))


def _tanh_stack() -> nn.Module:
    return nn.Sequential(*[m for _ in range(8) for m in (nn.Linear(64, 64), nn.Tanh())])


def _layernorm_stack() -> nn.Module:
    return nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(256, 256), nn.LayerNorm(256),
                                                         nn.GELU())])


def _convnet() -> nn.Module:
    return nn.Sequential(nn.Conv2d(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(800, 10))


def _small_cnn() -> nn.Module:
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Dropout(0.25), nn.Flatten(), nn.Linear(16 * 4 * 4, 10))


def _torch_small_cnn(t: Any) -> Any:
    return t.nn.Sequential(t.nn.Conv2d(1, 16, 3, padding=1), t.nn.ReLU(), t.nn.MaxPool2d(2),
                           t.nn.Dropout(0.25), t.nn.Flatten(), t.nn.Linear(16 * 4 * 4, 10))


def _embedding_mlp() -> nn.Module:
    return nn.Sequential(nn.Embedding(5000, 128), nn.Flatten(), nn.Linear(32 * 128, 512),
                         nn.GELU(), nn.Linear(512, 4))


def _transformer_block() -> nn.Module:
    return nn.TransformerEncoderLayer(256, 4, dim_feedforward=1024, dropout=0.0,
                                      activation="gelu", batch_first=True, norm_first=True)


def _torch_mlp(t: Any) -> Any:
    return t.nn.Sequential(t.nn.Linear(784, 1024), t.nn.ReLU(), t.nn.Linear(1024, 1024),
                           t.nn.ReLU(), t.nn.Linear(1024, 10))


def _torch_tanh_stack(t: Any) -> Any:
    return t.nn.Sequential(*[m for _ in range(8) for m in (t.nn.Linear(64, 64), t.nn.Tanh())])


def _torch_layernorm_stack(t: Any) -> Any:
    return t.nn.Sequential(*[m for _ in range(4) for m in (
        t.nn.Linear(256, 256), t.nn.LayerNorm(256), t.nn.GELU())])


def _torch_convnet(t: Any) -> Any:
    return t.nn.Sequential(t.nn.Conv2d(1, 16, 3), t.nn.ReLU(), t.nn.MaxPool2d(2),
                           t.nn.Conv2d(16, 32, 3), t.nn.ReLU(), t.nn.MaxPool2d(2),
                           t.nn.Flatten(), t.nn.Linear(800, 10))


def _torch_embedding_mlp(t: Any) -> Any:
    return t.nn.Sequential(t.nn.Embedding(5000, 128), t.nn.Flatten(),
                           t.nn.Linear(32 * 128, 512), t.nn.GELU(), t.nn.Linear(512, 4))


def _torch_transformer_block(t: Any) -> Any:
    return t.nn.TransformerEncoderLayer(256, 4, dim_feedforward=1024, dropout=0.0,
                                        activation="gelu", batch_first=True, norm_first=True)


def _tokens(batch: int, length: int, vocabulary: int,
            classes: int) -> Callable[[], tuple[Tensor, Tensor]]:
    def make() -> tuple[Tensor, Tensor]:
        tokens = (creation.rand(batch, length) * vocabulary).astype("int64")
        return tokens, (creation.rand(batch) * classes).astype("int64")
    return make


def _labels(shape: tuple[int, ...], classes: int) -> Callable[[], tuple[Tensor, Tensor]]:
    def make() -> tuple[Tensor, Tensor]:
        return creation.randn(*shape), (creation.rand(shape[0]) * classes).astype("int64")
    return make


def _targets(shape: tuple[int, ...]) -> Callable[[], tuple[Tensor, Tensor]]:
    def make() -> tuple[Tensor, Tensor]:
        return creation.randn(*shape), creation.randn(*shape)
    return make


WORKLOADS = {
    "W1": Workload("W1", "MLP 784-1024-1024-10, batch 2048", _mlp, _labels((2048, 784), 10),
                   True, _torch_mlp),
    "W2": Workload("W2", "8 x (Linear(64,64)+Tanh), batch 32", _tanh_stack, _targets((32, 64)),
                   False, _torch_tanh_stack),
    "W3": Workload("W3", "4 x (Linear(256,256)+LayerNorm+GELU), batch 4096", _layernorm_stack,
                   _targets((4096, 256)), False, _torch_layernorm_stack),
    "W4": Workload("W4", "convnet, batch 256 of 28x28", _convnet,
                   _labels((256, 1, 28, 28), 10), True, _torch_convnet),
    "CNN64": Workload("CNN64", "small CNN on 8x8 digits, batch 64", _small_cnn,
                      _labels((64, 1, 8, 8), 10), True, _torch_small_cnn),
    "CNN700": Workload("CNN700", "small CNN on 8x8 digits, batch 700", _small_cnn,
                       _labels((700, 1, 8, 8), 10), True, _torch_small_cnn),
    "W5": Workload("W5", "Embedding(5000,128) on 32 tokens + MLP 4096-512-4, batch 512",
                   _embedding_mlp, _tokens(512, 32, 5000, 4), True, _torch_embedding_mlp),
    "W6": Workload("W6", "transformer encoder block (d 256, 4 heads, MLP 1024, pre-norm, GELU, "
                   "no dropout), batch 32 x 128", _transformer_block, _targets((32, 128, 256)),
                   False, _torch_transformer_block),
}


def dparray_step(workload: Workload, model: nn.Module, inputs: Tensor,
                 targets: Tensor) -> Callable[[], None]:
    opt = optim.Adam(model.parameters(), lr=1e-4)
    loss_of = F.cross_entropy if workload.classify else F.mse_loss

    def step() -> None:
        opt.step(loss_of(model(inputs), targets).backward())

    return step


def torch_step(workload: Workload, inputs: Any, targets: Any) -> Callable[[], None] | None:
    """The same step in PyTorch (all its CPU threads), or None when PyTorch is not installed;
    ``inputs`` and ``targets`` are tensors or NumPy arrays. (``bench/torch_process.py`` runs it
    in a process of its own, for the reason given there.)"""
    try:
        import torch  # type: ignore[import-not-found]  # optional: the comparison column
    except ImportError:
        return None
    torch.manual_seed(0)
    model = workload.torch_build(torch)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    x, y = (torch.from_numpy(a.numpy() if isinstance(a, Tensor) else a)
            for a in (inputs, targets))
    loss_of = torch.nn.functional.cross_entropy if workload.classify else \
        torch.nn.functional.mse_loss

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        loss_of(model(x), y).backward()
        opt.step()

    return step


def interleaved_medians(steps: Mapping[Key, Callable[[], float | None]], rounds: int, warmup: int,
                        cooldown: float = 0.0, lead_in: int = 0) -> dict[Key, float]:
    """Median seconds per step of each entry, timed round-robin so drift hits all alike. A step
    that returns a number has timed itself (one run in another process): that is its time.

    ``cooldown`` seconds pass before each timed step: after a multi-threaded BLAS call,
    OpenBLAS's helper threads busy-wait for about 0.1 s (its THREAD_TIMEOUT), taking a core
    from whatever runs next. A training loop runs one configuration over and over and never
    sees this; a round-robin would charge it to the neighbour of every BLAS-threaded step.

    ``lead_in`` steps run untimed right before each timed one, so that it runs hot, as steps
    in a training loop do: a step of a few milliseconds can take twice as long after a pause,
    while a thread pool wakes up (PyTorch's OpenMP threads sleep after a few milliseconds).
    """
    for _ in range(warmup):
        for step in steps.values():
            step()
    times: dict[Key, list[float]] = {name: [] for name in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            time.sleep(cooldown)
            for _ in range(lead_in):
                step()
            start = time.perf_counter()
            measured = step()
            elapsed = time.perf_counter() - start
            times[name].append(elapsed if measured is None else measured)
    return {name: statistics.median(values) for name, values in times.items()}
