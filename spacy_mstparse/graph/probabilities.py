"""Arc probabilities, k-best parses and calibration of the graph parser.

The parser's arc scores define a distribution over trees,
p(tree) = exp(score(tree) / T) / Z, T a temperature. Its arc marginals
(``decoders.marginals``) are the probability that a word's head is a given
word: over projective trees (inside-outside over Eisner's chart) for the
Eisner decoder, over all trees (the matrix-tree theorem, Koo et al. 2007;
Smith & Smith 2007; McDonald & Satta 2007) for Chu-Liu-Edmonds. A
second-order model with a projective decoder gets the exact marginals of its
whole distribution, arc plus sibling scores (inside-outside over McDonald &
Pereira 2006's second-order chart, ``decoders.marginals_second_order``); with
a non-projective decoder (whose second-order search is approximate) its
marginals are those of its first-order (arc) part only, by the matrix-tree
theorem: the sibling scores are left out. An order-3 model gets the
marginals of its sibling model (arc plus sibling scores; its grandparent
factors are left out). The matrix-tree marginals refuse
a distribution too peaked for double precision (FloatingPointError); then
the temperature is doubled until they succeed (at most ``MAX_DOUBLINGS`` times, the temperature used is
reported), and as a last resort the projective marginals at T are used.

A label's probability given its arc is the softmax of the labeler's label
scores for that arc (the root word's label is fixed: probability 1).

A temperature may also be given per word (``scaled_scores``: the scores of
the arc into word c and of its sibling factors divided by T[c], a tree
distribution still); ``fit_tag_temperatures`` fits one per coarse tag of the
dependent. The benchmark measures it; ``calibrate`` does not use it (it did
not raise the held-out coverage, BENCHMARKS.md).

``fit_temperature`` chooses T by minimising the negative log-likelihood of
the gold heads under the marginals (Guo et al. 2017's temperature scaling,
applied to the tree distribution), a 1-d search over log T;
``calibration_report`` gives the expected calibration error (Naeini et al.
2015; 15 equal-width bins) and accuracy and coverage above probability
thresholds. spaCy-free.
"""
import math
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy

from ..decoders import nonprojective_marginals, projective_marginals, second_order_marginals
from ..decoders.dispatch import DECODERS, Factors, decode
from .constraints import Constraints

MAX_DOUBLINGS = 6
# Floor of a gold head's probability in the log-likelihood (a gold arc the
# distribution excludes, e.g. a non-projective arc under Eisner).
PROB_FLOOR = 1e-12


class Marginals(NamedTuple):
    probs: numpy.ndarray      # float64 (n+1, n+1): probs[h, c] = p(head of c is h)
    log_z: float              # log sum_tree exp(score(tree) / temperature)
    temperature: float        # the temperature actually used
    method: str               # "projective", "second-order", "nonprojective" or
                              # "projective-fallback"


class Tree(NamedTuple):
    heads: numpy.ndarray      # int32 (n+1), heads[0] = -1
    labels: numpy.ndarray     # int32 label ids (n+1), entry 0 = -1
    score: float              # the decoder's score (arcs, plus siblings for order 2)
    prob: Optional[float]     # exp(score / T - log Z) when probabilities are on (the
                              # arc score only when the marginals leave siblings out)


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
Temperature = Union[float, numpy.ndarray]


def word_temperatures(tags: Sequence[str], temperature: float,
                      tag_temperatures: Optional[Dict[str, float]] = None) -> Temperature:
    """The temperature of every word: ``tag_temperatures[tag]`` of its coarse
    tag (entry 0, the root, unused), ``temperature`` for tags not in the
    table; just ``temperature`` without a table."""
    if not tag_temperatures:
        return float(temperature)
    out = numpy.empty(len(tags) + 1, dtype="float64")
    out[0] = 1.0
    out[1:] = [tag_temperatures.get(tag, temperature) for tag in tags]
    return out


def scaled_scores(arc: numpy.ndarray, sib: Optional[numpy.ndarray],
                  temperature: Temperature) -> Tuple[numpy.ndarray, Optional[numpy.ndarray], float]:
    """(arc, sib, T) with per-word temperatures folded into the scores: the
    scores of the arc into word c (and its sibling factors) divided by
    temperature[c], then T = 1. p(tree) proportional to exp(sum over the
    tree's factors of score / T of the factor's dependent) is then
    exp(score'(tree)); a stop factor of word h (``sib[h, last, h]``) is
    divided by temperature[h]. A single temperature is returned unchanged."""
    if numpy.ndim(temperature) == 0:
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature!r}")
        return arc, sib, float(temperature)
    t = numpy.asarray(temperature, dtype="float64")
    if t.shape != (arc.shape[0],) or not (t[1:] > 0).all():
        raise ValueError(f"per-word temperatures must be {arc.shape[0]} numbers > 0, got {t!r}")
    inv = (1.0 / t).astype("float32")
    inv[0] = 1.0
    arc = numpy.asarray(arc, dtype="float32") * inv[None, :]
    if sib is not None:
        sib = numpy.asarray(sib, dtype="float32") * inv[None, None, :]
    return arc, sib, 1.0


