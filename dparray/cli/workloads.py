"""The benchmark workloads, in dparray and, when installed, PyTorch: the in-house models W1-W6
and the real programs W7-W12 (``models.py``, their twins in ``torch_models.py``).

Each workload is a model, a batch, a loss and an optimizer; a *step* is forward, loss,
backward, gradient clipping where the program clips, and the optimizer's update (W1-W6: Adam).
Both libraries get the same architecture, batch and hyper-parameters. Used by the ``bench/``
suite and by ``python -m dparray bench``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from dparray import creation, nn, optim
from dparray.cli import models
from dparray.cli import torch_models as twins
from dparray.nn import functional as F
from dparray.optim.optimizer import Optimizer
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
    # A real program's own loss, optimizer and clipping (W7-W12): ``objective(model, inputs,
    # targets)`` is the loss, ``optimizer(model)`` the optimizer, ``clip`` the gradients'
    # largest global norm; the ``torch_`` ones take the ``torch`` module first. None: W1-W6's
    # loss (``classify``) and Adam(lr=1e-4), no clipping.
    objective: Callable[[Any, Tensor, Tensor], Tensor] | None = None
    optimizer: Callable[[nn.Module], Optimizer] | None = None
    clip: float | None = None
    torch_objective: Callable[[Any, Any, Any, Any], Any] | None = None
    torch_optimizer: Callable[[Any, Any], Any] | None = None


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


def _digits_cnn() -> nn.Module:
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Dropout(0.25), nn.Flatten(), nn.Linear(32 * 2 * 2, 10))


def _torch_digits_cnn(t: Any) -> Any:
    return t.nn.Sequential(t.nn.Conv2d(1, 16, 3, padding=1), t.nn.ReLU(), t.nn.MaxPool2d(2),
                           t.nn.Conv2d(16, 32, 3, padding=1), t.nn.ReLU(), t.nn.MaxPool2d(2),
                           t.nn.Dropout(0.25), t.nn.Flatten(), t.nn.Linear(32 * 2 * 2, 10))


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
    "CNN700": Workload("CNN700", "digits CNN (convs 1-16 and 16-32, ReLU, max pool, dropout, "
                       "Linear 128-10) on 8x8 digits, batch 700", _digits_cnn,
                       _labels((700, 1, 8, 8), 10), True, _torch_digits_cnn),
    "W5": Workload("W5", "Embedding(5000,128) on 32 tokens + MLP 4096-512-4, batch 512",
                   _embedding_mlp, _tokens(512, 32, 5000, 4), True, _torch_embedding_mlp),
    "W6": Workload("W6", "transformer encoder block (d 256, 4 heads, MLP 1024, pre-norm, GELU, "
                   "no dropout), batch 32 x 128", _transformer_block, _targets((32, 128, 256)),
                   False, _torch_transformer_block),
}


# ----------------------------------------------------------------------------- W7-W12
# The real programs, each with its own loss, optimizer and clipping, as the programs train.


def _language_loss(model: Any, tokens: Tensor, targets: Tensor) -> Tensor:
    logits = model(tokens)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def _log_probability_loss(model: Any, tokens: Tensor, targets: Tensor) -> Tensor:
    log_probs = model(tokens)
    return F.nll_loss(log_probs.reshape(-1, log_probs.shape[-1]), targets.reshape(-1))


def _nll(model: Any, x: Tensor, y: Tensor) -> Tensor:
    return F.nll_loss(model(x), y)


def _vae_loss(model: Any, x: Tensor, _: Tensor) -> Tensor:
    reconstruction, mean, log_variance = model(x)
    return models.vae_loss(reconstruction, x, mean, log_variance)


def _torch_language_loss(t: Any, model: Any, tokens: Any, targets: Any) -> Any:
    logits = model(tokens)
    return t.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                         targets.reshape(-1))


def _torch_log_probability_loss(t: Any, model: Any, tokens: Any, targets: Any) -> Any:
    log_probs = model(tokens)
    return t.nn.functional.nll_loss(log_probs.reshape(-1, log_probs.shape[-1]),
                                    targets.reshape(-1))


def _torch_nll(t: Any, model: Any, x: Any, y: Any) -> Any:
    return t.nn.functional.nll_loss(model(x), y)


def _torch_vae_loss(t: Any, model: Any, x: Any, _: Any) -> Any:
    reconstruction, mean, log_variance = model(x)
    return twins.vae_loss(t, reconstruction, x, mean, log_variance)


def _sequences(batch: int, length: int, vocabulary: int) -> Callable[[], tuple[Tensor, Tensor]]:
    """Token ids ``(batch, length)`` and their next tokens."""
    def make() -> tuple[Tensor, Tensor]:
        tokens = (creation.rand(batch, length + 1) * vocabulary).astype("int64")
        return tokens[:, :-1], tokens[:, 1:]
    return make


def _images(batch: int) -> Callable[[], tuple[Tensor, Tensor]]:
    """Flattened 28x28 images in ``[0, 1)``, twice: the VAE's input is its target."""
    def make() -> tuple[Tensor, Tensor]:
        x = creation.rand(batch, 784)
        return x, x
    return make


