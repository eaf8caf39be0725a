"""Fitting temperatures (Guo et al. 2017's temperature scaling) to gold
trees, by a grid over log T and Brent's method (Brent 1973): the temperature T
of the tree distribution p(tree) proportional to exp(score(tree) / T), the
one minimising the negative log-likelihood of the gold heads under the arc
marginals (``graph.marginals``), and the temperature of the labeler's
distribution p(labels | tree), the one minimising the negative
log-likelihood of the gold labels under its marginals
(``labeler.chain_marginals``) on the words whose predicted head is right.
Words whose gold head / label is unknown (negative) are left out. spaCy-free.
"""
import math
from typing import Callable, Dict, Optional, Sequence, Tuple

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


def brent_max(f, a: float, b: float, x: float, fx: float, others: Sequence[Tuple[float, float]],
              tol: float, steps: int) -> Tuple[float, float]:
    """(x, f(x)) of the best point found by Brent's method (Brent 1973,
    ch. 5) for the maximum of ``f`` in [a, b], from the evaluated point x
    (f(x) = fx) and up to two other evaluated points ``others`` ((x, f(x))
    pairs in [a, b]): a step to the vertex of the parabola through the
    three best points where that step is safe (inside the bracket and
    shrinking), else a golden-section step; at most ``steps`` evaluations,
    stopping when the bracket around x is within ``tol``."""
    golden = (3 - math.sqrt(5)) / 2
    (w, fw), (v, fv) = (list(others) + [(x, fx)] * 2)[:2]
    if fv > fw:
        (w, fw), (v, fv) = (v, fv), (w, fw)
    d, e = 0.0, b - a     # the last step and the one before it
    for _ in range(steps):
        m = (a + b) / 2
        if abs(x - m) <= 2 * tol - (b - a) / 2:
            break
        parabolic = False
        if abs(e) > tol and len({x, w, v}) == 3:
            # vertex of the parabola through (x, fx), (w, fw), (v, fv)
            r = (x - w) * (fx - fv)
            q = (x - v) * (fx - fw)
            p = (x - v) * q - (x - w) * r
            q = 2 * (q - r)
            if q > 0:
                p = -p
            q = abs(q)
            if q > 0 and abs(p) < abs(0.5 * q * e) and q * (a - x) < p < q * (b - x):
                e, d = d, p / q
                parabolic = True
                if (x + d) - a < 2 * tol or b - (x + d) < 2 * tol:
                    d = tol if m >= x else -tol
        if not parabolic:
            e = (a - x) if x >= m else (b - x)
            d = golden * e
        u = x + (d if abs(d) >= tol else math.copysign(tol, d))
        fu = f(u)
        if fu >= fx:
            if u >= x:
                a = x
            else:
                b = x
            v, fv, w, fw, x, fx = w, fw, x, fx, u, fu
        else:
            if u < x:
                a = u
            else:
                b = u
            if fu >= fw or w == x:
                v, fv, w, fw = w, fw, u, fu
            elif fu >= fv or v == x or v == w:
                v, fv = u, fu
    return x, fx


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
               grid: int = 21, refine: int = 20, start: Optional[float] = None,
               tol: float = 0.01) -> Tuple[float, float]:
    """The T maximising ``log_likelihood(T)``: the best of a grid of
    ``grid`` points over log T in [low, high], then Brent's method
    (``brent_max``, at most ``refine`` evaluations, ``tol`` in log T)
    between that point's neighbours. Without ``start`` every grid point is
    evaluated; with it (a temperature fitted before, e.g. to the weights
    of the last evaluation) only the grid points from the one nearest to
    ``start`` uphill to a point better than both its neighbours: the same
    grid point when the likelihood has one maximum, in fewer evaluations.
    Returns (T, log_likelihood(T))."""
    f = lambda log_t: log_likelihood(math.exp(log_t))  # noqa: E731
    points = numpy.linspace(math.log(low), math.log(high), grid)
    values: Dict[int, float] = {}

    def at(j: int) -> float:
        if j not in values:
            values[j] = f(points[j])
        return values[j]

    if start is None or not start > 0:
        i = max(range(grid), key=at)
    else:
        i = int(numpy.argmin(numpy.abs(points - math.log(start))))
        while True:
            up = [j for j in (i - 1, i + 1) if 0 <= j < grid and at(j) > at(i)]
            if not up:
                break
            i = max(up, key=at)
    lo, hi = max(i - 1, 0), min(i + 1, grid - 1)
    others = [(points[j], at(j)) for j in (lo, hi) if j != i]
    x, fx = brent_max(f, points[lo], points[hi], points[i], at(i), others, tol, refine)
    return float(math.exp(x)), float(fx)
