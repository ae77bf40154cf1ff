"""PyTorch references for the normalisation family: ``norm.safetensors``.

GroupNorm (one group, as many groups as channels, no affine, no bias, no spatial axes),
InstanceNorm1d/2d (affine or not, unbatched input, running statistics in training and in
evaluation, ``momentum=None``) and RMSNorm (``eps`` None or given, several normalised axes, no
weight, one feature); and BatchNorm1d's ``bias=False`` (PyTorch 2.13's keyword, shared by the
constructor of batch and instance norm).

    ../torch-venv/bin/python tests/data/make_norm_fixtures.py   # any environment with torch

Made with PyTorch 2.13.0 (CPU), float64.
"""

import torch
from torch_fixture_writer import TorchCase, randomized, with_statistics, write

nn = torch.nn


def cases() -> list[TorchCase]:
    torch.manual_seed(0)
    randn = torch.randn
    return [
        TorchCase("group_norm", "GroupNorm", {"num_groups": 2, "num_channels": 6},
                  randomized(nn.GroupNorm(2, 6)), [randn(3, 6, 2, 3)]),
        TorchCase("group_norm_one_group", "GroupNorm", {"num_groups": 1, "num_channels": 5},
                  randomized(nn.GroupNorm(1, 5)), [randn(2, 5, 3)]),
        TorchCase("group_norm_group_per_channel", "GroupNorm",
                  {"num_groups": 4, "num_channels": 4, "eps": 1e-3},
                  randomized(nn.GroupNorm(4, 4, eps=1e-3)), [randn(2, 4, 3, 3)]),
        TorchCase("group_norm_no_affine", "GroupNorm",
                  {"num_groups": 3, "num_channels": 6, "affine": False},
                  nn.GroupNorm(3, 6, affine=False), [randn(2, 6, 7)]),
        TorchCase("group_norm_no_bias", "GroupNorm",
                  {"num_groups": 2, "num_channels": 4, "bias": False},
                  randomized(nn.GroupNorm(2, 4, bias=False)), [randn(3, 4, 5)]),
        TorchCase("group_norm_no_spatial_axes", "GroupNorm",
                  {"num_groups": 2, "num_channels": 6},
                  randomized(nn.GroupNorm(2, 6)), [randn(4, 6)]),
        TorchCase("group_norm_one_sample", "GroupNorm", {"num_groups": 3, "num_channels": 3},
                  randomized(nn.GroupNorm(3, 3)), [randn(1, 3, 2, 1, 3)]),
        TorchCase("instance_norm2d", "InstanceNorm2d", {"num_features": 3},
                  nn.InstanceNorm2d(3), [randn(2, 3, 4, 5)], training=True),
        TorchCase("instance_norm2d_untracked_eval", "InstanceNorm2d", {"num_features": 2},
                  nn.InstanceNorm2d(2), [randn(3, 2, 3, 3)]),
        TorchCase("instance_norm2d_affine", "InstanceNorm2d",
                  {"num_features": 3, "affine": True},
                  randomized(nn.InstanceNorm2d(3, affine=True)), [randn(2, 3, 3, 2)],
                  training=True),
        TorchCase("instance_norm2d_tracked_train", "InstanceNorm2d",
                  {"num_features": 3, "affine": True, "track_running_stats": True,
                   "momentum": 0.3},
                  with_statistics(nn.InstanceNorm2d(3, affine=True, track_running_stats=True,
                                                     momentum=0.3)),
                  [randn(4, 3, 2, 3)], training=True),
        TorchCase("instance_norm2d_tracked_eval", "InstanceNorm2d",
                  {"num_features": 3, "affine": True, "track_running_stats": True},
                  with_statistics(nn.InstanceNorm2d(3, affine=True, track_running_stats=True)),
                  [randn(2, 3, 4, 3)]),
        TorchCase("instance_norm2d_unbatched", "InstanceNorm2d",
                  {"num_features": 2, "affine": True},
                  randomized(nn.InstanceNorm2d(2, affine=True)), [randn(2, 3, 5)],
                  training=True),
        TorchCase("instance_norm1d", "InstanceNorm1d", {"num_features": 4, "affine": True},
                  randomized(nn.InstanceNorm1d(4, affine=True)), [randn(3, 4, 7)],
                  training=True),
        TorchCase("instance_norm1d_unbatched_tracked_train", "InstanceNorm1d",
                  {"num_features": 3, "track_running_stats": True},
                  with_statistics(nn.InstanceNorm1d(3, track_running_stats=True)),
                  [randn(3, 6)], training=True),
        TorchCase("instance_norm1d_tracked_momentum_none", "InstanceNorm1d",
                  {"num_features": 2, "track_running_stats": True, "momentum": None},
                  with_statistics(nn.InstanceNorm1d(2, track_running_stats=True,
                                                     momentum=None)),
                  [randn(3, 2, 5)], training=True),
        TorchCase("rms_norm", "RMSNorm", {"normalized_shape": 6},
                  randomized(nn.RMSNorm(6)), [randn(4, 6)]),
        TorchCase("rms_norm_2d_shape_eps", "RMSNorm", {"normalized_shape": [3, 4], "eps": 1e-3},
                  randomized(nn.RMSNorm([3, 4], eps=1e-3)), [randn(2, 3, 4) * 0.1]),
        TorchCase("rms_norm_no_weight", "RMSNorm",
                  {"normalized_shape": 5, "elementwise_affine": False},
                  nn.RMSNorm(5, elementwise_affine=False), [randn(3, 2, 5)]),
        TorchCase("rms_norm_one_feature", "RMSNorm", {"normalized_shape": 1},
                  randomized(nn.RMSNorm(1)), [randn(4, 1)]),
        TorchCase("rms_norm_one_row", "RMSNorm", {"normalized_shape": [7]},
                  randomized(nn.RMSNorm([7])), [randn(7)]),
        TorchCase("batch_norm_no_bias", "BatchNorm1d", {"num_features": 3, "bias": False},
                  with_statistics(nn.BatchNorm1d(3, bias=False)), [randn(5, 3, 2)],
                  training=True),
    ]


if __name__ == "__main__":
    write("norm", cases())
