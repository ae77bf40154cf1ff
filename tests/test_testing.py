"""``dparray.testing``: the gradient checks pass right gradients and catch wrong ones -- a
backward off in one element of one input, one that drops an input's term, a wrong sign -- on
every backend, and refuse what they cannot check."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from conftest import to_tensor

import dparray as dp
from dparray.autograd import Function
from dparray.testing import directional_gradcheck, gradcheck


class SineTimes(Function):
    """``sin(a) * b``, with a backward that can be made wrong on purpose."""

    def __init__(self, mistake: str = "", error: float = 1e-4) -> None:
        super().__init__()
        self.mistake, self.error = mistake, error

    def forward(self, a, b):
        xp = self.backend.xp
        self.save(a, b)
        return xp.sin(a) * b

    def backward(self, grad):
        xp = self.backend.xp
        a, b = self.saved
        grad_a = grad * xp.cos(a) * b
        grad_b = grad * xp.sin(a)
        if self.mistake == "one element":  # relatively, in the last element of a alone
            last = xp.astype(xp.arange(a.shape[0]) == a.shape[0] - 1, a.dtype)
            grad_a = grad_a * (1.0 + self.error * last)
        elif self.mistake == "sign":
            grad_a = -grad_a
        elif self.mistake == "no b":
            grad_b = xp.zeros_like(grad_b)
        return grad_a, grad_b


CHECKS = [gradcheck, directional_gradcheck]
MISTAKES = ["one element", "sign", "no b"]


def _inputs(rng, size=7):
    a = to_tensor(rng.uniform(-1.5, 1.5, size), requires_grad=True)
    b = to_tensor(rng.uniform(0.5, 2.0, size), requires_grad=True)
    return a, b


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_a_right_backward_passes(check, backend, rng):
    check(lambda a, b: SineTimes()(a, b), _inputs(rng))
    x = to_tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = to_tensor(rng.standard_normal((4, 2)), requires_grad=True)
    check(lambda x, w: dp.tanh(x @ w).sum(axis=0) * 3.0, [x, w])


@pytest.mark.parametrize("mistake", MISTAKES)
@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_a_wrong_backward_fails(check, mistake, backend, rng):
    with pytest.raises(AssertionError, match=r"analytic|backward gives"):
        check(lambda a, b: SineTimes(mistake)(a, b), _inputs(rng))


def test_one_wrong_element_among_500_is_caught_in_nearly_every_random_direction(rng):
    # the error enters <J^T u, v> times that element's u and v, so a direction that nearly
    # misses the element misses the error: for one element wrong by 10%, one seed in 400 does
    a, b = _inputs(rng, size=500)

    def caught(error, seeds=200):
        count = 0
        for seed in range(seeds):
            try:
                directional_gradcheck(lambda a, b: SineTimes("one element", error)(a, b), [a, b],
                                      seed=seed)
            except AssertionError:
                count += 1
        return count

    assert caught(0.1) >= 198 and caught(0.01) >= 194


def test_the_message_names_both_values_and_the_tolerance(rng):
    a, b = _inputs(rng)
    with pytest.raises(AssertionError) as raised:
        directional_gradcheck(lambda a, b: SineTimes("sign")(a, b), [a, b], seed=3)
    message = str(raised.value)
    assert message.startswith("directional derivative along a random direction (seed 3; "
                              "input 0 (7,), input 1 (7,)): backward gives <J^T u, v> = ")
    number = r"(-?[\d.]+(?:e[+-]\d+)?)"
    analytic, numeric, difference = map(float, re.search(
        f"<J\\^T u, v> = {number}, .* <u, J v> = {number}; difference {number} ", message).groups())
    assert analytic != numeric
    assert math.isclose(difference, analytic - numeric)
    assert message.endswith("exceeds 1e-09 + 1e-06 * |numeric|")


def test_constants_and_unused_inputs_take_part_as_they_should(backend, rng):
    a, _ = _inputs(rng)
    unused = to_tensor(rng.standard_normal(3), requires_grad=True)
    constant = to_tensor(rng.standard_normal(7))
    directional_gradcheck(lambda a, c, u, k: SineTimes()(a, c) * k, [a, constant, unused, 2.0])


def test_the_direction_repeats_with_the_seed_and_changes_with_it(rng):
    a, b = _inputs(rng)
    messages = []
    for seed in (0, 0, 1):
        with pytest.raises(AssertionError) as raised:
            directional_gradcheck(lambda a, b: SineTimes("sign")(a, b), [a, b], seed=seed)
        messages.append(str(raised.value))
    assert messages[0] == messages[1] != messages[2]


def test_what_cannot_be_checked_is_refused(rng):
    a, _ = _inputs(rng)
    with pytest.raises(ValueError, match="needs at least one variable input"):
        directional_gradcheck(lambda a: a * 2.0, [to_tensor(np.ones(3))])
    single = dp.tensor([1.0, 2.0], dtype="float32", requires_grad=True)
    with pytest.raises(ValueError, match=r"input 1 must be float64 .* got float32"):
        directional_gradcheck(lambda a, s: a.sum() * s.sum(), [a, single])
    with pytest.raises(ValueError, match="the output must be float64, got float32"):
        directional_gradcheck(lambda a: a.astype("float32"), [a])
