"""First-order dependency decoders over (n+1) x (n+1) arc score matrices.

- ``eisner``: best projective tree, Eisner's O(n^3) algorithm (Eisner 1996;
  McDonald, Crammer & Pereira 2005).
- ``chu_liu_edmonds``: best non-projective tree, maximum spanning arborescence
  (Chu & Liu 1965; Edmonds 1967; McDonald et al. 2005b).

Both take ``single_root`` (default True: exactly one word attached to the
root). ``is_valid_tree`` and ``is_projective`` check head arrays. Cython code
can call ``eisner_decode`` / ``chu_liu_edmonds_decode`` directly (nogil), see
the .pxd files.
"""
from .chu_liu_edmonds import chu_liu_edmonds
from .eisner import eisner
from .trees import is_projective, is_valid_tree

__all__ = ["eisner", "chu_liu_edmonds", "is_valid_tree", "is_projective"]
