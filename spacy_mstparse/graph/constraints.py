"""Constrained decoding: the best tree that uses some given arcs and avoids others.

A constraint set fixes the head of some words (``fixed``: word -> head, 0 the
root) and forbids some arcs (``forbidden``: (head, word) pairs). As in the
partial-annotation parsers of Li, Zhang, Zhang, Chen & Liu (2016) (and the
constrained search of Lawler's k-best partitioning), the constraints are
compiled into the arc scores: every other head of a fixed word and every
forbidden arc is excluded, so an exact decoder returns the best tree among
those satisfying the constraints (exact for Eisner over projective trees and
Chu-Liu-Edmonds over all trees, first order and Eisner second order; the
approximate second-order non-projective climb only approximately).

Excluded arcs get the score -inf, for the marginals (``decoders.marginals``
gives such an arc probability 0) and for the decoders alike: every decoder
returns a tree avoiding the -inf arcs whenever its search space holds one
and raises ``NoTreeError`` otherwise (``decoders``), so a decoded tree never
breaks the constraints.

Constraints that no tree can satisfy are reported before decoding when they
are visible in the constraints alone: two words fixed to the root (single
root), a cycle of fixed heads, a fixed arc that is also forbidden, every head
of a word forbidden; under a projective decoder, two fixed arcs that cross.
Other impossible sets (e.g. forbidden arcs that leave a group of words no
way to the root) are found by the decoder: ``decode`` re-raises its
``NoTreeError`` naming the constrained words. Words are named in messages by
``names[i]`` (default "word i").
"""
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy

from ..decoders import NoTreeError

Arc = Tuple[int, int]


class Constraints:
    """Fixed heads and forbidden arcs of one sentence of ``n`` words
    (positions 1..n, 0 the root).

    fixed: {word: head}; forbidden: iterable of (head, word).
    names: how messages call word i (``names[i]``, i = 0..n).
    """

    def __init__(self, n: int, fixed: Optional[Dict[int, int]] = None,
                 forbidden: Iterable[Arc] = (), names: Optional[Sequence[str]] = None):
        self.n = int(n)
        self.names = list(names) if names is not None else (
            ["the root"] + [f"word {i}" for i in range(1, self.n + 1)])
        self.fixed = {int(c): int(h) for c, h in (fixed or {}).items()}
        self.forbidden = {(int(h), int(c)) for h, c in forbidden}
        for c, h in self.fixed.items():
            self._check_arc(h, c, "fixed head")
        for h, c in self.forbidden:
            self._check_arc(h, c, "forbidden head")

    def __bool__(self) -> bool:
        return bool(self.fixed or self.forbidden)

    def name(self, i: int) -> str:
        return self.names[i]

    def _check_arc(self, h: int, c: int, what: str) -> None:
        if not 1 <= c <= self.n:
            raise ValueError(f"{what}: no word {c} in a sentence of {self.n} words")
        if not 0 <= h <= self.n:
            raise ValueError(f"{what} of {self.name(c)}: no word {h} in a sentence of "
                             f"{self.n} words")
        if h == c and what == "fixed head":
            raise ValueError(f"{what}: {self.name(c)} cannot be its own head "
                             "(fix the root as the head to make it the root word)")

    # -- checks that need no decoding ---------------------------------------------
    def check(self, single_root: bool = True, projective: bool = False) -> None:
        """Raise ValueError, naming the words, if the constraints alone rule
        out every tree."""
        for c, h in self.fixed.items():
            if (h, c) in self.forbidden:
                raise ValueError(f"no tree satisfies the constraints: the head of "
                                 f"{self.name(c)} is fixed to {self.name(h)} and forbidden")
        for c in range(1, self.n + 1):
            if c not in self.fixed and all(
                    (h, c) in self.forbidden for h in range(self.n + 1) if h != c):
                raise ValueError(f"no tree satisfies the constraints: every head of "
                                 f"{self.name(c)} is forbidden")
        roots = sorted(c for c, h in self.fixed.items() if h == 0)
        if single_root and len(roots) > 1:
            raise ValueError("no tree satisfies the constraints: more than one word is fixed "
                             "as the root (" + ", ".join(self.name(c) for c in roots) + ")")
        cycle = self._fixed_cycle()
        if cycle:
            raise ValueError("no tree satisfies the constraints: the fixed heads form a cycle ("
                             + " -> ".join(self.name(c) for c in cycle) + ")")
        if projective:
            crossing = self.crossing_fixed_arcs()
            if crossing:
                (h1, c1), (h2, c2) = crossing
                raise ValueError(
                    "no projective tree satisfies the constraints: the fixed arcs "
                    f"{self.name(h1)} -> {self.name(c1)} and {self.name(h2)} -> "
                    f"{self.name(c2)} cross")

    def _fixed_cycle(self) -> List[int]:
        for start in self.fixed:
            seen = [start]
            c = start
            while c in self.fixed and self.fixed[c] != 0:
                c = self.fixed[c]
                if c == start:
                    return seen + [start]
                if c in seen:
                    break
                seen.append(c)
        return []

    def crossing_fixed_arcs(self) -> Optional[Tuple[Arc, Arc]]:
        """Two fixed arcs that cross (no projective tree holds both), if any."""
        arcs = sorted((h, c) for c, h in self.fixed.items())
        for i, (h1, c1) in enumerate(arcs):
            a1, b1 = min(h1, c1), max(h1, c1)
            for h2, c2 in arcs[i + 1:]:
                a2, b2 = min(h2, c2), max(h2, c2)
                if a1 < a2 < b1 < b2 or a2 < a1 < b2 < b1:
                    return (h1, c1), (h2, c2)
        return None

    # -- compiling into scores -----------------------------------------------------
    def excluded(self, single_root: bool = True) -> numpy.ndarray:
        """Boolean (n+1, n+1) mask of the arcs no satisfying tree uses."""
        N = self.n + 1
        mask = numpy.zeros((N, N), dtype=bool)
        for c, h in self.fixed.items():
            mask[:, c] = True
            mask[h, c] = False
        for h, c in self.forbidden:
            mask[h, c] = True
        if single_root and any(h == 0 for h in self.fixed.values()):
            root_word = next(c for c, h in self.fixed.items() if h == 0)
            mask[0, 1:] = True
            mask[0, root_word] = False
        return mask

    def masked(self, arc: numpy.ndarray, single_root: bool = True) -> numpy.ndarray:
        """The arc scores with -inf on every excluded arc (for the decoders
        and the marginals)."""
        out = numpy.array(arc, dtype="float32", copy=True)
        out[self.excluded(single_root)] = -numpy.inf
        return out

    def violations(self, heads: Sequence[int]) -> List[int]:
        """Words whose head in ``heads`` breaks a constraint."""
        return [c for c in range(1, self.n + 1)
                if self.fixed.get(c, heads[c]) != heads[c] or (heads[c], c) in self.forbidden]

    def decode(self, decode: Callable[[numpy.ndarray], object], arc: numpy.ndarray,
               projective: bool = False, single_root: bool = True):
        """``decode(masked arc scores)`` (any decoder call honouring -inf),
        after ``check``; a ``NoTreeError`` from the decoder is re-raised
        naming the constrained words."""
        self.check(single_root, projective)
        try:
            return decode(self.masked(arc, single_root))
        except NoTreeError as err:
            kind = "projective tree" if projective else "tree"
            words = sorted(set(self.fixed) | {c for _, c in self.forbidden})
            raise NoTreeError(
                f"no {kind} satisfies the constraints on "
                + ", ".join(self.name(c) for c in words)
                + f" (the fixed and forbidden heads exclude every {kind}: {err})") from None
