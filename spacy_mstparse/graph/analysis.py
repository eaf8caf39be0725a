"""One sentence parsed with options: the best tree or the k best (distinct,
best first; the decoders' k-best lists: Huang & Chiang 2005 over Eisner's
chart, Camerini et al. 1980 / Hall 2007 over all trees), among the trees
satisfying fixed and forbidden heads (``graph.constraints``), labelled, and
with probabilities: each tree's exp(score / T - log Z), each word's head and
label probability (``graph.marginals``). What the ``mst_parser`` pipe calls
for probabilities, n-best lists and constraints. spaCy-free.
"""
import math
from typing import List, NamedTuple, Optional

import numpy

from ..decoders.dispatch import DECODERS, Factors, decode
from .constraints import Constraints
from .marginals import Marginals, Temperature, arc_marginals, label_probabilities, scaled_scores


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
    # keep_heads prunes the plain parse only: probabilities, other trees and
    # constraints may need the arcs it would drop
    factors = model.scores(sentence, pruned=not (probabilities or n_best > 1 or constraints))
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
