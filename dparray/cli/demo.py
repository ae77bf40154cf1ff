"""Train a small convolutional network on the handwritten digits that ship with scikit-learn
(no download), with DataParallel on the chosen backend.

Shows the loss and accuracy of every epoch (a progress bar on a terminal, one line per epoch
otherwise), reports the held-out test accuracy, saves the trained weights as safetensors and a
PNG of the loss and accuracy curves in --out, and ends with a table of the median time of a
training step with 1 worker and with more, measured side by side on copies of the model, and
how each ran. Needs the ``demo`` extra (scikit-learn, matplotlib, tqdm):
``pip install "dparray[demo]"``.
"""

from __future__ import annotations

import copy
import io
import os
import secrets
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import dparray as dp
from dparray import nn, optim
from dparray._system import available_cores
from dparray.backend import parallel_region
from dparray.cli.workloads import interleaved_medians
from dparray.data import DataLoader, TensorDataset, load_digits
from dparray.io import write_atomically
from dparray.nn import functional as F

BATCH_SIZE = 256
CHANNELS = 32
LEARNING_RATE = 2e-3
TIMED_STEPS = 7  # per configuration in the speed table, after a warm-up
COOLDOWN = 0.15  # seconds before each timed step: see dparray.cli.workloads.interleaved_medians


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
    plotting, progress = _optional_packages()
    with dp.use_backend(chosen):
        dp.manual_seed(seed)
        train, test = _digits(seed)
        model = build_model()
        wrapped = dp.DataParallel(model, workers)
        print(f"training a small CNN ({model.num_parameters():,} parameters) on "
              f"{len(train[0])} digits ({len(test[0])} held out), batches of {BATCH_SIZE}, on "
              f"backend {chosen.name!r} with {workers} workers")
        history = train_model(wrapped, train, test, epochs, progress, seed)
        accuracy = history.test_accuracy[-1]
        weights = os.path.join(out, "digits_cnn.safetensors")
        # follow_symlinks=False: a link planted in --out is replaced, never written through
        dp.save(model.state_dict(), weights, metadata={"test_accuracy": f"{accuracy:.4f}"},
                follow_symlinks=False)
        figure = os.path.join(out, "training_curves.png")
        plot(history, figure, plotting)
        print(f"test accuracy: {accuracy:.2%}")
        print(f"saved {weights} and {figure}")
        speed_table(model, train, sorted({2, workers}))
    return 0


def build_model() -> nn.Module:
    """The demo's classifier: 8 x 8 images -> 10 digits."""
    return nn.Sequential(
        nn.Conv2d(1, CHANNELS, 3, padding=1), nn.BatchNorm2d(CHANNELS), nn.ReLU(),
        nn.Conv2d(CHANNELS, CHANNELS, 3, padding=1), nn.BatchNorm2d(CHANNELS), nn.ReLU(),
        nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(), nn.Linear(CHANNELS * 16, 10),
    )


Split = tuple[dp.Tensor, dp.Tensor]


def train_model(model: nn.Module, train: Split, test: Split, epochs: int,
                progress: Callable[..., Any] | None = None, seed: int = 0) -> History:
    """Adam on shuffled mini-batches; returns the history of every epoch."""
    opt = optim.Adam(model.parameters(), lr=LEARNING_RATE)
    loader = DataLoader(TensorDataset(*train), batch_size=BATCH_SIZE, shuffle=True, seed=seed)
    history = History()
    bars = progress if progress is not None and sys.stderr.isatty() else None
    for epoch in range(1, epochs + 1):
        label = f"epoch {epoch:2d}/{epochs}"
        bar = bars(total=len(loader), desc=label, unit="batch") if bars is not None else None
        loss, accuracy, seconds = _epoch(model, opt, loader, bar)
        history.loss.append(loss)
        history.train_accuracy.append(accuracy)
        history.seconds.append(seconds)
        history.test_accuracy.append(evaluate(model, *test))
        if bar is None:  # not a terminal: one line per epoch, not a redraw per batch
            print(f"{label}: loss {loss:.4f}, accuracy {accuracy:.3f}, held out "
                  f"{history.test_accuracy[-1]:.3f} ({seconds:.2f} s)", file=sys.stderr)
    return history


def evaluate(model: nn.Module, x: dp.Tensor, y: dp.Tensor) -> float:
    """Accuracy of ``model`` on ``(x, y)``, in evaluation mode, without a graph."""
    model.eval()
    with dp.no_grad():
        accuracy = (model(x).argmax(axis=1) == y).astype("float32").mean().item()
    model.train()
    return accuracy


