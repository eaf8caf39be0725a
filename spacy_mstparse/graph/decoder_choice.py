"""What ``decoder = "auto"`` picks: Eisner (projective) or Chu-Liu-Edmonds
(non-projective), decided on the training trees.

Non-projective decoding gains on the arcs that need it and loses wherever
the model adds a crossing arc that is wrong: Nguyen et al. (2007) found
projective decoding better on mostly projective languages, McDonald et al.
(2005b) non-projective decoding better on Czech. With k-best MIRA trained
under each decoder (k best spanning trees: Camerini et al. 1980, Hall 2007)
the share of non-projective *arcs* in the training trees separates the two
cases on the UD treebanks measured (BENCHMARKS.md, "Learners and
decoders"; benchmarks/results/nonprojective.json): Chu-Liu-Edmonds when more than
``threshold`` of the arcs are non-projective (an arc h -> c with a word
between h and c that h does not dominate; Nivre & Nilsson 2005), else
Eisner. The share of non-projective *sentences* does not: long sentences
make it large while the arcs that need non-projective decoding stay few.
At second order the non-projective decoder is approximate (a climb from
the best projective tree) and gains less, so there the share must also
exceed ``SECOND_ORDER_MIN_SHARE`` (Turkish IMST, 0.60%: CLE 1.1 UAS below
Eisner at second order; Hungarian Szeged, 1.41%: level).

spaCy-free; the ``mst_parser`` pipe calls ``choose_decoder`` at ``initialize``.
"""
from typing import Dict, Sequence, Tuple

import numpy

from ..decoders.trees import nonprojective_arcs

PROJECTIVE, NONPROJECTIVE = "eisner", "chu_liu_edmonds"
SECOND_ORDER_MIN_SHARE = 0.01


def nonprojective_arc_share(trees: Sequence[numpy.ndarray]) -> float:
    """Share of the arcs of ``trees`` (head arrays) that are non-projective.
    Partial trees (a head -1: unknown) are left out: an unknown head can make
    any known arc non-projective or not."""
    trees = [heads for heads in trees if min(heads[1:], default=0) >= 0]
    n_arcs = sum(len(heads) - 1 for heads in trees)
    n_nonproj = sum(len(nonprojective_arcs(heads)) for heads in trees)
    return n_nonproj / n_arcs if n_arcs else 0.0


def choose_decoder(trees: Sequence[numpy.ndarray], threshold: float,
                   order: int = 1) -> Tuple[str, Dict[str, object]]:
    """(decoder name, what the choice rests on) for the training trees
    ``trees`` of a model of this ``order``: Chu-Liu-Edmonds when their
    non-projective arc share is above ``threshold`` (and, at second order,
    above ``SECOND_ORDER_MIN_SHARE``), else Eisner; always Eisner at order 3
    (grandparents are decoded projectively only)."""
    share = nonprojective_arc_share(trees)
    if order == 2:
        threshold = max(threshold, SECOND_ORDER_MIN_SHARE)
    name = NONPROJECTIVE if share > threshold and order < 3 else PROJECTIVE
    complete = sum(1 for heads in trees if min(heads[1:], default=0) >= 0)
    info = {"nonprojective_arc_share": share, "nonprojective_threshold": threshold,
            "trees": complete}
    return name, info
