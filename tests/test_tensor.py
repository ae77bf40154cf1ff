"""Tensor attributes, factories and dtypes, on every backend."""

from __future__ import annotations

import numpy as np
import pytest

import dparray as dp


def test_attributes(backend):
    t = dp.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert t.shape == (2, 3) and t.ndim == 2 and t.elem_count() == 6 and len(t) == 2
    assert t.backend is backend and t.dtype == dp.float32
    assert not t.is_variable and not t.requires_grad and t.is_leaf


def test_python_floats_take_the_default_dtype_and_arrays_keep_theirs(backend):
    assert dp.tensor([1.5]).dtype == dp.float32
    assert dp.tensor(np.array([1.5])).dtype == dp.float64
    assert dp.tensor([1, 2]).dtype == dp.int64
    assert dp.tensor([True]).dtype == dp.bool
    assert dp.tensor([1.5], dtype="float64").dtype == dp.float64
    dp.set_default_dtype(dp.float64)
    try:
        assert dp.tensor([1.5]).dtype == dp.float64
        assert dp.zeros(2).dtype == dp.float64
    finally:
        dp.set_default_dtype(dp.float32)
    with pytest.raises(TypeError, match="default dtype must be floating"):
        dp.set_default_dtype(dp.int32)


def test_dtypes_name_the_backends_own_objects(backend):
    native = dp.dtypes.native_dtype(backend, dp.float64)
    assert native == backend.xp.float64
    assert dp.tensor([1.0], dtype=backend.xp.float64).dtype == dp.float64
    with pytest.raises(TypeError, match="unknown dtype 'float7'"):
        dp.zeros(2, dtype="float7")


def test_float16_where_the_backend_has_it(backend):
    if not hasattr(backend.xp, "float16"):
        with pytest.raises(TypeError, match="does not support dtype float16"):
            dp.zeros(2, dtype=dp.float16)
    else:
        assert dp.zeros(2, dtype=dp.float16).dtype == dp.float16


