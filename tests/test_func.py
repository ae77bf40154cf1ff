"""dparray.func: grad, value_and_grad, vjp, jvp, jacrev, jacfwd, hessian, hvp and
functional_call -- against explicit Hessians and Jacobians of small quadratics and an MLP,
against finite differences, on pytrees, nested, and refusing bad arguments."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray import func, nn


def _t(a):
    return to_tensor(np.asarray(a, dtype=np.float64))


@pytest.fixture
def quadratic(rng):
    """``f(x) = 0.5 x^T A x + b . x`` with an unsymmetric ``A``: Hessian ``(A + A^T) / 2``."""
    a, b = rng.standard_normal((4, 4)), rng.standard_normal(4)

    def f(x):
        return 0.5 * (x * (_t(a) @ x)).sum() + (_t(b) * x).sum()

    return f, (a + a.T) / 2, a, b


def _mlp(rng):
    """A scalar MLP ``w2 . tanh(W1 x + b1)`` and its Hessian in ``x``, written out:
    ``W1^T diag(w2 * tanh''(z)) W1`` with ``tanh'' = -2 t (1 - t^2)``."""
    w1, b1, w2 = rng.standard_normal((5, 3)), rng.standard_normal(5), rng.standard_normal(5)

    def f(x):
        return (_t(w2) * (_t(w1) @ x + _t(b1)).tanh()).sum()

    def hessian(x):
        t = np.tanh(w1 @ x + b1)
        return w1.T @ np.diag(w2 * -2 * t * (1 - t * t)) @ w1

    return f, hessian


def test_hessian_of_a_quadratic_is_its_symmetric_part(backend, quadratic, rng):
    f, expected, _, _ = quadratic
    x = _t(rng.standard_normal(4))
    np.testing.assert_allclose(func.hessian(f)(x).numpy(), expected, rtol=1e-12, atol=1e-12)


def test_hvp_of_a_quadratic(backend, quadratic, rng):
    f, expected, a, b = quadratic
    x, v = rng.standard_normal(4), rng.standard_normal(4)
    value, (product,) = func.hvp(f, (_t(x),), (_t(v),))
    np.testing.assert_allclose(value.item(), 0.5 * x @ a @ x + b @ x, rtol=1e-12)
    np.testing.assert_allclose(product.numpy(), expected @ v, rtol=1e-12, atol=1e-12)
    assert product.grad_fn is None  # a pure function of its argument: plain values


def test_hessian_and_hvp_of_an_mlp_against_the_closed_form(backend, rng):
    f, hessian = _mlp(rng)
    x, v = rng.standard_normal(3), rng.standard_normal(3)
    np.testing.assert_allclose(func.hessian(f)(_t(x)).numpy(), hessian(x), rtol=1e-11,
                               atol=1e-12)
    _, (product,) = func.hvp(f, (_t(x),), (_t(v),))
    np.testing.assert_allclose(product.numpy(), hessian(x) @ v, rtol=1e-11, atol=1e-12)


def test_hessian_of_a_model_loss_in_its_parameters_against_finite_differences(backend, rng):
    """The Hessian of an MLP's loss with respect to a parameter dict (functional_call),
    against central differences of the gradient, column by column."""
    dp.manual_seed(1)
    model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1)).to(dp.float64)
    params = {name: p.detach() for name, p in model.named_parameters()}
    x, y = _t(rng.standard_normal((4, 2))), _t(rng.standard_normal((4, 1)))

    def loss(p):
        return ((func.functional_call(model, p, x) - y) ** 2).mean()

    h = func.hessian(loss)(params)["0.weight"]["0.weight"].numpy()  # (3, 2, 3, 2)
    grad = func.grad(loss)
    base = params["0.weight"].numpy()
    eps = 1e-6
    for k in range(base.size):
        step = np.zeros(base.size)
        step[k] = eps
        plus = grad({**params, "0.weight": _t(base + step.reshape(base.shape))})["0.weight"]
        minus = grad({**params, "0.weight": _t(base - step.reshape(base.shape))})["0.weight"]
        column = (plus.numpy() - minus.numpy()) / (2 * eps)
        np.testing.assert_allclose(h.reshape(base.size, base.size)[:, k], column.reshape(-1),
                                   rtol=1e-5, atol=1e-7)


def test_jvp_against_finite_differences(backend, rng):
    def f(x, y):
        return {"a": (x * y).sin(), "b": (x ** 2).sum() * y}

    x, y = rng.standard_normal(3), rng.standard_normal(3)
    dx, dy = rng.standard_normal(3), rng.standard_normal(3)
    out, tangent = func.jvp(f, (_t(x), _t(y)), (_t(dx), _t(dy)))
    eps = 1e-6
    plus, minus = f(_t(x + eps * dx), _t(y + eps * dy)), f(_t(x - eps * dx), _t(y - eps * dy))
    for key in ("a", "b"):
        numeric = (plus[key].numpy() - minus[key].numpy()) / (2 * eps)
        np.testing.assert_allclose(tangent[key].numpy(), numeric, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(out[key].numpy(), f(_t(x), _t(y))[key].numpy())


def test_jacrev_and_jacfwd_give_the_explicit_jacobian(backend, rng):
    a = rng.standard_normal((2, 3))

    def f(x):
        return _t(a) @ x.tanh()

    x = rng.standard_normal(3)
    expected = a * (1 - np.tanh(x) ** 2)
    for transform in (func.jacrev, func.jacfwd):
        np.testing.assert_allclose(transform(f)(_t(x)).numpy(), expected, rtol=1e-12)


def test_jacobian_layout_for_matrices_and_pytrees(backend, rng):
    x = _t(rng.standard_normal((2, 3)))
    jac = func.jacrev(lambda m: m.sum(axis=1))(x)
    assert jac.shape == (2, 2, 3)
    np.testing.assert_array_equal(jac.numpy()[0], [[1, 1, 1], [0, 0, 0]])
    both = func.jacfwd(lambda p: {"s": p["u"] * p["v"]}, argnums=0)({"u": _t([1.0, 2.0]),
                                                                      "v": _t([3.0, 4.0])})
    np.testing.assert_allclose(both["s"]["u"].numpy(), np.diag([3.0, 4.0]))
    np.testing.assert_allclose(both["s"]["v"].numpy(), np.diag([1.0, 2.0]))


def test_grad_and_value_and_grad_on_pytrees_with_argnums_and_aux(backend):
    def f(params, scale):
        return (params["w"] * params["b"][0] * scale).sum(), "aux"

    params = {"w": _t([1.0, 2.0]), "b": [_t(3.0)]}
    grads, aux = func.grad(f, has_aux=True)(params, _t(2.0))
    assert aux == "aux" and grads["w"].tolist() == [6.0, 6.0] and grads["b"][0].item() == 6.0
    (value, aux), (g_params, g_scale) = func.value_and_grad(f, argnums=(0, 1), has_aux=True)(
        params, _t(2.0))
    assert value.item() == 18.0 and g_scale.item() == 9.0 and g_params["w"].tolist() == [6., 6.]


def test_an_unused_argument_gets_zeros(backend):
    g = func.grad(lambda x, y: (x * 2.0).sum(), argnums=(0, 1))(_t([1.0]), _t([5.0, 6.0]))
    assert g[1].tolist() == [0.0, 0.0]


def test_vjp_is_reusable_and_takes_the_outputs_structure(backend):
    out, vjp_fn = func.vjp(lambda x, y: (x * y, x + y), _t([1.0, 2.0]), _t([3.0, 4.0]))
    assert [o.tolist() for o in out] == [[3.0, 8.0], [4.0, 6.0]]
    gx, gy = vjp_fn((_t([1.0, 0.0]), _t([0.0, 1.0])))
    assert gx.tolist() == [3.0, 1.0] and gy.tolist() == [1.0, 1.0]
    gx, _ = vjp_fn((_t([0.0, 0.0]), _t([1.0, 1.0])))
    assert gx.tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="cotangents must have the output's structure"):
        vjp_fn(_t([1.0, 0.0]))


def test_transforms_nest(backend):
    x = _t(0.7)
    third = func.grad(func.grad(func.grad(lambda t: t.sin() * t)))(x)
    t = 0.7
    np.testing.assert_allclose(third.item(), -3 * np.sin(t) - t * np.cos(t), rtol=1e-12)


def test_a_derivative_through_a_models_parameters_stays_differentiable(backend, rng):
    """PINN's pattern: du/dx by func.grad, then a loss of it differentiated with respect to
    the model's parameters, which func.grad never saw as arguments."""
    dp.manual_seed(0)
    model = nn.Sequential(nn.Linear(1, 4), nn.Tanh(), nn.Linear(4, 1)).to(dp.float64)
    xs = _t(rng.uniform(0, 1, (3, 1)))

    def u_x(points):
        return func.grad(lambda p: model(p).sum())(points)

    derivative = u_x(xs)
    assert derivative.grad_fn is not None
    grads = (derivative ** 2).sum().backward()
    w = model[0].weight
    eps, original = 1e-6, w.data
    flat = w.numpy().reshape(-1).copy()
    for k in range(flat.size):
        values = []
        for sign in (1.0, -1.0):
            moved = flat.copy()
            moved[k] += sign * eps
            w.data = _t(moved.reshape(w.shape)).data
            values.append((u_x(xs) ** 2).sum().item())
        w.data = original
        np.testing.assert_allclose(grads[w].numpy().reshape(-1)[k],
                                   (values[0] - values[1]) / (2 * eps), rtol=1e-5, atol=1e-8)


