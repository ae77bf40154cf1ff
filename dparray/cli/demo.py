"""Train an MLP on the handwritten digits that ship with scikit-learn (no download), with
DataParallel on the chosen backend.

Shows a progress bar per epoch with the loss and accuracy, reports the held-out test accuracy,
saves the trained weights as safetensors and a PNG of the loss and accuracy curves in --out,
and ends with the time per epoch with 1 worker and with N workers. Needs the ``demo`` extra
(scikit-learn, matplotlib, tqdm): ``pip install "dparray[demo]"``.
"""

from __future__ import annotations

import copy
import io
import os
import secrets
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import dparray as dp
from dparray import nn, optim
from dparray.io import write_atomically
from dparray.nn import functional as F

BATCH_SIZE = 128
HIDDEN = 256
LEARNING_RATE = 1e-3
TEST_FRACTION = 0.2


@dataclass
class History:
    """Per-epoch training loss, training accuracy, test accuracy and seconds."""

    loss: list[float] = field(default_factory=list)
    train_accuracy: list[float] = field(default_factory=list)
    test_accuracy: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)


def run(backend: str, workers: int, epochs: int, seed: int, out: str) -> int:
    if workers < 1 or epochs < 1:
        raise ValueError(f"--workers and --epochs must be at least 1, got {workers} and {epochs}")
    chosen = dp.get_backend(backend)  # unknown or unavailable: a clear error before any work
    _check_writable(out)
    plotting, progress, digits = _optional_packages()
    with dp.use_backend(chosen):
        dp.manual_seed(seed)
        train, test = _digits(digits)
        model = build_model()
        wrapped = dp.DataParallel(model, workers)
        print(f"training a 64-{HIDDEN}-{HIDDEN}-10 MLP on {len(train[0])} digits "
              f"({len(test[0])} held out) on backend {chosen.name!r} with {workers} workers")
        history = train_model(wrapped, train, test, epochs, progress)
        accuracy = history.test_accuracy[-1]
        weights = os.path.join(out, "digits_mlp.safetensors")
        # follow_symlinks=False: a link planted in --out is replaced, never written through
        dp.save(model.state_dict(), weights, metadata={"test_accuracy": f"{accuracy:.4f}"},
                follow_symlinks=False)
        figure = os.path.join(out, "training_curves.png")
        plot(history, figure, plotting)
        print(f"test accuracy: {accuracy:.2%}")
        print(f"saved {weights} and {figure}")
        _speed_table(model, wrapped, train, workers, history)
    return 0


def build_model() -> nn.Module:
    """The demo's classifier: 64 pixels -> 10 digits."""
    return nn.Sequential(nn.Linear(64, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, HIDDEN), nn.ReLU(),
                         nn.Linear(HIDDEN, 10))


Split = tuple[dp.Tensor, dp.Tensor]


def train_model(model: nn.Module, train: Split, test: Split, epochs: int,
                progress: Callable[..., Any] | None = None) -> History:
    """Adam on shuffled mini-batches; returns the history of every epoch."""
    opt = optim.Adam(model.parameters(), lr=LEARNING_RATE)
    history = History()
    for epoch in range(1, epochs + 1):
        loss, accuracy, seconds = _epoch(model, opt, train, progress,
                                         f"epoch {epoch:2d}/{epochs}")
        history.loss.append(loss)
        history.train_accuracy.append(accuracy)
        history.seconds.append(seconds)
        history.test_accuracy.append(evaluate(model, *test))
    return history


def evaluate(model: nn.Module, x: dp.Tensor, y: dp.Tensor) -> float:
    """Accuracy of ``model`` on ``(x, y)``, in evaluation mode, without a graph."""
    model.eval()
    with dp.no_grad():
        accuracy = (model(x).argmax(axis=1) == y).astype("float32").mean().item()
    model.train()
    return accuracy


