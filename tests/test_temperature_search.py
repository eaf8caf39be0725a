"""The temperature search (``graph.temperature.fit_scalar``): a grid over
log T, then Brent's method; from a start temperature only the grid points
uphill of it. Checked against a dense grid on smooth one-peaked functions."""
import math

import numpy as np
import pytest

from spacy_mstparse.graph.temperature import brent_max, fit_scalar

LOW, HIGH = 0.02, 20.0


def peaked(centre, width, skew):
    """A smooth function of T with one maximum at log T near ``centre``,
    counting its evaluations."""
    calls = []

    def f(t):
        calls.append(t)
        x = math.log(t) - centre
        return -x * x / width + skew * x ** 3 / (1 + x * x)
    return f, calls


def dense_argmax(f):
    xs = np.linspace(math.log(LOW), math.log(HIGH), 20001)
    return xs[int(np.argmax([f(math.exp(x)) for x in xs]))]


@pytest.mark.parametrize("seed", range(12))
def test_the_search_finds_the_maximum_of_a_dense_grid(seed):
    rs = np.random.RandomState(seed)
    centre = rs.uniform(math.log(0.03), math.log(15))
    f, calls = peaked(centre, rs.uniform(0.2, 5.0), rs.uniform(-0.5, 0.5))
    best = dense_argmax(f)
    for start in (None, math.exp(centre + rs.uniform(-1.5, 1.5))):
        calls.clear()
        t, value = fit_scalar(f, LOW, HIGH, 9, 10, start=start)
        assert abs(math.log(t) - best) < 0.01
        assert value == pytest.approx(f(t))
        # cold: the 9 grid points and at most 10 more; warm: fewer
        assert len(calls) - 1 <= (19 if start is None else 16)


def test_a_start_walks_uphill_on_the_grid_and_evaluates_fewer_points():
    f, calls = peaked(math.log(0.5), 1.0, 0.0)
    cold = fit_scalar(f, LOW, HIGH, 9, 10)
    n_cold = len(calls)
    calls.clear()
    warm = fit_scalar(f, LOW, HIGH, 9, 10, start=0.45)
    assert len(calls) < n_cold
    assert warm[0] == pytest.approx(cold[0], rel=0.02)
    calls.clear()
    far = fit_scalar(f, LOW, HIGH, 9, 10, start=HIGH)   # from the far end of the grid
    assert far[0] == pytest.approx(cold[0], rel=0.02)


def test_the_maximum_at_an_end_of_the_range_is_found():
    f, _ = peaked(math.log(HIGH) + 3.0, 1.0, 0.0)   # increasing over the whole range
    t, _ = fit_scalar(f, LOW, HIGH, 9, 10)
    assert abs(math.log(t) - math.log(HIGH)) < 0.02


def test_brent_max_keeps_to_its_bracket_and_returns_its_best_point():
    seen = []

    def f(x):
        seen.append(x)
        return -(x - 0.3) ** 2

    x, fx = brent_max(f, 0.0, 1.0, 0.5, f(0.5), [(0.0, f(0.0)), (1.0, f(1.0))], 1e-4, 30)
    assert abs(x - 0.3) < 1e-3 and fx == max(-(s - 0.3) ** 2 for s in seen)
    assert all(0.0 <= s <= 1.0 for s in seen)
