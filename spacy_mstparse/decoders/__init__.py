"""First-order dependency decoders over (n+1) x (n+1) arc score matrices.

- ``eisner``: best projective tree, Eisner's O(n^3) algorithm (Eisner 1996;
  McDonald, Crammer & Pereira 2005).
- ``chu_liu_edmonds``: best non-projective tree, maximum spanning arborescence
  (Chu & Liu 1965; Edmonds 1967; McDonald et al. 2005b).
- ``chu_liu_edmonds_k_best``: the k best non-projective trees (Camerini,
  Fratta & Maffioli 1980; Hall 2007).

- ``eisner_second_order`` / ``eisner_k_best``: exact projective decoding with
  sibling scores and k-best lists (McDonald & Pereira 2006; Huang & Chiang
  2005); first-order k-best is the same decoder without sibling scores.
- ``eisner_grandparent``: exact projective decoding with sibling and
  grandparent scores (Koo & Collins 2010, model 1 chart), over the arcs
  with finite scores (prune first: O(n^4) unpruned).
- ``approximate_nonprojective``: second-order non-projective decoding by
  hill-climbing from the projective tree (McDonald & Pereira 2006).
- ``projective_marginals`` / ``nonprojective_marginals``: exact arc marginals
  and log Z under p(tree) proportional to exp(score / T): inside-outside over
  Eisner's chart, and the matrix-tree theorem (Koo et al. 2007).
- ``second_order_marginals``: the same with sibling scores over projective
  trees, inside-outside over the second-order Eisner chart (McDonald &
  Pereira 2006).

The first-order decoders take ``single_root`` (default True: exactly one word attached to the
root). ``is_valid_tree``, ``is_projective`` and ``nonprojective_arcs`` check
head arrays. Cython code can call ``eisner_decode`` / ``chu_liu_edmonds_decode`` /
``chu_liu_edmonds_k_best_decode`` and ``projective_marginals_c`` /
``nonprojective_marginals_c`` / ``second_order_marginals_c`` directly (nogil),
see the .pxd files.

The graph parser decodes through one entry, ``dispatch`` (``decode_c`` in C,
``decode`` in Python): a ``Factors`` container (arc, sibling, grandparent
scores) and a decoder name in, k best trees out; it says which (decoder,
order) it serves (``serves``) and scores trees (``Factors.tree_score``).

Constraints go through the scores: -inf forbids an arc (a fixed head is every
other head of the word forbidden). Every decoder returns a tree avoiding the
forbidden arcs whenever its search space holds one, and raises
``NoTreeError`` (a ValueError) otherwise.
"""
from .chu_liu_edmonds import chu_liu_edmonds
from .eisner import eisner
from .eisner_grandparent import eisner_grandparent, grandparent_tree_score
from .eisner_second_order import eisner_k_best, eisner_second_order, second_order_tree_score
from .kbest_spanning_trees import chu_liu_edmonds_k_best
from .marginals import projective_marginals
from .marginals_nonprojective import nonprojective_marginals
from .marginals_second_order import second_order_marginals
from .second_order_nonprojective import approximate_nonprojective, improve_tree
from .trees import NoTreeError, is_projective, is_valid_tree, nonprojective_arcs

__all__ = [
    "eisner",
    "chu_liu_edmonds",
    "chu_liu_edmonds_k_best",
    "eisner_second_order",
    "eisner_k_best",
    "second_order_tree_score",
    "eisner_grandparent",
    "grandparent_tree_score",
    "approximate_nonprojective",
    "improve_tree",
    "projective_marginals",
    "nonprojective_marginals",
    "second_order_marginals",
    "is_valid_tree",
    "is_projective",
    "nonprojective_arcs",
    "NoTreeError",
]
