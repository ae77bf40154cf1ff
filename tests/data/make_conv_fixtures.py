"""PyTorch references for the convolution and pooling family: ``conv.safetensors``.

    ../torch-venv/bin/python tests/data/make_conv_fixtures.py   # any environment with torch

Made with PyTorch 2.13.0 (CPU), float64. Sizes are odd on purpose (windows that do not tile the
input, uneven "same" padding, adaptive windows that overlap), and some inputs are drawn from a
few integers so that pooling windows hold ties.
"""

import torch
from torch_fixture_writer import TorchCase, write

nn = torch.nn


def conv_cases(randn) -> list[TorchCase]:
    return [
        TorchCase("conv1d", "Conv1d", {"in_channels": 3, "out_channels": 4, "kernel_size": 3},
                  nn.Conv1d(3, 4, 3), [randn(2, 3, 11)]),
        TorchCase("conv1d_stride_padding_dilation", "Conv1d",
                  {"in_channels": 2, "out_channels": 4, "kernel_size": 4, "stride": 2,
                   "padding": 3, "dilation": 2},
                  nn.Conv1d(2, 4, 4, stride=2, padding=3, dilation=2), [randn(2, 2, 13)]),
        TorchCase("conv1d_depthwise_no_bias", "Conv1d",
                  {"in_channels": 4, "out_channels": 8, "kernel_size": 3, "groups": 4,
                   "bias": False},
                  nn.Conv1d(4, 8, 3, groups=4, bias=False), [randn(3, 4, 9)]),
        TorchCase("conv1d_same_even_kernel", "Conv1d",
                  {"in_channels": 2, "out_channels": 3, "kernel_size": 4, "padding": "same"},
                  nn.Conv1d(2, 3, 4, padding="same"), [randn(2, 2, 7)]),
        TorchCase("conv1d_same_dilation", "Conv1d",
                  {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "padding": "same",
                   "dilation": 3},
                  nn.Conv1d(2, 3, 3, padding="same", dilation=3), [randn(2, 2, 10)]),
        TorchCase("conv1d_valid", "Conv1d",
                  {"in_channels": 2, "out_channels": 2, "kernel_size": 5, "padding": "valid"},
                  nn.Conv1d(2, 2, 5, padding="valid"), [randn(1, 2, 8)]),
        TorchCase("conv1d_reflect", "Conv1d",
                  {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "padding": 2,
                   "padding_mode": "reflect"},
                  nn.Conv1d(2, 3, 3, padding=2, padding_mode="reflect"), [randn(2, 2, 6)]),
        TorchCase("conv1d_replicate_stride", "Conv1d",
                  {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "padding": 3,
                   "stride": 2, "padding_mode": "replicate"},
                  nn.Conv1d(2, 3, 3, padding=3, stride=2, padding_mode="replicate"),
                  [randn(2, 2, 7)]),
        TorchCase("conv1d_circular_same_even", "Conv1d",
                  {"in_channels": 2, "out_channels": 2, "kernel_size": 4, "padding": "same",
                   "padding_mode": "circular"},
                  nn.Conv1d(2, 2, 4, padding="same", padding_mode="circular"),
                  [randn(3, 2, 5)]),
        TorchCase("conv2d_same", "Conv2d",
                  {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "padding": "same"},
                  nn.Conv2d(2, 3, 3, padding="same"), [randn(2, 2, 5, 6)]),
        TorchCase("conv2d_same_even_kernels", "Conv2d",
                  {"in_channels": 2, "out_channels": 3, "kernel_size": [4, 2], "padding": "same"},
                  nn.Conv2d(2, 3, (4, 2), padding="same"), [randn(2, 2, 7, 5)]),
        TorchCase("conv2d_same_dilation_groups", "Conv2d",
                  {"in_channels": 4, "out_channels": 6, "kernel_size": [3, 4], "padding": "same",
                   "dilation": [2, 1], "groups": 2},
                  nn.Conv2d(4, 6, (3, 4), padding="same", dilation=(2, 1), groups=2),
                  [randn(2, 4, 6, 7)]),
        TorchCase("conv2d_valid", "Conv2d",
                  {"in_channels": 3, "out_channels": 2, "kernel_size": [2, 3], "padding": "valid",
                   "stride": [2, 1]},
                  nn.Conv2d(3, 2, (2, 3), padding="valid", stride=(2, 1)), [randn(2, 3, 7, 6)]),
        TorchCase("conv2d_reflect", "Conv2d",
                  {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "padding": [1, 2],
                   "padding_mode": "reflect"},
                  nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode="reflect"),
                  [randn(2, 2, 5, 6)]),
        TorchCase("conv2d_replicate_stride_dilation", "Conv2d",
                  {"in_channels": 2, "out_channels": 4, "kernel_size": [3, 2], "padding": 2,
                   "stride": [2, 3], "dilation": [1, 2], "padding_mode": "replicate"},
                  nn.Conv2d(2, 4, (3, 2), padding=2, stride=(2, 3), dilation=(1, 2),
                            padding_mode="replicate"),
                  [randn(2, 2, 7, 8)]),
        TorchCase("conv2d_circular_depthwise", "Conv2d",
                  {"in_channels": 3, "out_channels": 3, "kernel_size": 3, "padding": [2, 1],
                   "groups": 3, "padding_mode": "circular", "bias": False},
                  nn.Conv2d(3, 3, 3, padding=(2, 1), groups=3, padding_mode="circular",
                            bias=False),
                  [randn(2, 3, 5, 4)]),
        TorchCase("conv2d_reflect_same_even", "Conv2d",
                  {"in_channels": 2, "out_channels": 2, "kernel_size": [2, 4], "padding": "same",
                   "padding_mode": "reflect"},
                  nn.Conv2d(2, 2, (2, 4), padding="same", padding_mode="reflect"),
                  [randn(2, 2, 5, 6)]),
        TorchCase("conv2d_replicate_same", "Conv2d",
                  {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "padding": "same",
                   "dilation": 2, "padding_mode": "replicate"},
                  nn.Conv2d(2, 3, 3, padding="same", dilation=2, padding_mode="replicate"),
                  [randn(1, 2, 6, 5)]),
    ]


