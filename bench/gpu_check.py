"""One-shot GPU check: CuPy against NumPy, and DataParallel on CUDA streams.

    python bench/gpu_check.py        # on a machine with a CUDA device and CuPy installed

1. Correctness: a small MLP's output and gradients on CuPy equal NumPy's (float64), plain and
   under DataParallel with 4 workers, and the chunks run on 4 distinct streams; every CUDA
   kernel of the kernel table (backends/_cupy_kernels.py) gives NumPy's values and gradients
   in float64 and float32, and so do the references it falls back to; the optimizers' update
   kernels give CuPy's references bit for bit; float16/bfloat16 products accumulate in float32
   through cuBLAS, and autocast and the GradScaler on CuPy give NumPy's results
   (``bench/gpu_low_precision.py``).
2. Speed: W1 (MLP 784-1024-1024-10, batch 2048, float32) and W4 (convnet, batch 256), one Adam
   step, unwrapped and under DataParallel with 1, 2 and 4 workers; medians of interleaved runs,
   synchronising the device after every step. Prints a table. Exits 1 if a check fails, 2 if
   there is no GPU.
"""

from __future__ import annotations

import contextlib
import copy
import statistics
import sys
import time

import numpy as np

import dparray as dp
from dparray import nn
from dparray.cli.workloads import WORKLOADS, dparray_step
from dparray.nn import functional as F

try:  # run as a script: bench/ is on the path; imported as bench.gpu_check: a package
    import gpu_low_precision
except ImportError:  # pragma: no cover - imported as bench.gpu_check
    from bench import gpu_low_precision


def check_correctness() -> bool:
    import cupy

    dp.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16, dtype="float64"), nn.Tanh(),
                          nn.Linear(16, 3, dtype="float64"))
    x = np.random.default_rng(0).standard_normal((32, 8))
    expected = (model(dp.tensor(x)) ** 2).sum().backward()
    expected = [g.numpy() for g in expected.values()]
    model.to("cupy")
    streams = []
    probe = model[1].forward

    def recording(t):
        streams.append(cupy.cuda.get_current_stream().ptr)
        return probe(t)

    model[1].forward = recording
    ok = True
    for name, wrapped in (("plain", model),
                          ("DataParallel(4)", dp.DataParallel(model, 4, execution="threads"))):
        streams.clear()
        grads = (wrapped(dp.tensor(x, backend="cupy")) ** 2).sum().backward()
        same = all(np.allclose(g.numpy(), e, rtol=1e-10, atol=1e-12)
                   for g, e in zip(grads.values(), expected, strict=True))
        distinct = len(set(streams))
        print(f"  {name:16} gradients equal NumPy's: {same}   distinct streams: {distinct}")
        ok &= same
    ok &= len(set(streams)) == 4
    return ok


KERNEL_CASES = {
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b), [(37, 300), (300,),
                                                                            (300,)]),
    "layer_norm_2d_shape": (lambda x, w, b: F.layer_norm(x, (3, 5), w, b),
                            [(4, 3, 5), (3, 5), (3, 5)]),
    "softmax": (lambda x: F.softmax(x, dim=-1), [(33, 1000)]),
    "log_softmax": (lambda x: F.log_softmax(x, dim=-1), [(5, 7, 3)]),
    "softmax_axis0": (lambda x: F.softmax(x, dim=0), [(6, 4)]),
    "gelu": (lambda x: F.gelu(x), [(1001,)]),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), [(17, 9)]),
    "cross_entropy": (lambda x: F.cross_entropy(x, dp.tensor(np.arange(64) % 10,
                                                              backend=x.backend),
                                                dp.ones(10, dtype=x.dtype, backend=x.backend)
                                                * 0.5, label_smoothing=0.1), [(64, 10)]),
}


def check_kernels() -> bool:
    """Each CUDA kernel (and the reference it falls back to) against NumPy."""
    from dparray.kernels import reference_only

    ok = True
    rng = np.random.default_rng(1)
    for name, (function, shapes) in KERNEL_CASES.items():
        for dtype, rtol in (("float64", 1e-10), ("float32", 2e-5)):
            arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
            results = {}
            for label, backend in (("numpy", "numpy"), ("cupy", "cupy"),
                                   ("cupy reference", "cupy")):
                inputs = [dp.tensor(a, requires_grad=True, backend=backend) for a in arrays]
                reference = label == "cupy reference"
                with reference_only() if reference else contextlib.nullcontext():
                    out = function(*inputs)
                    grads = (out * out).sum().backward()
                results[label] = [out.numpy(), *(grads[t].numpy() for t in inputs)]
            for label in ("cupy", "cupy reference"):
                same = all(np.allclose(a, b, rtol=rtol, atol=rtol)
                           for a, b in zip(results[label], results["numpy"], strict=True))
                ok &= same
                if not same:
                    print(f"  {name} {dtype} {label}: differs from NumPy")
    print(f"  {len(KERNEL_CASES)} kernels, float64 and float32, against NumPy: "
          f"{'equal' if ok else 'DIFFERENT'}")
    return ok


