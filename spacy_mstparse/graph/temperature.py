"""Fitting temperatures (Guo et al. 2017's temperature scaling) to gold
trees, by a grid over log T and a golden-section search: the temperature T
of the tree distribution p(tree) proportional to exp(score(tree) / T), the
one minimising the negative log-likelihood of the gold heads under the arc
marginals (``graph.marginals``), and the temperature of the labeler's
distribution p(labels | tree), the one minimising the negative
log-likelihood of the gold labels under its marginals
(``labeler.chain_marginals``) on the words whose predicted head is right.
Words whose gold head / label is unknown (negative) are left out. spaCy-free.
"""
import math
from typing import Callable, Sequence, Tuple

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
        known = numpy.flatnonzero(numpy.asarray(gold) >= 0)
        known = known[known > 0]
        if not len(known):
            continue
        marg = arc_marginals(arc, t, projective, rest[0] if rest else None)
        p = marg.probs[numpy.asarray(gold)[known], known]
        total += float(numpy.log(numpy.maximum(p, PROB_FLOOR)).sum())
        count += len(known)
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


def label_log_likelihood(model, items: Sequence[Tuple[object, numpy.ndarray, numpy.ndarray]],
                         temperature: float) -> float:
    """Mean log-probability of the gold labels at one temperature: items are
    (Sentence, predicted heads, gold label ids), a label id < 0 for the words
    left out (wrong head, unknown label); ``model`` a ``GraphModel``."""
    total, count = 0.0, 0
    for sentence, heads, gold in items:
        known = numpy.flatnonzero(numpy.asarray(gold) >= 0)
        known = known[known > 0]
        if not len(known):
            continue
        marg = model.label_marginals(sentence, heads, temperature)
        p = marg[known, numpy.asarray(gold)[known]]
        total += float(numpy.log(numpy.maximum(p, PROB_FLOOR)).sum())
        count += len(known)
    return total / max(count, 1)


def fit_temperature(items: Sequence[Tuple[numpy.ndarray, ...]], projective: bool,
                    low: float = 1e-2, high: float = 1e3, grid: int = 21,
                    refine: int = 20) -> Tuple[float, float]:
    """The temperature maximising the gold heads' mean log-likelihood
    (``fit_scalar``). Returns (T, mean log-likelihood at T)."""
    if not items:
        raise ValueError("no sentences to fit the temperature on")
    return fit_scalar(lambda t: head_log_likelihood(items, t, projective), low, high, grid,
                      refine)


def fit_scalar(log_likelihood: Callable[[float], float], low: float = 1e-2, high: float = 1e3,
               grid: int = 21, refine: int = 20) -> Tuple[float, float]:
    """The T maximising ``log_likelihood(T)``: a grid over log T in [low,
    high], then golden-section search between the best grid point's
    neighbours. Returns (T, log_likelihood(T))."""
    f = lambda log_t: log_likelihood(math.exp(log_t))  # noqa: E731
    points = numpy.linspace(math.log(low), math.log(high), grid)
    values = [f(x) for x in points]
    i = int(numpy.argmax(values))
    x, fx = golden_section_max(f, points[max(i - 1, 0)], points[min(i + 1, grid - 1)], refine)
    best = max((values[i], points[i]), (fx, x))
    return float(math.exp(best[1])), float(best[0])
