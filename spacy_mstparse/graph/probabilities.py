"""Arc probabilities, k-best parses and calibration of the graph parser.

The parser's arc scores define a distribution over trees,
p(tree) = exp(score(tree) / T) / Z, T a temperature. Its arc marginals
(``decoders.marginals``) are the probability that a word's head is a given
word: over projective trees (inside-outside over Eisner's chart) for the
Eisner decoder, over all trees (the matrix-tree theorem, Koo et al. 2007;
Smith & Smith 2007; McDonald & Satta 2007) for Chu-Liu-Edmonds. A
second-order model's marginals are those of its first-order (arc) part only:
the sibling scores are left out of the distribution (they are not
arc-factored). The matrix-tree marginals refuse a distribution too peaked for
double precision (FloatingPointError); then the temperature is doubled until
they succeed (at most ``MAX_DOUBLINGS`` times, the temperature used is
reported), and as a last resort the projective marginals at T are used.

A label's probability given its arc is the softmax of the labeler's label
scores for that arc (the root word's label is fixed: probability 1).

``fit_temperature`` chooses T by minimising the negative log-likelihood of
the gold heads under the marginals (Guo et al. 2017's temperature scaling,
applied to the tree distribution), a 1-d search over log T;
``calibration_report`` gives the expected calibration error (Naeini et al.
2015; 15 equal-width bins) and accuracy and coverage above probability
thresholds. spaCy-free.
"""
import math
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

import numpy

from ..decoders import nonprojective_marginals, projective_marginals
from .constraints import Constraints
from .decoding import DECODERS, decode, tree_score

MAX_DOUBLINGS = 6
# Floor of a gold head's probability in the log-likelihood (a gold arc the
# distribution excludes, e.g. a non-projective arc under Eisner).
PROB_FLOOR = 1e-12


class Marginals(NamedTuple):
    probs: numpy.ndarray      # float64 (n+1, n+1): probs[h, c] = p(head of c is h)
    log_z: float              # log sum_tree exp(score(tree) / temperature)
    temperature: float        # the temperature actually used
    method: str               # "projective", "nonprojective" or "projective-fallback"


class Tree(NamedTuple):
    heads: numpy.ndarray      # int32 (n+1), heads[0] = -1
    labels: numpy.ndarray     # int32 label ids (n+1), entry 0 = -1
    score: float              # the decoder's score (arcs, plus siblings for order 2)
    prob: Optional[float]     # exp(arc score / T - log Z) when probabilities are on


class SentenceParse:
    """The analysis of one sentence: ``trees`` (best first, ``trees[0]`` the
    parse), and with probabilities ``marginals``, ``head_probs`` and
    ``label_probs`` (float64 (n+1), entry c for word c's predicted head /
    label). Iterates as ``(heads, labels)`` of the best tree."""

    def __init__(self, trees: List[Tree], marginals: Optional[Marginals] = None,
                 head_probs=None, label_probs=None):
        self.trees = trees
        self.marginals = marginals
        self.head_probs = head_probs
        self.label_probs = label_probs

    @property
    def heads(self) -> numpy.ndarray:
        return self.trees[0].heads

    @property
    def labels(self) -> numpy.ndarray:
        return self.trees[0].labels

    def __iter__(self):
        return iter((self.heads, self.labels))


# -- marginals -----------------------------------------------------------------------
def arc_marginals(arc: numpy.ndarray, temperature: float = 1.0,
                  projective: bool = True) -> Marginals:
    """Arc marginals of the first-order scores ``arc`` (-inf: excluded arc)."""
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature!r}")
    if projective:
        probs, log_z = projective_marginals(arc, temperature)
        return Marginals(probs, log_z, float(temperature), "projective")
    t = float(temperature)
    for _ in range(MAX_DOUBLINGS + 1):
        try:
            probs, log_z = nonprojective_marginals(arc, t)
            return Marginals(probs, log_z, t, "nonprojective")
        except FloatingPointError:
            t *= 2.0
    probs, log_z = projective_marginals(arc, temperature)
    return Marginals(probs, log_z, float(temperature), "projective-fallback")


