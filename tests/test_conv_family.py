"""The convolution and pooling family -- Conv1d/Conv2d (``padding="same"``, ``padding_mode``),
ConvTranspose1d/2d, MaxPool1d/AvgPool1d, the 2-D pools' remaining arguments, adaptive pools and
Upsample/interpolate -- the PyTorch fixtures' coverage (``test_torch_parity.py`` checks them),
by finite differences on every backend with and without the kernel table, as single graph
nodes, under DataParallel, and with bad arguments."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import to_tensor
from nn_helpers import module_gradcheck
from torch_reference import load_cases

import dparray as dp
from dparray import nn
from dparray.autograd import Function
from dparray.backend import kernels as kernel_table
from dparray.nn import functional as F
from dparray.ops import conv as _conv
from dparray.ops import pooling as _pooling

F64 = dp.float64
CASES = load_cases("conv")


# ----------------------------------------------------------------------------- against PyTorch
def test_the_fixtures_cover_every_layer():
    layers = {case.layer for case in CASES}
    assert layers == {"Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d",
                      "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool2d",
                      "AdaptiveMaxPool2d", "Upsample", "UpsamplingNearest2d",
                      "UpsamplingBilinear2d"}
    modes = {case.kwargs.get("padding_mode") for case in CASES}
    assert modes >= {"reflect", "replicate", "circular"}
    assert any(case.plain_kwargs.get("output_size") for case in CASES)


def test_reprs_are_pytorchs():
    expected = {
        nn.Conv2d(2, 4, 3, padding="same", padding_mode="reflect"):
            "Conv2d(2, 4, kernel_size=(3, 3), stride=(1, 1), padding=same, padding_mode=reflect)",
        nn.Conv1d(2, 4, 3): "Conv1d(2, 4, kernel_size=(3,), stride=(1,))",
        nn.Conv1d(2, 4, 3, padding=1, dilation=2, groups=2, bias=False):
            "Conv1d(2, 4, kernel_size=(3,), stride=(1,), padding=(1,), dilation=(2,), groups=2, "
            "bias=False)",
        nn.ConvTranspose2d(2, 4, 3, stride=2, output_padding=1):
            "ConvTranspose2d(2, 4, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))",
        nn.MaxPool1d(3): "MaxPool1d(kernel_size=3, stride=3, padding=0, dilation=1, "
                         "ceil_mode=False)",
        nn.MaxPool2d(3): "MaxPool2d(kernel_size=3, stride=3, padding=0, dilation=1, "
                         "ceil_mode=False)",
        nn.AvgPool1d(3): "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))",
        nn.AvgPool2d(2): "AvgPool2d(kernel_size=2, stride=2, padding=0)",
        nn.AdaptiveAvgPool2d((None, 3)): "AdaptiveAvgPool2d(output_size=(None, 3))",
        nn.AdaptiveMaxPool2d(2, return_indices=True): "AdaptiveMaxPool2d(output_size=2)",
        nn.Upsample(scale_factor=2): "Upsample(scale_factor=2.0, mode='nearest')",
        nn.Upsample(size=(3, 4), mode="bilinear"): "Upsample(size=(3, 4), mode='bilinear')",
    }
    for module, text in expected.items():
        assert repr(module) == text


def test_parameter_layouts_and_initialisation():
    dp.manual_seed(0)
    conv = nn.Conv1d(6, 4, 5, groups=2, dtype=F64)
    assert conv.weight.shape == (4, 3, 5) and conv.bias.shape == (4,)
    transposed = nn.ConvTranspose2d(6, 8, (3, 2), groups=2, dtype=F64)
    assert transposed.weight.shape == (6, 4, 3, 2) and transposed.bias.shape == (8,)
    assert [name for name, _ in transposed.named_parameters()] == ["weight", "bias"]
    for module, fan_in in ((conv, 3 * 5), (transposed, 4 * 3 * 2)):
        bound = 1.0 / math.sqrt(fan_in)
        for p in module.parameters():
            assert np.abs(p.numpy()).max() <= bound
        weights = module.weight.numpy()
        assert weights.max() > 0.8 * bound and weights.min() < -0.8 * bound


# ----------------------------------------------------------------------------- finite differences
def _distinct(rng, shape):
    """Values at least 0.1 apart, so no window of a max pool holds a tie."""
    return (rng.permutation(math.prod(shape)).reshape(shape) - math.prod(shape) / 2) * 0.1


LAYERS = {  # name: (factory taking the parameters' dtype, input shape after the batch axis)
    "conv1d": (lambda dtype: nn.Conv1d(2, 3, 3, stride=2, padding=1, dtype=dtype), (2, 7)),
    "conv1d_same_circular": (
        lambda dtype: nn.Conv1d(2, 2, 4, padding="same", padding_mode="circular", dtype=dtype),
        (2, 6)),
    "conv2d_same_even": (
        lambda dtype: nn.Conv2d(2, 2, (2, 3), padding="same", dtype=dtype), (2, 4, 5)),
    "conv2d_reflect_groups": (
        lambda dtype: nn.Conv2d(2, 4, 3, padding=(1, 2), groups=2, padding_mode="reflect",
                                dtype=dtype),
        (2, 4, 4)),
    "conv2d_replicate_stride": (
        lambda dtype: nn.Conv2d(2, 2, 2, stride=2, padding=1, padding_mode="replicate",
                                dtype=dtype),
        (2, 5, 4)),
    "conv_transpose1d": (
        lambda dtype: nn.ConvTranspose1d(2, 3, 3, stride=2, padding=1, output_padding=1,
                                         dtype=dtype),
        (2, 4)),
    "conv_transpose2d": (
        lambda dtype: nn.ConvTranspose2d(4, 2, (2, 3), stride=(2, 1), padding=(0, 1), groups=2,
                                         dilation=(1, 2), dtype=dtype),
        (4, 3, 3)),
    "max_pool1d": (lambda dtype: nn.MaxPool1d(3, stride=2, padding=1, ceil_mode=True), (2, 8)),
    "avg_pool1d": (
        lambda dtype: nn.AvgPool1d(3, stride=2, padding=1, count_include_pad=False), (2, 8)),
    "max_pool2d": (
        lambda dtype: nn.MaxPool2d(3, stride=2, padding=1, dilation=(1, 2), ceil_mode=True),
        (2, 6, 7)),
    "avg_pool2d": (
        lambda dtype: nn.AvgPool2d((2, 3), stride=2, padding=1, ceil_mode=True,
                                   divisor_override=4),
        (2, 5, 6)),
    "adaptive_avg_pool2d": (lambda dtype: nn.AdaptiveAvgPool2d((3, 2)), (2, 5, 5)),
    "adaptive_max_pool2d": (lambda dtype: nn.AdaptiveMaxPool2d((2, 3)), (2, 5, 7)),
    "upsample_nearest": (lambda dtype: nn.Upsample(scale_factor=(1.5, 2)), (2, 3, 3)),
    "upsample_bilinear": (lambda dtype: nn.Upsample(size=(5, 4), mode="bilinear"), (2, 3, 3)),
    "upsample_bilinear_align": (
        lambda dtype: nn.Upsample(scale_factor=2.5, mode="bilinear", align_corners=True),
        (2, 2, 3)),
}
PADDED_FIRST = {"conv1d_same_circular", "conv2d_same_even", "conv2d_reflect_groups",
                "conv2d_replicate_stride"}  # padding nodes, then the convolution node


@pytest.mark.parametrize("name", list(LAYERS))
def test_gradients_by_finite_differences(name, backend, kernels, rng):
    dp.manual_seed(0)
    factory, shape = LAYERS[name]
    x = to_tensor(_distinct(rng, (1, *shape)), requires_grad=True)
    module_gradcheck(factory(F64), x)


def test_max_pool_indices_and_functional_forms_by_finite_differences(backend, kernels, rng):
    x = to_tensor(_distinct(rng, (2, 2, 5, 6)), requires_grad=True)
    module_gradcheck(nn.AdaptiveMaxPool2d((2, 4), return_indices=True), x,
                     output=lambda result: result[0])
    w = to_tensor(rng.standard_normal((2, 3, 2)), requires_grad=True)
    line = to_tensor(rng.standard_normal((2, 2, 5)), requires_grad=True)
    dp.testing.gradcheck(lambda a, b: F.conv_transpose1d(a, b, stride=2, dilation=2),
                         [line, w])
    dp.testing.gradcheck(lambda a: F.interpolate(a, scale_factor=1.7, mode="bilinear"), [x])


def _nodes(output):
    """The graph nodes that made ``output``, following every edge back to the leaves."""
    found, stack = [], [output._node]
    while stack:
        node = stack.pop()
        if isinstance(node, Function) and all(node is not seen for seen in found):
            found.append(node)
            stack.extend(node.parents or ())
    return found


@pytest.mark.parametrize("name", list(LAYERS))
def test_one_graph_node_per_call(name, rng):
    factory, shape = LAYERS[name]
    x = to_tensor(rng.standard_normal((2, *shape)), requires_grad=True)
    nodes = _nodes(factory(F64)(x))
    if name in PADDED_FIRST:  # the rest pad the input (``dparray.ops.pad``)
        assert [type(n).__name__.startswith("Conv") for n in nodes] == [True] + [False] * (
            len(nodes) - 1)
    else:
        assert len(nodes) == 1


@pytest.mark.parametrize("options", [{"padding": 1}, {"stride": 2, "padding": 2, "dilation": 2,
                                                     "groups": 2}], ids=["plain", "strided"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_input_gradient_added_back_image_by_image_is_the_whole_batchs(options, dtype,
                                                                          monkeypatch, rng):
    """NumPy's convolution kernel adds the input gradient's columns back a block of images at
    a time (``COLUMN_BLOCK_BYTES``; these small batches fit one block): one image per block
    gives the one-block gradient, and the reference's."""
    from dparray.backends import _numpy_kernels

    assert "conv2d" in _numpy_kernels.table()  # Numba is a dependency
    x = to_tensor(rng.standard_normal((5, 4, 7, 6)).astype(dtype), requires_grad=True)
    w = to_tensor(rng.standard_normal((6, 4 // options.get("groups", 1), 3, 3)).astype(dtype))
    out_weight = None

    def input_gradient():
        nonlocal out_weight
        out = F.conv2d(x, w, **options)
        if out_weight is None:
            out_weight = to_tensor(rng.standard_normal(out.shape).astype(dtype))
        return (out * out_weight).sum().backward()[x].numpy()

    products = []
    counted = _numpy_kernels.matmul

    def counting(*args):
        products.append(args[1].shape)
        return counted(*args)

    with dp.kernels.kernels_enabled():
        whole = input_gradient()
        monkeypatch.setattr(_numpy_kernels, "COLUMN_BLOCK_BYTES", 1)
        monkeypatch.setattr(_numpy_kernels, "matmul", counting)
        blocks = input_gradient()
    with dp.kernels.reference_only():
        reference = input_gradient()
    tight = 1e-13 if dtype == "float64" else 2e-6
    assert len(products) == 1 + 5  # the forward product, then one per image
    np.testing.assert_allclose(blocks, whole, rtol=tight, atol=tight)
    np.testing.assert_allclose(blocks, reference, rtol=tight * 10, atol=tight * 10)


@pytest.mark.parametrize("name", ["conv1d", "max_pool1d", "avg_pool1d"])
def test_one_dimensional_layers_use_the_two_dimensional_kernels(name):
    table = kernel_table(dp.get_backend("numpy"))
    reference = {"conv1d": _conv.Conv1d, "max_pool1d": _pooling.MaxPool1d,
                 "avg_pool1d": _pooling.AvgPool1d}[name]
    two_d = {"conv1d": "conv2d", "max_pool1d": "max_pool2d", "avg_pool1d": "avg_pool2d"}[name]
    assert (name in table) == (two_d in table)  # no kernels where Numba cannot run
    if name in table:
        assert issubclass(table[name], reference) and issubclass(table[name], table[two_d])


@pytest.mark.parametrize("name", list(LAYERS))
def test_float32_stays_float32(name, backend, kernels, rng):
    factory, shape = LAYERS[name]
    single = factory(dp.float32)
    double = factory(F64)
    double.load_state_dict({k: v.astype(F64) for k, v in single.state_dict().items()})
    data = _distinct(rng, (2, *shape))
    x = to_tensor(data.astype(np.float32), requires_grad=True)
    out = single(x)
    assert out.dtype == dp.float32
    np.testing.assert_allclose(out.numpy(), double(to_tensor(data)).numpy(), rtol=2e-5,
                               atol=2e-5)
    grads = out.sum().backward()
    assert grads[x].dtype == dp.float32 and grads[x].shape == x.shape
    for p in single.parameters():
        assert grads[p].dtype == dp.float32


@pytest.mark.parametrize("name", list(LAYERS))
def test_an_empty_batch_gives_empty_outputs_and_zero_parameter_gradients(name, backend,
                                                                          kernels):
    factory, shape = LAYERS[name]
    layer = factory(F64)
    x = to_tensor(np.zeros((0, *shape)), requires_grad=True)
    out = layer(x)
    assert out.shape[0] == 0 and out.shape[1:] == layer(to_tensor(np.ones((1, *shape)))).shape[1:]
    grads = out.sum().backward()
    assert grads[x].shape == x.shape
    for p in layer.parameters():
        np.testing.assert_array_equal(grads[p].numpy(), np.zeros(p.shape))


# ----------------------------------------------------------------------------- host references
def test_adaptive_pools_against_their_window_formula(backend, rng):
    data = rng.standard_normal((2, 3, 7, 10))
    x = to_tensor(data)
    oh, ow = 3, 4
    rows = [(i * 7 // oh, math.ceil((i + 1) * 7 / oh)) for i in range(oh)]
    cols = [(j * 10 // ow, math.ceil((j + 1) * 10 / ow)) for j in range(ow)]
    mean = np.array([[data[:, :, a:b, c:d].mean(axis=(2, 3)) for c, d in cols] for a, b in rows])
    top = np.array([[data[:, :, a:b, c:d].max(axis=(2, 3)) for c, d in cols] for a, b in rows])
    np.testing.assert_allclose(F.adaptive_avg_pool2d(x, (oh, ow)).numpy(),
                               mean.transpose(2, 3, 0, 1), rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(F.adaptive_max_pool2d(x, (oh, ow)).numpy(),
                                  top.transpose(2, 3, 0, 1))


def test_non_finite_values_stay_in_their_windows(backend):
    data = np.arange(36.0).reshape(1, 1, 6, 6)
    data[0, 0, 0, 0] = np.inf
    data[0, 0, 5, 5] = np.nan
    x = to_tensor(data)
    mean = F.adaptive_avg_pool2d(x, 3).numpy()[0, 0]
    assert mean[0, 0] == np.inf and np.isnan(mean[2, 2])
    assert np.isfinite(mean).sum() == 7  # the other windows hold neither
    top = F.adaptive_max_pool2d(x, 3).numpy()[0, 0]
    assert top[0, 0] == np.inf and np.isnan(top[2, 2]) and np.isfinite(top).sum() == 7
    near = F.interpolate(x, scale_factor=2).numpy()[0, 0]
    assert np.isinf(near[:2, :2]).all() and np.isnan(near[10:, 10:]).all()
    assert np.isfinite(near).sum() == 144 - 8


def test_interpolate_equals_upsample_and_the_functional_forms_equal_the_layers(backend, rng):
    x = to_tensor(rng.standard_normal((2, 4, 5, 6)))
    for kwargs in ({"scale_factor": 1.5}, {"size": (3, 8), "mode": "bilinear"},
                   {"scale_factor": (2.0, 0.5), "mode": "bilinear", "align_corners": True}):
        np.testing.assert_array_equal(F.interpolate(x, **kwargs).numpy(),
                                      nn.Upsample(**kwargs)(x).numpy())
    dp.manual_seed(0)
    line = to_tensor(rng.standard_normal((2, 4, 9)))
    conv = nn.Conv1d(4, 6, 3, stride=2, padding="valid", groups=2, dtype=F64)
    np.testing.assert_array_equal(
        conv(line).numpy(), F.conv1d(line, conv.weight, conv.bias, 2, "valid", 1, 2).numpy())
    same = nn.Conv2d(4, 2, (2, 3), padding="same", dilation=(3, 1), dtype=F64)
    np.testing.assert_array_equal(
        same(x).numpy(), F.conv2d(x, same.weight, same.bias, padding="same",
                                  dilation=(3, 1)).numpy())
    up = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1, dtype=F64)
    np.testing.assert_array_equal(
        up(x).numpy(), F.conv_transpose2d(x, up.weight, up.bias, 2, 1, 1).numpy())
    for layer, function in ((nn.MaxPool1d(3, 2, 1), F.max_pool1d(line, 3, 2, 1)),
                            (nn.AvgPool1d(3, 2, 1), F.avg_pool1d(line, 3, 2, 1)),
                            (nn.AdaptiveAvgPool2d((2, None)), F.adaptive_avg_pool2d(x, (2, None))),
                            (nn.AdaptiveMaxPool2d(3), F.adaptive_max_pool2d(x, 3))):
        source = line if isinstance(layer, (nn.MaxPool1d, nn.AvgPool1d)) else x
        np.testing.assert_array_equal(layer(source).numpy(), function.numpy())
    values, positions = F.max_pool1d(line, 3, 2, 1, return_indices=True)
    taken = np.take_along_axis(line.numpy(), positions.numpy(), axis=2)
    np.testing.assert_array_equal(values.numpy(), taken)


# ----------------------------------------------------------------------------- DataParallel
def _results_and_gradients(model, x, weights):
    out = model(x)
    outputs = list(out) if isinstance(out, tuple) else [out]
    loss = (outputs[0] * weights).sum()
    return [o.numpy() for o in outputs], loss.backward()


@pytest.mark.parametrize("name", [*LAYERS, "adaptive_max_pool2d_indices"])
@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("execution", ["threads", "inline"])
def test_under_data_parallel_same_as_unwrapped(name, workers, execution, backend, rng):
    dp.manual_seed(0)
    if name == "adaptive_max_pool2d_indices":
        module, shape = nn.AdaptiveMaxPool2d((2, 3), return_indices=True), (2, 5, 7)
    else:
        factory, shape = LAYERS[name]
        module = factory(F64)
    x = to_tensor(rng.standard_normal((5, *shape)), requires_grad=True)
    first = module(x)
    weights = to_tensor(rng.standard_normal((first[0] if isinstance(first, tuple)
                                             else first).shape))
    expected, expected_grads = _results_and_gradients(module, x, weights)
    got, grads = _results_and_gradients(dp.DataParallel(module, workers, execution=execution),
                                        x, weights)
    for out, want in zip(got, expected, strict=True):
        np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-14)
    assert set(grads) == set(expected_grads) and x in grads
    for variable in expected_grads:
        np.testing.assert_allclose(grads[variable].numpy(), expected_grads[variable].numpy(),
                                   rtol=1e-12, atol=1e-13)


# ----------------------------------------------------------------------------- errors
CONSTRUCTION_ERRORS = [
    (lambda: nn.Conv1d(2, 3, 3, padding="full"), ValueError,
     r"Conv1d: padding must be one of 'valid', 'same', got 'full'"),
    (lambda: nn.Conv2d(2, 3, 3, stride=2, padding="same"), ValueError,
     r"Conv2d: padding='same' needs stride 1, got stride=\(2, 2\)"),
    (lambda: nn.Conv2d(2, 3, 3, padding_mode="mirror"), ValueError,
     r"Conv2d: padding_mode must be one of 'zeros', 'reflect', 'replicate', 'circular'"),
    (lambda: nn.Conv2d(2, 3, 3, padding=1.5), TypeError, r"Conv2d: padding must be an int"),
    (lambda: nn.Conv2d(2, 3, 3, padding=-1), ValueError, r"Conv2d: padding must be at least 0"),
    (lambda: nn.Conv1d(2, 3, (3, 3)), ValueError, r"Conv1d: kernel_size must be an int or 1"),
    (lambda: nn.Conv1d(2, 3, 3, groups=2), ValueError, r"must be divisible by groups \(2\)"),
    (lambda: nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect"), ValueError,
     r"ConvTranspose2d: only padding_mode='zeros' is supported, got 'reflect'"),
    (lambda: nn.ConvTranspose2d(2, 2, 3, stride=2, output_padding=2), ValueError,
     r"ConvTranspose2d: output_padding must be smaller than either stride or dilation"),
    (lambda: nn.ConvTranspose1d(3, 2, 3, groups=2), ValueError,
     r"ConvTranspose1d: in_channels \(3\) and out_channels \(2\) must be divisible"),
    (lambda: nn.ConvTranspose2d(2, 2, 3, bias=1), TypeError, r"bias must be a bool"),
    (lambda: nn.MaxPool2d(3, padding=2), ValueError,
     r"MaxPool2d: padding 2 must be at most half of kernel_size 3"),
    (lambda: nn.MaxPool2d(3, padding=2, dilation=2), ValueError,
     r"MaxPool2d: padding 2 must be at most half of kernel_size 3"),
    (lambda: nn.AvgPool1d(2, stride=0), ValueError, r"AvgPool1d: stride must be at least 1"),
    (lambda: nn.MaxPool1d(2, return_indices=1), TypeError,
     r"MaxPool1d: return_indices must be a bool"),
    (lambda: nn.AdaptiveAvgPool2d(0), ValueError,
     r"AdaptiveAvgPool2d: output_size must be at least 1, got 0"),
    (lambda: nn.AdaptiveMaxPool2d((1, 2, 3)), ValueError,
     r"AdaptiveMaxPool2d: output_size must be an int or 2 ints \(or None\)"),
    (lambda: nn.AdaptiveAvgPool2d(2.0), TypeError, r"AdaptiveAvgPool2d: output_size must be an"),
    (lambda: nn.Upsample(), ValueError, r"Upsample: exactly one of size and scale_factor"),
    (lambda: nn.Upsample(size=2, scale_factor=2), ValueError, r"exactly one of size and"),
    (lambda: nn.Upsample(scale_factor=2, mode="area"), ValueError,
     r"Upsample: mode must be one of 'nearest', 'nearest-exact', 'linear', 'bilinear', "
     r"'bicubic', 'trilinear', got 'area'"),
    (lambda: nn.Upsample(scale_factor=2, align_corners=True), ValueError,
     r"Upsample: align_corners can only be set with the interpolating modes: linear, "
     r"bilinear, bicubic or trilinear"),
    (lambda: nn.Upsample(scale_factor=2, mode="bilinear", align_corners=1), TypeError,
     r"Upsample: align_corners must be a bool"),
    (lambda: nn.Upsample(size=3, recompute_scale_factor=True), ValueError,
     r"Upsample: recompute_scale_factor needs scale_factor"),
    (lambda: nn.Upsample(scale_factor=0), ValueError,
     r"Upsample: scale_factor must be greater than 0.0"),
    (lambda: nn.Upsample(scale_factor="2"), TypeError, r"Upsample: scale_factor must be a number"),
    (lambda: nn.Upsample(size=(2, 0)), ValueError, r"Upsample: size must be at least 1"),
]


@pytest.mark.parametrize("make, error, message", CONSTRUCTION_ERRORS)
def test_bad_arguments_are_refused_when_the_layer_is_made(make, error, message):
    with pytest.raises(error, match=message):
        make()


CALL_ERRORS = [
    (lambda: nn.Conv1d(2, 3, 3), (2, 2, 4, 4), ValueError,
     r"Conv1d: expected \(N, 2, L\) or unbatched \(2, L\) input for weight of shape "
     r"\(3, 2, 3\) and groups=1, got shape \(2, 2, 4, 4\)"),
    (lambda: nn.Conv1d(2, 3, 5, dilation=2), (1, 2, 6), ValueError,
     r"Conv1d: a kernel of size \(5,\) .* does not fit an input of spatial size \(6,\)"),
    (lambda: nn.Conv2d(2, 3, 3, padding=3, padding_mode="reflect"), (1, 2, 3, 5), ValueError,
     r"pad: reflect widths must be less than the axis's length"),
    (lambda: nn.ConvTranspose2d(2, 2, 3), (1, 3, 4, 4), ValueError,
     r"ConvTranspose2d: expected \(N, 2, H, W\) or unbatched \(2, H, W\) input for weight of "
     r"shape \(2, 2, 3, 3\)"),
    (lambda: nn.ConvTranspose2d(2, 2, 3, padding=3), (1, 2, 2, 2), ValueError,
     r"ConvTranspose2d: the output would be empty"),
    (lambda: nn.MaxPool1d(2), (3,), ValueError,
     r"MaxPool1d: expected an \(N, C, L\) or unbatched \(C, L\) input"),
    (lambda: nn.AvgPool1d(5), (1, 1, 3), ValueError,
     r"AvgPool1d: a kernel of size \(5,\) .* does not fit an input of spatial size \(3,\)"),
    (lambda: nn.AdaptiveMaxPool2d(2), (1, 1, 0, 3), ValueError,
     r"AdaptiveMaxPool2d: expected an input with non-empty spatial axes"),
    (lambda: nn.AdaptiveAvgPool2d(2), (1, 3), ValueError,
     r"AdaptiveAvgPool2d: expected an \(N, C, H, W\) or unbatched \(C, H, W\) input"),
    (lambda: nn.Upsample(scale_factor=0.1), (1, 1, 4, 4), ValueError,
     r"Upsample: scale_factor \(0.1, 0.1\) gives an empty output"),
    (lambda: nn.Upsample(scale_factor=2, mode="bilinear"), (1, 1, 4), ValueError,
     r"Upsample: mode 'bilinear' needs an \(N, C, H, W\) input, got shape \(1, 1, 4\)"),
    (lambda: nn.Upsample(scale_factor=2), (1, 4), ValueError,
     r"Upsample: expected an \(N, C, L\), \(N, C, H, W\) or \(N, C, D, H, W\) input"),
    (lambda: nn.Upsample(size=(2, 3)), (1, 1, 4), ValueError,
     r"Upsample: size \(2, 3\) has 2 entries for an input of 1 spatial axes"),
]


@pytest.mark.parametrize("make, shape, error, message", CALL_ERRORS)
def test_bad_inputs_are_refused_and_change_nothing(make, shape, error, message, backend):
    dp.manual_seed(0)
    module = make()
    before = {k: v.numpy().copy() for k, v in module.state_dict().items()}
    with pytest.raises(error, match=message):
        module(dp.ones(*shape))
    for key, value in module.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), before[key])


def test_bad_calls_of_the_functional_forms(backend):
    x = dp.ones(1, 2, 5, 5)
    with pytest.raises(TypeError, match="interpolate: input must be a floating-point tensor"):
        F.interpolate(dp.ones(1, 1, 2, 2, dtype=dp.int64), scale_factor=2, mode="bilinear")
    with pytest.raises(TypeError, match="adaptive_avg_pool2d: input must be a floating-point"):
        F.adaptive_avg_pool2d(dp.ones(1, 1, 2, 2, dtype=dp.int64), 1)
    with pytest.raises(ValueError, match="interpolate: antialias=True is not supported"):
        F.interpolate(x, scale_factor=2, mode="bilinear", antialias=True)
    with pytest.raises(TypeError, match="conv2d: weight must be a Tensor"):
        F.conv2d(x, np.ones((2, 2, 3, 3)))
    with pytest.raises(ValueError, match=r"conv_transpose2d: bias of shape \(3,\) does not fit"):
        F.conv_transpose2d(x, dp.ones(2, 2, 3, 3), dp.ones(3))
    up = nn.ConvTranspose2d(2, 2, 3, stride=2)
    with pytest.raises(ValueError, match=r"requested an output size of \[13, 12\], but valid "
                                         r"sizes range from \[11, 11\] to \[12, 12\]"):
        up(x, output_size=(13, 12))
    with pytest.raises(ValueError, match="output_size must have 2 or 4 elements, got 3"):
        up(x, output_size=(1, 11, 11))
    with pytest.raises(TypeError, match="output_size must be a sequence of ints, got 11"):
        up(x, output_size=11)
