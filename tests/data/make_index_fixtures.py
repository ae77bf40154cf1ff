"""PyTorch's results for a generated table of indexing patterns: ``index_patterns.safetensors``.

    ../torch-venv/bin/python tests/data/make_index_fixtures.py   # any environment with torch

Every key of ``tests/index_patterns.py`` -- ints, slices, ``None``, ``...``, integer tensors of
0, 1 and 2 dimensions, lists and bool masks, mixed -- is applied to ``arange(n).reshape(shape)``
in float64, so each output value is the flat position it was read from: the values say exactly
which element went where, and the gradient follows from them (each element receives the
cotangents of the outputs that read it). Keys PyTorch refuses are recorded with the type of its
exception. ``tests/test_index_patterns.py`` replays the table.

The file holds one int16 tensor, ``values``: every output's values, one after another. Its
metadata ``index_cases`` is a JSON list with one entry per key of ``index_patterns.keys()``, in
order: ``[shape, offset]`` (the output's shape; its values start at ``values[offset]``) or the
name of the exception PyTorch raised. Made with PyTorch 2.13.0 (CPU).
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import sys
import warnings

import torch
from safetensors.torch import save_file

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE.parent))  # tests/, for the patterns shared with the test

from index_patterns import concrete, keys  # noqa: E402


def _tensor(data, dtype):
    return torch.tensor(data, dtype=torch.bool if dtype == "bool" else torch.int64)


def main() -> None:
    cases, values = [], []
    for shape, kinds in keys():
        x = torch.arange(math.prod(shape), dtype=torch.float64).reshape(shape)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = x[concrete(kinds, shape, _tensor)]
        except (IndexError, RuntimeError, TypeError, ValueError) as error:
            cases.append(type(error).__name__)
            continue
        cases.append([list(out.shape), len(values)])
        values += [int(v) for v in out.reshape(-1).tolist()]
    path = HERE / "index_patterns.safetensors"
    save_file({"values": torch.tensor(values, dtype=torch.int16)}, path,
              metadata={"index_cases": json.dumps(cases, separators=(",", ":")),
                        "torch": torch.__version__})
    os.chmod(path, 0o644)
    refused = sum(isinstance(case, str) for case in cases)
    print(f"{path.name}: {len(cases)} keys ({refused} refused), {len(values)} values")


if __name__ == "__main__":
    main()