def _epoch(model: nn.Module, opt: optim.Optimizer, loader: DataLoader,
           bar: Any) -> tuple[float, float, float]:
    losses, correct, seen, start = [], 0, 0, time.perf_counter()
    for inputs, labels in loader:
        logits = model(inputs)
        loss = F.cross_entropy(logits, labels)
        opt.step(loss.backward())
        losses.append(loss.item())
        correct += (logits.argmax(axis=1) == labels).astype("int64").sum().item()
        seen += len(labels)
        if bar is not None:
            bar.set_postfix(loss=f"{losses[-1]:.4f}", acc=f"{correct / seen:.3f}")
            bar.update()
    seconds = time.perf_counter() - start
    if bar is not None:
        bar.close()
    return statistics.fmean(losses), correct / seen, seconds


def _digits(seed: int) -> tuple[Split, Split]:
    """The digits as ``(N, 1, 8, 8)`` images, split into training and held-out parts."""
    parts = []
    for split in ("train", "test"):
        x, y = load_digits(split, seed=seed)
        parts.append((x.reshape(-1, 1, 8, 8), y))
    return parts[0], parts[1]


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


def speed_table(model: nn.Module, train: Split, worker_counts: list[int]) -> dict[str, float]:
    """Median seconds of a training step on a full batch, measured round-robin on copies of
    ``model`` (``dparray.cli.workloads.interleaved_medians``: drift hits all alike, and a pause
    before each step keeps BLAS's spinning threads from one configuration out of the next):
    one worker on one core, one worker on every core (BLAS and the compiled kernels spread
    each op), and DataParallel with each count above one on threads. Prints them with how each
    ran and the speed-up against one core; returns the medians by row label."""
    x, y = train[0][:BATCH_SIZE], train[1][:BATCH_SIZE]
    cores = available_cores()
    rows: dict[str, tuple[Callable[[], None], dp.DataParallel]] = {}
    single = dp.DataParallel(copy.deepcopy(model), 1)
    rows["1 worker, 1 core"] = (_step(single, x, y, share=cores), single)
    whole = dp.DataParallel(copy.deepcopy(model), 1)
    rows[f"1 worker, {cores} cores"] = (_step(whole, x, y), whole)
    for count in worker_counts:
        if count > 1:
            parallel = dp.DataParallel(copy.deepcopy(model), count, execution="threads")
            rows[f"{count} workers"] = (_step(parallel, x, y), parallel)
    medians = interleaved_medians({label: step for label, (step, _) in rows.items()},
                                  rounds=TIMED_STEPS, warmup=1, cooldown=COOLDOWN)
    base = medians["1 worker, 1 core"]
    print(f"\none training step on a batch of {BATCH_SIZE}, median of {TIMED_STEPS}, side by "
          "side:")
    print(f"  {'':18}{'ms / step':>10}{'speed-up':>10}  ran as")
    for label, (_, wrapped) in rows.items():
        print(f"  {label:18}{medians[label] * 1e3:10.1f}{base / medians[label]:9.2f}x  "
              f"{wrapped.last_execution}")
    print("  (speed-ups against one core; DataParallel gives each worker its share of the "
          "cores for BLAS and the kernels)")
    return medians


def _step(model: nn.Module, x: dp.Tensor, y: dp.Tensor, share: int = 1) -> Callable[[], None]:
    """An Adam step; ``share > 1`` runs it with ``1 / share`` of the cores, as one of
    ``share`` DataParallel workers would (the backend's own thread budget)."""
    opt = optim.Adam(model.parameters(), lr=LEARNING_RATE)
    backend = x.backend

    def step() -> None:
        if share > 1:
            with parallel_region(backend, share), backend.worker(0, share):
                opt.step(F.cross_entropy(model(x), y).backward())
        else:
            opt.step(F.cross_entropy(model(x), y).backward())
        backend.synchronize()

    return step


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


def _optional_packages() -> tuple[Any, Any]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import sklearn  # noqa: F401 - the digits (dparray.data.load_digits reads them)
        from matplotlib import pyplot
        from tqdm import tqdm
    except ImportError as error:
        raise ImportError(f"the demo needs the 'demo' extra ({error.name} is missing): "
                          "pip install 'dparray[demo]'") from None
    return pyplot, tqdm
