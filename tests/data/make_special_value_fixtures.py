"""PyTorch's values and gradients of every differentiable op of the op table on special values:
``special_values.safetensors``.

    .venv/bin/python tests/data/make_special_value_fixtures.py   # the dev venv, with torch

For each case of ``tests/cases.py`` and ``tests/cases_activations.py`` (their names, shapes and
domains; this script needs dparray importable for them) and each variant of its inputs in
``tests/special_values.py`` -- one NaN, infinity, -0.0, 1e308 or subnormal among ordinary
values, every element special, a 0-size axis -- the case's PyTorch form (``torch_forms.FORMS``,
shared with the second-order fixtures) is called in float64 and its output and the gradients
of ``sum(output * cotangent)`` are recorded; a call or a backward PyTorch refuses is recorded
as refused.

The file holds the cases' ordinary inputs (``base``), and every output and gradient, one after
another (``values``), all float64. Its metadata ``special_cases`` is JSON: for each case, its input
shapes and its variants, each ``[label, output]`` with ``output`` either ``[shape, offset,
[gradient offset or null per input]]`` or the name of PyTorch's exception. The cotangent of an
output of ``n`` elements is ``cotangent(n)`` of ``tests/special_values.py``.
Made with PyTorch 2.13.0 (CPU).
"""

from __future__ import annotations

import json
import os
import pathlib
import sys
import warnings

import numpy as np
import torch
from safetensors.numpy import save_file

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE.parent))  # tests/: the op table and the shared special values

from cases import ALL_CASES  # noqa: E402
from cases_activations import ACTIVATIONS  # noqa: E402
from special_values import cotangent, inputs, labels  # noqa: E402
from torch_forms import FORMS, form_key  # noqa: E402


def cases():
    """Every case of ``cases.py`` and ``cases_activations.py``, by its key in ``FORMS`` (and in
    the fixture): an activation's is ``activations.<name>``."""
    return [(form_key(case), case) for case in [*ALL_CASES, *ACTIVATIONS]]


def record(function, arrays, values):
    """The output's shape and offset and each input's gradient offset in ``values`` (None
    where PyTorch gives no gradient), or the name of the exception PyTorch raised."""
    tensors = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    try:
        out = function(*tensors)
    except (RuntimeError, IndexError, ValueError, TypeError) as error:
        return type(error).__name__
    result = [list(out.shape), len(values), []]
    values.extend(out.detach().reshape(-1).tolist())
    weight = torch.tensor(cotangent(out.numel()), dtype=torch.float64).reshape(out.shape)
    try:
        grads = torch.autograd.grad(out, tensors, grad_outputs=weight, allow_unused=True)
    except RuntimeError:  # no derivative (floor_divide)
        grads = [None] * len(tensors)
    for g in grads:
        if g is None:
            result[2].append(None)
        else:
            result[2].append(len(values))
            values.extend(g.reshape(-1).tolist())
    return result


def main() -> None:
    missing = [key for key, _ in cases() if key not in FORMS]
    if missing:
        raise SystemExit(f"no PyTorch equivalent for {missing}")
    rng = np.random.default_rng(2113)
    described, base, values = {}, [], []
    for key, case in cases():
        arrays = case.inputs(rng)
        offsets = []
        for a in arrays:
            offsets.append(len(base))
            base.extend(np.asarray(a, dtype=np.float64).reshape(-1).tolist())
        variants = []
        for label in labels([tuple(a.shape) for a in arrays]):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                variants.append([label, record(FORMS[key], inputs(arrays, label),
                                               values)])
        described[key] = {"shapes": [list(a.shape) for a in arrays], "base": offsets,
                          "variants": variants}
    path = HERE / "special_values.safetensors"
    save_file({"base": np.array(base, dtype=np.float64),
               "values": np.array(values, dtype=np.float64)}, path,
              metadata={"special_cases": json.dumps(described, separators=(",", ":")),
                        "torch": torch.__version__})
    os.chmod(path, 0o644)
    count = sum(len(c["variants"]) for c in described.values())
    print(f"{path.name}: {len(described)} ops, {count} calls, {len(values)} values")


if __name__ == "__main__":
    main()
