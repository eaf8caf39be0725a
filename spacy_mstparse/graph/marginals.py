"""Arc marginals and label probabilities of the graph parser.

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

A temperature may also be given per word (``scaled_scores``: the scores of
the arc into word c and of its sibling factors divided by T[c], a tree
distribution still).

A label's probability given its arc is the softmax of the labeler's label
scores for that arc (the root word's label is fixed: probability 1).
spaCy-free.
"""
from typing import NamedTuple, Optional, Tuple, Union

import numpy

from ..decoders import nonprojective_marginals, projective_marginals, second_order_marginals

MAX_DOUBLINGS = 6


class Marginals(NamedTuple):
    probs: numpy.ndarray      # float64 (n+1, n+1): probs[h, c] = p(head of c is h)
    log_z: float              # log sum_tree exp(score(tree) / temperature)
    temperature: float        # the temperature actually used
    method: str               # "projective", "second-order", "nonprojective" or
                              # "projective-fallback"


Temperature = Union[float, numpy.ndarray]


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