def test_factories(backend):
    np.testing.assert_array_equal(dp.zeros(2, 3).numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(dp.ones((2,)).numpy(), np.ones(2))
    full = dp.full((2, 2), 7)
    assert full.dtype == dp.int64 and full.tolist() == [[7, 7], [7, 7]]
    assert dp.full((1,), 0.5).dtype == dp.float32
    assert dp.arange(4).tolist() == [0, 1, 2, 3] and dp.arange(4).dtype == dp.int64
    assert dp.arange(0.0, 1.0, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert dp.zeros_like(full).dtype == dp.int64
    assert dp.ones_like(dp.zeros(3, dtype="float64")).tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match=r"zeros: each size in shape \(-1,\) must be at least 0"):
        dp.zeros(-1)


def test_random_factories_are_seeded(backend):
    a = dp.randn(3, 4, seed=1)
    assert a.shape == (3, 4) and a.dtype == dp.float32
    assert np.array_equal(a.numpy(), dp.randn(3, 4, seed=1).numpy())
    dp.manual_seed(5)
    assert dp.random.initial_seed() == 5
    first = dp.rand(100).numpy()
    dp.manual_seed(5)
    assert np.array_equal(first, dp.rand(100).numpy())
    assert first.min() >= 0.0 and first.max() < 1.0
    with dp.fork_rng(5):
        assert np.array_equal(first, dp.rand(100).numpy())
    assert not np.array_equal(first, dp.rand(100).numpy())
    with pytest.raises(TypeError, match="draws floating values"):
        dp.randn(2, dtype=dp.int32)
    with pytest.raises(ValueError, match="seed must be at least 0, got -1"):
        dp.manual_seed(-1)


def test_variables(backend):
    w = dp.tensor([1.0], requires_grad=True)
    assert w.is_variable and w.requires_grad
    y = w * 2
    assert y.requires_grad and not y.is_variable and y.grad_fn is not None
    with pytest.raises(ValueError, match="only leaf tensors can be variables"):
        y.is_variable = True
    with pytest.raises(TypeError, match="only floating tensors can be variables"):
        dp.tensor([1, 2], requires_grad=True)
    frozen = w.freeze()
    assert not frozen.is_variable and frozen.tolist() == [1.0]
    assert not w.detach().requires_grad
    assert dp.zeros(1).requires_grad_().is_variable


def test_item_and_python_conversions(backend):
    assert dp.tensor([[2.5]]).item() == 2.5
    assert isinstance(dp.tensor(3).item(), int)
    assert dp.tensor(True).item() is True
    assert float(dp.tensor(1.5)) == 1.5 and int(dp.tensor(4)) == 4
    assert [t.item() for t in dp.tensor([1.0, 2.0])] == [1.0, 2.0]
    with pytest.raises(ValueError, match=r"exactly one element, got shape \(2,\)"):
        dp.tensor([1.0, 2.0]).item()
    with pytest.raises(ValueError, match="ambiguous"):
        bool(dp.tensor([1.0, 2.0]))
    x = dp.zeros(2)
    shared = x.detach()
    x[0] = 1.0  # rebinds x (copy-on-write): what shared its data keeps it
    assert x.tolist() == [1.0, 0.0] and shared.tolist() == [0.0, 0.0]


def test_comparisons_are_constants(backend):
    w = dp.tensor([1.0, 2.0, 3.0], requires_grad=True)
    mask = w > 1.5
    assert mask.dtype == dp.bool and not mask.requires_grad
    assert mask.tolist() == [False, True, True]
    assert (w == 2.0).tolist() == [False, True, False]
    assert (w != w).tolist() == [False, False, False]
    assert (w <= 2.0).tolist() == [True, True, False]
    assert (w >= 2.0).tolist() == [False, True, True]
    assert (w < 2.0).tolist() == [True, False, False]
    assert (w > 1.5).any().item() and not (w > 1.5).all().item()


def test_operands_that_are_lists_become_tensors(backend):
    total = dp.tensor([1.0, 2.0]) + np.array([10.0, 20.0])
    assert total.tolist() == [11.0, 22.0] and isinstance(total, dp.Tensor)
    assert (dp.tensor([1.0, 2.0]).__add__([10.0, 20.0])).tolist() == [11.0, 22.0]


def test_repr(backend):
    text = repr(dp.tensor([[1.0, 2.0]], requires_grad=True))
    assert text == (f"tensor([[1., 2.]], dtype=float32, backend={backend.name}, "
                    "is_variable=True)")
    assert "grad_fn=Mul" in repr(dp.tensor([1.0], requires_grad=True) * 2)


def test_astype(backend):
    x = dp.tensor(np.array([1.25, -2.5]), requires_grad=True)
    y = x.astype(dp.float32)
    assert y.dtype == dp.float32 and y.requires_grad
    grads = (y * 2.0).sum().backward()
    assert grads[x].dtype == dp.float64 and grads[x].tolist() == [2.0, 2.0]
    as_int = x.astype("int32")
    assert as_int.dtype == dp.int32 and not as_int.requires_grad
    assert x.to(dp.float32).dtype == dp.float32


def test_to_another_backend_is_differentiable(backend):
    x = dp.tensor(np.array([1.0, 2.0]), requires_grad=True)
    other = "numpy" if backend.name != "numpy" else "array_api_strict"
    moved = x.to(other)
    assert moved.backend.name == other and moved.tolist() == [1.0, 2.0]
    grads = (moved * moved).sum().backward()
    assert grads[x].backend is backend and grads[x].tolist() == [2.0, 4.0]
    assert x.to(backend.name) is x


def test_from_dlpack_round_trip(backend):
    source = np.arange(6.0).reshape(2, 3)
    t = dp.from_dlpack(source)
    assert t.backend is backend and t.tolist() == source.tolist()
    assert np.from_dlpack(dp.tensor(source)).tolist() == source.tolist()


def test_numpy_scalars_promote_like_arrays_on_every_backend(backend):
    t = dp.ones(2)
    assert (t * np.float64(2.0)).dtype == dp.float64  # a NumPy scalar is typed, as in NEP 50
    assert (t * 2.0).dtype == dp.float32  # a Python float is not
    assert (np.float32(3.0) - t).tolist() == [2.0, 2.0]
    assert dp.maximum(t, np.float32(1.5)).tolist() == [1.5, 1.5]
    assert (t < np.float32(1.5)).tolist() == [True, True]


def test_zero_dimensional_results_export_through_dlpack(backend):
    total = dp.tensor(np.array([1.0, 2.0])).sum() * 2.0  # NumPy computes this as a scalar
    assert np.from_dlpack(total).tolist() == 6.0


def test_copy_and_deepcopy(backend):
    import copy

    w = dp.tensor([1.0, 2.0], requires_grad=True)
    shallow, deep = copy.copy(w), copy.deepcopy(w)
    assert shallow is not w and shallow.is_variable and shallow.data is w.data
    assert deep.is_variable and deep.tolist() == [1.0, 2.0] and deep.data is not w.data
    assert deep.backend is w.backend
    with pytest.raises(RuntimeError, match="only leaf tensors can be deep-copied"):
        copy.deepcopy(w * 2)


def test_argmax(backend):
    x = dp.tensor([[1.0, 5.0, 5.0], [7.0, 0.0, -1.0]])
    assert x.argmax(axis=1).tolist() == [1, 0]  # the first of tied maxima
    assert x.argmax().item() == 3 and x.argmax(axis=0, keepdims=True).shape == (1, 3)
    assert x.argmax(axis=1).dtype == dp.int64 and not x.argmax().requires_grad


def test_randperm(backend):
    p = dp.randperm(20, seed=3)
    assert p.dtype == dp.int64 and sorted(p.tolist()) == list(range(20))
    assert p.tolist() == dp.randperm(20, seed=3).tolist() != list(range(20))
    with pytest.raises(ValueError, match="randperm: n must be at least 0, got -1"):
        dp.randperm(-1)
