"""The GPU side of mixed precision, for ``bench/gpu_check.py`` (a CUDA device and CuPy).

Correctness: float16 (and bfloat16, where the installed CuPy has it) products through cuBLAS
accumulate in float32 -- 3001 ones sum to 3001 before the one rounding, where a 16-bit
accumulator would stop at 2048 (float16) or 256 (bfloat16) -- and equal NumPy's float64
products of the same rounded operands to one rounding; a small model under autocast on CuPy
gives NumPy's dtypes, values and gradients to a few roundings; a GradScaler skips an
overflowing step on CuPy and changes nothing. Speed: 4096^3 products per dtype (TFLOP/s), and
W1's step under autocast against float32.

Every function takes the backend to check (``"cupy"``); ``bench/test_gpu_low_precision.py``
runs them on NumPy, so the script's own code is exercised where no GPU is.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

import dparray as dp
from dparray import dtypes, nn
from dparray.cli.workloads import WORKLOADS
from dparray.nn import functional as F

EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7}


def low_dtypes(device: str = "cupy") -> list[str]:
    backend = dp.get_backend(device)
    return [name for name in ("float16", "bfloat16") if dtypes.supports(backend, name)]


def check(device: str = "cupy") -> bool:
    ok = True
    names = low_dtypes(device)
    print(f"  16-bit dtypes on {device}: {', '.join(names)}")
    rng = np.random.default_rng(3)
    for name in names:
        ones = dp.ones((2, 3001), dtype=name, backend=device) @ dp.ones((3001, 3), dtype=name,
                                                                        backend=device)
        expected = float(dp.tensor([3001.0]).astype(name).item())
        accumulates = ones.astype("float32").numpy().tolist() == [[expected] * 3] * 2
        a = rng.standard_normal((2, 64, 300)).astype(np.float32)
        b = rng.standard_normal((2, 300, 40)).astype(np.float32)
        ta = dp.tensor(a, backend=device).astype(name)
        tb = dp.tensor(b, backend=device).astype(name)
        exact = ta.astype("float64").numpy() @ tb.astype("float64").numpy()
        got = (ta @ tb).astype("float64").numpy()
        close = float(np.abs(got - exact).max()) <= EPS[name] * float(np.abs(exact).max())
        same_model = _model_matches_numpy(name, device)
        print(f"  {name}: float32 accumulation {accumulates}, products to one rounding "
              f"{close}, a model under autocast matches NumPy's {same_model}")
        ok &= accumulates and close and same_model
    skipped = _scaler_skips(device)
    print(f"  GradScaler skips an overflowing step on {device}, changing nothing: {skipped}")
    return ok and skipped


def _model_matches_numpy(name: str, device: str) -> bool:
    results = {}
    for backend in ("numpy", device):
        with dp.use_backend(backend):
            dp.manual_seed(0)
            model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32),
                                  nn.Linear(32, 8))
            attention = nn.MultiheadAttention(8, 2, batch_first=True)
            x = dp.tensor(np.random.default_rng(4).standard_normal((4, 5, 16)).astype(
                np.float32))
            with dp.autocast(dtype=name):
                h = model(x)
                out, _ = attention(h, h, h, need_weights=False)
                loss = F.mse_loss(out, dp.zeros(out.shape))
            grads = loss.backward()
            results[backend] = (out.dtype, loss.dtype,
                                [out.astype("float64").numpy(),
                                 *(g.astype("float64").numpy() for g in grads.values())])
    (dtype_n, loss_n, values_n), (dtype_c, loss_c, values_c) = results["numpy"], results[device]
    if (dtype_n, loss_n) != (dtype_c, loss_c):
        return False
    tolerance = 16 * EPS[name]
    return all(float(np.linalg.norm(c - n)) <= tolerance * max(float(np.linalg.norm(n)), 1e-30)
               for n, c in zip(values_n, values_c, strict=True))


def _scaler_skips(device: str) -> bool:
    with dp.use_backend(device):
        w = dp.tensor([1.0, 2.0], requires_grad=True)
        opt = dp.optim.Adam([w], lr=0.1)
        scaler = dp.amp.GradScaler(init_scale=8.0)
        scaler.step(opt, scaler.scale((w * w).sum()).backward())
        before, state = w.numpy().copy(), opt.state[w]["exp_avg"].copy()
        stepped = scaler.step(opt, scaler.scale((w * float("inf")).sum()).backward())
        return (not stepped and np.array_equal(w.numpy(), before)
                and bool((opt.state[w]["exp_avg"] == state).all()) and scaler.get_scale() == 4.0)


def time_products(device: str = "cupy", n: int = 4096) -> None:
    backend = dp.get_backend(device)
    rng = np.random.default_rng(5)
    base = rng.standard_normal((n, n)).astype(np.float32)
    print(f"  {n}^3 products on {device}, medians of 10 (TFLOP/s)")
    for name in ["float32", *low_dtypes(device)]:
        a = dp.tensor(base, backend=device).astype(name)
        seconds = []
        for i in range(13):
            backend.synchronize()
            start = time.perf_counter()
            a @ a
            backend.synchronize()
            if i >= 3:
                seconds.append(time.perf_counter() - start)
        print(f"    {name:9}{2 * n**3 / statistics.median(seconds) / 1e12:8.1f}")


def time_autocast_step(device: str = "cupy", rounds: int = 13) -> None:
    backend = dp.get_backend(device)
    workload = WORKLOADS["W1"]
    print(f"  W1 step on {device} (ms): float32, then each 16-bit dtype under autocast")
    for name in ["float32", *low_dtypes(device)]:
        with dp.use_backend(device):
            dp.manual_seed(0)
            model = workload.build()
            x, y = workload.batch()
            opt = dp.optim.Adam(model.parameters(), lr=1e-4)
            scaler = dp.amp.GradScaler(enabled=name == "float16")
            seconds = []
            for i in range(rounds):
                backend.synchronize()
                start = time.perf_counter()
                with dp.autocast(dtype=name if name != "float32" else "bfloat16",
                                 enabled=name != "float32"):
                    loss = F.cross_entropy(model(x), y)
                scaler.step(opt, scaler.scale(loss).backward())
                backend.synchronize()
                if i >= 3:
                    seconds.append(time.perf_counter() - start)
        print(f"    {name:9}{statistics.median(seconds) * 1e3:8.2f}")
