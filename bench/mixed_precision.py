"""Mixed precision: what it gains here and what it costs in accuracy, in one process.

    python bench/mixed_precision.py [products] [steps] [accuracy] [language-model]
                                     (every part when none is named)

* ``products``: MKL's bfloat16 product (``cblas_gemm_bf16bf16f32``) and dparray's bfloat16
  product as it runs here (MKL's where the CPU multiplies bfloat16 natively, else converted
  operands and ``sgemm``) against float32's ``sgemm``, 2048^3, GFLOP/s, medians of 5.
* ``steps``: W1 (MLP 784-1024-1024-10, batch 2048, Adam) under bfloat16 and float16 autocast
  against its float32 step, interleaved medians.
* ``accuracy``: the digits classifier of the tutorial (MLP 64-256-256-10, Adam, 10 epochs,
  batch 128) trained in float32, under bfloat16 autocast and under float16 autocast with a
  GradScaler, held-out accuracy, for 3 seeds (goal: within 0.5 points of float32's).
* ``language-model``: the tutorial's character-level transformer (2 layers, width 64, context
  64, batch 32, AdamW 3e-3) for 300 steps on the same batches in each precision; the loss
  after 300 steps as the mean over the last 10 (goal: within 2% of float32's).

The speed goals of mixed precision need a CPU that multiplies bfloat16 natively (Intel AMX,
``amx_bf16`` in ``/proc/cpuinfo``, or AVX512-BF16); ``dparray info`` says whether this one
does, and this script prints it first.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import dparray as dp
from dparray import nn, optim
from dparray.cli.workloads import WORKLOADS, interleaved_medians
from dparray.dtypes import native_dtype
from dparray.nn import functional as F

PRECISIONS = ("float32", "bfloat16", "float16")


def hardware() -> None:
    from dparray.backends import _mkl

    facts = dp.backend.describe(dp.get_backend("numpy"))
    print(f"matrix products: {facts['matrix products']}")
    for name in ("bfloat16", "float16"):
        print(f"{name} products: {facts[f'{name} products']}")
    native = sorted(flag for flag in _mkl.cpu_flags() if "bf16" in flag or "fp16" in flag
                    or flag.startswith("amx"))
    print(f"CPU flags for low precision: {', '.join(native) or 'none'}")


def products() -> None:
    from dparray.backends import _low_precision, _mkl

    n = 2048
    rng = np.random.default_rng(0)
    a32 = rng.standard_normal((n, n)).astype(np.float32)
    b32 = rng.standard_normal((n, n)).astype(np.float32)
    bf16 = native_dtype(dp.get_backend("numpy"), "bfloat16")
    a16, b16 = a32.astype(bf16), b32.astype(bf16)
    runs = {"sgemm (float32)": lambda: _mkl.matmul(a32, b32),
            "dparray's bfloat16 product": lambda: _low_precision.low_precision_matmul(
                np, a16, b16, True)}
    if _mkl.status()[0] is not None:
        runs["MKL gemm_bf16bf16f32"] = lambda: _mkl._low_gemm(
            _mkl.status()[0].cblas_gemm_bf16bf16f32, a16, b16)
    print(f"products {n}^3, medians of 5 (GFLOP/s)")
    times = {}
    for name, run in runs.items():
        run()
        samples = []
        for _ in range(5):
            start = time.perf_counter()
            run()
            samples.append(time.perf_counter() - start)
        times[name] = statistics.median(samples)
    for name, seconds in times.items():
        ratio = times["sgemm (float32)"] / seconds
        print(f"  {name:28} {2 * n**3 / seconds / 1e9:8.1f}   {ratio:5.2f}x float32's speed")
    exact = a16.astype(np.float64) @ b16.astype(np.float64)
    got = _low_precision.low_precision_matmul(np, a16, b16, True)
    print(f"  max relative error of the bfloat16 product: "
          f"{float(np.abs(got - exact).max() / np.abs(exact).max()):.1e}")


def steps() -> None:
    workload = WORKLOADS["W1"]
    dp.manual_seed(0)
    x, y = workload.batch()
    runs = {}
    for precision in PRECISIONS:
        dp.manual_seed(0)
        model = workload.build()
        runs[precision] = _step(model, x, y, precision)
    medians = interleaved_medians(runs, rounds=7, warmup=2)
    print("W1 (MLP 784-1024-1024-10, batch 2048), one Adam step, interleaved medians (ms)")
    for precision, seconds in medians.items():
        ratio = seconds / medians["float32"]
        print(f"  {precision:9} {seconds * 1e3:8.1f}   {ratio:5.2f}x float32's step")


def _step(model, x, y, precision):
    opt = optim.Adam(model.parameters(), lr=1e-4)
    scaler = dp.amp.GradScaler(enabled=precision == "float16")
    context = dp.autocast(dtype=precision, enabled=True) if precision != "float32" else None

    def step() -> None:
        if context is None:
            loss = F.cross_entropy(model(x), y)
        else:
            with dp.autocast(dtype=precision):
                loss = F.cross_entropy(model(x), y)
        scaler.step(opt, scaler.scale(loss).backward())

    return step


def accuracy() -> None:
    from sklearn.datasets import load_digits

    digits = load_digits()
    x_all = dp.tensor(digits.data, dtype="float32") / 16.0
    y_all = dp.tensor(digits.target, dtype="int64")
    print("digits classifier (MLP 64-256-256-10, 10 epochs), held-out accuracy")
    results = {precision: [] for precision in PRECISIONS}
    for seed in range(3):
        for precision in PRECISIONS:
            results[precision].append(_classifier(x_all, y_all, seed, precision))
    for precision, values in results.items():
        gaps = [100 * (v - f) for v, f in zip(values, results["float32"], strict=True)]
        print(f"  {precision:9} " + "  ".join(f"{v:6.1%}" for v in values)
              + f"   mean {statistics.mean(values):6.2%}"
              + (f"   gap to float32 (points) {', '.join(f'{g:+.2f}' for g in gaps)}"
                 if precision != "float32" else ""))


def _classifier(x_all, y_all, seed, precision) -> float:
    dp.manual_seed(seed)
    order = dp.randperm(len(x_all))
    cut = int(len(x_all) * 0.8)
    train_x, train_y = dp.take(x_all, order[:cut]), dp.take(y_all, order[:cut])
    test_x, test_y = dp.take(x_all, order[cut:]), dp.take(y_all, order[cut:])
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 10))
    opt = optim.Adam(model.parameters(), lr=1e-3)
    scaler = dp.amp.GradScaler(enabled=precision == "float16")
    for _ in range(10):
        shuffled = dp.randperm(cut)
        for start in range(0, cut, 128):
            batch = shuffled[start:start + 128]
            with dp.autocast(dtype=_low(precision), enabled=precision != "float32"):
                loss = F.cross_entropy(model(dp.take(train_x, batch)), dp.take(train_y, batch))
            scaler.step(opt, scaler.scale(loss).backward())
    model.eval()
    with dp.no_grad(), dp.autocast(dtype=_low(precision), enabled=precision != "float32"):
        predicted = model(test_x).argmax(axis=1)
    return float((predicted == test_y).astype("float32").mean().item())


def _low(precision: str) -> str:
    return precision if precision != "float32" else "bfloat16"


class CharModel(nn.Module):
    """The tutorial's model (docs/language-model.md)."""

    def __init__(self, vocabulary, context=64, width=64, heads=4, layers=2):
        super().__init__()
        self.tokens = nn.Embedding(vocabulary, width)
        self.positions = nn.Embedding(context, width)
        layer = nn.TransformerEncoderLayer(width, heads, dim_feedforward=4 * width, dropout=0.0,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocabulary)

    def forward(self, characters):
        h = self.tokens(characters) + self.positions(dp.arange(characters.shape[1]))
        return self.head(self.norm(self.blocks(h, is_causal=True)))


