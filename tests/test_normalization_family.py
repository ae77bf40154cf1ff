"""GroupNorm, InstanceNorm1d/2d and RMSNorm (and their functional forms): against the
composition of small ops they replace (with and without the kernel table), by finite
differences on every backend, running statistics against a host formula, under DataParallel,
and with bad arguments (against PyTorch in ``test_torch_parity.py``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
from conftest import to_tensor
from gradient_checks import check_gradients
from nn_helpers import assert_same_gradients, module_gradcheck

import dparray as dp
from dparray import nn
from dparray.nn import functional as F
from dparray.ops.normalization import Normalization, RMSNormalization

F64 = dp.float64


# ----------------------------------------------------------------------------- compositions
def composed_group_norm(x, weight, bias, groups, eps=1e-5):
    n, channels = x.shape[:2]
    view = x.reshape(n, groups, -1)
    centred = view - view.mean(axis=2, keepdims=True)
    variance = (centred * centred).mean(axis=2, keepdims=True)
    out = (centred / (variance + eps).sqrt()).reshape(x.shape)
    if weight is None:
        return out
    affine = (1, channels) + (1,) * (x.ndim - 2)
    return out * weight.reshape(affine) + bias.reshape(affine)


def composed_instance_norm_eval(x, weight, bias, mean, var):
    view = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    out = (x - mean.reshape(view)) / (var.reshape(view) + 1e-5).sqrt()
    return out * weight.reshape(view) + bias.reshape(view)


def composed_rms_norm(x, weight, ndim, eps):
    axes = tuple(range(x.ndim - ndim, x.ndim))
    out = x / ((x * x).mean(axis=axes, keepdims=True) + eps).sqrt()
    return out if weight is None else out * weight


def machine_epsilon(x):
    return float(np.finfo(x.numpy().dtype).eps)


@dataclass
class Case:
    name: str
    fused: Callable[..., dp.Tensor]
    composed: Callable[..., dp.Tensor]
    shapes: list[tuple[int, ...]]
    constants: list[int] = field(default_factory=list)  # inputs that are not variables
    positive: list[int] = field(default_factory=list)  # inputs drawn in [0.5, 2)

    def __repr__(self) -> str:
        return self.name

    def arrays(self, rng, noncontiguous=False):
        result = []
        for i, shape in enumerate(self.shapes):
            a = rng.uniform(0.5, 2.0, shape) if i in self.positive else rng.standard_normal(shape)
            if noncontiguous and a.ndim >= 2:
                a = np.asfortranarray(a)  # the same values, column-major strides
            result.append(a)
        return result

    def inputs(self, rng, dtype=np.float64, noncontiguous=False):
        return [to_tensor(a.astype(dtype), requires_grad=i not in self.constants)
                for i, a in enumerate(self.arrays(rng, noncontiguous))]


CASES = [
    Case("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b),
         lambda x, w, b: composed_group_norm(x, w, b, 2), [(3, 6, 2, 3), (6,), (6,)]),
    Case("group_norm_one_group", lambda x, w, b: F.group_norm(x, 1, w, b),
         lambda x, w, b: composed_group_norm(x, w, b, 1), [(2, 5, 3), (5,), (5,)]),
    Case("group_norm_group_per_channel", lambda x, w, b: F.group_norm(x, 4, w, b, eps=1e-3),
         lambda x, w, b: composed_group_norm(x, w, b, 4, eps=1e-3), [(2, 4, 3), (4,), (4,)]),
    Case("group_norm_no_spatial_axes", lambda x, w, b: F.group_norm(x, 3, w, b),
         lambda x, w, b: composed_group_norm(x, w, b, 3), [(4, 6), (6,), (6,)]),
    Case("group_norm_one_sample_one_column", lambda x, w, b: F.group_norm(x, 1, w, b),
         lambda x, w, b: composed_group_norm(x, w, b, 1), [(1, 2, 1), (2,), (2,)]),
    Case("group_norm_no_affine", lambda x: F.group_norm(x, 2),
         lambda x: composed_group_norm(x, None, None, 2), [(2, 4, 5)]),
    Case("instance_norm", lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
         lambda x, w, b: composed_group_norm(x, w, b, 3), [(2, 3, 5), (3,), (3,)]),
    Case("instance_norm_4d", lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
         lambda x, w, b: composed_group_norm(x, w, b, 2), [(2, 2, 3, 4), (2,), (2,)]),
    Case("instance_norm_one_sample_no_affine", lambda x: F.instance_norm(x),
         lambda x: composed_group_norm(x, None, None, 3), [(1, 3, 2)]),
    Case("instance_norm_running_statistics",
         lambda x, w, b, m, v: F.instance_norm(x, m, v, w, b, use_input_stats=False),
         composed_instance_norm_eval, [(3, 2, 4), (2,), (2,), (2,), (2,)],
         constants=[3, 4], positive=[4]),
    Case("rms_norm", lambda x, w: F.rms_norm(x, 5, w, eps=1e-5),
         lambda x, w: composed_rms_norm(x, w, 1, 1e-5), [(4, 5), (5,)]),
    Case("rms_norm_machine_epsilon", lambda x, w: F.rms_norm(x, (3, 4), w),
         lambda x, w: composed_rms_norm(x, w, 2, machine_epsilon(x)), [(2, 3, 4), (3, 4)]),
    Case("rms_norm_one_row", lambda x, w: F.rms_norm(x, [7], w, eps=1e-5),
         lambda x, w: composed_rms_norm(x, w, 1, 1e-5), [(1, 7), (7,)]),
    Case("rms_norm_one_column", lambda x, w: F.rms_norm(x, 1, w, eps=1e-5),
         lambda x, w: composed_rms_norm(x, w, 1, 1e-5), [(5, 1), (1,)]),
    Case("rms_norm_no_weight", lambda x: F.rms_norm(x, (2, 3), eps=1e-5),
         lambda x: composed_rms_norm(x, None, 2, 1e-5), [(3, 2, 3)]),
]


@pytest.mark.parametrize("noncontiguous", [False, True], ids=["contiguous", "strided"])
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_value_and_gradients_equal_the_composition(case, noncontiguous, backend, kernels, rng):
    inputs = case.inputs(rng, noncontiguous=noncontiguous)
    fused, composed = case.fused(*inputs), case.composed(*inputs)
    assert fused.shape == composed.shape == inputs[0].shape
    np.testing.assert_allclose(fused.numpy(), composed.numpy(), rtol=1e-12, atol=1e-12)
    assert_same_gradients(fused, composed, inputs, rng)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_gradcheck(case, backend, kernels, rng):
    check_gradients(case.fused, case.inputs(rng))


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_float32_stays_float32(case, backend, kernels, rng):
    inputs = case.inputs(rng, dtype=np.float32)
    out = case.fused(*inputs)
    assert out.dtype == dp.float32
    np.testing.assert_allclose(out.numpy(), case.composed(*inputs).numpy(), rtol=2e-5,
                               atol=2e-5)
    grads = out.sum().backward()
    for t in inputs:
        if t.is_variable:
            assert grads[t].dtype == dp.float32 and grads[t].shape == t.shape


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_nan_and_inf_propagate_as_in_the_composition(case, backend, kernels, rng):
    arrays = case.arrays(rng)
    flat = arrays[0].reshape(-1)
    flat[0], flat[-1] = np.nan, np.inf
    inputs = [to_tensor(a, requires_grad=i not in case.constants) for i, a in enumerate(arrays)]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        fused, composed = case.fused(*inputs), case.composed(*inputs)
        np.testing.assert_array_equal(np.isnan(fused.numpy()), np.isnan(composed.numpy()))
        np.testing.assert_array_equal(np.isinf(fused.numpy()), np.isinf(composed.numpy()))


def test_each_call_is_one_graph_node(backend, rng):
    x = to_tensor(rng.standard_normal((2, 4, 3)), requires_grad=True)
    w = to_tensor(rng.standard_normal(4), requires_grad=True)
    for out in (F.group_norm(x, 2, w), F.instance_norm(x, weight=w), F.rms_norm(x, 3)):
        node = out._node  # straight from the variables: no intermediate nodes
        assert isinstance(node, (Normalization, RMSNormalization))
        assert all(parent is None or parent is x or parent is w for parent in node.parents)


# ----------------------------------------------------------------------------- the layers
def _randomized(module, rng):
    for p in module.parameters():
        p.data = to_tensor(rng.standard_normal(p.shape)).data
    return module


def test_group_norm_layer(backend, rng):
    layer = _randomized(nn.GroupNorm(2, 6, dtype=F64), rng)
    assert [name for name, _ in layer.named_parameters()] == ["weight", "bias"]
    assert repr(layer) == "GroupNorm(2, 6, eps=1e-05, affine=True, bias=True)"
    x = rng.standard_normal((3, 6, 4))
    view = x.reshape(3, 2, 12)
    expected = ((view - view.mean(axis=2, keepdims=True)) /
                np.sqrt(view.var(axis=2, keepdims=True) + 1e-5)).reshape(x.shape)
    expected = expected * layer.weight.numpy()[:, None] + layer.bias.numpy()[:, None]
    np.testing.assert_allclose(layer(to_tensor(x)).numpy(), expected, rtol=1e-10)
    np.testing.assert_allclose(layer.eval()(to_tensor(x)).numpy(), expected, rtol=1e-10)
    module_gradcheck(layer, to_tensor(x, requires_grad=True))
    assert nn.GroupNorm(1, 3, affine=False).state_dict() == {}
    assert list(nn.GroupNorm(1, 3, bias=False).state_dict()) == ["weight"]


def test_rms_norm_layer(backend, rng):
    layer = _randomized(nn.RMSNorm([2, 3], dtype=F64), rng)
    assert list(layer.state_dict()) == ["weight"] and layer.weight.shape == (2, 3)
    assert repr(layer) == "RMSNorm((2, 3), eps=None, elementwise_affine=True)"
    x = rng.standard_normal((4, 2, 3))
    rms = np.sqrt((x * x).mean(axis=(1, 2), keepdims=True) + np.finfo(np.float64).eps)
    np.testing.assert_allclose(layer(to_tensor(x)).numpy(), x / rms * layer.weight.numpy(),
                               rtol=1e-12)
    module_gradcheck(layer, to_tensor(x, requires_grad=True))
    assert nn.RMSNorm(3, elementwise_affine=False).state_dict() == {}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rms_norm_default_eps_is_the_machine_epsilon_of_the_input(dtype, backend):
    x = np.array([[1e-4, -2e-4, 3e-4]], dtype=dtype)  # mean(x * x) near float32's epsilon
    eps = np.finfo(dtype).eps
    expected = x / np.sqrt((x.astype(np.float64) ** 2).mean() + eps)
    got = nn.RMSNorm(3, elementwise_affine=False)(to_tensor(x))
    assert got.dtype == (dp.float32 if dtype == np.float32 else dp.float64)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("cls, shape", [(nn.InstanceNorm1d, (3, 2, 5)),
                                        (nn.InstanceNorm2d, (3, 2, 3, 4))])
def test_instance_norm_running_statistics_over_steps_then_evaluation(cls, shape, backend, rng):
    layer = _randomized(cls(2, momentum=0.2, affine=True, track_running_stats=True,
                            dtype=F64), rng)
    assert list(layer.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                        "num_batches_tracked"]
    mean, var = np.zeros(2), np.ones(2)
    axes = tuple(range(2, len(shape)))
    per_channel = (1, 2) + (1,) * len(axes)
    w, b = layer.weight.numpy().reshape(per_channel), layer.bias.numpy().reshape(per_channel)
    for _ in range(2):
        x = rng.standard_normal(shape) * 3 + 1
        own = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True)
                                                              + 1e-5)
        np.testing.assert_allclose(layer(to_tensor(x)).numpy(), own * w + b, rtol=1e-10)
        mean = 0.8 * mean + 0.2 * x.mean(axis=axes).mean(axis=0)
        var = 0.8 * var + 0.2 * x.var(axis=axes, ddof=1).mean(axis=0)
        np.testing.assert_allclose(layer.running_mean.numpy(), mean, rtol=1e-12)
        np.testing.assert_allclose(layer.running_var.numpy(), var, rtol=1e-12)
    assert layer.num_batches_tracked.item() == 0  # PyTorch's instance norm never counts
    layer.eval()
    x = rng.standard_normal(shape)
    expected = (x - mean.reshape(per_channel)) / np.sqrt(var.reshape(per_channel) + 1e-5)
    np.testing.assert_allclose(layer(to_tensor(x)).numpy(), expected * w + b, rtol=1e-10)
    module_gradcheck(layer, to_tensor(x, requires_grad=True))
    np.testing.assert_allclose(layer.running_mean.numpy(), mean, rtol=1e-12)  # eval: unmoved


def test_instance_norm_without_running_statistics_uses_the_input_in_evaluation(backend, rng):
    layer = nn.InstanceNorm2d(2).eval()
    assert layer.state_dict() == {} and layer.weight is None
    assert repr(layer) == ("InstanceNorm2d(2, eps=1e-05, momentum=0.1, affine=False, "
                           "bias=False, track_running_stats=False)")
    x = rng.standard_normal((2, 2, 3, 3))
    expected = (x - x.mean(axis=(2, 3), keepdims=True)) / np.sqrt(
        x.var(axis=(2, 3), keepdims=True) + 1e-5)
    np.testing.assert_allclose(layer(to_tensor(x)).numpy(), expected, rtol=1e-10)
    unbatched = layer(to_tensor(x[1]))
    assert unbatched.shape == (2, 3, 3)
    np.testing.assert_allclose(unbatched.numpy(), expected[1], rtol=1e-10)
    module_gradcheck(nn.InstanceNorm1d(2, affine=True, dtype=F64),
                     to_tensor(rng.standard_normal((2, 5)), requires_grad=True))


def test_group_and_rms_norm_work_with_the_module_api(backend, rng):
    model = nn.Sequential(nn.Linear(4, 6, dtype=F64), nn.GroupNorm(3, 6, dtype=F64),
                          nn.RMSNorm(6, dtype=F64))
    assert [n for n, _ in model.named_parameters()] == [
        "0.weight", "0.bias", "1.weight", "1.bias", "2.weight"]
    x = to_tensor(rng.standard_normal((5, 4)))
    grads = model(x).sum().backward()
    assert set(grads) == set(model.parameters())


# ----------------------------------------------------------------------------- DataParallel
def _with_statistics(module, rng):
    module = _randomized(module, rng)
    module.running_mean.data = to_tensor(rng.standard_normal(module.num_features)).data
    module.running_var.data = to_tensor(rng.uniform(0.5, 1.5, module.num_features)).data
    return module


LAYERS = {
    "group_norm": (lambda rng: _randomized(nn.GroupNorm(2, 4, dtype=F64), rng), (7, 4, 3)),
    "group_norm_one_group_no_affine": (lambda rng: nn.GroupNorm(1, 3, affine=False),
                                       (5, 3, 2, 2)),
    "instance_norm1d_affine": (lambda rng: _randomized(nn.InstanceNorm1d(4, affine=True,
                                                                         dtype=F64), rng),
                               (7, 4, 5)),
    "instance_norm2d": (lambda rng: nn.InstanceNorm2d(3), (5, 3, 2, 3)),
    "instance_norm2d_tracked_eval": (
        lambda rng: _with_statistics(nn.InstanceNorm2d(3, affine=True, track_running_stats=True,
                                                       dtype=F64), rng).eval(), (5, 3, 3, 2)),
    "rms_norm": (lambda rng: _randomized(nn.RMSNorm((4, 3), dtype=F64), rng), (7, 4, 3)),
    "rms_norm_no_weight": (lambda rng: nn.RMSNorm(5, eps=1e-6, elementwise_affine=False),
                           (5, 2, 5)),
}


def _run(model, x, cotangent):
    out = model(x)
    return out.numpy(), (out * cotangent).sum().backward()


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("name", list(LAYERS))
def test_under_data_parallel_same_as_unwrapped(name, workers, backend, rng):
    build, shape = LAYERS[name]
    module = build(rng)
    assert not module.couples_rows()  # each sample is normalised by itself
    x = to_tensor(rng.standard_normal(shape), requires_grad=True)
    cotangent = to_tensor(rng.standard_normal(shape))
    expected, expected_grads = _run(module, x, cotangent)
    model = dp.DataParallel(module, workers, execution="threads")
    got, grads = _run(model, x, cotangent)
    assert model.last_execution == "threads"  # really split into chunks
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    assert set(grads) == set(expected_grads)
    for variable, gradient in expected_grads.items():
        np.testing.assert_allclose(grads[variable].numpy(), gradient.numpy(), rtol=1e-11,
                                   atol=1e-13)


@pytest.mark.parametrize("workers", [2, 3])
def test_instance_norm_tracking_in_training_keeps_chunk_zeros_statistics(workers, backend, rng):
    def build():
        return _with_statistics(nn.InstanceNorm1d(3, affine=True, track_running_stats=True,
                                                  momentum=0.4, dtype=F64),
                                np.random.default_rng(7))

    module = build()
    assert module.couples_rows()  # its running statistics depend on the split
    assert not module.eval().couples_rows()
    module.train()
    x = to_tensor(rng.standard_normal((7, 3, 4)), requires_grad=True)
    cotangent = to_tensor(rng.standard_normal((7, 3, 4)))
    unwrapped = build()
    expected, expected_grads = _run(unwrapped, x, cotangent)
    model = dp.DataParallel(module, workers, execution="auto")
    got, grads = _run(model, x, cotangent)
    assert model.last_execution in ("threads", "inline")  # the chunks always run
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    for mine, twin in ((x, x), (module.weight, unwrapped.weight), (module.bias, unwrapped.bias)):
        np.testing.assert_allclose(grads[mine].numpy(), expected_grads[twin].numpy(),
                                   rtol=1e-11, atol=1e-13)
    first_chunk = -(-7 // workers)  # chunk 0 is the largest of the balanced chunks
    reference = build()
    reference(x[:first_chunk])  # PyTorch's DataParallel keeps replica 0's buffers
    for key in ("running_mean", "running_var"):
        np.testing.assert_allclose(getattr(module, key).numpy(),
                                   getattr(reference, key).numpy(), rtol=1e-12, err_msg=key)


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("build, error, message", [
    (lambda: nn.GroupNorm("2", 4), TypeError, r"GroupNorm: num_groups must be an int, got '2'"),
    (lambda: nn.GroupNorm(0, 4), ValueError, r"GroupNorm: num_groups must be at least 1, got 0"),
    (lambda: nn.GroupNorm(2, 4.0), TypeError, r"GroupNorm: num_channels must be an int, got "
                                               r"4\.0 \(float\)"),
    (lambda: nn.GroupNorm(3, 4), ValueError, r"GroupNorm: num_channels must be divisible by "
                                             r"num_groups \(3\), got 4"),
    (lambda: nn.GroupNorm(2, 4, eps=0.0), ValueError, r"GroupNorm: eps must be greater than "
                                                      r"0\.0, got 0\.0"),
    (lambda: nn.GroupNorm(2, 4, affine=1), TypeError, r"GroupNorm: affine must be a bool, "
                                                      r"got 1"),
    (lambda: nn.GroupNorm(2, 4, bias="no"), TypeError, r"GroupNorm: bias must be a bool"),
    (lambda: nn.InstanceNorm2d(0), ValueError, r"InstanceNorm2d: num_features must be at "
                                               r"least 1, got 0"),
    (lambda: nn.InstanceNorm2d(3, momentum=1.5), ValueError, r"InstanceNorm2d: momentum must "
                                                             r"be at most 1\.0, got 1\.5"),
    (lambda: nn.InstanceNorm1d(3, momentum="0.1"), TypeError, r"InstanceNorm1d: momentum "
                                                              r"must be a number, got '0\.1'"),
    (lambda: nn.InstanceNorm1d(3, track_running_stats=1), TypeError,
     r"InstanceNorm1d: track_running_stats must be a bool, got 1"),
    (lambda: nn.InstanceNorm1d(3, eps=-1e-5), ValueError, r"InstanceNorm1d: eps must be "
                                                          r"greater than 0\.0"),
    (lambda: nn.RMSNorm("4"), TypeError, r"RMSNorm: normalized_shape must be an int, got '4'"),
    (lambda: nn.RMSNorm([4, 0]), ValueError, r"RMSNorm: normalized_shape must be at least 1, "
                                             r"got 0"),
    (lambda: nn.RMSNorm([]), ValueError, r"RMSNorm: normalized_shape must not be empty, "
                                         r"got \[\]"),
    (lambda: nn.RMSNorm(4, eps=0.0), ValueError, r"RMSNorm: eps must be greater than 0\.0"),
    (lambda: nn.RMSNorm(4, eps="tiny"), TypeError, r"RMSNorm: eps must be a number, got "
                                                   r"'tiny'"),
    (lambda: nn.RMSNorm(4, elementwise_affine=None), TypeError,
     r"RMSNorm: elementwise_affine must be a bool, got None"),
])
def test_constructor_errors(build, error, message):
    with pytest.raises(error, match=message):
        build()


def test_input_errors(backend):
    with pytest.raises(ValueError, match=r"GroupNorm\(2, 4\): expected \(N, 4, \.\.\.\) input, "
                                         r"got shape \(2, 6\)"):
        nn.GroupNorm(2, 4)(dp.ones(2, 6))
    with pytest.raises(TypeError, match=r"GroupNorm: input must be a Tensor, got \[1\.0\]"):
        nn.GroupNorm(1, 1)([1.0])
    with pytest.raises(ValueError, match=r"InstanceNorm2d\(3\): expected \(N, 3, H, W\) or "
                                         r"\(3, H, W\) input, got shape \(2, 3, 4\)"):
        nn.InstanceNorm2d(3)(dp.ones(2, 3, 4))
    with pytest.raises(ValueError, match=r"InstanceNorm1d\(3\): expected \(N, 3, L\) or "
                                         r"\(3, L\) input, got shape \(3,\)"):
        nn.InstanceNorm1d(3)(dp.ones(3))
    with pytest.raises(ValueError, match=r"instance_norm: needs more than one value per channel "
                                         r"of each sample, got input of shape \(2, 3, 1\)"):
        nn.InstanceNorm1d(3)(dp.ones(2, 3, 1))
    tracked = nn.InstanceNorm1d(3, track_running_stats=True).eval()
    assert tracked(dp.ones(2, 3, 1)).shape == (2, 3, 1)  # running statistics: one value is fine
    with pytest.raises(ValueError, match=r"rms_norm: input of shape \(2, 3\) does not end in "
                                         r"\(4,\)"):
        nn.RMSNorm(4)(dp.ones(2, 3))
    with pytest.raises(ValueError, match=r"rms_norm: input of shape \(3,\) does not end in "
                                         r"\(2, 3\)"):
        nn.RMSNorm((2, 3))(dp.ones(3))


def test_functional_errors(backend):
    x = dp.ones(2, 4, 3)
    integers = dp.tensor([[[1, 2], [3, 4]]])
    for call, where in ((lambda: F.group_norm(integers, 1), "group_norm"),
                        (lambda: F.instance_norm(integers), "instance_norm"),
                        (lambda: F.rms_norm(integers, 2), "rms_norm")):
        with pytest.raises(TypeError, match=rf"{where}: input must be a floating-point tensor, "
                                            r"got int64"):
            call()
    with pytest.raises(TypeError, match=r"group_norm: input must be a Tensor, got 3\.0"):
        F.group_norm(3.0, 1)
    with pytest.raises(ValueError, match=r"group_norm: num_groups must divide the input's 4 "
                                         r"channels, got 3"):
        F.group_norm(x, 3)
    with pytest.raises(TypeError, match=r"group_norm: num_groups must be an int, got 2\.0"):
        F.group_norm(x, 2.0)
    with pytest.raises(ValueError, match=r"group_norm: expected \(N, C, \.\.\.\) input, got "
                                         r"shape \(4,\)"):
        F.group_norm(dp.ones(4), 1)
    with pytest.raises(ValueError, match=r"group_norm: weight of shape \(3,\) does not fit "
                                         r"input of shape \(2, 4, 3\) \(needs \(4,\)\)"):
        F.group_norm(x, 2, dp.ones(3))
    with pytest.raises(TypeError, match=r"group_norm: bias must be a Tensor"):
        F.group_norm(x, 2, dp.ones(4), np.zeros(4))
    with pytest.raises(ValueError, match=r"instance_norm: expected \(N, C, L, \.\.\.\) input, "
                                         r"got shape \(2, 4\)"):
        F.instance_norm(dp.ones(2, 4))
    with pytest.raises(ValueError, match=r"instance_norm: running_mean and running_var must be "
                                         r"given together"):
        F.instance_norm(x, dp.zeros(4))
    with pytest.raises(ValueError, match=r"instance_norm: use_input_stats=False needs "
                                         r"running_mean and running_var"):
        F.instance_norm(x, use_input_stats=False)
    with pytest.raises(ValueError, match=r"instance_norm: running_var of shape \(3,\) does not "
                                         r"fit"):
        F.instance_norm(x, dp.zeros(4), dp.ones(3))
    with pytest.raises(ValueError, match=r"instance_norm: momentum must be at most 1\.0"):
        F.instance_norm(x, momentum=2.0)
    with pytest.raises(ValueError, match=r"rms_norm: weight of shape \(4,\) does not match "
                                         r"normalized_shape \(3,\)"):
        F.rms_norm(x, 3, dp.ones(4))
    with pytest.raises(ValueError, match=r"rms_norm: eps must be greater than 0\.0"):
        F.rms_norm(x, 3, eps=-1.0)


def test_a_refused_call_changes_no_running_statistics(backend, rng):
    layer = nn.InstanceNorm1d(3, track_running_stats=True)
    layer.running_mean.data = to_tensor(rng.standard_normal(3).astype(np.float32)).data
    before = {key: value.numpy().copy() for key, value in layer.state_dict().items()}
    for bad in (dp.ones(2, 4, 5), dp.ones(2, 3, 1), dp.ones(0, 3, 5)):
        with pytest.raises(ValueError):
            layer(bad)
    mean, var = layer.running_mean, layer.running_var
    with pytest.raises(ValueError, match="instance_norm: an empty input cannot update"):
        F.instance_norm(dp.ones(0, 3, 5), mean, var)
    with pytest.raises(ValueError, match="instance_norm: running_var of shape"):
        F.instance_norm(dp.ones(2, 3, 5), mean, dp.ones(4))
    for key, value in layer.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), before[key], err_msg=key)


def test_an_empty_batch_gives_an_empty_output_as_in_pytorch(backend):
    assert F.group_norm(dp.ones(0, 4, 3), 2).shape == (0, 4, 3)
    assert F.instance_norm(dp.ones(0, 4, 3)).shape == (0, 4, 3)
    assert F.rms_norm(dp.ones(0, 3), 3).shape == (0, 3)
    with pytest.raises(ValueError, match=r"instance_norm: an empty input cannot update the "
                                         r"running statistics, got shape \(2, 3, 0\)"):
        F.instance_norm(dp.ones(2, 3, 0), dp.zeros(3), dp.ones(3))
