"""The decoder table of the graph parser: one entry per decoder name, used
both to validate a configuration and to dispatch.

Each entry gives the first-order 1-best decoder, the second-order one
(arc scores plus an ``(n+1)^3`` sibling array) and the exact k-best
decoders ``(arc, sib, k) -> (trees, scores)`` it has, first order and
second order. Chu-Liu-Edmonds has a first-order k-best variant (Camerini,
Fratta & Maffioli 1980; Hall 2007), so k-best MIRA trains with k trees
non-projectively too; its second order (approximate) gives one tree.
Eisner (1996) with McDonald & Pereira's (2006) second-order chart and Huang
& Chiang's (2005) k-best lists is projective; Chu-Liu-Edmonds (McDonald et
al. 2005b) is non-projective, with the approximate second-order climb of
McDonald & Pereira (2006).
"""
from typing import Callable, List, NamedTuple, Optional

import numpy

from ..decoders import (
    approximate_nonprojective,
    chu_liu_edmonds,
    chu_liu_edmonds_k_best,
    eisner,
    eisner_k_best,
    eisner_second_order,
)


class Decoder(NamedTuple):
    first_order: Callable
    second_order: Callable
    k_best: Optional[Callable]              # first order
    second_order_k_best: Optional[Callable]
    projective: bool


def _cle_k_best(arc, sib, k):
    return chu_liu_edmonds_k_best(arc, k)


DECODERS = {
    "eisner": Decoder(eisner, eisner_second_order, eisner_k_best, eisner_k_best, True),
    "chu_liu_edmonds": Decoder(chu_liu_edmonds, approximate_nonprojective, _cle_k_best, None,
                               False),
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