def arc_marginals(arc: numpy.ndarray, temperature: Temperature = 1.0,
                  projective: bool = True, sib: Optional[numpy.ndarray] = None) -> Marginals:
    """Arc marginals under the arc scores ``arc`` (-inf: excluded arc) and,
    over projective trees, the sibling scores ``sib`` (None: first order;
    ignored when not ``projective``). ``temperature``: one T, or one per word
    (``scaled_scores``; the Marginals then report T = 1 on the scaled scores)."""
    arc, sib, temperature = scaled_scores(arc, sib, temperature)
    if projective and sib is not None:
        probs, log_z = second_order_marginals(arc, sib, temperature)
        return Marginals(probs, log_z, float(temperature), "second-order")
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
def k_best_trees(decoder: str, factors: Factors, k: int) -> List[numpy.ndarray]:
    """Up to ``k`` distinct trees, best first: the decoder's k-best list
    (``decoders.dispatch``)."""
    trees = decode(decoder, factors, k)
    distinct, seen = [], set()
    for heads in trees:
        key = bytes(numpy.asarray(heads, dtype="int32"))
        if key not in seen:
            seen.add(key)
            distinct.append(numpy.asarray(heads, dtype="int32"))
    return distinct


def best_trees(decoder: str, factors: Factors, k: int = 1,
               constraints: Optional[Constraints] = None) -> List[numpy.ndarray]:
    """The best tree (up to ``k`` distinct trees, best first, see
    ``k_best_trees``) of ``factors`` among those satisfying ``constraints``.
    Raises ValueError, naming the words, when no tree satisfies them."""
    if not constraints:
        return k_best_trees(decoder, factors, k)
    return constraints.decode(lambda masked: k_best_trees(decoder, factors.with_arc(masked), k),
                              factors.arc, DECODERS[decoder].projective)


def analyse(model, sentence, *, probabilities: bool = False, n_best: int = 1,
            temperature: Temperature = 1.0,
            constraints: Optional[Constraints] = None) -> SentenceParse:
    """Parse one encoded sentence with a ``GraphModel``: the best tree (or
    the ``n_best`` best, best first) satisfying ``constraints``, labelled,
    with scores and, if ``probabilities``, arc and label probabilities
    (``temperature``: one, or one per word, see ``scaled_scores``)."""
    if n_best < 1:
        raise ValueError(f"n_best must be >= 1, got {n_best!r}")
    factors = model.scores(sentence)
    arc = factors.arc
    projective = DECODERS[model.decoder].projective
    candidates = best_trees(model.decoder, factors, n_best, constraints)
    marg = None
    if probabilities:
        # the distribution of the arc and sibling factors (grandparents left out)
        arc_t, sib_t, temperature = scaled_scores(arc, factors.sib, temperature)
        marg = arc_marginals(constraints.masked(arc_t) if constraints else arc_t,
                             temperature, projective, sib_t)
    trees = []
    words = numpy.arange(1, arc.shape[0])
    for heads in candidates:
        arc_score = float(arc[heads[1:], words].astype("float64").sum())
        score = factors.tree_score(heads)
        prob = None
        if marg is not None:
            if arc_t is arc and marg.method != "second-order":   # one temperature
                modelled = arc_score
            elif marg.method == "second-order":
                modelled = Factors(arc_t, sib_t).tree_score(heads)
            else:
                modelled = float(arc_t[heads[1:], words].astype("float64").sum())
            prob = float(math.exp(min(0.0, modelled / marg.temperature - marg.log_z)))
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


def _golden_max(f, a: float, b: float, steps: int) -> Tuple[float, float]:
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
    x, fx = _golden_max(f, points[max(i - 1, 0)], points[min(i + 1, grid - 1)], refine)
    best = max((values[i], points[i]), (fx, x))
    return float(math.exp(best[1])), float(best[0])


def fit_tag_temperatures(items: Sequence[Tuple[numpy.ndarray, ...]],
                         tags: Sequence[Sequence[str]], projective: bool, temperature: float,
                         min_words: int = 200, sweeps: int = 2, span: float = 4.0,
                         steps: int = 12) -> Dict[str, float]:
    """One temperature per coarse tag of the dependent (p(tree) proportional
    to exp(sum over its arcs h -> c of s(h, c) / T[tag of c])), maximising
    the gold heads' log-likelihood: coordinate ascent from ``temperature``
    for every tag with at least ``min_words`` words (rarer tags keep
    ``temperature``), a golden-section search over log T in
    [T / span, T * span] per tag, on the sentences holding the tag,
    ``sweeps`` times. ``tags[i]``: the tags of item i's words."""
    counts: Dict[str, int] = {}
    for sent in tags:
        for tag in sent:
            counts[tag] = counts.get(tag, 0) + 1
    table: Dict[str, float] = {}
    fitted = [tag for tag, c in sorted(counts.items(), key=lambda kv: -kv[1]) if c >= min_words]
    for _ in range(sweeps):
        for tag in fitted:
            sel = [i for i, sent in enumerate(tags) if tag in sent]
            part = [items[i] for i in sel]

            def f(log_t, tag=tag, sel=sel, part=part):
                trial = {**table, tag: math.exp(log_t)}
                temps = [word_temperatures(tags[i], temperature, trial) for i in sel]
                return gold_head_log_probs(part, temps, projective)[0]

            centre = math.log(table.get(tag, temperature))
            x, _ = _golden_max(f, centre - math.log(span), centre + math.log(span), steps)
            table[tag] = float(math.exp(x))
    return table


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