def label_probabilities(label_scores: numpy.ndarray, labels: numpy.ndarray,
                        heads: numpy.ndarray, root_label: int = -1) -> numpy.ndarray:
    """p(label | arc) of each word's predicted label: softmax of its label
    scores over the labels ``predict`` chooses from (the root label only for
    root words, which always take it)."""
    n = len(heads) - 1
    out = numpy.ones(n + 1, dtype="float64")
    out[0] = numpy.nan
    if n == 0:
        return out
    scores = numpy.array(label_scores[1:], dtype="float64")
    is_root = numpy.asarray(heads[1:]) == 0
    if root_label >= 0:
        scores[~is_root, root_label] = -numpy.inf
    scores -= scores.max(axis=1, keepdims=True)
    probs = numpy.exp(scores)
    probs /= probs.sum(axis=1, keepdims=True)
    chosen = probs[numpy.arange(n), numpy.maximum(labels[1:], 0)]
    out[1:] = numpy.where(is_root & (root_label >= 0), 1.0, chosen)
    return out


# -- decoding with options -----------------------------------------------------------------
def k_best_trees(decoder: str, arc: numpy.ndarray, sib: Optional[numpy.ndarray],
                 k: int) -> List[numpy.ndarray]:
    """Up to ``k`` distinct trees, best first: the decoder's exact k-best
    list where it has one (``decoding.DECODERS``), else its one best tree."""
    trees = decode(decoder, arc, sib, k)
    distinct, seen = [], set()
    for heads in trees:
        key = bytes(numpy.asarray(heads, dtype="int32"))
        if key not in seen:
            seen.add(key)
            distinct.append(numpy.asarray(heads, dtype="int32"))
    return distinct


def best_trees(decoder: str, arc: numpy.ndarray, sib: Optional[numpy.ndarray] = None,
               k: int = 1, constraints: Optional[Constraints] = None) -> List[numpy.ndarray]:
    """The best tree (up to ``k`` distinct trees, best first, see
    ``k_best_trees``) among those satisfying ``constraints``. Raises
    ValueError, naming the words, when no tree satisfies them."""
    if not constraints:
        return k_best_trees(decoder, arc, sib, k)
    return constraints.decode(lambda masked: k_best_trees(decoder, masked, sib, k), arc,
                              DECODERS[decoder].projective)


def analyse(model, sentence, *, probabilities: bool = False, n_best: int = 1,
            temperature: float = 1.0, constraints: Optional[Constraints] = None) -> SentenceParse:
    """Parse one encoded sentence with a ``GraphModel``: the best tree (or
    the ``n_best`` best, best first) satisfying ``constraints``, labelled,
    with scores and, if ``probabilities``, arc and label probabilities."""
    if n_best < 1:
        raise ValueError(f"n_best must be >= 1, got {n_best!r}")
    arc, sib = model.scores(sentence)
    projective = DECODERS[model.decoder].projective
    candidates = best_trees(model.decoder, arc, sib, n_best, constraints)
    marg = None
    if probabilities:
        marg = arc_marginals(constraints.masked(arc) if constraints else arc,
                             temperature, projective)
    trees = []
    words = numpy.arange(1, arc.shape[0])
    for heads in candidates:
        arc_score = float(arc[heads[1:], words].astype("float64").sum())
        score = tree_score(arc, sib, heads) if sib is not None else arc_score
        prob = None
        if marg is not None:
            prob = float(math.exp(min(0.0, arc_score / marg.temperature - marg.log_z)))
        labels = model.label(sentence, heads) if model.labeler is not None else \
            numpy.full(len(heads), -1, dtype="int32")
        trees.append(Tree(heads, labels, float(score), prob))
    parse = SentenceParse(trees, marg)
    if marg is not None:
        best = trees[0]
        n = len(best.heads) - 1
        head_probs = numpy.full(n + 1, numpy.nan)
        head_probs[1:] = marg.probs[best.heads[1:], numpy.arange(1, n + 1)]
        parse.head_probs = head_probs
        if model.labeler is not None:
            scores = model.label_scores(sentence, best.heads)
            parse.label_probs = label_probabilities(scores, best.labels, best.heads,
                                                    model.root_label_id)
    return parse