def transposed_cases(randn) -> list[TorchCase]:
    return [
        TorchCase("conv_transpose2d", "ConvTranspose2d",
                  {"in_channels": 3, "out_channels": 2, "kernel_size": 3},
                  nn.ConvTranspose2d(3, 2, 3), [randn(2, 3, 4, 5)]),
        TorchCase("conv_transpose2d_stride_padding_output_padding", "ConvTranspose2d",
                  {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "stride": 2,
                   "padding": 1, "output_padding": 1},
                  nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1),
                  [randn(2, 2, 5, 4)]),
        TorchCase("conv_transpose2d_uneven", "ConvTranspose2d",
                  {"in_channels": 2, "out_channels": 2, "kernel_size": [3, 4], "stride": [2, 3],
                   "padding": [1, 0], "output_padding": [1, 2]},
                  nn.ConvTranspose2d(2, 2, (3, 4), stride=(2, 3), padding=(1, 0),
                                     output_padding=(1, 2)),
                  [randn(2, 2, 3, 4)]),
        TorchCase("conv_transpose2d_groups_dilation_no_bias", "ConvTranspose2d",
                  {"in_channels": 4, "out_channels": 6, "kernel_size": [2, 3], "groups": 2,
                   "dilation": 2, "bias": False, "padding": 1},
                  nn.ConvTranspose2d(4, 6, (2, 3), groups=2, dilation=2, bias=False, padding=1),
                  [randn(2, 4, 5, 4)]),
        TorchCase("conv_transpose2d_stride3_dilation_output_padding", "ConvTranspose2d",
                  {"in_channels": 2, "out_channels": 3, "kernel_size": 2, "stride": 3,
                   "dilation": 2, "output_padding": [2, 1]},
                  nn.ConvTranspose2d(2, 3, 2, stride=3, dilation=2, output_padding=(2, 1)),
                  [randn(1, 2, 3, 4)]),
        TorchCase("conv_transpose2d_depthwise", "ConvTranspose2d",
                  {"in_channels": 3, "out_channels": 3, "kernel_size": 3, "groups": 3,
                   "stride": 2},
                  nn.ConvTranspose2d(3, 3, 3, groups=3, stride=2), [randn(2, 3, 3, 3)]),
        TorchCase("conv_transpose2d_output_size", "ConvTranspose2d",
                  {"in_channels": 2, "out_channels": 2, "kernel_size": 3, "stride": 2,
                   "padding": 1},
                  nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1), [randn(2, 2, 5, 5)],
                  plain_kwargs={"output_size": [10, 9]}),
        TorchCase("conv_transpose2d_output_size_whole_shape", "ConvTranspose2d",
                  {"in_channels": 2, "out_channels": 4, "kernel_size": [3, 2], "stride": [3, 2]},
                  nn.ConvTranspose2d(2, 4, (3, 2), stride=(3, 2)), [randn(2, 2, 4, 3)],
                  plain_kwargs={"output_size": [2, 4, 14, 7]}),
        TorchCase("conv_transpose1d", "ConvTranspose1d",
                  {"in_channels": 3, "out_channels": 2, "kernel_size": 4},
                  nn.ConvTranspose1d(3, 2, 4), [randn(2, 3, 6)]),
        TorchCase("conv_transpose1d_everything", "ConvTranspose1d",
                  {"in_channels": 4, "out_channels": 2, "kernel_size": 3, "stride": 3,
                   "padding": 2, "output_padding": 1, "groups": 2, "dilation": 2},
                  nn.ConvTranspose1d(4, 2, 3, stride=3, padding=2, output_padding=1, groups=2,
                                     dilation=2),
                  [randn(2, 4, 5)]),
        TorchCase("conv_transpose1d_output_size", "ConvTranspose1d",
                  {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "stride": 2},
                  nn.ConvTranspose1d(2, 3, 3, stride=2), [randn(2, 2, 5)],
                  plain_kwargs={"output_size": [12]}),
    ]


