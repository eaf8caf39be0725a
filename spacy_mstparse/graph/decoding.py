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
    second_order_tree_score,
)


class Decoder(NamedTuple):
    first_order: Callable
    second_order: Callable
    k_best: Optional[Callable]              # first order
    second_order_k_best: Optional[Callable]
    projective: bool


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
    "eisner": Decoder(eisner, eisner_second_order, eisner_k_best, eisner_k_best, True),
    "chu_liu_edmonds": Decoder(chu_liu_edmonds, approximate_nonprojective, _cle_k_best,
                               approximate_nonprojective_k_best, False),
}


def decode(name: str, arc: numpy.ndarray, sib: Optional[numpy.ndarray] = None,
           k: int = 1) -> List[numpy.ndarray]:
    """The best tree, or up to ``k`` best (best first) where the decoder has
    an exact k-best variant for these scores; otherwise one tree."""
    entry = DECODERS[name]
    k_best = entry.k_best if sib is None else entry.second_order_k_best
    if k > 1 and k_best is not None:
        return list(k_best(arc, sib, k)[0])
    if sib is not None:
        return [entry.second_order(arc, sib)]
    return [entry.first_order(arc)]