def _epoch(model: nn.Module, opt: optim.Optimizer, train: Split,
           progress: Callable[..., Any] | None, label: str) -> tuple[float, float, float]:
    x, y = train
    order = dp.randperm(len(x))
    batches = [order[i:i + BATCH_SIZE] for i in range(0, len(x), BATCH_SIZE)]
    bar = progress(total=len(batches), desc=label, unit="batch", leave=True) if progress else None
    losses, correct, seen, start = [], 0, 0, time.perf_counter()
    for index in batches:
        inputs, labels = dp.take(x, index), dp.take(y, index)
        logits = model(inputs)
        loss = F.cross_entropy(logits, labels)
        opt.step(loss.backward())
        losses.append(loss.item())
        correct += (logits.argmax(axis=1) == labels).astype("int64").sum().item()
        seen += len(index)
        if bar is not None:
            bar.set_postfix(loss=f"{losses[-1]:.4f}", acc=f"{correct / seen:.3f}")
            bar.update()
    seconds = time.perf_counter() - start
    if bar is not None:
        bar.close()
    return statistics.fmean(losses), correct / len(x), seconds


def _digits(load_digits: Callable[[], Any]) -> tuple[Split, Split]:
    data = load_digits()
    x = dp.tensor(data.data, dtype="float32") / 16.0  # pixels are 0..16
    y = dp.tensor(data.target, dtype="int64")
    order = dp.randperm(len(x))
    cut = int(len(x) * (1 - TEST_FRACTION))
    train, test = order[:cut], order[cut:]
    return (dp.take(x, train), dp.take(y, train)), (dp.take(x, test), dp.take(y, test))


def plot(history: History, path: str, pyplot: Any) -> None:
    """Loss and accuracy per epoch, side by side, as a PNG."""
    epochs = range(1, len(history.loss) + 1)
    figure, (left, right) = pyplot.subplots(1, 2, figsize=(9, 3.5))
    left.plot(epochs, history.loss, marker="o")
    left.set(title="training loss", xlabel="epoch", ylabel="cross-entropy")
    right.plot(epochs, history.train_accuracy, marker="o", label="training")
    right.plot(epochs, history.test_accuracy, marker="o", label="held out")
    right.set(title="accuracy", xlabel="epoch", ylim=(0, 1.01))
    right.legend()
    for axes in (left, right):
        axes.xaxis.get_major_locator().set_params(integer=True)
    figure.tight_layout()
    png = io.BytesIO()
    figure.savefig(png, format="png", dpi=100)
    pyplot.close(figure)
    write_atomically(path, png.getvalue(), follow_symlinks=False)  # never through a link


def _speed_table(model: nn.Module, wrapped: dp.DataParallel, train: Split, workers: int,
                 history: History) -> None:
    """Time one more epoch of a copy with 1 worker, beside the training epochs' median."""
    single = dp.DataParallel(copy.deepcopy(model), 1)
    _, _, one = _epoch(single, optim.Adam(single.parameters(), lr=LEARNING_RATE), train, None, "")
    many = statistics.median(history.seconds)
    print(f"\n{'workers':>8}  {'s / epoch':>10}")
    print(f"{1:>8}  {one:10.3f}")
    print(f"{workers:>8}  {many:10.3f}   speed-up {one / many:.2f}x "
          f"(chunks ran: {wrapped.last_execution})")
    if wrapped.last_execution == "whole":
        print("          batches this small run as one call: threads would not pay "
              "(docs/data-parallelism.md)")


def _check_writable(out: str) -> None:
    try:
        os.makedirs(out, exist_ok=True)
        # a fresh random name, created exclusively: never a file (or link) already there
        probe = os.path.join(out, f".dparray-write-test.{secrets.token_hex(8)}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        os.close(os.open(probe, flags, 0o600))
        os.remove(probe)
    except OSError as error:
        raise OSError(f"cannot write to --out {out!r}: {error.strerror or error}") from None


def _optional_packages() -> tuple[Any, Any, Any]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot
        from sklearn.datasets import load_digits
        from tqdm import tqdm
    except ImportError as error:
        raise ImportError(f"the demo needs the 'demo' extra ({error.name} is missing): "
                          "pip install 'dparray[demo]'") from None
    return pyplot, tqdm, load_digits