def pool_cases(randn, ties) -> list[TorchCase]:
    return [
        TorchCase("max_pool1d", "MaxPool1d", {"kernel_size": 3, "stride": 2, "padding": 1},
                  nn.MaxPool1d(3, stride=2, padding=1), [randn(2, 3, 10)]),
        TorchCase("max_pool1d_dilation_ceil_indices", "MaxPool1d",
                  {"kernel_size": 3, "stride": 2, "dilation": 2, "ceil_mode": True,
                   "return_indices": True, "padding": 1},
                  nn.MaxPool1d(3, stride=2, dilation=2, ceil_mode=True, return_indices=True,
                               padding=1),
                  [randn(2, 2, 12)]),
        TorchCase("max_pool1d_ties", "MaxPool1d", {"kernel_size": 4, "stride": 3},
                  nn.MaxPool1d(4, stride=3), [ties(2, 3, 11)]),
        TorchCase("avg_pool1d", "AvgPool1d", {"kernel_size": 3}, nn.AvgPool1d(3),
                  [randn(2, 3, 10)]),
        TorchCase("avg_pool1d_ceil_exclude_pad", "AvgPool1d",
                  {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
                   "count_include_pad": False},
                  nn.AvgPool1d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                  [randn(2, 2, 8)]),
        TorchCase("avg_pool1d_ceil_include_pad", "AvgPool1d",
                  {"kernel_size": 4, "stride": 3, "padding": 2, "ceil_mode": True},
                  nn.AvgPool1d(4, stride=3, padding=2, ceil_mode=True), [randn(2, 2, 9)]),
        TorchCase("max_pool2d_uneven", "MaxPool2d",
                  {"kernel_size": [3, 2], "stride": [2, 1], "padding": 1, "dilation": [1, 2]},
                  nn.MaxPool2d((3, 2), stride=(2, 1), padding=1, dilation=(1, 2)),
                  [randn(2, 2, 7, 8)]),
        TorchCase("max_pool2d_ceil_partial", "MaxPool2d",
                  {"kernel_size": 2, "stride": 3, "ceil_mode": True},
                  nn.MaxPool2d(2, stride=3, ceil_mode=True), [randn(2, 2, 8, 7)]),
        TorchCase("max_pool2d_ceil_window_in_padding_dropped", "MaxPool2d",
                  {"kernel_size": 2, "stride": 2, "padding": 1, "ceil_mode": True,
                   "return_indices": True},
                  nn.MaxPool2d(2, stride=2, padding=1, ceil_mode=True, return_indices=True),
                  [randn(2, 2, 5, 6)]),
        TorchCase("max_pool2d_indices_padding_dilation", "MaxPool2d",
                  {"kernel_size": 3, "stride": [1, 2], "padding": 1, "dilation": 2,
                   "return_indices": True},
                  nn.MaxPool2d(3, stride=(1, 2), padding=1, dilation=2, return_indices=True),
                  [randn(1, 3, 7, 8)]),
        TorchCase("max_pool2d_subsample", "MaxPool2d", {"kernel_size": 1, "stride": 2},
                  nn.MaxPool2d(1, stride=2), [randn(2, 2, 5, 6)]),
        TorchCase("max_pool2d_ties", "MaxPool2d",
                  {"kernel_size": 3, "stride": 2, "padding": 1, "return_indices": True},
                  nn.MaxPool2d(3, stride=2, padding=1, return_indices=True), [ties(2, 2, 7, 6)]),
        TorchCase("avg_pool2d_exclude_pad", "AvgPool2d",
                  {"kernel_size": 3, "stride": [2, 1], "padding": 1, "count_include_pad": False},
                  nn.AvgPool2d(3, stride=(2, 1), padding=1, count_include_pad=False),
                  [randn(2, 2, 7, 6)]),
        TorchCase("avg_pool2d_ceil_no_padding", "AvgPool2d",
                  {"kernel_size": 3, "stride": 2, "ceil_mode": True},
                  nn.AvgPool2d(3, stride=2, ceil_mode=True), [randn(2, 2, 8, 6)]),
        TorchCase("avg_pool2d_divisor_padding_ceil", "AvgPool2d",
                  {"kernel_size": [2, 3], "stride": 2, "padding": 1, "ceil_mode": True,
                   "divisor_override": 5},
                  nn.AvgPool2d((2, 3), stride=2, padding=1, ceil_mode=True, divisor_override=5),
                  [randn(2, 2, 7, 8)]),
        TorchCase("avg_pool2d_row_windows", "AvgPool2d", {"kernel_size": [1, 3], "stride": [1, 2]},
                  nn.AvgPool2d((1, 3), stride=(1, 2)), [randn(2, 3, 4, 9)]),
    ]


