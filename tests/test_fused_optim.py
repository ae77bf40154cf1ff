"""The fused optimizer updates (one pass per parameter, from the backend's kernel table) equal
the array-API references bit for bit: parameters and state, several steps, float64 and float32
(a float32 parameter is updated in float32, as the reference's NumPy arithmetic does), on one
thread and, for a parameter large enough, on several."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray import optim
from dparray.kernels import kernels_enabled, reference_only

OPTIMIZERS = {
    "adam": lambda ps: optim.Adam(ps, lr=0.01, betas=(0.8, 0.95), eps=1e-6),
    "adam_l2": lambda ps: optim.Adam(ps, lr=0.01, weight_decay=0.1),
    "adamw": lambda ps: optim.AdamW(ps, lr=0.01, weight_decay=0.05),
    "sgd": lambda ps: optim.SGD(ps, lr=0.1),
    "sgd_momentum": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.1,
                                         weight_decay=0.01),
    "sgd_nesterov": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
    "adadelta": lambda ps: optim.Adadelta(ps),
    "adadelta_decay": lambda ps: optim.Adadelta(ps, lr=0.5, rho=0.8, eps=1e-5,
                                                weight_decay=0.1),
    "rmsprop": lambda ps: optim.RMSprop(ps, lr=0.01),
    "rmsprop_decay_momentum": lambda ps: optim.RMSprop(ps, lr=0.01, weight_decay=0.1,
                                                       momentum=0.9),
    "rmsprop_centered": lambda ps: optim.RMSprop(ps, lr=0.01, alpha=0.9, centered=True),
    "rmsprop_centered_momentum": lambda ps: optim.RMSprop(ps, lr=0.01, alpha=0.3, eps=1e-4,
                                                          centered=True, momentum=0.5),
    "adagrad": lambda ps: optim.Adagrad(ps, lr=0.1),
    "adagrad_decay": lambda ps: optim.Adagrad(ps, lr=0.1, lr_decay=0.05, weight_decay=0.1,
                                              initial_accumulator_value=0.5, eps=1e-6),
    "adamax": lambda ps: optim.Adamax(ps, lr=0.01),
    "adamax_decay": lambda ps: optim.Adamax(ps, lr=0.01, betas=(0.3, 0.9), eps=1e-4,
                                            weight_decay=0.1),
    "nadam": lambda ps: optim.NAdam(ps, lr=0.01),
    "nadam_l2": lambda ps: optim.NAdam(ps, lr=0.01, betas=(0.4, 0.99), weight_decay=0.1),
    "nadam_decoupled": lambda ps: optim.NAdam(ps, lr=0.01, weight_decay=0.1,
                                              decoupled_weight_decay=True, momentum_decay=0.01),
}
FUSED = {"adam_update", "sgd_update", "adadelta_update", "rmsprop_update", "adagrad_update",
         "adamax_update", "nadam_update"}


def _run(name, dtype, rng_seed, context):
    rng = np.random.default_rng(rng_seed)
    params = [to_tensor(rng.standard_normal(s).astype(dtype), requires_grad=True)
              for s in ((3, 4), (5,), (2, 1, 3), (181, 190))]
    opt = OPTIMIZERS[name](params)
    grads = [[to_tensor(rng.standard_normal(p.shape).astype(dtype)) for p in params]
             for _ in range(3)]
    with context():
        for step in grads:
            opt.step(dp.Gradients(dict(zip(params, step, strict=True))))
    state = opt.state_dict()["state"]
    return [p.numpy() for p in params], state


@pytest.mark.parametrize("name", list(OPTIMIZERS))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fused_update_equals_the_reference(name, dtype, backend):
    fused, fused_state = _run(name, dtype, 0, kernels_enabled)
    reference, reference_state = _run(name, dtype, 0, reference_only)
    for a, b in zip(fused, reference, strict=True):
        assert a.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(a, b)
    assert fused_state.keys() == reference_state.keys()
    for index, entry in reference_state.items():
        assert fused_state[index].keys() == entry.keys()
        for key, value in entry.items():
            got = fused_state[index][key]
            if isinstance(value, dp.Tensor):
                assert got.dtype == value.dtype and got.shape == value.shape
                np.testing.assert_array_equal(got.numpy(), value.numpy())
            else:
                assert got == value


def test_the_numpy_backend_has_the_fused_updates():
    assert set(dp.get_backend("numpy").kernels) >= FUSED


def test_the_cupy_kernel_table_has_the_fused_updates():
    """(Its table loads without CuPy; the updates run in the tests above where CUDA is.)"""
    from dparray.backends._cupy_kernels import table

    assert {"adam_update", "sgd_update", "adadelta_update"} <= set(table())


@pytest.mark.parametrize("name", list(OPTIMIZERS))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_special_values_update_as_in_the_reference(name, dtype, backend):
    special = np.array([0.0, -0.0, 1e-30, -1e30, np.inf, -np.inf, np.nan, 3.0], dtype)

    def run(context):
        param = to_tensor(np.roll(special, 3), requires_grad=True)
        opt = OPTIMIZERS[name]([param])
        with context(), np.errstate(all="ignore"):  # the reference's NumPy warns of inf - inf
            for shift in (0, 1):
                opt.step(dp.Gradients({param: to_tensor(np.roll(special, shift))}))
        return param.numpy(), opt.state_dict()["state"][0]

    (fused, fused_state), (reference, reference_state) = (run(kernels_enabled),
                                                          run(reference_only))
    np.testing.assert_array_equal(fused, reference)
    for key, value in reference_state.items():
        if isinstance(value, dp.Tensor):
            np.testing.assert_array_equal(fused_state[key].numpy(), value.numpy())


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_an_option_the_step_does_not_use_is_not_computed_with(momentum, backend):
    """A dampening too large for float32 is only an error where the update multiplies by it:
    not without momentum, and not on the first step (the buffer starts as the gradient)."""
    def run(context):
        param = to_tensor(np.array([1.0, -2.0], np.float32), requires_grad=True)
        opt = optim.SGD([param], lr=0.1, momentum=momentum, dampening=1e39)
        with context():
            opt.step(dp.Gradients({param: to_tensor(np.array([0.5, 0.25], np.float32))}))
        return param.numpy()

    np.testing.assert_array_equal(run(kernels_enabled), run(reference_only))


@pytest.mark.parametrize("name", ["adam", "sgd", "adadelta", "rmsprop", "adagrad", "adamax",
                                  "nadam"])
def test_a_zero_option_keeps_its_sign(name, backend):
    """The kernels' scalars are shared between calls with equal options; -0.0 == 0.0, yet an
    lr of -0.0 turns a -0.0 parameter into +0.0 where an lr of 0.0 keeps it -0.0."""
    def run(lr, context):
        param = to_tensor(np.array([-0.0, -0.0], np.float32), requires_grad=True)
        opt = {"adam": optim.Adam, "sgd": optim.SGD, "adadelta": optim.Adadelta,
               "rmsprop": optim.RMSprop, "adagrad": optim.Adagrad, "adamax": optim.Adamax,
               "nadam": optim.NAdam}[name]([param], lr=lr)
        with context():
            opt.step(dp.Gradients({param: to_tensor(np.array([1.0, 2.0], np.float32))}))
        return np.signbit(param.numpy())

    for lr in (0.0, -0.0, 0.0):
        np.testing.assert_array_equal(run(lr, kernels_enabled), run(lr, reference_only))