VOCABULARY = 8500  # the word-level language models' (8-10k in the programs they stand for)

REAL_PROGRAMS = {
    "W7": Workload(
        "W7", "GPT, 2 layers x 4 heads x 128, block 64, batch 32, vocabulary 65, tied "
        "embeddings, AdamW (decay groups), clip 1.0", models.GPT, _sequences(32, 64, 65), True,
        twins.gpt, objective=_language_loss,
        optimizer=lambda m: optim.AdamW(models.decay_groups(m, 0.1), lr=6e-4,
                                        betas=(0.9, 0.95)),
        clip=1.0, torch_objective=_torch_language_loss,
        torch_optimizer=lambda t, m: t.optim.AdamW(twins.decay_groups(m, 0.1), lr=6e-4,
                                                   betas=(0.9, 0.95))),
    "W8": Workload(
        "W8", "ResNet-18, batch 8 x 3 x 64 x 64, 10 classes, SGD momentum 0.9, weight decay "
        "5e-4", models.ResNet18, _labels((8, 3, 64, 64), 10), True, twins.resnet18,
        optimizer=lambda m: optim.SGD(m.parameters(), lr=0.1, momentum=0.9,
                                      weight_decay=5e-4),
        torch_optimizer=lambda t, m: t.optim.SGD(m.parameters(), lr=0.1, momentum=0.9,
                                                 weight_decay=5e-4)),
    "W9": Workload(
        "W9", f"LSTM language model, 2 layers x 200, 35 tokens x batch 20, vocabulary "
        f"{VOCABULARY}, dropout 0.2, SGD, clip 0.25", models.LSTMLanguageModel,
        _sequences(20, 35, VOCABULARY), True, twins.lstm_language_model,
        objective=_language_loss, optimizer=lambda m: optim.SGD(m.parameters(), lr=20.0),
        clip=0.25, torch_objective=_torch_language_loss,
        torch_optimizer=lambda t, m: t.optim.SGD(m.parameters(), lr=20.0)),
    "W10": Workload(
        "W10", f"Transformer language model, 2 post-norm layers x 200 (2 heads, MLP 200), "
        f"causal, 35 tokens x batch 20, vocabulary {VOCABULARY}, dropout 0.2, SGD, clip 0.25",
        models.TransformerLanguageModel, _sequences(20, 35, VOCABULARY), True,
        twins.transformer_language_model, objective=_log_probability_loss,
        optimizer=lambda m: optim.SGD(m.parameters(), lr=5.0), clip=0.25,
        torch_objective=_torch_log_probability_loss,
        torch_optimizer=lambda t, m: t.optim.SGD(m.parameters(), lr=5.0)),
    "W11": Workload(
        "W11", "MNIST CNN (2 convs, max pool, dropout, 2 linears, log-softmax), batch 64, "
        "Adadelta", models.MnistNet, _labels((64, 1, 28, 28), 10), True, twins.mnist_net,
        objective=_nll, optimizer=lambda m: optim.Adadelta(m.parameters(), lr=1.0),
        torch_objective=_torch_nll,
        torch_optimizer=lambda t, m: t.optim.Adadelta(m.parameters(), lr=1.0)),
    "W12": Workload(
        "W12", "VAE 784-400-20, batch 128, Adam", models.VAE, _images(128), False, twins.vae,
        objective=_vae_loss, optimizer=lambda m: optim.Adam(m.parameters(), lr=1e-3),
        torch_objective=_torch_vae_loss,
        torch_optimizer=lambda t, m: t.optim.Adam(m.parameters(), lr=1e-3)),
}
WORKLOADS.update(REAL_PROGRAMS)