def adaptive_cases(randn, ties) -> list[TorchCase]:
    return [
        TorchCase("adaptive_avg_pool2d_global", "AdaptiveAvgPool2d", {"output_size": 1},
                  nn.AdaptiveAvgPool2d(1), [randn(2, 3, 5, 7)]),
        TorchCase("adaptive_avg_pool2d_overlapping", "AdaptiveAvgPool2d",
                  {"output_size": [3, 4]}, nn.AdaptiveAvgPool2d((3, 4)), [randn(2, 2, 7, 9)]),
        TorchCase("adaptive_avg_pool2d_keep_height", "AdaptiveAvgPool2d",
                  {"output_size": [None, 2]}, nn.AdaptiveAvgPool2d((None, 2)),
                  [randn(2, 2, 5, 7)]),
        TorchCase("adaptive_avg_pool2d_larger_than_input", "AdaptiveAvgPool2d",
                  {"output_size": [7, 5]}, nn.AdaptiveAvgPool2d((7, 5)), [randn(1, 2, 3, 4)]),
        TorchCase("adaptive_max_pool2d_indices", "AdaptiveMaxPool2d",
                  {"output_size": [3, 4], "return_indices": True},
                  nn.AdaptiveMaxPool2d((3, 4), return_indices=True), [randn(2, 2, 7, 9)]),
        TorchCase("adaptive_max_pool2d_global", "AdaptiveMaxPool2d", {"output_size": 1},
                  nn.AdaptiveMaxPool2d(1), [randn(2, 3, 5, 4)]),
        TorchCase("adaptive_max_pool2d_keep_width", "AdaptiveMaxPool2d",
                  {"output_size": [2, None]}, nn.AdaptiveMaxPool2d((2, None)),
                  [randn(2, 2, 5, 3)]),
        TorchCase("adaptive_max_pool2d_larger_than_input", "AdaptiveMaxPool2d",
                  {"output_size": [5, 6], "return_indices": True},
                  nn.AdaptiveMaxPool2d((5, 6), return_indices=True), [randn(1, 2, 3, 4)]),
        TorchCase("adaptive_max_pool2d_ties", "AdaptiveMaxPool2d",
                  {"output_size": [2, 3], "return_indices": True},
                  nn.AdaptiveMaxPool2d((2, 3), return_indices=True), [ties(2, 2, 5, 7)]),
    ]


