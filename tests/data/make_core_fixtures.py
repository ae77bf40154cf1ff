"""PyTorch references for the layers that existed before the fused ops: ``core.safetensors``.

    ../torch-venv/bin/python tests/data/make_core_fixtures.py   # any environment with torch

Made with PyTorch 2.13.0 (CPU), float64.
"""

import torch
from torch_fixture_writer import TorchCase, randomized, with_statistics, write

nn = torch.nn


def cases() -> list[TorchCase]:
    torch.manual_seed(0)
    randn = torch.randn
    return [
        TorchCase("linear", "Linear", {"in_features": 5, "out_features": 3}, nn.Linear(5, 3),
                  [randn(4, 5)]),
        TorchCase("linear_3d_no_bias", "Linear", {"in_features": 5, "out_features": 2,
                                                  "bias": False},
                  nn.Linear(5, 2, bias=False), [randn(2, 3, 5)]),
        TorchCase("layer_norm", "LayerNorm", {"normalized_shape": 6},
                  randomized(nn.LayerNorm(6)), [randn(4, 6)]),
        TorchCase("layer_norm_2d_shape", "LayerNorm", {"normalized_shape": [3, 4]},
                  randomized(nn.LayerNorm([3, 4])), [randn(2, 3, 4)]),
        TorchCase("batch_norm_train", "BatchNorm1d", {"num_features": 3},
                  randomized(nn.BatchNorm1d(3)), [randn(6, 3)], training=True),
        TorchCase("batch_norm_3d_train", "BatchNorm1d", {"num_features": 3},
                  randomized(nn.BatchNorm1d(3)), [randn(4, 3, 5)], training=True),
        TorchCase("batch_norm_eval", "BatchNorm1d", {"num_features": 3},
                  with_statistics(nn.BatchNorm1d(3)), [randn(6, 3)]),
        TorchCase("gelu", "GELU", {}, nn.GELU(), [randn(3, 7) * 3]),
        TorchCase("gelu_tanh", "GELU", {"approximate": "tanh"}, nn.GELU(approximate="tanh"),
                  [randn(3, 7) * 3]),
        TorchCase("softmax", "Softmax", {"dim": 1}, nn.Softmax(dim=1), [randn(3, 5)]),
        TorchCase("log_softmax", "LogSoftmax", {"dim": -1}, nn.LogSoftmax(dim=-1),
                  [randn(2, 3, 5)]),
        TorchCase("conv2d", "Conv2d", {"in_channels": 2, "out_channels": 3, "kernel_size": 3},
                  nn.Conv2d(2, 3, 3), [randn(2, 2, 6, 7)]),
        TorchCase("conv2d_stride_padding", "Conv2d",
                  {"in_channels": 2, "out_channels": 4, "kernel_size": [3, 2], "stride": 2,
                   "padding": [1, 2], "dilation": [1, 2]},
                  nn.Conv2d(2, 4, (3, 2), stride=2, padding=(1, 2), dilation=(1, 2)),
                  [randn(2, 2, 7, 8)]),
        TorchCase("max_pool2d", "MaxPool2d", {"kernel_size": 2}, nn.MaxPool2d(2),
                  [randn(2, 3, 6, 5)]),
        TorchCase("max_pool2d_stride_padding", "MaxPool2d",
                  {"kernel_size": 3, "stride": 2, "padding": 1},
                  nn.MaxPool2d(3, stride=2, padding=1), [randn(2, 2, 7, 6)]),
        TorchCase("avg_pool2d", "AvgPool2d", {"kernel_size": [2, 3], "padding": 1},
                  nn.AvgPool2d((2, 3), padding=1), [randn(2, 2, 6, 7)]),
        TorchCase("batch_norm2d_train", "BatchNorm2d", {"num_features": 3, "momentum": None},
                  randomized(nn.BatchNorm2d(3, momentum=None)), [randn(4, 3, 2, 5)],
                  training=True),
        TorchCase("batch_norm2d_eval_no_affine", "BatchNorm2d",
                  {"num_features": 2, "affine": False},
                  with_statistics(nn.BatchNorm2d(2, affine=False)), [randn(3, 2, 4, 4)]),
        TorchCase("batch_norm_untracked_eval", "BatchNorm1d",
                  {"num_features": 3, "track_running_stats": False},
                  randomized(nn.BatchNorm1d(3, track_running_stats=False)), [randn(5, 3)]),
        TorchCase("conv2d_groups_dilation", "Conv2d",
                  {"in_channels": 4, "out_channels": 6, "kernel_size": 3, "groups": 2,
                   "dilation": 2, "padding": 2},
                  nn.Conv2d(4, 6, 3, groups=2, dilation=2, padding=2), [randn(2, 4, 7, 6)]),
        TorchCase("conv2d_depthwise_no_bias", "Conv2d",
                  {"in_channels": 3, "out_channels": 3, "kernel_size": [2, 3], "groups": 3,
                   "bias": False, "stride": [1, 2]},
                  nn.Conv2d(3, 3, (2, 3), groups=3, bias=False, stride=(1, 2)),
                  [randn(2, 3, 5, 7)]),
        TorchCase("max_pool2d_ceil_dilation", "MaxPool2d",
                  {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": 2,
                   "ceil_mode": True},
                  nn.MaxPool2d(3, stride=2, padding=1, dilation=2, ceil_mode=True),
                  [randn(2, 2, 9, 8)]),
        TorchCase("max_pool2d_indices", "MaxPool2d",
                  {"kernel_size": 2, "stride": 1, "return_indices": True},
                  nn.MaxPool2d(2, stride=1, return_indices=True), [randn(1, 2, 4, 5)]),
        TorchCase("avg_pool2d_ceil_exclude_pad", "AvgPool2d",
                  {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
                   "count_include_pad": False},
                  nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                  [randn(2, 2, 8, 7)]),
        TorchCase("avg_pool2d_ceil_include_pad", "AvgPool2d",
                  {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
                  nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True), [randn(2, 2, 8, 7)]),
        TorchCase("avg_pool2d_divisor", "AvgPool2d",
                  {"kernel_size": 2, "divisor_override": 3},
                  nn.AvgPool2d(2, divisor_override=3), [randn(2, 2, 4, 6)]),
        TorchCase("embedding", "Embedding", {"num_embeddings": 7, "embedding_dim": 3},
                  nn.Embedding(7, 3), [torch.tensor([[0, 3, 3], [6, 1, 0]])]),
    ]


if __name__ == "__main__":
    write("core", cases())