# -- calibration -----------------------------------------------------------------------
def head_log_likelihood(items: Sequence[Tuple[numpy.ndarray, numpy.ndarray]],
                        temperature: float, projective: bool) -> float:
    """Mean log-probability of the gold heads: items are (arc scores, gold heads)."""
    total, count = 0.0, 0
    for arc, gold in items:
        marg = arc_marginals(arc, temperature, projective)
        n = len(gold) - 1
        p = marg.probs[gold[1:], numpy.arange(1, n + 1)]
        total += float(numpy.log(numpy.maximum(p, PROB_FLOOR)).sum())
        count += n
    return total / max(count, 1)


def fit_temperature(items: Sequence[Tuple[numpy.ndarray, numpy.ndarray]], projective: bool,
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
    a, b = points[max(i - 1, 0)], points[min(i + 1, grid - 1)]
    ratio = (math.sqrt(5) - 1) / 2
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(refine):
        if fc > fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = f(d)
    best = max([(values[i], points[i]), (fc, c), (fd, d)])
    return float(math.exp(best[1])), float(best[0])


def expected_calibration_error(probs: Iterable[float], correct: Iterable[bool],
                               n_bins: int = 15) -> float:
    """ECE: the bin-size-weighted mean |accuracy - mean confidence| over
    ``n_bins`` equal-width confidence bins of [0, 1]."""
    p = numpy.asarray(list(probs), dtype="float64")
    y = numpy.asarray(list(correct), dtype="float64")
    if p.size == 0:
        return float("nan")
    bins = numpy.minimum((p * n_bins).astype(int), n_bins - 1)
    total = 0.0
    for b in range(n_bins):
        sel = bins == b
        if sel.any():
            total += sel.sum() * abs(y[sel].mean() - p[sel].mean())
    return float(total / p.size)


def reliability_bins(probs, correct, n_bins: int = 15) -> List[Dict[str, float]]:
    """Per bin: its range, count, mean confidence and accuracy (a reliability diagram)."""
    p = numpy.asarray(list(probs), dtype="float64")
    y = numpy.asarray(list(correct), dtype="float64")
    bins = numpy.minimum((p * n_bins).astype(int), n_bins - 1)
    out = []
    for b in range(n_bins):
        sel = bins == b
        out.append({"low": b / n_bins, "high": (b + 1) / n_bins, "count": int(sel.sum()),
                    "confidence": float(p[sel].mean()) if sel.any() else None,
                    "accuracy": float(y[sel].mean()) if sel.any() else None})
    return out


def calibration_report(probs, correct, thresholds: Sequence[float] = (0.9, 0.99),
                       n_bins: int = 15) -> Dict[str, object]:
    """ECE, overall accuracy and, per threshold t, the share of words with
    probability >= t (coverage) and the accuracy among them."""
    p = numpy.asarray(list(probs), dtype="float64")
    y = numpy.asarray(list(correct), dtype=bool)
    report: Dict[str, object] = {
        "words": int(p.size),
        "ece": expected_calibration_error(p, y, n_bins),
        "accuracy": float(y.mean()) if p.size else float("nan"),
        "mean_prob": float(p.mean()) if p.size else float("nan"),
    }
    for t in thresholds:
        sel = p >= t
        report[f"coverage@{t}"] = float(sel.mean()) if p.size else float("nan")
        report[f"accuracy@{t}"] = float(y[sel].mean()) if sel.any() else float("nan")
    return report
