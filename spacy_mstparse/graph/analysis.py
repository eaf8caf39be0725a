"""One sentence parsed with options: the best tree or the k best (distinct,
best first; the decoders' k-best lists: Huang & Chiang 2005 over Eisner's
chart, Camerini et al. 1980 / Hall 2007 over all trees), among the trees
satisfying fixed and forbidden heads (``graph.constraints``; those its
policy keeps, over the space it chooses), labelled, and
with probabilities: each tree's exp(score / T - log Z), each word's head and
label probability (``graph.marginals``). What the ``mst_parser`` pipe calls
for probabilities, n-best lists and constraints. spaCy-free.
"""
import math
from typing import List, NamedTuple, Optional

import numpy

from ..decoders.dispatch import DECODERS, Factors, decode, serves
from .constraints import Constraints, Resolution, resolve, warn_dropped
from .marginals import Marginals, Temperature, arc_marginals, scaled_scores


class Tree(NamedTuple):
    heads: numpy.ndarray      # int32 (n+1), heads[0] = -1
    labels: numpy.ndarray     # int32 label ids (n+1), entry 0 = -1
    score: float              # the decoder's score (arcs, plus siblings for order 2)
    prob: Optional[float]     # exp(score / T - log Z) when probabilities are on (the
                              # arc score only when the marginals leave siblings out)
    label_probs: Optional[numpy.ndarray] = None  # p(label | tree) of each word's label


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
               constraints: Optional[Constraints] = None,
               policy: str = "strict") -> List[numpy.ndarray]:
    """The best tree (up to ``k`` distinct trees, best first, see
    ``k_best_trees``) of ``factors`` among those satisfying ``constraints``,
    or those the constraint ``policy`` keeps (``graph.constraints``; a
    ``ConstraintWarning`` names the words whose constraints it dropped).
    Raises ValueError, naming the words, when no tree satisfies them
    (``strict``)."""
    if not constraints:
        return k_best_trees(decoder, factors, k)
    resolution = resolve(constraints, policy, DECODERS[decoder].projective, factors.arc)
    warn_dropped(resolution)
    return resolved_trees(decoder, factors, k, resolution)


def resolved_trees(decoder: str, factors: Factors, k: int,
                   resolution: Resolution) -> List[numpy.ndarray]:
    """``best_trees`` under the constraints a policy kept, over the search
    space it chose: the decoder's, or all trees (Chu-Liu-Edmonds of the same
    order; at order 3, which has none, of order 2: the grandparent factors
    left out)."""
    if resolution.projective != DECODERS[decoder].projective:
        decoder = next(name for name, d in DECODERS.items()
                       if d.projective == resolution.projective)
        if not serves(decoder, factors.order, k):
            factors = Factors(factors.arc, factors.sib)
    return resolution.constraints.decode(
        lambda masked: k_best_trees(decoder, factors.with_arc(masked), k),
        factors.arc, resolution.projective)


def chosen_label_probs(marginals: numpy.ndarray, labels: numpy.ndarray) -> numpy.ndarray:
    """Each word's probability of its label (float64 (n+1), entry 0 NaN)
    from the label marginals of its tree (``GraphModel.label_marginals``)."""
    out = numpy.full(len(labels), numpy.nan)
    words = numpy.arange(1, len(labels))
    out[1:] = marginals[words, numpy.maximum(labels[1:], 0)]
    return out


def analyse(model, sentence, *, probabilities: bool = False, n_best: int = 1,
            temperature: Temperature = 1.0, label_temperature: float = 1.0,
            constraints: Optional[Constraints] = None, policy: str = "strict") -> SentenceParse:
    """Parse one encoded sentence with a ``GraphModel``: the best tree (or
    the ``n_best`` best, best first) satisfying ``constraints`` (those the
    constraint ``policy`` keeps, see ``best_trees``), labelled, with scores
    and, if ``probabilities``, arc probabilities over the same trees
    (``temperature``: one, or one per word, see ``scaled_scores``) and each
    tree's label probabilities (the labeler's marginals at ``label_temperature``)."""
    if n_best < 1:
        raise ValueError(f"n_best must be >= 1, got {n_best!r}")
    # keep_heads prunes the plain parse only: probabilities, other trees and
    # constraints may need the arcs it would drop
    plain = not (probabilities or n_best > 1 or constraints)
    factors = (model.scores(sentence) if plain or not getattr(model, "keep_heads", 0)
               else model.scores(sentence, pruned=False))
    arc = factors.arc
    projective = DECODERS[model.decoder].projective
    if constraints:
        resolution = resolve(constraints, policy, projective, arc)
        warn_dropped(resolution)
        constraints, projective = resolution.constraints, resolution.projective
        candidates = resolved_trees(model.decoder, factors, n_best, resolution)
    else:
        candidates = k_best_trees(model.decoder, factors, n_best)
    finish = getattr(model, "finish_tree", None)
    if finish is not None and not constraints and candidates:
        # the final-word rule on the best tree, as in the plain parse; the
        # other trees of an n-best list follow in score order (one equal to
        # the first left out)
        best = finish(sentence, candidates[0], arc)
        candidates = [best] + [t for t in candidates[1:] if not numpy.array_equal(t, best)]
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
        label_probs = None
        if probabilities and model.labeler is not None:
            label_probs = chosen_label_probs(
                model.label_marginals(sentence, heads, label_temperature), labels)
        trees.append(Tree(heads, labels, float(score), prob, label_probs))
    parse = SentenceParse(trees, marg)
    if marg is not None:
        best = trees[0]
        n = len(best.heads) - 1
        head_probs = numpy.full(n + 1, numpy.nan)
        head_probs[1:] = marg.probs[best.heads[1:], numpy.arange(1, n + 1)]
        parse.head_probs = head_probs
        parse.label_probs = best.label_probs
    return parse
