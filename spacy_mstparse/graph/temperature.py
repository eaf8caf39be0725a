"""Fitting the temperature T of the tree distribution p(tree) proportional
to exp(score(tree) / T): the T minimising the negative log-likelihood of the
gold heads under the arc marginals (``graph.marginals``), Guo et al. 2017's
temperature scaling applied to the tree distribution, by a grid over log T
and a golden-section search. spaCy-free.
"""
import math
from typing import Sequence, Tuple

import numpy

from .marginals import Temperature, arc_marginals

# Floor of a gold head's probability in the log-likelihood (a gold arc the
# distribution excludes, e.g. a non-projective arc under Eisner).
PROB_FLOOR = 1e-12


def gold_head_log_probs(items: Sequence[Tuple[numpy.ndarray, ...]],
                        temperatures: Sequence[Temperature], projective: bool) -> Tuple[float, int]:
    """(sum of the gold heads' log-probabilities, number of words): items are
    (arc scores, gold heads) or (arc scores, gold heads, sibling scores or
    None), with one temperature (scalar or per word) per item."""
    total, count = 0.0, 0
    for (arc, gold, *rest), t in zip(items, temperatures):
        marg = arc_marginals(arc, t, projective, rest[0] if rest else None)
        n = len(gold) - 1
        p = marg.probs[gold[1:], numpy.arange(1, n + 1)]
        total += float(numpy.log(numpy.maximum(p, PROB_FLOOR)).sum())
        count += n
    return total, count


def head_log_likelihood(items: Sequence[Tuple[numpy.ndarray, ...]],
                        temperature: float, projective: bool) -> float:
    """Mean log-probability of the gold heads at one temperature (items as
    ``gold_head_log_probs``)."""
    total, count = gold_head_log_probs(items, [temperature] * len(items), projective)
    return total / max(count, 1)


def golden_section_max(f, a: float, b: float, steps: int) -> Tuple[float, float]:
    """(x, f(x)) of the better of the two inner points after ``steps``
    golden-section steps over [a, b] (each step drops an evaluated point
    no better than a kept one, so it is the best point evaluated)."""
    ratio = (math.sqrt(5) - 1) / 2
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(steps):
        if fc > fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = f(d)
    best = max((fc, c), (fd, d))
    return best[1], best[0]


def fit_temperature(items: Sequence[Tuple[numpy.ndarray, ...]], projective: bool,
                    low: float = 1e-2, high: float = 1e3, grid: int = 21,
                    refine: int = 20) -> Tuple[float, float]:
    """The temperature maximising the gold heads' mean log-likelihood: a grid
    over log T in [low, high], then golden-section search between the best
    grid point's neighbours. Returns (T, mean log-likelihood at T)."""
    if not items:
        raise ValueError("no sentences to fit the temperature on")
    f = lambda log_t: head_log_likelihood(items, math.exp(log_t), projective)  # noqa: E731
    points = numpy.linspace(math.log(low), math.log(high), grid)
    values = [f(x) for x in points]
    i = int(numpy.argmax(values))
    x, fx = golden_section_max(f, points[max(i - 1, 0)], points[min(i + 1, grid - 1)], refine)
    best = max((values[i], points[i]), (fx, x))
    return float(math.exp(best[1])), float(best[0])
