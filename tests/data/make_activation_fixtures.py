"""PyTorch references for the activation layers (``activations.safetensors``) and for
``Embedding(padding_idx=)`` and ``Unflatten`` (``small_layers.safetensors``).

    ../torch-venv/bin/python tests/data/make_activation_fixtures.py   # any environment with torch

Every activation is recorded twice: on random inputs (almost surely away from its kinks) and
on ``KINKS``, which holds every point where one of them changes formula (0, the bounds of
Hardtanh and ReLU6, -3 and 3, Softplus's thresholds) and large inputs of both signs; so the
gradients at the kinks are PyTorch's. Made with PyTorch 2.13.0 (CPU), float64.
"""

import torch
from torch_fixture_writer import TorchCase, randomized, write

nn = torch.nn

KINKS = [-800.0, -30.0, -7.0, -3.0, -2.0, -1.0, -0.5, -0.1, 0.0, 0.1, 0.5, 1.0, 2.0, 3.0, 5.0,
         6.0, 7.0, 10.0, 20.0, 30.0, 800.0]

# (name, layer, constructor arguments): the same arguments build the PyTorch and dparray layers
ACTIVATIONS = [
    ("leaky_relu", "LeakyReLU", {}),
    ("leaky_relu_slope", "LeakyReLU", {"negative_slope": 0.2}),
    ("elu", "ELU", {}),
    ("elu_alpha", "ELU", {"alpha": 0.5}),
    ("selu", "SELU", {}),
    ("celu", "CELU", {}),
    ("celu_alpha", "CELU", {"alpha": 0.5}),
    ("silu", "SiLU", {}),
    ("mish", "Mish", {}),
    ("hardswish", "Hardswish", {}),
    ("hardsigmoid", "Hardsigmoid", {}),
    ("hardtanh", "Hardtanh", {}),
    ("hardtanh_bounds", "Hardtanh", {"min_val": -0.5, "max_val": 2.0}),
    ("relu6", "ReLU6", {}),
    ("softplus", "Softplus", {}),
    ("softplus_beta_threshold", "Softplus", {"beta": 2.0, "threshold": 10.0}),
    ("softsign", "Softsign", {}),
    ("logsigmoid", "LogSigmoid", {}),
]


def activation_cases() -> list[TorchCase]:
    torch.manual_seed(0)
    cases = []
    for name, layer, kwargs in ACTIVATIONS:
        module = getattr(nn, layer)
        cases += [
            TorchCase(name, layer, kwargs, module(**kwargs), [torch.randn(2, 3, 4) * 3]),
            TorchCase(f"{name}_kinks", layer, kwargs, module(**kwargs), [torch.tensor(KINKS)]),
        ]
    channels = torch.randn(2, 3, 4) * 2
    channels[0, :, 0] = 0.0  # PReLU's kink, for the input's and the weight's gradients
    cases += [
        TorchCase("prelu", "PReLU", {}, nn.PReLU(), [torch.randn(4, 5) * 2]),
        TorchCase("prelu_kinks", "PReLU", {"init": 0.1}, nn.PReLU(init=0.1),
                  [torch.tensor(KINKS)]),
        TorchCase("prelu_channels", "PReLU", {"num_parameters": 3, "init": -0.3},
                  randomized(nn.PReLU(3, init=-0.3)), [channels]),
        TorchCase("prelu_one_channel_3d", "PReLU", {"num_parameters": 1},
                  nn.PReLU(1), [channels]),
        TorchCase("prelu_scalar", "PReLU", {}, nn.PReLU(), [torch.tensor(-1.5)]),
        TorchCase("softmin", "Softmin", {"dim": 1}, nn.Softmin(dim=1), [torch.randn(2, 3, 4)]),
        TorchCase("softmin_last", "Softmin", {"dim": -1}, nn.Softmin(dim=-1),
                  [torch.randn(3, 5) * 4]),
    ]
    return cases


def small_layer_cases() -> list[TorchCase]:
    torch.manual_seed(1)
    indices = torch.tensor([[0, 2, 2, 5], [2, 1, 4, 0]])
    return [
        TorchCase("embedding_padding", "Embedding",
                  {"num_embeddings": 6, "embedding_dim": 3, "padding_idx": 2},
                  nn.Embedding(6, 3, padding_idx=2), [indices]),
        TorchCase("embedding_padding_negative", "Embedding",
                  {"num_embeddings": 6, "embedding_dim": 3, "padding_idx": -1},
                  randomized(nn.Embedding(6, 3, padding_idx=-1)), [indices]),
        TorchCase("unflatten", "Unflatten", {"dim": 1, "unflattened_size": [2, 3]},
                  nn.Unflatten(1, (2, 3)), [torch.randn(4, 6, 2)]),
        TorchCase("unflatten_inferred_last", "Unflatten",
                  {"dim": -1, "unflattened_size": [-1, 2]}, nn.Unflatten(-1, (-1, 2)),
                  [torch.randn(3, 8)]),
    ]


if __name__ == "__main__":
    write("activations", activation_cases())
    write("small_layers", small_layer_cases())