def test_functional_call_swaps_and_restores(backend):
    layer = nn.Linear(2, 2)
    original = layer.weight
    out = func.functional_call(layer, {"weight": dp.eye(2)}, (dp.tensor([[1.0, 2.0]]),))
    np.testing.assert_allclose(out.numpy(), np.array([[1.0, 2.0]]) + layer.bias.numpy())
    assert layer.weight is original
    with pytest.raises(ZeroDivisionError):
        func.functional_call(_Raising(), {"scale": dp.tensor(2.0)}, dp.tensor(1.0))
    assert isinstance(_Raising.last.scale, dp.Tensor) and _Raising.last.scale.item() == 1.0


class _Raising(nn.Module):
    last = None

    def __init__(self):
        super().__init__()
        self.scale = dp.tensor(1.0, requires_grad=True)
        _Raising.last = self

    def forward(self, x):
        raise ZeroDivisionError


def test_functional_call_ties_buffers_strict_and_unknown_names(backend):
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(1, 1, bias=False)
            self.b = nn.Linear(1, 1, bias=False)
            self.b.weight = self.a.weight
            self.register_buffer("offset", dp.tensor([1.0]))

        def forward(self, x):
            return self.b(self.a(x)) + self.offset

    model = Tied()
    out = func.functional_call(model, {"a.weight": dp.tensor([[3.0]]),
                                       "offset": dp.tensor([0.5])}, dp.tensor([[2.0]]))
    assert out.tolist() == [[18.5]]  # 3 * 3 * 2 + 0.5: the tied weight replaced twice
    untied = func.functional_call(model, {"a.weight": dp.tensor([[3.0]])}, dp.tensor([[2.0]]),
                                  tie_weights=False)
    assert untied.item() == pytest.approx(3.0 * 2.0 * model.a.weight.item() + 1.0)
    with pytest.raises(ValueError, match="'nope' name no parameter"):
        func.functional_call(model, {"nope": dp.ones(1)}, dp.ones(1, 1))
    with pytest.raises(ValueError, match="strict, but 'offset'"):
        func.functional_call(model, {"a.weight": dp.ones(1, 1)}, dp.ones(1, 1), strict=True)
    with pytest.raises(TypeError, match="must map to a Tensor"):
        func.functional_call(model, {"a.weight": 1.0}, dp.ones(1, 1))


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: func.grad(lambda x: x * 2.0)(dp.ones(3)), ValueError, "single-element tensor"),
    (lambda: func.grad(lambda x: x.sum(), argnums=2)(dp.ones(3)), ValueError,
     "argnums 2 is out of range"),
    (lambda: func.grad(lambda x: x.sum(), argnums=(0, 0))(dp.ones(3)), ValueError,
     "names an argument twice"),
    (lambda: func.grad(lambda x: x.sum(), argnums="0")(dp.ones(3)), TypeError, "argnums must"),
    (lambda: func.grad(lambda x: x.sum())(dp.tensor([1, 2])), TypeError,
     "only floating tensors"),
    (lambda: func.grad(lambda x: x.sum(), has_aux=True)(dp.ones(3)), TypeError,
     "must return a pair"),
    (lambda: func.jvp(lambda x: x, dp.ones(2), (dp.ones(2),)), TypeError,
     "primals must be a tuple"),
    (lambda: func.jvp(lambda x: x, (dp.ones(2),), (dp.ones(3),)), ValueError,
     "a tangent of shape"),
    (lambda: func.hvp(lambda x: x.sum(), (dp.ones(2),), ()), ValueError, "1 primals but 0"),
    (lambda: func.grad(3)(dp.ones(1)), TypeError, "expected a function"),
])
def test_bad_arguments_are_refused(call, error, message, backend):
    with pytest.raises(error, match=message):
        call()
