"""The decoder table of the graph parser: one entry per decoder name, used
both to validate a configuration and to dispatch.

Each entry gives the first-order 1-best decoder, the second-order one
(arc scores plus an ``(n+1)^3`` sibling array) and the exact k-best
decoders ``(arc, sib, k) -> (trees, scores)`` it has, first order and
second order. Chu-Liu-Edmonds has a first-order k-best variant (Camerini,
Fratta & Maffioli 1980; Hall 2007), so k-best MIRA trains with k trees
non-projectively too. Its second order is approximate, and so is its
k-best list: the k best projective trees (second-order Eisner) and each
of them improved by the same single-arc climb, the k best distinct ones
(climbs often end in the same tree, so the projective ones keep the list
k long).
Eisner (1996) with McDonald & Pereira's (2006) second-order chart and Huang
& Chiang's (2005) k-best lists is projective; Chu-Liu-Edmonds (McDonald et
al. 2005b) is non-projective, with the approximate second-order climb of
McDonald & Pereira (2006).

Order 3 (siblings and grandparents) passes a ``GrandScores`` (sibling and
grandparent arrays) where second order passes the sibling array; only
Eisner has a third-order decoder (Koo & Collins 2010's model 1 chart,
exact, O(n^4) unpruned: the model prunes arcs first). Its k-best list is
approximate: the exact best tree, then the second-order k best trees
rescored with the grandparent factors, the k best distinct ones.
"""
from typing import Callable, List, NamedTuple, Optional

import numpy

from ..decoders import (
    NoTreeError,
    approximate_nonprojective,
    chu_liu_edmonds,
    chu_liu_edmonds_k_best,
    eisner,
    eisner_k_best,
    eisner_second_order,
    improve_tree,
    grandparent_tree_score,
    eisner_grandparent,
    second_order_tree_score,
)


class Decoder(NamedTuple):
    first_order: Callable
    second_order: Callable
    k_best: Optional[Callable]              # first order
    second_order_k_best: Optional[Callable]
    projective: bool
    third_order: Optional[Callable] = None  # (arc, GrandScores) -> heads


class GrandScores(NamedTuple):
    """The higher-order score arrays of order 3: ``sib[h, s, c]`` and ``grand[g, h, c]``."""
    sib: numpy.ndarray
    grand: numpy.ndarray


def tree_score(arc, parts, heads) -> float:
    """A tree's score under the arc scores and ``parts`` (None, a sibling
    array, or ``GrandScores``), as the decoders count it."""
    if isinstance(parts, GrandScores):
        return grandparent_tree_score(arc, parts.sib, parts.grand, heads)
    if parts is not None:
        return second_order_tree_score(arc, parts, heads)
    words = numpy.arange(1, len(heads))
    return float(numpy.asarray(arc, dtype=numpy.float64)[numpy.asarray(heads)[1:], words].sum())


def _grand_1best(arc, parts):
    return eisner_grandparent(arc, parts.sib, parts.grand)


def grandparent_k_best(arc, parts, k):
    """Up to k distinct projective trees, best first: the exact third-order
    best and the second-order k best (sibling scores only) rescored with
    the grandparent factors. Returns ``(heads, scores)``."""
    trees = {}
    best = _grand_1best(arc, parts)
    trees[best.tobytes()] = best
    if k > 1:
        for heads in eisner_k_best(arc, parts.sib, k)[0]:
            heads = numpy.asarray(heads, dtype=numpy.int32)
            trees.setdefault(heads.tobytes(), heads)
    scored = sorted(((tree_score(arc, parts, h), i, h) for i, h in enumerate(trees.values())),
                    key=lambda item: (-item[0], item[1]))[:k]
    return (numpy.array([h for _, _, h in scored], dtype=numpy.int32),
            numpy.array([score for score, _, _ in scored], dtype=numpy.float64))


def _cle_k_best(arc, sib, k):
    return chu_liu_edmonds_k_best(arc, k)


def approximate_nonprojective_k_best(arc, sib, k):
    """Up to k distinct trees, best first, from the k best projective trees
    and each of them climbed by single arc moves (``improve_tree``, as
    ``approximate_nonprojective`` does for the best one). Returns
    ``(heads, scores)`` like the exact k-best decoders."""
    try:
        starts = eisner_k_best(arc, sib, k)[0]
    except NoTreeError:  # no allowed projective tree: the 1-best's fallback
        starts = [approximate_nonprojective(arc, sib)]
    trees = {}
    for start in starts:
        for heads in (improve_tree(arc, sib, start), numpy.asarray(start, dtype=numpy.int32)):
            trees.setdefault(heads.tobytes(), heads)
    scored = sorted(((second_order_tree_score(arc, sib, h), h) for h in trees.values()),
                    key=lambda pair: -pair[0])[:k]
    return (numpy.array([h for _, h in scored], dtype=numpy.int32),
            numpy.array([score for score, _ in scored], dtype=numpy.float64))


DECODERS = {
    "eisner": Decoder(eisner, eisner_second_order, eisner_k_best, eisner_k_best, True,
                      _grand_1best),
    "chu_liu_edmonds": Decoder(chu_liu_edmonds, approximate_nonprojective, _cle_k_best,
                               approximate_nonprojective_k_best, False),
}


def decode(name: str, arc: numpy.ndarray, sib=None, k: int = 1) -> List[numpy.ndarray]:
    """The best tree, or up to ``k`` best (best first) where the decoder has
    a k-best variant for these scores; otherwise one tree. ``sib`` is None
    (first order), the sibling array, or ``GrandScores`` (order 3)."""
    entry = DECODERS[name]
    if isinstance(sib, GrandScores):
        if entry.third_order is None:
            raise ValueError(f"decoder {name!r} has no third-order (grandparent) variant")
        if k > 1:
            return list(grandparent_k_best(arc, sib, k)[0])
        return [entry.third_order(arc, sib)]
    k_best = entry.k_best if sib is None else entry.second_order_k_best
    if k > 1 and k_best is not None:
        return list(k_best(arc, sib, k)[0])
    if sib is not None:
        return [entry.second_order(arc, sib)]
    return [entry.first_order(arc)]
