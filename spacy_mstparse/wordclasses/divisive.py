"""Divisive (top-down) exchange clustering: a binary hierarchy of word classes.

Brown et al. (1992) build their hierarchy bottom-up by merging classes; here
it is built top-down, as in the divisive variant of the exchange algorithm:
one class holds every word; at each level 1..depth every class is split in
two, and exchange passes (Kneser & Ney 1993; Martin, Liermann & Ney 1998)
move words between the two children of the same parent only, raising the
class-bigram log-likelihood (``exchange.pyx``). A word's path gets one bit
per level, its child at that level, so paths are Brown-style: the first k
bits of a path name its class among 2^k.

Each split starts from an alternation by frequency rank within the parent
(its most frequent word to child 0, the next to child 1, ...), which keeps
frequent words apart at the start. Passes visit the words in an order drawn
from ``seed``, so a run is reproducible; a level ends after a pass with no
move or after ``passes`` passes.
"""
from typing import Callable, NamedTuple, Optional

import numpy

from .exchange import ExchangeState


class ExchangeProgress(NamedTuple):
    """Reported after a level's initial split (``pass_number`` 0) and after
    each exchange pass."""
    level: int
    n_classes: int
    pass_number: int
    moves: int
    objective: float


ProgressCallback = Callable[[ExchangeProgress], None]


def alternate_split(parents: numpy.ndarray) -> numpy.ndarray:
    """The initial classes of a level: word i (ids are frequency ranks) goes to
    child 2p + (its rank among the words of its parent p) mod 2."""
    order = numpy.argsort(parents, kind="stable")
    sorted_parents = parents[order]
    group_start = numpy.searchsorted(sorted_parents, sorted_parents, side="left")
    rank_in_parent = numpy.empty_like(parents)
    rank_in_parent[order] = numpy.arange(len(parents)) - group_start
    return 2 * parents + (rank_in_parent & 1)


def divisive_classes(state: ExchangeState, depth: int, passes: int = 10, seed: int = 0,
                     progress: Optional[ProgressCallback] = None) -> numpy.ndarray:
    """Each word's class among 2^depth leaves (its path: the class's ``depth``
    bits, the first level's bit highest)."""
    if depth < 1:
        raise ValueError(f"depth must be at least 1, got {depth}")
    if passes < 0:
        raise ValueError(f"passes must be at least 0, got {passes}")
    rng = numpy.random.default_rng(seed)
    classes = numpy.zeros(state.n_words, dtype=numpy.int64)
    for level in range(1, depth + 1):
        n_classes = 2 ** level
        state.set_classes(alternate_split(classes), n_classes)
        if progress is not None:
            progress(ExchangeProgress(level, n_classes, 0, 0, state.objective()))
        for pass_number in range(1, passes + 1):
            moves = state.exchange_pass(rng.permutation(state.n_words))
            if progress is not None:
                progress(ExchangeProgress(level, n_classes, pass_number, moves, state.objective()))
            if moves == 0:
                break
        classes = state.classes
    return classes
