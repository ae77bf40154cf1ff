"""PyTorch's second derivatives of every op-table case: ``second_order.safetensors``.

For each case of ``test_ops.EVERY_CASE`` (the op table: ``cases.py``, ``cases_indexing.py``,
``cases_activations.py``) this draws the inputs (float64, seeded by the case's name), a
cotangent ``w`` and one direction ``v_i`` per input, and records, from PyTorch:

* ``<case>/input.<i>``, ``<case>/cotangent``, ``<case>/direction.<i>``;
* ``<case>/grad.<i>``: ``torch.autograd.grad(sum(f(x) * w), x, create_graph=True)``;
* ``<case>/second.<i>``: the gradient of ``sum_i grad_i . v_i`` with respect to ``x_i``.

``tests/test_second_order_torch.py`` compares dparray's with them. A case's PyTorch form is
``torch_forms.FORMS``'s, shared with the special-value fixtures, but for the few overridden
below (``SECOND_ORDER``): forms PyTorch differentiates twice, or differentiates as dparray
does. A case added to the op table needs a form there, and a run of this script:

    .venv/bin/python tests/data/make_second_order_fixtures.py    # any env with torch

Made with PyTorch 2.13.0 (CPU), float64.
"""

from __future__ import annotations

import math
import pathlib
import sys
import zlib

import numpy as np
import torch
from safetensors.numpy import save_file

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE.parent))

from cases import _SCATTER_INDEX  # noqa: E402
from cases_second_order import fixture_keys  # noqa: E402
from test_ops import EVERY_CASE  # noqa: E402  (the op table, as the tests see it)
from torch_forms import FORMS, form_key  # noqa: E402

T = torch.tensor


def _hardsigmoid(x):
    """``F.hardsigmoid`` as a clamp: PyTorch has no double backward for ``hardsigmoid``."""
    return torch.clamp(x / 6.0 + 0.5, 0.0, 1.0)


def _scatter_extremum_without_self(a, s, reduce):
    """``a.scatter_reduce(0, index, s, reduce, include_self=False)`` with the written positions
    reduced over a base of infinities: PyTorch's backward counts ``a``'s value in the share of
    a written position when it ties with the result, although it took no part (halving the
    entries' gradient there); dparray gives the entries all of it. The case's inputs tie."""
    index = T(_SCATTER_INDEX)
    base = torch.full_like(a, -math.inf if reduce == "amax" else math.inf)
    written = torch.zeros_like(a, dtype=torch.bool).scatter(0, index, True)
    reduced = base.scatter_reduce(0, index, s, reduce, include_self=False)
    return torch.where(written, reduced, a)


def _grouped_attention(q, k, v):
    """``scaled_dot_product_attention(q, k, v, enable_gqa=True)`` in its math form (every
    SDPA kernel need not be twice differentiable): each key and value head serves
    ``q``'s heads in consecutive groups."""
    groups = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    return torch.softmax(scores, dim=-1) @ v


SECOND_ORDER = {
    # PyTorch implements no backward for the operators' forms (``2.5 % b``, ``a // b``); these
    # forms of the same ops have one
    "floor_divide": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "rremainder_scalar": lambda b: torch.remainder(T(2.5, dtype=b.dtype), b),
    "activations.hardsigmoid": _hardsigmoid,
    "scatter_reduce_amax_without_self": lambda a, s: _scatter_extremum_without_self(a, s, "amax"),
    "scatter_reduce_amin_without_self": lambda a, s: _scatter_extremum_without_self(a, s, "amin"),
    "sdpa_grouped_query": _grouped_attention,
}
TORCH = {**FORMS, **SECOND_ORDER}


def record(key, case):
    rng = np.random.default_rng(zlib.crc32(key.encode()))
    arrays = case.inputs(rng)
    inputs = [T(np.array(a, dtype=np.float64, order="C"), requires_grad=True) for a in arrays]
    out = TORCH[form_key(case)](*inputs)
    cotangent = T(rng.standard_normal(tuple(out.shape)))
    directions = [T(rng.standard_normal(a.shape)) for a in arrays]
    grads = torch.autograd.grad((out * cotangent).sum(), inputs, create_graph=True,
                                allow_unused=True)
    grads = [torch.zeros_like(x) if g is None else g for x, g in zip(inputs, grads, strict=True)]
    total = sum((g * v).sum() for g, v in zip(grads, directions, strict=True))
    if total.requires_grad:
        second = torch.autograd.grad(total, inputs, allow_unused=True)
    else:
        second = [None] * len(inputs)
    second = [torch.zeros_like(x) if h is None else h for x, h in zip(inputs, second, strict=True)]
    tensors = {f"{key}/cotangent": _stored(cotangent)}
    for i, (a, v, g, h) in enumerate(zip(arrays, directions, grads, second, strict=True)):
        tensors[f"{key}/input.{i}"] = _stored(a)
        tensors[f"{key}/direction.{i}"] = _stored(v)
        tensors[f"{key}/grad.{i}"] = _stored(g)
        tensors[f"{key}/second.{i}"] = _stored(h)
    return tensors


def _stored(value):
    """A float64 C-ordered copy (safetensors writes an array's memory as it lies, so a
    broadcast or strided view must become a plain array first); 0-d stays 0-d."""
    if isinstance(value, torch.Tensor):
        value = value.detach().numpy(force=True)
    return np.array(value, dtype=np.float64, order="C", copy=True)


def main() -> None:
    torch.set_default_dtype(torch.float64)
    names = fixture_keys(EVERY_CASE)
    missing = [form_key(case) for case in EVERY_CASE if form_key(case) not in TORCH]
    if missing:
        raise SystemExit(f"no PyTorch form for: {', '.join(missing)}")
    tensors = {}
    failed = []
    for key, case in zip(names, EVERY_CASE, strict=True):
        try:
            tensors.update(record(key, case))
        except RuntimeError as error:
            failed.append(f"{key}: {error}")
    if failed:
        raise SystemExit("PyTorch could not differentiate twice:\n" + "\n".join(failed))
    save_file(tensors, str(HERE / "second_order.safetensors"),
              metadata={"torch": torch.__version__})
    print(f"wrote {len(names)} cases to {HERE / 'second_order.safetensors'}")


if __name__ == "__main__":
    main()
