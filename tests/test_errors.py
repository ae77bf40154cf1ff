"""Bad input: a clear error, of a built-in type, before any work or change of state."""

from __future__ import annotations

import numpy as np
import pytest

import dparray as dp


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


def test_dtype_kinds_do_not_mix(backend):
    ints, floats = dp.tensor([1, 2], dtype="int32"), dp.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="cannot mix dtypes int32 and float32"):
        ints + floats
    with pytest.raises(TypeError, match="cannot mix dtypes"):
        floats @ dp.tensor([[1], [2]])
    with pytest.raises(TypeError, match="cannot mix dtypes bool and float32"):
        dp.where(floats > 0, dp.tensor([True, False]), floats)
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
    with pytest.raises(ValueError, match=r"axis 1 of shape .* has size 3, not 1"):
        x.squeeze(1)
    with pytest.raises(ValueError, match=r"differ outside axis 0"):
        dp.cat([x, dp.ones(2, 2)])
    with pytest.raises(ValueError, match="do not add up to 3"):
        x.split([1, 1], axis=1)
    with pytest.raises(IndexError, match="out of range for axis 0 of size 2"):
        x[[0, 2]]
    with pytest.raises(TypeError, match="one array, with only ':' beside it"):
        x[[0, 1], 1:]
    with pytest.raises(TypeError, match="cannot index with float"):
        x[0.5]
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh'"):
        dp.gelu(x, approximate="erf")
    with pytest.raises(ValueError, match="min 1 is greater than max 0"):
        dp.clip(x, 1, 0)
    with pytest.raises(TypeError, match="exp needs at least one Tensor input, got float".replace(
            "exp", "Exp")):
        dp.exp(1.0)
    with pytest.raises(TypeError, match="condition must be a bool tensor"):
        dp.where(x, x, x)
    with pytest.raises(ValueError, match="no degrees of freedom"):
        dp.ones(1).var(correction=1)
