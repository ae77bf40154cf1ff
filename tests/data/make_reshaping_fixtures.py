"""PyTorch references for the padding layers, the pixel and channel shuffles, and im2col
(``Unfold``, ``Fold``): ``reshaping_layers.safetensors``.

    ../torch-venv/bin/python tests/data/make_reshaping_fixtures.py   # any environment with torch

Made with PyTorch 2.13.0 (CPU), float64. Batched and unbatched inputs, negative widths
(cropping), widths up to each mode's limit, and every geometry argument away from its default.
"""

import torch
from torch_fixture_writer import TorchCase, write

nn = torch.nn


def _case(name: str, layer: str, kwargs: dict, x: torch.Tensor) -> TorchCase:
    """A case whose dparray layer takes the same keyword arguments (tuples as lists)."""
    return TorchCase(name, layer, kwargs, getattr(nn, layer)(**kwargs), [x])


def padding_cases() -> list[TorchCase]:
    torch.manual_seed(0)
    rows, unbatched_rows = torch.randn(2, 3, 5), torch.randn(3, 5)
    images, unbatched_images = torch.randn(2, 3, 4, 5), torch.randn(3, 4, 5)
    volumes, unbatched_volumes = torch.randn(2, 2, 3, 4, 5), torch.randn(2, 3, 4, 5)
    cases = []
    for dims, batched, unbatched, widths, cropping, wide in [
        (1, rows, unbatched_rows, [2, 1], [-1, 3], [4, 4]),
        (2, images, unbatched_images, [1, 2, 3, 0], [-1, 2, 1, -2], [4, 4, 3, 3]),
        (3, volumes, unbatched_volumes, [1, 0, 2, 1, 0, 2], [2, -1, 0, 1, -1, 1],
         [4, 4, 3, 3, 2, 2]),
    ]:
        cases += [
            _case(f"zero{dims}d", f"ZeroPad{dims}d", {"padding": widths}, batched),
            _case(f"zero{dims}d_int_unbatched", f"ZeroPad{dims}d", {"padding": 1}, unbatched),
            _case(f"constant{dims}d", f"ConstantPad{dims}d",
                  {"padding": cropping, "value": 1.5}, batched),
            _case(f"constant{dims}d_unbatched", f"ConstantPad{dims}d",
                  {"padding": widths, "value": -2.0}, unbatched),
            _case(f"reflection{dims}d", f"ReflectionPad{dims}d", {"padding": widths}, batched),
            _case(f"reflection{dims}d_unbatched_cropping", f"ReflectionPad{dims}d",
                  {"padding": cropping}, unbatched),
            _case(f"reflection{dims}d_int", f"ReflectionPad{dims}d", {"padding": 1}, batched),
            _case(f"replication{dims}d_wide", f"ReplicationPad{dims}d", {"padding": wide},
                  batched),
            _case(f"replication{dims}d_unbatched_cropping", f"ReplicationPad{dims}d",
                  {"padding": cropping}, unbatched),
            _case(f"circular{dims}d", f"CircularPad{dims}d", {"padding": widths}, batched),
            _case(f"circular{dims}d_unbatched_cropping", f"CircularPad{dims}d",
                  {"padding": cropping}, unbatched),
        ]
    # the widest reflection (axis length - 1) and circular wrap (the whole axis)
    cases += [
        _case("reflection2d_widest", "ReflectionPad2d", {"padding": [4, 4, 3, 3]}, images),
        _case("circular1d_whole_axis", "CircularPad1d", {"padding": [5, 5]}, rows),
    ]
    return cases


def shuffle_cases() -> list[TorchCase]:
    torch.manual_seed(1)
    return [
        _case("pixel_shuffle", "PixelShuffle", {"upscale_factor": 2}, torch.randn(2, 12, 3, 4)),
        _case("pixel_shuffle_unbatched", "PixelShuffle", {"upscale_factor": 3},
              torch.randn(18, 2, 3)),
        _case("pixel_shuffle_two_batch_axes", "PixelShuffle", {"upscale_factor": 2},
              torch.randn(2, 3, 8, 2, 3)),
        _case("pixel_unshuffle", "PixelUnshuffle", {"downscale_factor": 2},
              torch.randn(2, 3, 4, 6)),
        _case("pixel_unshuffle_unbatched", "PixelUnshuffle", {"downscale_factor": 3},
              torch.randn(2, 6, 3)),
        _case("pixel_unshuffle_two_batch_axes", "PixelUnshuffle", {"downscale_factor": 2},
              torch.randn(2, 2, 3, 4, 2)),
        _case("channel_shuffle", "ChannelShuffle", {"groups": 3}, torch.randn(2, 6, 4, 5)),
        _case("channel_shuffle_3d", "ChannelShuffle", {"groups": 2}, torch.randn(3, 8, 5)),
        _case("channel_shuffle_5d", "ChannelShuffle", {"groups": 4},
              torch.randn(2, 8, 2, 3, 2)),
    ]


def _columns(batch: tuple, channels: int, size: tuple, **geometry) -> torch.Tensor:
    """Random columns of the shape ``Fold`` takes back to ``(*batch, channels, *size)``."""
    shape = nn.functional.unfold(torch.zeros(1, channels, *size), **geometry).shape[1:]
    return torch.randn(*batch, *shape)


def fold_cases() -> list[TorchCase]:
    torch.manual_seed(2)
    odd = {"kernel_size": [2, 3], "dilation": [2, 1], "padding": [1, 2], "stride": [2, 1]}
    square = {"kernel_size": 3, "dilation": 1, "padding": 1, "stride": 2}
    return [
        _case("unfold", "Unfold", {"kernel_size": 2}, torch.randn(2, 3, 5, 6)),
        _case("unfold_geometry", "Unfold", odd, torch.randn(2, 3, 5, 6)),
        _case("unfold_unbatched", "Unfold", square, torch.randn(3, 6, 7)),
        _case("unfold_one_window", "Unfold", {"kernel_size": [4, 5]}, torch.randn(1, 2, 4, 5)),
        _case("fold", "Fold", {"output_size": [5, 6], "kernel_size": 2},
              _columns((2,), 3, (5, 6), kernel_size=2)),
        _case("fold_geometry", "Fold", {"output_size": [5, 6], **odd},
              _columns((2,), 3, (5, 6), **odd)),
        _case("fold_unbatched", "Fold", {"output_size": 7, **square},
              _columns((), 2, (7, 7), **square)),
        _case("fold_stride_past_the_edge", "Fold",
              {"output_size": [6, 5], "kernel_size": 2, "stride": 3},
              _columns((2,), 2, (6, 5), kernel_size=2, stride=3)),
    ]


if __name__ == "__main__":
    print(write("reshaping_layers", padding_cases() + shuffle_cases() + fold_cases()))