UPDATES = {
    "adam": lambda ps: dp.optim.Adam(ps, lr=0.01, betas=(0.8, 0.95), eps=1e-6),
    "adam_l2": lambda ps: dp.optim.Adam(ps, lr=0.01, weight_decay=0.1),
    "adamw": lambda ps: dp.optim.AdamW(ps, lr=0.01, weight_decay=0.05),
    "sgd_momentum": lambda ps: dp.optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.1,
                                            weight_decay=0.01),
    "sgd_nesterov": lambda ps: dp.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
}


def check_updates() -> bool:
    """Each optimizer's CUDA update kernel against CuPy's reference (bit for bit) and NumPy's
    (to rounding), three steps on parameters of several shapes."""
    from dparray.kernels import reference_only

    ok = True
    rng = np.random.default_rng(2)
    for name, make in UPDATES.items():
        for dtype in ("float64", "float32"):
            shapes = ((3, 4), (5,), (), (300, 301))
            values = [rng.standard_normal(s).astype(dtype) for s in shapes]
            steps = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(3)]
            results = {}
            for label, backend in (("numpy", "numpy"), ("cupy", "cupy"),
                                   ("cupy reference", "cupy")):
                params = [dp.tensor(v, requires_grad=True, backend=backend) for v in values]
                opt = make(params)
                with reference_only() if label == "cupy reference" else contextlib.nullcontext():
                    for grads in steps:
                        opt.step(dp.Gradients({p: dp.tensor(g, backend=backend)
                                               for p, g in zip(params, grads, strict=True)}))
                results[label] = [p.numpy() for p in params]
            exact = all(np.array_equal(a, b) for a, b in
                        zip(results["cupy"], results["cupy reference"], strict=True))
            close = all(np.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in
                        zip(results["cupy"], results["numpy"], strict=True))
            ok &= exact and close
            if not (exact and close):
                print(f"  {name} {dtype}: bit for bit CuPy's reference: {exact}, "
                      f"NumPy's to rounding: {close}")
    print(f"  {len(UPDATES)} optimizer updates, float64 and float32: "
          f"{'equal' if ok else 'DIFFERENT'}")
    return ok


def time_workloads() -> None:
    backend = dp.get_backend("cupy")
    print(f"  {'workload':10}{'unwrapped':>12}{'DP 1':>10}{'DP 2':>10}{'DP 4':>10}   (ms)")
    for name in ("W1", "W4"):
        workload = WORKLOADS[name]
        with dp.use_backend("cupy"):
            dp.manual_seed(0)
            module = workload.build()
            x, y = workload.batch()
            steps = {"unwrapped": dparray_step(workload, copy.deepcopy(module), x, y)}
            for workers in (1, 2, 4):
                wrapped = dp.DataParallel(copy.deepcopy(module), workers, execution="threads")
                steps[f"dp{workers}"] = dparray_step(workload, wrapped, x, y)
            times = {key: [] for key in steps}
            for round_number in range(13):
                for key, step in steps.items():
                    backend.synchronize()
                    start = time.perf_counter()
                    step()
                    backend.synchronize()
                    if round_number >= 3:
                        times[key].append(time.perf_counter() - start)
        cells = "".join(f"{statistics.median(times[k]) * 1e3:10.2f}"
                        for k in ("dp1", "dp2", "dp4"))
        print(f"  {name:10}{statistics.median(times['unwrapped']) * 1e3:12.2f}{cells}")


def main() -> int:
    if "cupy" not in dp.available_backends():
        print("no CUDA device (or no CuPy): nothing to check")
        return 2
    print("correctness")
    ok = check_correctness()
    ok &= check_kernels()
    ok &= check_updates()
    print("mixed precision")
    ok &= gpu_low_precision.check()
    print("speed: one Adam step")
    time_workloads()
    gpu_low_precision.time_products()
    gpu_low_precision.time_autocast_step()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