def language_model(steps: int = 300) -> None:
    import pydoc_data.topics

    text = "".join(pydoc_data.topics.topics.values())
    alphabet = sorted(set(text))
    index = {c: i for i, c in enumerate(alphabet)}
    data = dp.tensor([index[c] for c in text])
    print(f"character language model, {steps} steps (loss: mean of the last 10; seconds)")
    finals = {}
    for precision in PRECISIONS:
        dp.manual_seed(0)
        model = CharModel(len(alphabet))
        opt = optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
        scaler = dp.amp.GradScaler(enabled=precision == "float16")
        offsets = dp.arange(65)
        losses = []
        start = time.perf_counter()
        with dp.fork_rng(1):  # the same batches in every precision
            for _ in range(steps):
                starts = (dp.rand(32) * (len(text) - 65)).astype("int64")
                windows = dp.take(data, starts[:, None] + offsets[None, :])
                with dp.autocast(dtype=_low(precision), enabled=precision != "float32"):
                    logits = model(windows[:, :-1])
                    loss = F.cross_entropy(logits.reshape(-1, len(alphabet)),
                                           windows[:, 1:].reshape(-1))
                grads = scaler.scale(loss).backward()
                if precision == "float16":
                    grads = optim.clip_grad_norm(scaler.unscale(grads), 1.0)
                    scaler.step(opt, grads, unscaled=True)
                else:
                    opt.step(optim.clip_grad_norm(grads, 1.0))
                losses.append(loss.item())
        finals[precision] = statistics.mean(losses[-10:])
        elapsed = time.perf_counter() - start
        gap = finals[precision] / finals["float32"] - 1
        print(f"  {precision:9} loss {finals[precision]:.4f} ({gap:+.2%} of float32's)   "
              f"{elapsed:6.1f} s")


PARTS = {"products": products, "steps": steps, "accuracy": accuracy,
         "language-model": language_model}


def main(names: list[str]) -> None:
    unknown = [name for name in names if name not in PARTS]
    if unknown:
        raise SystemExit(f"unknown part(s) {unknown}; choose from {', '.join(PARTS)}")
    hardware()
    for name in names or list(PARTS):
        print()
        PARTS[name]()


if __name__ == "__main__":
    main(sys.argv[1:])
