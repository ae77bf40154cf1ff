"""The random functions of ``dparray/sampling.py`` and ``dparray.Generator``.

Their signatures, shapes and dtypes are checked against PyTorch in ``test_porting.py``; here
their distributions (large draws against the probabilities, with tolerances of several
standard errors), their generators and their errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import dparray as dp


def _every_draw(g):
    return [dp.randn(3, generator=g), dp.rand(2, generator=g), dp.randint(9, (3,), generator=g),
            dp.randperm(5, generator=g), dp.normal(0.0, 1.0, (2,), generator=g),
            dp.multinomial(dp.ones(4), 2, generator=g),
            dp.bernoulli(dp.full((3,), 0.5), generator=g)]


def test_a_generator_repeats_its_draws_and_leaves_the_current_streams_alone(backend):
    dp.manual_seed(3)
    expected_next = dp.randn(4).tolist()
    dp.manual_seed(3)
    g = dp.Generator().manual_seed(11)
    first = _every_draw(g)
    assert dp.randn(4).tolist() == expected_next  # the generator drew none of the stream's
    g.manual_seed(11)
    again = _every_draw(g)
    assert [t.tolist() for t in again] == [t.tolist() for t in first]


def test_a_generator_state_round_trips(backend):
    g = dp.Generator("cpu").manual_seed(2)
    dp.randn(5, generator=g)
    state = g.get_state()
    after = dp.randn(3, generator=g).tolist()
    assert dp.Generator().set_state(state).initial_seed() == 2
    assert dp.randn(3, generator=dp.Generator().set_state(state)).tolist() == after
    assert g.device == dp.device("cpu") and g.initial_seed() == 2
    fresh = dp.Generator()
    seed = fresh.seed()
    assert fresh.initial_seed() == seed and "initial_seed" in repr(fresh)


def test_generator_and_seed_are_checked(backend):
    with pytest.raises(TypeError, match=r"^randn: give seed= or generator=, not both"):
        dp.randn(2, seed=1, generator=dp.Generator())
    with pytest.raises(TypeError, match=r"^rand: generator must be a dparray\.Generator, got 3"):
        dp.rand(2, generator=3)
    with pytest.raises(ValueError, match="seed must be at least 0"):
        dp.Generator().manual_seed(-1)


def test_randint_is_uniform_over_its_range(backend):
    x = dp.randint(-3, 4, (70_000,), generator=dp.Generator().manual_seed(0)).numpy()
    counts = np.bincount(x + 3, minlength=7)
    assert x.min() == -3 and x.max() == 3
    np.testing.assert_allclose(counts / x.size, 1 / 7, atol=5 * np.sqrt(1 / 7 / x.size))
    assert dp.randint(5, (3,), dtype=dp.float64).dtype == dp.float64


@pytest.mark.parametrize(("args", "kwargs", "error", "message"), [
    ((5, 5, (2,)), {}, ValueError, r"^randint: high \(5\) must be greater than low \(5\)"),
    ((5,), {}, TypeError, r"^randint: the size is missing"),
    ((0, 300, (2,)), {"dtype": dp.uint8}, ValueError, r"the range \[0, 300\) does not fit uint8"),
    ((0, 2**60, (2,)), {}, ValueError, r"wider than 2\*\*53"),
    ((0.5, (2,)), {}, TypeError, r"^randint: high must be an int, got 0.5"),
])
def test_randint_refuses_a_bad_range(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        dp.randint(*args, **kwargs)


def test_multinomial_with_replacement_draws_in_proportion(backend):
    weights = dp.tensor([[0.0, 1.0, 3.0, 0.0, 4.0], [5.0, 0.0, 0.0, 5.0, 0.0]],
                        dtype=dp.float64)
    draws = dp.multinomial(weights, 40_000, replacement=True,
                           generator=dp.Generator().manual_seed(1)).numpy()
    assert draws.shape == (2, 40_000)
    for row, w in zip(draws, weights.numpy(), strict=True):
        p = w / w.sum()
        frequency = np.bincount(row, minlength=5) / row.size
        assert (frequency[p == 0] == 0).all()  # a zero weight is never drawn
        np.testing.assert_allclose(frequency, p, atol=5 * np.sqrt(0.25 / row.size))


def test_multinomial_without_replacement_follows_the_sequential_draw(backend):
    """Two draws without replacement from weights w: the first is i with w_i / W, the second j
    with w_j / (W - w_i); the frequencies of the ordered pairs follow."""
    w = np.array([1.0, 2.0, 0.0, 5.0])
    weights = dp.tensor(np.tile(w, (30_000, 1)))
    pairs = dp.multinomial(weights, 2, generator=dp.Generator().manual_seed(2)).numpy()
    assert (pairs[:, 0] != pairs[:, 1]).all() and not (pairs == 2).any()
    for i, j in [(0, 1), (1, 0), (3, 0), (0, 3), (1, 3), (3, 1)]:
        expected = w[i] / w.sum() * w[j] / (w.sum() - w[i])
        frequency = np.mean((pairs[:, 0] == i) & (pairs[:, 1] == j))
        assert abs(frequency - expected) < 5 * np.sqrt(expected / pairs.shape[0])
    everything = dp.multinomial(dp.tensor([1.0, 1.0, 1.0]), 3).sort().tolist()
    assert everything == [0, 1, 2]


@pytest.mark.parametrize(("weights", "count", "kwargs", "error", "message"), [
    ([1.0, -1.0], 1, {}, ValueError, r"finite and non-negative, found values from -1.0 to 1.0"),
    ([1.0, float("nan")], 1, {}, ValueError, "finite and non-negative"),
    ([1.0, float("inf")], 1, {}, ValueError, "finite and non-negative"),
    ([[1.0, 0.0], [0.0, 0.0]], 1, {}, ValueError, "needs a positive sum"),
    ([1.0, 0.0, 0.0], 2, {}, ValueError, r"without replacement, 2 samples need at least 2 "
                                        r"non-zero weights per row; a row has 1"),
    ([1.0], 0, {}, ValueError, "num_samples must be at least 1"),
    ([1, 2], 1, {}, TypeError, "input must be a floating tensor of weights, got int64"),
    ([[[1.0]]], 1, {}, ValueError, r"input must be 1-D or 2-D, got shape \(1, 1, 1\)"),
    ([1.0], 1, {"replacement": 1}, TypeError, "replacement must be a bool"),
])
def test_multinomial_refuses_what_is_not_a_distribution(weights, count, kwargs, error,
                                                        message, backend):
    with pytest.raises(error, match="^multinomial: .*" + message):
        dp.multinomial(dp.tensor(weights), count, **kwargs)


def test_bernoulli_draws_ones_with_its_probabilities(backend):
    p = dp.tensor([0.0, 0.2, 0.9, 1.0], dtype=dp.float64)
    draws = dp.bernoulli(p.expand(20_000, 4), generator=dp.Generator().manual_seed(3)).numpy()
    assert draws.dtype == np.float64 and set(np.unique(draws)) <= {0.0, 1.0}
    np.testing.assert_allclose(draws.mean(axis=0), p.numpy(), atol=5 * np.sqrt(0.25 / 20_000))
    fixed = dp.bernoulli(dp.zeros(40_000), 0.3, generator=dp.Generator().manual_seed(4))
    assert abs(fixed.numpy().mean() - 0.3) < 5 * np.sqrt(0.21 / 40_000)


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: dp.bernoulli(dp.tensor([0.5, 1.5])), ValueError,
     r"^bernoulli: the probabilities must lie in \[0, 1\], found values from 0.5 to 1.5"),
    (lambda: dp.bernoulli(dp.tensor([float("nan")])), ValueError, "must lie in"),
    (lambda: dp.bernoulli(dp.tensor([1, 0])), TypeError, "input must be a floating tensor"),
    (lambda: dp.bernoulli(dp.zeros(2), 2.0), ValueError, r"p must be in \[0, 1\], got 2.0"),
])
def test_bernoulli_refuses_what_is_not_a_probability(call, error, message, backend):
    with pytest.raises(error, match=message):
        call()


def test_normal_has_its_mean_and_standard_deviation(backend):
    g = dp.Generator().manual_seed(5)
    mean = dp.tensor([[-2.0], [3.0]], dtype=dp.float64)
    std = dp.tensor([0.5, 2.0, 4.0], dtype=dp.float64)
    draws = np.stack([dp.normal(mean, std, generator=g).numpy() for _ in range(4000)])
    assert draws.shape == (4000, 2, 3)
    np.testing.assert_allclose(draws.mean(axis=0), np.broadcast_to(mean.numpy(), (2, 3)),
                               atol=5 * 4.0 / np.sqrt(4000))
    np.testing.assert_allclose(draws.std(axis=0), np.broadcast_to(std.numpy(), (2, 3)),
                               rtol=0.1)
    scalar = dp.normal(1.0, 2.0, (50_000,), generator=g).numpy()
    assert abs(scalar.mean() - 1.0) < 5 * 2.0 / np.sqrt(scalar.size)
    assert abs(scalar.std() - 2.0) < 0.05
    assert dp.normal(dp.tensor([7.0]), 0.0).tolist() == [7.0]


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: dp.normal(dp.zeros(2), -1.0), ValueError, "std must be at least 0.0, got -1.0"),
    (lambda: dp.normal(0.0, dp.tensor([1.0, -0.5])), ValueError,
     "std must not be negative, found -0.5"),
    (lambda: dp.normal(0.0, 1.0), TypeError, "with a number for both mean and std, give size"),
    (lambda: dp.normal(dp.zeros(2), 1.0, (3,)), TypeError, "size, dtype and device go with"),
    (lambda: dp.normal(dp.tensor([1, 2]), 1.0), TypeError, "must be floating, got int64"),
])
def test_normal_refuses_a_negative_std(call, error, message, backend):
    with pytest.raises(error, match=message):
        call()


def test_random_draws_are_constants(backend):
    mean = dp.zeros(2, requires_grad=True)
    assert not dp.normal(mean, 1.0).requires_grad
    assert not dp.bernoulli(dp.rand(2, requires_grad=True)).requires_grad
    assert dp.randn_like(mean, requires_grad=True).is_variable


def test_like_functions_keep_shape_and_dtype(backend):
    x = dp.zeros(3, 2, dtype=dp.float64)
    for made in (dp.rand_like(x), dp.randn_like(x), dp.randint_like(x, 4)):
        assert made.shape == (3, 2) and made.dtype == dp.float64 and made.backend is backend
    assert dp.rand_like(x, dtype=dp.float32).dtype == dp.float32
    with pytest.raises(TypeError, match="rand draws floating values"):
        dp.rand_like(dp.zeros(2, dtype=dp.int64))
