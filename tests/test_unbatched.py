"""Unbatched ``(C, *spatial)`` input to the convolution and pooling layers and functions, as
PyTorch takes it: the result is the batched layer's on a batch of one, without the batch axis
(the batched layers are checked against PyTorch in ``test_torch_parity``), gradients against
finite differences in float64. And what DataParallel, which splits axis 0 -- here the
channels -- does with it: the layers that read an image's channels together refuse it in a
chunk, the pools take it."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor
from nn_helpers import module_gradcheck

import dparray as dp
import dparray.nn.functional as F
from dparray import nn

F64 = dp.float64

LAYERS = [
    (lambda: nn.Conv1d(3, 4, 3, padding=1, dtype=F64), (3, 7)),
    (lambda: nn.Conv2d(3, 4, 3, stride=2, dtype=F64), (3, 7, 6)),
    (lambda: nn.Conv2d(3, 2, 3, padding=1, padding_mode="reflect", dtype=F64), (3, 5, 5)),
    (lambda: nn.Conv3d(2, 3, 2, dtype=F64), (2, 3, 4, 3)),
    (lambda: nn.ConvTranspose1d(3, 2, 3, stride=2, dtype=F64), (3, 4)),
    (lambda: nn.ConvTranspose2d(3, 2, 3, stride=2, output_padding=1, dtype=F64), (3, 4, 3)),
    (lambda: nn.ConvTranspose3d(2, 2, 2, dtype=F64), (2, 2, 3, 2)),
    (lambda: nn.MaxPool1d(2), (3, 7)),
    (lambda: nn.MaxPool2d(3, stride=2, padding=1), (3, 7, 6)),
    (lambda: nn.MaxPool3d(2), (2, 4, 4, 5)),
    (lambda: nn.AvgPool1d(3, stride=2, padding=1, count_include_pad=False), (3, 8)),
    (lambda: nn.AvgPool2d(2, ceil_mode=True), (3, 5, 5)),
    (lambda: nn.AvgPool3d(2), (2, 4, 4, 4)),
]


@pytest.mark.parametrize("make, shape", LAYERS)
def test_a_layer_takes_unbatched_input_as_a_batch_of_one(backend, make, shape, rng):
    layer = make()
    x = rng.standard_normal(shape)
    out = layer(to_tensor(x))
    batched = layer(to_tensor(x[np.newaxis]))
    assert out.shape == batched.shape[1:]
    np.testing.assert_array_equal(out.numpy(), batched.numpy()[0])


@pytest.mark.parametrize("make, shape", LAYERS)
def test_unbatched_gradients_against_finite_differences(backend, make, shape, rng):
    module_gradcheck(make(), to_tensor(rng.standard_normal(shape), requires_grad=True))


FUNCTIONS = [
    (lambda x: F.conv1d(x, dp.ones(2, 3, 2, dtype=F64), stride=2), (3, 7)),
    (lambda x: F.conv2d(x, dp.ones(2, 1, 3, 3, dtype=F64), dp.ones(2, dtype=F64)), (1, 5, 5)),
    (lambda x: F.conv2d(x, dp.ones(4, 1, 3, 3, dtype=F64), groups=2, padding="same"),
     (2, 5, 4)),
    (lambda x: F.conv3d(x, dp.ones(1, 2, 2, 2, 2, dtype=F64)), (2, 3, 3, 3)),
    (lambda x: F.conv_transpose2d(x, dp.ones(3, 2, 2, 2, dtype=F64), stride=2), (3, 3, 4)),
    (lambda x: F.max_pool2d(x, 2), (3, 4, 5)),
    (lambda x: F.avg_pool1d(x, 2), (3, 6)),
    (lambda x: F.avg_pool3d(x, 2, divisor_override=3), (2, 4, 4, 4)),
]


@pytest.mark.parametrize("function, shape", FUNCTIONS)
def test_a_function_takes_unbatched_input_as_a_batch_of_one(backend, function, shape, rng):
    x = rng.standard_normal(shape)
    out = function(to_tensor(x))
    np.testing.assert_array_equal(out.numpy(), function(to_tensor(x[np.newaxis])).numpy()[0])


@pytest.mark.parametrize("pool, shape", [
    (lambda x: nn.MaxPool2d(2, return_indices=True)(x), (2, 4, 6)),
    (lambda x: F.max_pool1d(x, 3, return_indices=True), (2, 7)),
    (lambda x: F.max_pool3d_with_indices(x, 2), (2, 4, 4, 4)),
])
def test_an_unbatched_max_pool_returns_unbatched_indices(backend, pool, shape, rng):
    x = rng.standard_normal(shape)
    values, indices = pool(to_tensor(x))
    whole_values, whole_indices = pool(to_tensor(x[np.newaxis]))
    assert values.shape == indices.shape == whole_values.shape[1:]
    np.testing.assert_array_equal(indices.numpy(), whole_indices.numpy()[0])
    np.testing.assert_array_equal(values.numpy(), whole_values.numpy()[0])


def test_an_unbatched_transposed_convolution_takes_output_size(backend, rng):
    layer = nn.ConvTranspose2d(3, 2, 3, stride=2, dtype=F64)
    x = to_tensor(rng.standard_normal((3, 4, 4)))
    for size in [(10, 10), (2, 10, 10)]:  # the spatial sizes, or the unbatched whole shape
        assert layer(x, output_size=size).shape == (2, 10, 10)
    np.testing.assert_array_equal(layer(x, output_size=(9, 10)).numpy(),
                                  layer(x[None], output_size=(1, 2, 9, 10)).numpy()[0])


@pytest.mark.parametrize("call, shape, message", [
    (lambda x: nn.Conv2d(3, 4, 3)(x), (3, 8),
     r"Conv2d: expected \(N, 3, H, W\) or unbatched \(3, H, W\) input for weight of shape "
     r"\(4, 3, 3, 3\) and groups=1, got shape \(3, 8\)"),
    (lambda x: nn.Conv2d(3, 4, 3)(x), (2, 8, 8),
     r"Conv2d: expected \(N, 3, H, W\) or unbatched \(3, H, W\) input .* got shape \(2, 8, 8\)"),
    (lambda x: nn.ConvTranspose1d(3, 4, 3)(x), (1, 1, 3, 8),
     r"ConvTranspose1d: expected \(N, 3, L\) or unbatched \(3, L\) input"),
    (lambda x: nn.MaxPool3d(2)(x), (4, 4, 4),
     r"MaxPool3d: expected an \(N, C, D, H, W\) or unbatched \(C, D, H, W\) input, got shape "
     r"\(4, 4, 4\)"),
    (lambda x: F.avg_pool2d(x, 3), (2, 2, 2),
     r"avg_pool2d: a kernel of size \(3, 3\) .* does not fit an input of spatial size \(2, 2\)"),
])
def test_input_of_neither_form_is_refused_by_shape(backend, call, shape, message):
    with pytest.raises(ValueError, match=message):
        call(dp.ones(*shape))


@pytest.mark.parametrize("make, shape", [
    (lambda: nn.Conv2d(3, 4, 3), (3, 6, 6)),
    (lambda: nn.ConvTranspose1d(3, 2, 2), (3, 5)),
    (lambda: nn.PixelShuffle(2), (8, 3, 3)),
    (lambda: nn.Fold((4, 4), 2), (8, 9)),
    (lambda: nn.InstanceNorm2d(3, affine=True), (3, 4, 4)),
])
def test_dataparallel_refuses_unbatched_input_that_a_split_would_cut(make, shape, rng):
    """Axis 0 is the channels: a chunk would hold some of them (even where, as for the pixel
    shuffle in two chunks, the cut happens to fall between blocks)."""
    layer = make()
    x = to_tensor(rng.standard_normal(shape).astype(np.float32))
    with pytest.raises(Exception) as caught:  # one ChunkError, or a group of them
        dp.DataParallel(layer, 2, execution="threads")(x)
    failures = getattr(caught.value, "exceptions", [caught.value])
    for failure in failures:
        assert isinstance(failure, dp.ChunkError)
        assert isinstance(failure.__cause__, ValueError)
        assert "DataParallel splits axis 0, which is the channels for unbatched input" in str(
            failure.__cause__)
    whole = dp.DataParallel(layer, 2, execution="inline")(x)  # one call on the whole input
    np.testing.assert_array_equal(whole.numpy(), layer(x).numpy())
    batched = dp.DataParallel(layer, 2, execution="threads")(x[None])
    np.testing.assert_allclose(batched.numpy()[0], layer(x).numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("pool", [nn.MaxPool2d(2), nn.AvgPool2d(2), nn.AdaptiveAvgPool2d(1),
                                  nn.LPPool2d(2, 2)])
def test_dataparallel_pools_unbatched_input_channel_by_channel(pool, rng):
    """A pool treats each channel on its own: the chunks' channels pooled are the whole's."""
    x = to_tensor(rng.standard_normal((5, 4, 4)).astype(np.float32))
    parallel = dp.DataParallel(pool, 2, execution="threads")
    np.testing.assert_array_equal(parallel(x).numpy(), pool(x).numpy())
    assert parallel.last_execution == "threads"
