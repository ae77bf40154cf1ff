"""Make ``torch_net.safetensors`` (weights) and ``torch_net_io.safetensors`` (an input and
PyTorch's output for it), so the suite can check PyTorch compatibility without PyTorch.

    python tests/data/make_torch_fixture.py     # needs torch, numpy and safetensors

Made with PyTorch 2.13.0 (CPU). The model uses every layer whose parameter layout matters.
"""

import pathlib

import torch
from safetensors.torch import save_file

HERE = pathlib.Path(__file__).parent


def build() -> torch.nn.Sequential:
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 2, 3, padding=1), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
        torch.nn.Linear(8, 6), torch.nn.BatchNorm1d(6), torch.nn.GELU(), torch.nn.LayerNorm(6),
        torch.nn.Linear(6, 3),
    )


def main() -> None:
    torch.manual_seed(0)
    model = build()
    for _ in range(3):  # move the running statistics away from their initial values
        model(torch.randn(16, 1, 4, 4))
    model.eval()
    x = torch.randn(5, 1, 4, 4)
    with torch.no_grad():
        y = model(x)
    save_file(model.state_dict(), HERE / "torch_net.safetensors")
    save_file({"input": x, "output": y}, HERE / "torch_net_io.safetensors")


if __name__ == "__main__":
    main()