def dparray_step(workload: Workload, model: nn.Module, inputs: Tensor,
                 targets: Tensor) -> Callable[[], None]:
    opt = optim.Adam(model.parameters(), lr=1e-4) if workload.optimizer is None \
        else workload.optimizer(model)
    objective = workload.objective or _plain_loss(workload)
    clip = workload.clip

    def step() -> None:
        grads = objective(model, inputs, targets).backward()
        opt.step(grads if clip is None else optim.clip_grad_norm(grads, clip))

    return step


def seeded_step(name: str) -> tuple[Callable[[], None], Tensor, Tensor]:
    """A step of workload ``name`` built from seed 0 (the model, then its batch), with the
    batch: what every benchmark of one workload starts from."""
    from dparray.random import manual_seed

    workload = WORKLOADS[name]
    manual_seed(0)
    model = workload.build()
    inputs, targets = workload.batch()
    return dparray_step(workload, model, inputs, targets), inputs, targets


def _plain_loss(workload: Workload) -> Callable[[Any, Tensor, Tensor], Tensor]:
    loss_of = F.cross_entropy if workload.classify else F.mse_loss
    return lambda model, inputs, targets: loss_of(model(inputs), targets)


def torch_step(workload: Workload, inputs: Any, targets: Any) -> Callable[[], None] | None:
    """The same step in PyTorch (all its CPU threads), or None when PyTorch is not installed;
    ``inputs`` and ``targets`` are tensors or NumPy arrays. (``bench/torch_process.py`` runs it
    in a process of its own, for the reason given there.)"""
    try:
        import torch  # type: ignore[import-not-found,unused-ignore]  # optional: the comparison column
    except ImportError:
        return None
    torch.manual_seed(0)
    model = workload.torch_build(torch)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4) if workload.torch_optimizer is None \
        else workload.torch_optimizer(torch, model)
    x, y = (torch.from_numpy(a.numpy() if isinstance(a, Tensor) else a)
            for a in (inputs, targets))
    objective = workload.torch_objective
    if objective is None:
        loss_of = torch.nn.functional.cross_entropy if workload.classify else \
            torch.nn.functional.mse_loss

        def objective(t: Any, model: Any, x: Any, y: Any) -> Any:
            return loss_of(model(x), y)

    clip = workload.clip

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        objective(torch, model, x, y).backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()

    return step


def interleaved_medians(steps: Mapping[Key, Callable[[], float | None]], rounds: int, warmup: int,
                        cooldown: float = 0.0, lead_in: int = 0) -> dict[Key, float]:
    """Median seconds per step of each entry, timed round-robin so drift hits all alike. A step
    that returns a number has timed itself (one run in another process): that is its time.

    ``cooldown`` seconds pass before each timed step: after a multi-threaded BLAS call,
    OpenBLAS's helper threads busy-wait (its THREAD_TIMEOUT: about 0.1 s by default, a
    microsecond or two where dparray set it), taking a core from whatever runs next. A
    training loop runs one configuration over and over and never
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
