"""``python -m dparray``: ``info`` about backends, and a small ``demo`` of training.

The demo fits a two-layer tanh network to a noisy sine with plain gradient descent written by
hand -- a tensor, ops, ``backward()`` and ``Gradients`` end to end -- and prints the loss as it
falls. (The data-parallel digits demo replaces it once ``nn`` and ``DataParallel`` land.)
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import dparray as dp


def info() -> int:
    print(f"dparray {dp.__version__}")
    available = set(dp.available_backends())
    for name in dp.registered_backends():
        if name in available:
            print(f"  {name:<18} available")
            continue
        try:
            dp.get_backend(name)
        except (dp.BackendUnavailableError, TypeError) as error:
            print(f"  {name:<18} unavailable: {error}")
    return 0


def demo(backend: str, steps: int, seed: int) -> int:
    with dp.use_backend(backend):
        dp.manual_seed(seed)
        x = dp.arange(-3.0, 3.0, 0.05).reshape(-1, 1)
        y = _sine(x)
        y = y + 0.05 * dp.randn(*y.shape)
        hidden = 32
        w1 = (dp.randn(1, hidden) * 1.0).requires_grad_()
        b1 = dp.zeros(hidden, requires_grad=True)
        w2 = (dp.randn(hidden, 1) / math.sqrt(hidden)).requires_grad_()
        b2 = dp.zeros(1, requires_grad=True)
        params = [w1, b1, w2, b2]
        lr = 0.05
        print(f"fitting a noisy sine with a 1-{hidden}-1 tanh network on backend {backend!r}")
        start = time.perf_counter()
        first = last = None
        for step in range(steps + 1):
            prediction = (x @ params[0] + params[1]).tanh() @ params[2] + params[3]
            loss = ((prediction - y) ** 2).mean()
            grads = loss.backward()
            with dp.no_grad():
                params = [(p - lr * grads[p]).requires_grad_() for p in params]
            last = loss.item()
            first = last if first is None else first
            if step % max(1, steps // 10) == 0:
                print(f"  step {step:4d}  loss {last:.5f}")
        elapsed = time.perf_counter() - start
        print(f"loss fell from {first:.4f} to {last:.4f} in {steps} steps ({elapsed:.2f} s)")
        return 0 if last < first else 1


def _sine(x: dp.Tensor) -> dp.Tensor:
    """sin(x) by its Taylor series (the op set has no sin): on [-3, 3] eight terms are exact
    far below the demo's noise level."""
    total, term = x, x
    for k in range(1, 8):
        term = term * (-(x * x)) / ((2 * k) * (2 * k + 1))
        total = total + term
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dparray", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("info", help="version and backends")
    run = commands.add_parser("demo", help="train a tiny network, printing the loss")
    run.add_argument("--backend", default="numpy", help="backend name (default: numpy)")
    run.add_argument("--steps", type=int, default=2000, help="gradient steps (default: 2000)")
    run.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    args = parser.parse_args(argv)
    try:
        if args.command == "info":
            return info()
        return demo(args.backend, args.steps, args.seed)
    except (ValueError, RuntimeError) as error:
        print(f"dparray: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
