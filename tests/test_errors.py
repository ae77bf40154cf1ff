"""Bad input: a clear error, of a built-in type, before any work or change of state."""

from __future__ import annotations

import numpy as np
import pytest

import dparray as dp
from dparray import nn, optim


def test_matmul_shape_mismatch_names_both_shapes(backend):
    with pytest.raises(ValueError, match=r"\(3, 4\) and \(5, 2\) do not align"):
        dp.ones(3, 4) @ dp.ones(5, 2)
    with pytest.raises(ValueError, match=r"\(2, 3, 4\) and \(3, 4, 5\) cannot be broadcast"):
        dp.ones(2, 3, 4) @ dp.ones(3, 4, 5)
    with pytest.raises(ValueError, match="0-d operands"):
        dp.ones(()) @ dp.ones(3)


def test_mixing_backends_names_both():
    a = dp.ones(2, backend="numpy")
    b = dp.ones(2, backend="array_api_strict")
    with pytest.raises(ValueError, match="backends 'numpy' and 'array_api_strict'"):
        a + b
    with pytest.raises(ValueError, match="backends 'numpy' and 'array_api_strict'"):
        _ = a < b
    with pytest.raises(ValueError, match="backends 'numpy' and 'array_api_strict'"):
        dp.cat([a, b])


def test_dtype_kinds_mix_only_where_pytorch_mixes_them(backend):
    ints, floats = dp.tensor([1, 2], dtype="int32"), dp.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="matmul: cannot mix dtypes float32 and int64"):
        floats @ dp.tensor([[1], [2]])
    with pytest.raises(TypeError, match="lerp: cannot mix dtypes float32 and int32"):
        dp.lerp(floats, ints, 0.5)
    with pytest.raises(TypeError, match="isclose: cannot mix dtypes int32 and float32"):
        dp.isclose(ints, floats)
    assert (floats + dp.tensor([1.0, 2.0], dtype="float64")).dtype == dp.float64


def test_backward_on_a_non_scalar_needs_a_gradient(backend):
    y = dp.ones(2, 3, requires_grad=True) * 2
    with pytest.raises(ValueError, match=r"single-element tensor, got shape \(2, 3\)"):
        y.backward()
    with pytest.raises(ValueError, match=r"gradient shape \(3,\) does not match .*\(2, 3\)"):
        y.backward(dp.ones(3))
    with pytest.raises(TypeError, match="needs a Tensor gradient"):
        y.backward(np.ones((2, 3)))


