"""Devices: PyTorch's vocabulary on dparray's backends (``dparray/devices.py``)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import dparray as dp
from dparray import nn
from dparray.devices import native_devices, placement

CUDA = "cupy" in dp.available_backends()
STRICT_DEVICES = native_devices(dp.get_backend("array_api_strict"))


def test_a_device_names_its_type_and_index():
    assert dp.device("cuda:1") == dp.device("cuda", 1) == dp.device(1)
    assert dp.device(dp.device("cuda:3")) == dp.device("cuda:3")
    assert dp.device("numpy") == dp.device("cpu") and dp.device("cupy:1") == dp.device("cuda:1")
    assert dp.device("array_api_strict:2").type == "array_api_strict"
    assert dp.device("array_api_strict:2").index == 2
    assert len({dp.device("cpu"), dp.device("cpu"), dp.device("cuda")}) == 2
    assert pickle.loads(pickle.dumps(dp.device("cuda:1"))) == dp.device("cuda:1")
    assert dp.device("cpu") != "cpu"  # as in PyTorch: a device is not its string


@pytest.mark.parametrize(("args", "error", "message"), [
    (("mps",), ValueError, r"unknown device type in 'mps'; dparray has 'cpu' \(NumPy\), "
                           r"'cuda' \(CuPy\) and its other backends' names \(.*array_api_strict"),
    (("cuda:x",), ValueError, r"the index in 'cuda:x' must be a non-negative integer"),
    (("cuda:-1",), ValueError, r"the index in 'cuda:-1' must be a non-negative integer"),
    (("cuda:01",), ValueError, r"the index in 'cuda:01' must be a non-negative integer"),
    (("cuda:1", 2), ValueError, r"the index is given twice, in 'cuda:1' and as 2"),
    (("cuda", -1), ValueError, r"the index must be non-negative, got -1"),
    (("cuda", 1.0), TypeError, r"the index must be an int, got 1.0 \(float\)"),
    ((None,), TypeError, r"expected a device string such as 'cpu' or 'cuda:0', a device or an "
                         r"int, got None"),
    ((True,), TypeError, r"expected a device string"),
])
def test_a_bad_device_spelling_is_refused(args, error, message):
    with pytest.raises(error, match="^device: " + message):
        dp.device(*args)


def test_tensor_device_is_a_device_and_to_it_is_the_tensor_itself(backend):
    x = dp.zeros(2, 3)
    expected = {"numpy": dp.device("cpu"), "array_api_strict": dp.device("array_api_strict")}
    assert isinstance(x.device, dp.device)
    if backend.name in expected:
        assert x.device == expected[backend.name]
    else:
        assert x.device.type == "cuda" and x.device.index is not None
    assert x.to(x.device) is x
    assert x.to(str(x.device)) is x
    assert x.to(backend) is x and x.to(backend.name) is x
    assert x.to(x.device, x.dtype) is x and x.to(x) is x
    assert x.is_cuda is (backend.name == "cupy") and x.is_cpu is (backend.name == "numpy")


def test_to_cpu_moves_a_tensor_to_numpy_and_the_gradient_back(backend):
    w = dp.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    moved = w.cpu()
    assert moved.backend.name == "numpy" and moved.device == dp.device("cpu")
    grads = (moved * moved).sum().backward()
    assert grads[w].backend is backend and grads[w].tolist() == [2.0, 4.0]


def test_to_takes_pytorchs_arguments(backend):
    x = dp.tensor([1.5, 2.5])
    assert x.to(dp.float64).dtype == dp.float64
    assert x.to("float64").dtype == dp.float64
    assert x.to(dtype=dp.float64, device="cpu").backend.name == "numpy"
    assert x.to("cpu", dp.float64).dtype == dp.float64
    assert x.to(dp.zeros(1, dtype=dp.int32, backend="numpy")).dtype == dp.int32
    assert x.to(x.device, non_blocking=True) is x
    copied = x.to(x.device, copy=True)
    assert copied is not x and copied.tolist() == x.tolist()


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    (("cpu", "cpu"), {}, "the device is given twice"),
    ((dp.float32,), {"dtype": dp.float64}, "the dtype is given twice"),
    (("cpu", dp.float32, 1), {}, "expected at most a device and a dtype, got 3"),
    ((), {"memory_format": 0}, r"unexpected keyword argument\(s\) memory_format"),
    ((), {"copy": 1}, "copy must be a bool, got 1"),
])
def test_to_refuses_what_it_cannot_read(args, kwargs, message):
    with pytest.raises(TypeError, match="^Tensor.to: " + message):
        dp.zeros(2).to(*args, **kwargs)


def test_a_tensor_argument_comes_alone():
    with pytest.raises(TypeError, match="a tensor argument comes alone"):
        dp.zeros(2).to(dp.zeros(1), dp.float32)


def test_a_device_that_is_not_here_is_an_error_saying_why():
    with pytest.raises(ValueError, match=r"device 'cpu:1' is not available here: backend "
                                         r"'numpy' has 1 device\(s\), numbered from 0"):
        dp.zeros(2).to("cpu:1")
    if not CUDA:
        with pytest.raises(dp.BackendUnavailableError,
                           match=r"^Tensor.to: device 'cuda' is not available here: "):
            dp.zeros(2).cuda()
        with pytest.raises(dp.BackendUnavailableError, match="device 'cuda:0' is not"):
            dp.zeros(2, device="cuda:0")
    with pytest.raises(ValueError, match=r"^Tensor.cuda: 'cpu' is not a CUDA device"):
        dp.zeros(2).cuda("cpu")


def test_strict_namespace_devices_are_numbered_devices():
    """array_api_strict has several devices: ``array_api_strict:1`` is the second one."""
    x = dp.zeros(3, device="array_api_strict:1")
    assert x.device == dp.device("array_api_strict:1") and x.data.device == STRICT_DEVICES[1]
    assert x.to(x.device) is x
    back = x.to("array_api_strict")
    assert back.device == dp.device("array_api_strict") and back.data.device == STRICT_DEVICES[0]
    assert dp.tensor([1.0, 2.0], device="array_api_strict:2").data.device == STRICT_DEVICES[2]
    with pytest.raises(ValueError, match=f"has {len(STRICT_DEVICES)} device"):
        dp.zeros(1, device=f"array_api_strict:{len(STRICT_DEVICES)}")


def test_moving_between_devices_of_one_backend_is_differentiable():
    w = dp.tensor([1.0, 3.0], dtype="float64", requires_grad=True, backend="array_api_strict")
    moved = w.to("array_api_strict:1")
    assert moved.data.device == STRICT_DEVICES[1]
    grads = (moved * moved).sum().backward(dp.tensor(1.0, dtype="float64",
                                                     device="array_api_strict:1"))
    assert grads[w].data.device == STRICT_DEVICES[0] and grads[w].tolist() == [2.0, 6.0]


FACTORIES = [
    lambda device: dp.zeros(2, 3, device=device),
    lambda device: dp.ones(2, device=device),
    lambda device: dp.empty(2, device=device),
    lambda device: dp.full((2,), 1.5, device=device),
    lambda device: dp.tensor([1.0, 2.0], device=device),
    lambda device: dp.tensor(dp.zeros(2, backend="numpy"), device=device),
    lambda device: dp.arange(4, device=device),
    lambda device: dp.eye(3, device=device),
    lambda device: dp.linspace(0.0, 1.0, 5, device=device),
    lambda device: dp.randn(2, device=device),
    lambda device: dp.rand(2, device=device),
    lambda device: dp.randint(5, (3,), device=device),
    lambda device: dp.randperm(4, device=device),
    lambda device: dp.normal(0.0, 1.0, (2,), device=device),
    lambda device: dp.zeros_like(dp.zeros(2, backend="numpy"), device=device),
    lambda device: dp.ones_like(dp.zeros(2, backend="numpy"), device=device),
    lambda device: dp.empty_like(dp.zeros(2, backend="numpy"), device=device),
    lambda device: dp.full_like(dp.zeros(2, backend="numpy"), 3.0, device=device),
    lambda device: dp.rand_like(dp.zeros(2, backend="numpy"), device=device),
    lambda device: dp.randn_like(dp.zeros(2, backend="numpy"), device=device),
    lambda device: dp.randint_like(dp.zeros(2, backend="numpy"), 3, device=device),
    lambda device: dp.zeros(2, backend="numpy").new_zeros(2, device=device),
]


@pytest.mark.parametrize("factory", FACTORIES)
def test_every_factory_takes_device(factory, backend):
    device = dp.zeros(1).device  # the backend under test, by its device
    assert factory(device).device == device
    assert factory(str(device)).backend is backend


@pytest.mark.parametrize("factory", FACTORIES[:5])
def test_a_factory_puts_its_tensor_on_a_numbered_device(factory):
    assert factory("array_api_strict:1").data.device == STRICT_DEVICES[1]


def test_like_factories_keep_the_device_of_their_model():
    model = dp.zeros(2, device="array_api_strict:1")
    for made in (dp.zeros_like(model), dp.ones_like(model), dp.full_like(model, 2.0),
                 dp.rand_like(model), dp.randn_like(model), model.new_ones(3),
                 model.new_tensor([1.0])):
        assert made.data.device == STRICT_DEVICES[1]


def test_backend_and_device_must_agree():
    assert dp.zeros(2, backend="numpy", device="cpu").backend.name == "numpy"
    with pytest.raises(ValueError, match=r"^zeros: backend='numpy' and device="
                                         r"'array_api_strict' disagree; give one of them"):
        dp.zeros(2, backend="numpy", device="array_api_strict")


def test_cuda_and_accelerator_answer_from_the_cupy_backend():
    assert dp.cuda.is_available() is CUDA is dp.accelerator.is_available()
    count = dp.cuda.device_count()
    assert (count > 0) is CUDA and dp.accelerator.device_count() == count
    assert dp.accelerator.current_accelerator() == (dp.device("cuda") if CUDA else None)
    dp.cuda.synchronize()
    dp.accelerator.synchronize()
    device = dp.device("cuda" if dp.cuda.is_available() else "cpu")  # PyTorch's idiom
    assert dp.zeros(2).to(device).device.type == device.type


def test_cuda_manual_seed_restarts_the_streams_as_manual_seed_does():
    dp.cuda.manual_seed(5)
    first = dp.randn(3)
    dp.manual_seed(5)
    dp.cuda.manual_seed_all(5)
    assert dp.randn(3).tolist() == first.tolist()


def test_module_to_moves_and_casts_in_place(backend):
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    weight = model[0].weight
    assert model.to(dp.zeros(1).device) is model and weight.backend is backend
    model.to("cpu")
    assert model[0].weight is weight and weight.backend.name == "numpy"
    assert model[1].running_mean.device == dp.device("cpu")
    model.to(backend, dp.float64)
    assert weight.backend is backend and weight.dtype == dp.float64
    assert model[1].num_batches_tracked.dtype == dp.int64  # only floating tensors are cast
    assert model.float() is model and weight.dtype == dp.float32
    assert model.double() is model and weight.dtype == dp.float64
    assert model.cpu() is model and weight.backend.name == "numpy"
    model.to(dtype=dp.float32)
    assert weight.dtype == dp.float32 and weight.is_variable


def test_module_to_refuses_before_changing_anything():
    model = nn.Linear(2, 2)
    with pytest.raises(TypeError, match=r"^Linear.to: the dtype must be floating"):
        model.to(dp.int64)
    with pytest.raises(ValueError, match="is not available here"):
        model.to("cpu:3")
    if not CUDA:
        with pytest.raises(dp.BackendUnavailableError, match="device 'cuda' is not available"):
            model.cuda()
    assert model.weight.dtype == dp.float32 and model.weight.backend.name == "numpy"


def test_placement_of_a_backend_object_is_its_default_device():
    backend = dp.get_backend("numpy")
    assert placement(backend) == (backend, None)
    assert placement("cpu") == (backend, "cpu") == placement("cpu:0")


@pytest.mark.skipif(not CUDA, reason="needs CuPy and a CUDA device")
def test_cuda_devices_are_cupy_devices():
    x = dp.tensor([1.0, 2.0]).cuda()
    assert x.backend.name == "cupy" and x.device == dp.device("cuda:0") and x.is_cuda
    assert x.to("cuda:0") is x and x.to("cuda") is x and x.cuda() is x
    assert dp.zeros(2, device="cuda:0").device == dp.device("cuda:0")
    assert x.cpu().device == dp.device("cpu")
    np.testing.assert_array_equal(x.cpu().numpy(), [1.0, 2.0])
    count = dp.cuda.device_count()
    with pytest.raises(ValueError, match=f"backend 'cupy' has {count} device"):
        dp.zeros(1, device=f"cuda:{count}")
