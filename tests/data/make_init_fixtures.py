"""PyTorch references for ``nn.init``: ``init.safetensors``.

    ../torch-venv/bin/python tests/data/make_init_fixtures.py   # any environment with torch

Random initialisers cannot match PyTorch sample for sample (the generators differ), so each
case records what PyTorch's samples look like: ``<case>/stats`` holds the mean, standard
deviation, minimum and maximum of one large draw (float64), which the test compares with
dparray's draw of the same call within sampling error. Deterministic ones (``constant_``,
``zeros_``, ``ones_``, ``eye_``) record the tensor itself as ``<case>/value``.

The metadata ``initialisers`` (JSON) gives each case's initialiser, shape and keyword arguments;
``gains`` lists ``[nonlinearity, param, calculate_gain(nonlinearity, param)]``. Made with
PyTorch 2.13.0 (CPU).
"""

from __future__ import annotations

import json
import math
import pathlib
from typing import Any

import torch
from safetensors.torch import save_file

HERE = pathlib.Path(__file__).parent
CONV = (256, 64, 3, 3)

CASES: list[tuple[str, str, tuple[int, ...], dict[str, Any]]] = [
    ("uniform", "uniform_", (512, 256), {"a": -0.3, "b": 0.7}),
    ("uniform_defaults", "uniform_", (512, 256), {}),
    ("normal", "normal_", (512, 256), {"mean": 0.5, "std": 2.0}),
    ("trunc_normal", "trunc_normal_", (512, 256), {"mean": 0.2, "std": 1.5, "a": -1.0, "b": 2.5}),
    ("trunc_normal_defaults", "trunc_normal_", (512, 256), {}),
    ("trunc_normal_narrow", "trunc_normal_", (512, 256), {"std": 0.02, "a": -0.04, "b": 0.04}),
    ("xavier_uniform_conv_gain", "xavier_uniform_", CONV, {"gain": 2.0}),
    ("xavier_normal", "xavier_normal_", (300, 200), {"gain": 0.5}),
    ("kaiming_uniform_defaults", "kaiming_uniform_", CONV, {}),
    ("kaiming_uniform_linear_default", "kaiming_uniform_", (400, 300), {"a": math.sqrt(5)}),
    ("kaiming_uniform_fan_out_relu", "kaiming_uniform_", CONV,
     {"mode": "fan_out", "nonlinearity": "relu"}),
    ("kaiming_normal_fan_out_relu", "kaiming_normal_", CONV,
     {"mode": "fan_out", "nonlinearity": "relu"}),
    ("kaiming_normal_leaky", "kaiming_normal_", (400, 300), {"a": 0.2}),
    ("kaiming_normal_tanh", "kaiming_normal_", (400, 300), {"nonlinearity": "tanh"}),
    ("orthogonal_tall", "orthogonal_", (300, 200), {}),
    ("orthogonal_wide_gain", "orthogonal_", (64, 300), {"gain": 2.0}),
    ("orthogonal_conv", "orthogonal_", (50, 3, 4, 4), {}),
    ("constant", "constant_", (3, 4), {"val": 0.25}),
    ("zeros", "zeros_", (2, 3), {}),
    ("ones", "ones_", (4,), {}),
    ("eye_wide", "eye_", (3, 5), {}),
    ("eye_tall", "eye_", (4, 2), {}),
]

GAINS: list[tuple[str, Any]] = [
    *((name, None) for name in (
        "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
        "conv_transpose3d", "sigmoid", "tanh", "relu", "leaky_relu", "selu")),
    ("leaky_relu", 0), ("leaky_relu", 0.2), ("leaky_relu", 1), ("leaky_relu", math.sqrt(5)),
    ("relu", 0.5),  # the parameter only matters for leaky_relu
]


def main() -> pathlib.Path:
    torch.manual_seed(0)
    tensors: dict[str, torch.Tensor] = {}
    described = {}
    for name, function, shape, kwargs in CASES:
        value = getattr(torch.nn.init, function)(torch.empty(shape, dtype=torch.float64),
                                                 **kwargs)
        if function in ("constant_", "zeros_", "ones_", "eye_"):
            tensors[f"{name}/value"] = value
        else:
            tensors[f"{name}/stats"] = torch.stack([value.mean(), value.std(), value.min(),
                                                    value.max()])
        described[name] = {"function": function, "shape": shape, "kwargs": kwargs}
    gains = [[name, param, torch.nn.init.calculate_gain(name, param)] for name, param in GAINS]
    path = HERE / "init.safetensors"
    save_file({k: v.contiguous() for k, v in tensors.items()}, path,
              metadata={"initialisers": json.dumps(described), "gains": json.dumps(gains),
                        "torch": torch.__version__})
    return path


if __name__ == "__main__":
    print(main())
