"""PyTorch references for the volume layers, max unpooling and resampling beyond images:
``volumes.safetensors``.

    ../torch-venv/bin/python tests/data/make_volume_fixtures.py   # any environment with torch

Made with PyTorch 2.13.0 (CPU), float64. Sizes are odd on purpose (windows that do not tile the
input, ceil mode's partial windows, padding on some axes only), and the max pools' inputs are
drawn from a few integers so that their windows hold ties.
"""

import torch
from torch_fixture_writer import TorchCase, randomized, write

nn = torch.nn


def conv_cases(randn) -> list[TorchCase]:
    return [
        TorchCase("conv3d", "Conv3d", {"in_channels": 2, "out_channels": 3, "kernel_size": 3},
                  randomized(nn.Conv3d(2, 3, 3)), [randn(2, 2, 5, 6, 4)]),
        TorchCase("conv3d_geometry", "Conv3d",
                  {"in_channels": 4, "out_channels": 6, "kernel_size": [3, 2, 3],
                   "stride": [1, 2, 1], "padding": [1, 0, 2], "dilation": [2, 1, 1],
                   "groups": 2},
                  randomized(nn.Conv3d(4, 6, (3, 2, 3), stride=(1, 2, 1), padding=(1, 0, 2),
                                       dilation=(2, 1, 1), groups=2)), [randn(2, 4, 6, 5, 4)]),
        TorchCase("conv3d_same_reflect_no_bias", "Conv3d",
                  {"in_channels": 2, "out_channels": 2, "kernel_size": [2, 3, 3],
                   "padding": "same", "padding_mode": "reflect", "bias": False},
                  randomized(nn.Conv3d(2, 2, (2, 3, 3), padding="same", padding_mode="reflect",
                                       bias=False)), [randn(1, 2, 4, 5, 5)]),
        TorchCase("conv_transpose3d", "ConvTranspose3d",
                  {"in_channels": 4, "out_channels": 6, "kernel_size": [2, 3, 2],
                   "stride": [2, 1, 2], "padding": [1, 0, 1], "output_padding": [1, 0, 0],
                   "groups": 2, "dilation": [1, 2, 1]},
                  randomized(nn.ConvTranspose3d(4, 6, (2, 3, 2), stride=(2, 1, 2),
                                                padding=(1, 0, 1), output_padding=(1, 0, 0),
                                                groups=2, dilation=(1, 2, 1))),
                  [randn(2, 4, 3, 4, 3)]),
        TorchCase("conv_transpose3d_plain", "ConvTranspose3d",
                  {"in_channels": 2, "out_channels": 3, "kernel_size": 2, "stride": 2},
                  randomized(nn.ConvTranspose3d(2, 3, 2, stride=2)), [randn(1, 2, 2, 3, 2)]),
    ]


def pool_cases(randn, ties) -> list[TorchCase]:
    return [
        TorchCase("max_pool3d", "MaxPool3d", {"kernel_size": 2}, nn.MaxPool3d(2),
                  [ties(2, 2, 4, 5, 4)]),
        TorchCase("max_pool3d_geometry_indices", "MaxPool3d",
                  {"kernel_size": [3, 2, 3], "stride": [2, 2, 1], "padding": [1, 1, 1],
                   "dilation": [1, 2, 1], "ceil_mode": True, "return_indices": True},
                  nn.MaxPool3d((3, 2, 3), stride=(2, 2, 1), padding=(1, 1, 1),
                               dilation=(1, 2, 1), ceil_mode=True, return_indices=True),
                  [ties(1, 2, 5, 6, 4)]),
        TorchCase("avg_pool3d", "AvgPool3d", {"kernel_size": [2, 3, 2]},
                  nn.AvgPool3d((2, 3, 2)), [randn(2, 2, 5, 6, 4)]),
        TorchCase("avg_pool3d_ceil_exclude_pad", "AvgPool3d",
                  {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
                   "count_include_pad": False},
                  nn.AvgPool3d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                  [randn(1, 2, 6, 5, 4)]),
        TorchCase("avg_pool3d_divisor", "AvgPool3d",
                  {"kernel_size": 2, "stride": 1, "padding": 1, "divisor_override": 5},
                  nn.AvgPool3d(2, stride=1, padding=1, divisor_override=5),
                  [randn(1, 2, 3, 4, 3)]),
    ]


def unpool_cases(randn) -> list[TorchCase]:
    def unpool(name: str, kwargs: dict, pool: nn.Module, shape: tuple[int, ...],
               plain: dict | None = None) -> TorchCase:
        values, indices = pool(randn(*shape))
        return TorchCase(name, "MaxUnpool2d", kwargs, nn.MaxUnpool2d(**kwargs),
                         [values.detach(), indices], plain_kwargs=plain or {})

    return [
        unpool("max_unpool2d", {"kernel_size": 2}, nn.MaxPool2d(2, return_indices=True),
               (2, 3, 4, 6)),
        unpool("max_unpool2d_overlapping", {"kernel_size": 3, "stride": 1},
               nn.MaxPool2d(3, stride=1, return_indices=True), (1, 2, 5, 5)),
        unpool("max_unpool2d_padding_output_size",
               {"kernel_size": 3, "stride": 2, "padding": 1},
               nn.MaxPool2d(3, stride=2, padding=1, return_indices=True), (1, 2, 6, 7),
               {"output_size": [6, 7]}),
    ]


def upsample_cases(randn) -> list[TorchCase]:
    def up(name: str, shape: tuple[int, ...], kwargs: dict, torch_kwargs: dict | None = None):
        module = nn.Upsample(**(torch_kwargs or kwargs))
        return TorchCase(name, "Upsample", kwargs, module, [randn(*shape)])

    return [
        up("upsample_linear", (2, 3, 7), {"scale_factor": 2.3, "mode": "linear"}),
        up("upsample_linear_align", (2, 3, 7), {"size": 4, "mode": "linear",
                                                "align_corners": True}),
        up("upsample_nearest_1d", (2, 3, 5), {"scale_factor": 3}),
        up("upsample_nearest_exact", (2, 2, 5, 4), {"size": [7, 9], "mode": "nearest-exact"},
           {"size": (7, 9), "mode": "nearest-exact"}),
        up("upsample_bicubic", (2, 2, 5, 4), {"size": [7, 9], "mode": "bicubic"},
           {"size": (7, 9), "mode": "bicubic"}),
        up("upsample_bicubic_align", (2, 2, 5, 4), {"scale_factor": 1.7, "mode": "bicubic",
                                                    "align_corners": True}),
        up("upsample_trilinear", (1, 2, 4, 5, 3), {"scale_factor": [1.5, 2.0, 0.7],
                                                   "mode": "trilinear"},
           {"scale_factor": (1.5, 2.0, 0.7), "mode": "trilinear"}),
        up("upsample_nearest_3d", (1, 2, 3, 2, 4), {"size": 5}),
    ]


def cases() -> list[TorchCase]:
    torch.manual_seed(0)

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape)

    def ties(*shape: int) -> torch.Tensor:
        return torch.randint(-2, 3, shape).double()

    return (conv_cases(randn) + pool_cases(randn, ties) + unpool_cases(randn)
            + upsample_cases(randn))


if __name__ == "__main__":
    write("volumes", cases())
