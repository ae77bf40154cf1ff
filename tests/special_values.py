"""The special-value inputs of ``tests/data/special_values.safetensors``, shared by the script
that records PyTorch's results (``tests/data/make_special_value_fixtures.py``) and the test that
replays them (``tests/test_special_values.py``).

Each op of the op table (``cases.py``, ``cases_activations.py``) is recorded on its ordinary
inputs (``base``, drawn from the case's domain) and on variants of them, each named by a label:

* ``"<name>@<i>"``: input ``i`` with the value ``ONE_AT_A_TIME[name]`` at its middle element
  (one NaN, infinity, -0.0, 1e308 or subnormal among ordinary values: what a reduction, a
  scan or a softmax meets in practice);
* ``"specials<p>"``: every element of every input special, from ``SPECIALS`` in turn, input
  ``i`` starting ``p + 5 * i`` places on, so that the inputs of a binary op meet in many pairs
  (inf - inf, 0 * inf, -0.0 / -inf, ...);
* ``"empty<k>"``: every input sliced to size 0 along its ``k``-th axis from the end (where it
  has one longer than 1; size-1 axes still broadcast).
"""

from __future__ import annotations

import math

import numpy as np

INF, NAN = math.inf, math.nan
TINY = 5e-324  # the smallest subnormal
SPECIALS = (0.0, -0.0, INF, -INF, NAN, 1e308, -1e308, TINY, -TINY, 1e-310, 1.0, -2.5, 0.5)
ONE_AT_A_TIME = {"nan": NAN, "inf": INF, "-inf": -INF, "-0": -0.0, "1e308": 1e308,
                 "-1e308": -1e308, "subnormal": TINY}
PHASES = (0, 3)


def cotangent(size: int) -> list[float]:
    """The weights of an output's ``size`` elements in the gradient recorded: that of
    ``sum(output * cotangent)``, finite and of either sign."""
    return [(1.0, -0.5, 2.0, 0.25, -1.5)[j % 5] for j in range(size)]


def labels(shapes: list[tuple[int, ...]]) -> list[str]:
    """Every variant recorded for an op whose inputs have ``shapes``."""
    found = ["base"]
    found += [f"{name}@{i}" for i in range(len(shapes)) for name in ONE_AT_A_TIME
              if math.prod(shapes[i])]
    found += [f"specials{p}" for p in PHASES]
    found += [f"empty{k}" for k in range(1, max((len(s) for s in shapes), default=0) + 1)
              if any(len(s) >= k and s[-k] > 1 for s in shapes)]
    return found


def inputs(base: list[np.ndarray], label: str) -> list[np.ndarray]:
    """The inputs of variant ``label`` (float64 arrays), made from the op's ``base`` inputs."""
    arrays = [np.array(a, dtype=np.float64, order="C") for a in base]
    if label == "base":
        return arrays
    if label.startswith("specials"):
        phase = int(label.removeprefix("specials"))
        for i, a in enumerate(arrays):
            flat = a.reshape(-1)
            for j in range(flat.size):
                flat[j] = SPECIALS[(phase + 5 * i + j) % len(SPECIALS)]
        return arrays
    if label.startswith("empty"):
        k = int(label.removeprefix("empty"))
        none = np.zeros(0, dtype=np.int64)
        return [np.take(a, none, axis=a.ndim - k) if a.ndim >= k and a.shape[-k] > 1 else a
                for a in arrays]
    name, i = label.split("@")
    flat = arrays[int(i)].reshape(-1)
    flat[flat.size // 2] = ONE_AT_A_TIME[name]
    return arrays