def test_backward_twice_through_a_freed_graph(backend):
    x = dp.tensor([1.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=r"already freed.*retain_graph=True"):
        y.backward()


def test_a_freed_graph_is_detected_before_any_work(backend):
    x = dp.tensor([1.0], requires_grad=True)
    shared = x * 3.0
    shared.sum().backward()  # frees the Mul node
    w = dp.tensor([2.0], requires_grad=True)
    late = (shared * w).sum()
    with pytest.raises(RuntimeError, match="already freed"):
        late.backward()
    assert late.grad_fn.parents is not None  # the new node was not run or freed


def test_backward_without_any_variable(backend):
    with pytest.raises(RuntimeError, match="depends on no variable"):
        (dp.ones(2) * 2).sum().backward()


def test_item_on_a_non_scalar(backend):
    with pytest.raises(ValueError, match=r"got shape \(2, 2\)"):
        dp.ones(2, 2).item()


def test_unknown_backend_and_environment():
    with pytest.raises(ValueError, match="unknown backend 'tpu'; registered: numpy"):
        dp.zeros(1, backend="tpu")


def test_op_argument_errors(backend):
    x = dp.ones(2, 3)
    with pytest.raises(ValueError, match=r"sum: axis 2 is out of range .* 2 dimensions"):
        x.sum(axis=2)
    with pytest.raises(ValueError, match=r"cannot view shape \(2, 3\) \(6 elements\) as \(4, -1\)"):
        x.reshape(4, -1)
    with pytest.raises(ValueError, match="not a permutation"):
        x.permute(0, 0)
    with pytest.raises(ValueError, match=r"cannot broadcast shape \(2, 3\) to \(3, 3\)"):
        x.broadcast_to((3, 3))
    assert x.squeeze(1).shape == (2, 3)  # PyTorch keeps an axis whose size is not 1
    with pytest.raises(ValueError, match=r"differ outside axis 0"):
        dp.cat([x, dp.ones(2, 2)])
    with pytest.raises(ValueError, match="do not add up to 3"):
        x.split([1, 1], axis=1)
    with pytest.raises(IndexError, match="out of range for axis 0 of size 2"):
        x[[0, 2]]
    with pytest.raises(TypeError, match="cannot index with float"):
        x[0.5]
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh'"):
        dp.gelu(x, approximate="erf")
    with pytest.raises(TypeError, match="exp needs at least one Tensor input, got float".replace(
            "exp", "Exp")):
        dp.exp(1.0)
    with pytest.raises(TypeError, match="condition must be a bool tensor"):
        dp.where(x, x, x)


# --------------------------------------------------------------------------- one mistake, one type
X = dp.ones(2, 3)


@pytest.mark.parametrize("call, message", [
    (lambda x: x.sum(axis=1.0), "^sum: axis must be an int, got 1.0"),
    (lambda x: x.sum(axis=(0, 1.0)), "^sum: axis must be an int"),
    (lambda x: x.mean(axis="0"), "axis must be an int, got '0'"),
    (lambda x: x.transpose(0.0, 1), "^transpose: axis must be an int"),
    (lambda x: x.unsqueeze(1.0), "^unsqueeze: axis must be an int"),
    (lambda x: x.flatten(0, None), "^flatten: axis must be an int, got None"),
    (lambda x: x.squeeze(0.0), "^squeeze: axis must be an int"),
    (lambda x: x.permute(0, 1.0), "^permute: each entry of axes must be an int"),
    (lambda x: x.reshape(2.0, 3), "^reshape: each entry of shape must be an int, got 2.0"),
    (lambda x: dp.broadcast_to(x, (2.0, 3)), "^broadcast_to: each entry of shape must be an"),
    (lambda x: x.expand(2, 3.0), "^expand: each entry of shape must be an int"),
    (lambda x: x.split(1.5), "^split: split_size_or_sections must be an int, got 1.5"),
    (lambda x: x.split([1.0, 1]), "^split: each section size must be an int, got 1.0"),
    (lambda x: x.split(2, axis=0.0), "^split: axis must be an int"),
    (lambda x: x.chunk(2.0), "^chunk: chunks must be an int, got 2.0"),
    (lambda x: x.chunk(True), "^chunk: chunks must be an int, got True"),
    (lambda x: dp.zeros(2.0), r"^zeros: each size in shape \(2\.0,\) must be an int"),
    (lambda x: dp.randperm(3.0), "^randperm: n must be an int"),
    (lambda x: dp.manual_seed(0.5), "seed must be an int, got 0.5"),
    (lambda x: dp.rand(2, seed="7"), "^rand: seed must be an int"),
])
def test_a_non_int_where_an_int_is_needed_is_a_type_error(call, message, backend):
    with pytest.raises(TypeError, match=message):
        call(dp.ones(2, 3))


@pytest.mark.parametrize("call, message", [
    (lambda x: x.split(0), "^split: split_size_or_sections must be at least 1, got 0"),
    (lambda x: x.split([-1, 3]), "^split: each section size must be at least 0, got -1"),
    (lambda x: x.chunk(0), "^chunk: chunks must be at least 1, got 0"),
    (lambda x: x.sum(axis=-3), "^sum: axis -3 is out of range"),
    (lambda x: dp.randperm(-2), "^randperm: n must be at least 0, got -2"),
])
def test_an_int_out_of_range_is_a_value_error(call, message, backend):
    with pytest.raises(ValueError, match=message):
        call(dp.ones(2, 3))


def test_integer_scalars_of_numpy_count_as_ints(backend):
    x = dp.ones(2, 3)
    assert x.sum(axis=np.int64(1)).shape == (2,)
    assert len(x.chunk(np.int32(2), axis=np.int64(1))) == 2
    assert x.reshape(np.int64(3), 2).shape == (3, 2)


def test_a_non_gradients_is_a_type_error_for_step_and_clipping(backend):
    w = dp.ones(2, requires_grad=True)
    plain = {w: dp.ones(2)}
    with pytest.raises(TypeError, match=r"SGD\.step needs the Gradients that backward"):
        optim.SGD([w], lr=0.1).step(plain)
    with pytest.raises(TypeError, match="clip_grad_norm needs the Gradients that backward"):
        optim.clip_grad_norm(plain, 1.0)
    assert w.tolist() == [1.0, 1.0]


# --------------------------------------------------------------------------- never half-loaded
class _ConvertsBadly:
    """Claims a tensor's shape and dtype, but the backend cannot convert it."""

    shape = (2,)
    dtype = np.dtype("float32")


class _ConvertsToAnotherShape:
    """Claims shape (2,), but converts to shape (3,)."""

    shape = (2,)
    dtype = np.dtype("float32")

    def __array__(self, dtype=None, copy=None):
        return np.ones(3, dtype=np.float32)


@pytest.mark.parametrize("bad, message", [
    (_ConvertsBadly(), "bias: cannot convert the value: tensor: cannot convert the data"),
    (_ConvertsToAnotherShape(), r"bias: the value converts to shape \(3,\), not \(2,\)"),
])
def test_module_load_state_dict_converts_everything_before_assigning(bad, message, backend):
    layer = nn.Linear(3, 2)
    weight, bias = layer.weight.numpy().copy(), layer.bias.numpy().copy()
    data = (layer.weight.data, layer.bias.data)
    state = {"weight": dp.zeros(2, 3), "bias": bad}  # weight comes first and is fine
    with pytest.raises(ValueError, match=message):
        layer.load_state_dict(state)
    assert (layer.weight.data, layer.bias.data) == data  # not even rebound
    np.testing.assert_array_equal(layer.weight.numpy(), weight)
    np.testing.assert_array_equal(layer.bias.numpy(), bias)


def test_module_load_state_dict_names_non_string_keys(backend):
    layer = nn.Linear(1, 1)
    with pytest.raises(ValueError, match="unexpected keys: 3"):
        layer.load_state_dict({**layer.state_dict(), 3: dp.zeros(1)})