def upsample_cases(randn) -> list[TorchCase]:
    def up(name: str, kwargs: dict, torch_kwargs: dict | None = None, shape=(2, 2, 4, 3)):
        module = nn.Upsample(**(torch_kwargs or kwargs))
        return TorchCase(name, "Upsample", kwargs, module, [randn(*shape)])

    return [
        up("upsample_nearest_scale2", {"scale_factor": 2}),
        up("upsample_nearest_size", {"size": [7, 5]}),
        up("upsample_nearest_scale_pair", {"scale_factor": [1.5, 2.3]},
           {"scale_factor": (1.5, 2.3)}),
        up("upsample_nearest_down", {"scale_factor": 0.5}, shape=(2, 2, 7, 6)),
        up("upsample_nearest_scale_almost_double", {"scale_factor": 2.1}, shape=(1, 2, 5, 10)),
        up("upsample_nearest_recompute", {"scale_factor": 1.7, "recompute_scale_factor": True},
           shape=(1, 2, 26, 5)),
        up("upsample_bilinear_size", {"size": [7, 9], "mode": "bilinear"}),
        up("upsample_bilinear_size_align", {"size": [7, 9], "mode": "bilinear",
                                            "align_corners": True}),
        up("upsample_bilinear_scale2", {"scale_factor": 2, "mode": "bilinear"}),
        up("upsample_bilinear_scale_pair_down", {"scale_factor": [0.6, 1.7], "mode": "bilinear"},
           {"scale_factor": (0.6, 1.7), "mode": "bilinear"}, shape=(2, 2, 8, 5)),
        up("upsample_bilinear_scale_align", {"scale_factor": 1.5, "mode": "bilinear",
                                             "align_corners": True}),
        up("upsample_bilinear_recompute", {"scale_factor": 2.6, "mode": "bilinear",
                                           "recompute_scale_factor": True}, shape=(1, 2, 5, 3)),
        up("upsample_bilinear_to_one", {"size": [1, 2], "mode": "bilinear",
                                        "align_corners": True}),
        up("upsample_bilinear_same_height", {"size": [4, 6], "mode": "bilinear"}),
        TorchCase("upsampling_nearest2d", "UpsamplingNearest2d", {"scale_factor": 3},
                  nn.UpsamplingNearest2d(scale_factor=3), [randn(1, 2, 2, 3)]),
        TorchCase("upsampling_bilinear2d", "UpsamplingBilinear2d", {"size": [5, 6]},
                  nn.UpsamplingBilinear2d(size=(5, 6)), [randn(1, 2, 3, 4)]),
    ]


def cases() -> list[TorchCase]:
    torch.manual_seed(0)
    randn = torch.randn

    def ties(*shape: int) -> torch.Tensor:
        return torch.randint(0, 3, shape).double()

    return (conv_cases(randn) + transposed_cases(randn) + pool_cases(randn, ties)
            + adaptive_cases(randn, ties) + upsample_cases(randn))


if __name__ == "__main__":
    write("conv", cases())
