"""Layers beyond the dense and convolutional basics, forward and backward in float32, dparray
against PyTorch: depthwise and transposed convolutions, the normalisations of vision and
language models (and batch norm of an MLP's ``(N, C)`` features), resampling and pooling.

    python -m bench.layers        # medians (ms) of alternated processes, one library each

Each library runs in a process of its own, the processes alternate ``PROCESSES`` times
(``alternated.py``), and each reports the median of 20 timed calls after 3 untimed ones; the
table gives the median of those.
"""

from __future__ import annotations

from typing import Any

from .alternated import compare, median_ms

PROCESSES = 3


def measure(library: str) -> dict[str, float]:
    """Median milliseconds of each layer, forward and backward, here."""
    import numpy as np

    rng = np.random.default_rng(0)

    def array(*shape: int) -> Any:
        return rng.standard_normal(shape).astype(np.float32)

    if library == "torch":
        import torch

        F: Any = torch.nn.functional

        def tensor(a: Any, grad: bool = True) -> Any:
            return torch.from_numpy(a).requires_grad_(grad)
    else:
        import dparray as dp
        from dparray.nn import functional as F

        def tensor(a: Any, grad: bool = True) -> Any:
            return dp.tensor(a).requires_grad_(grad)

    def timed(layer: Any, x: Any, out_shape: tuple[int, ...]) -> float:
        cotangent = tensor(array(*out_shape), False)
        return median_ms(lambda: layer(x).backward(cotangent))

    images = tensor(array(32, 64, 32, 32))
    depthwise = tensor(array(64, 1, 3, 3))
    small = tensor(array(64, 128, 16, 16))
    upsampling = tensor(array(128, 64, 4, 4) * 0.05)
    grouped = tensor(array(16, 256, 32, 32))
    ones, zeros = tensor(np.ones(256, np.float32)), tensor(np.zeros(256, np.float32))
    tokens = tensor(array(4096, 512))
    unit = tensor(np.ones(512, np.float32))
    features = tensor(array(2048, 1024))
    hidden = tensor(array(128, 400))
    scale, shift = tensor(array(1024)), tensor(array(1024))
    narrow_scale, narrow_shift = tensor(array(400)), tensor(array(400))
    return {
        "depthwise conv2d 3x3, 32x64x32x32": timed(
            lambda x: F.conv2d(x, depthwise, padding=1, groups=64), images, (32, 64, 32, 32)),
        "depthwise conv2d 3x3 stride 2": timed(
            lambda x: F.conv2d(x, depthwise, stride=2, padding=1, groups=64), images,
            (32, 64, 16, 16)),
        "conv_transpose2d 4x4 s2, 64x128x16x16": timed(
            lambda x: F.conv_transpose2d(x, upsampling, stride=2, padding=1), small,
            (64, 64, 32, 32)),
        "group_norm 32 groups, 16x256x32x32": timed(
            lambda x: F.group_norm(x, 32, ones, zeros), grouped, (16, 256, 32, 32)),
        "instance_norm 32x64x32x32": timed(F.instance_norm, images, (32, 64, 32, 32)),
        "rms_norm 4096x512": timed(lambda x: F.rms_norm(x, (512,), unit), tokens, (4096, 512)),
        "interpolate nearest x2, 32x64x32x32": timed(
            lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), images,
            (32, 64, 64, 64)),
        "interpolate bilinear x2": timed(
            lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False),
            images, (32, 64, 64, 64)),
        "adaptive_avg_pool2d 1, 32x64x32x32": timed(
            lambda x: F.adaptive_avg_pool2d(x, 1), images, (32, 64, 1, 1)),
        "adaptive_avg_pool2d 7": timed(
            lambda x: F.adaptive_avg_pool2d(x, 7), images, (32, 64, 7, 7)),
        "adaptive_max_pool2d 7": timed(
            lambda x: F.adaptive_max_pool2d(x, 7), images, (32, 64, 7, 7)),
        "adaptive_max_pool2d 1": timed(
            lambda x: F.adaptive_max_pool2d(x, 1), images, (32, 64, 1, 1)),
        "batch_norm (N, C), 2048x1024": timed(
            lambda x: F.batch_norm(x, None, None, scale, shift, training=True), features,
            (2048, 1024)),
        "batch_norm (N, C), 128x400": timed(
            lambda x: F.batch_norm(x, None, None, narrow_scale, narrow_shift, training=True),
            hidden, (128, 400)),
    }


def main() -> None:
    compare(__spec__.name, measure, PROCESSES, "float32, forward and backward")


if __name__ == "__main__":
    main()
