"""The decoder table of the graph parser: one entry per decoder name, used
both to validate a configuration and to dispatch.

Each entry gives the first-order 1-best decoder, the second-order one
(arc scores plus an ``(n+1)^3`` sibling array) and, where an exact k-best
variant exists, the k-best decoder ``(arc, sib, k) -> (trees, scores)``.
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
    eisner,
    eisner_k_best,
    eisner_second_order,
)


class Decoder(NamedTuple):
    first_order: Callable
    second_order: Callable
    k_best: Optional[Callable]
    projective: bool


DECODERS = {
    "eisner": Decoder(eisner, eisner_second_order, eisner_k_best, True),
    "chu_liu_edmonds": Decoder(chu_liu_edmonds, approximate_nonprojective, None, False),
}


def decode(name: str, arc: numpy.ndarray, sib: Optional[numpy.ndarray] = None,
           k: int = 1) -> List[numpy.ndarray]:
    """The best tree, or up to ``k`` best (best first) where the decoder has
    an exact k-best variant for these scores; otherwise one tree."""
    entry = DECODERS[name]
    if k > 1 and entry.k_best is not None:
        return list(entry.k_best(arc, sib, k)[0])
    if sib is not None:
        return [entry.second_order(arc, sib)]
    return [entry.first_order(arc)]
