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

A policy (``POLICIES``; ``resolve``) says what to do with constraints that no
tree of the decoder's search space satisfies:

- ``strict``: nothing; decoding raises as above.
- ``nonprojective``: when a non-projective tree satisfies them, decode over
  all trees (Chu-Liu-Edmonds); when none does, as ``drop`` over all trees.
- ``drop``: drop the fewest constraints (one constraint: a word's fixed head,
  or one forbidden arc) that leave a satisfiable set. Satisfiability is
  decided exactly by running the decoder (Eisner, or Chu-Liu-Edmonds over
  all trees) on 0 / -inf scores. The minimum set is found as an implicit
  hitting set (as in MaxHS, Davies & Bacchus 2011): minimal conflicting
  subsets (QuickXplain, Junker 2004) are collected, and the smallest set of
  constraints meeting every one found so far, by enumeration, is tried until
  the rest is satisfiable: exact while that set has at most ``EXACT_DROPS``
  constraints and the search stays small (``MAX_HITTING_CANDIDATES``). Beyond,
  greedy: the constraint in most of the conflicts found is dropped, a new
  conflict found, until the rest is satisfiable (not always the fewest).
  On ties the forbidden arcs go first (a fixed head says more).

A fixed arc that the scores already exclude (-inf: pruned, as the order-3
model's arc pruning does) is given the score 0, so it stays usable.
"""
import itertools
import warnings
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

import numpy

from ..decoders import NoTreeError, chu_liu_edmonds, eisner

Arc = Tuple[int, int]
Unit = Tuple[str, int, int]     # ("forbidden", head, word) or ("fixed", head, word)
POLICIES = ("nonprojective", "drop", "strict")
EXACT_DROPS = 4                 # minimum drop sets searched exactly up to this size
MAX_HITTING_CANDIDATES = 20000  # subsets tried per size before the greedy takes over


class ConstraintWarning(UserWarning):
    """Constraints that no tree satisfies were dropped (policies ``drop`` and
    ``nonprojective``)."""


def check_policy(policy, setting: str = "constraints") -> str:
    """The policy, or ValueError naming the setting and the allowed values."""
    if policy not in POLICIES:
        raise ValueError(f"{setting} must be one of " + ", ".join(f'"{p}"' for p in POLICIES)
                         + f", got {policy!r}")
    return policy


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
        if single_root and any(h == 0 for h in self.fixed.values()):
            root_word = next(c for c, h in self.fixed.items() if h == 0)
            mask[0, 1:] = True
            mask[0, root_word] = False
        for h, c in self.forbidden:   # last: a forbidden arc stays forbidden
            mask[h, c] = True
        return mask

    def masked(self, arc: numpy.ndarray, single_root: bool = True) -> numpy.ndarray:
        """The arc scores with -inf on every excluded arc (for the decoders
        and the marginals)."""
        out = numpy.array(arc, dtype="float32", copy=True)
        excluded = self.excluded(single_root)
        for c, h in self.fixed.items():
            if out[h, c] == -numpy.inf and not excluded[h, c]:
                out[h, c] = 0.0       # pruned away: put back (every tree has it)
        out[excluded] = -numpy.inf
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

    # -- satisfiability and the policies ---------------------------------------------
    def units(self) -> List[Unit]:
        """The constraints one by one, forbidden arcs first (dropped first on ties)."""
        return ([("forbidden", h, c) for h, c in sorted(self.forbidden, key=lambda a: a[::-1])]
                + [("fixed", h, c) for c, h in sorted(self.fixed.items())])

    def keeping(self, units: Iterable[Unit]) -> "Constraints":
        """The constraints ``units`` only (a subset of ``units()``), same names."""
        units = list(units)
        return Constraints(self.n, {c: h for kind, h, c in units if kind == "fixed"},
                           [(h, c) for kind, h, c in units if kind == "forbidden"], self.names)

    def feasible(self, arc: Optional[numpy.ndarray] = None, projective: bool = False,
                 single_root: bool = True) -> bool:
        """Whether some tree (projective if asked) satisfies the constraints and
        avoids the -inf arcs of ``arc`` (None: all arcs allowed): the decoder
        run on 0 / -inf scores."""
        base = numpy.zeros((self.n + 1, self.n + 1), "float32") if arc is None else arc
        scores = numpy.where(numpy.isfinite(self.masked(base, single_root)), 0.0,
                             -numpy.inf).astype("float32")
        try:
            (eisner if projective else chu_liu_edmonds)(scores, single_root=single_root)
        except NoTreeError:
            return False
        return True

    def minimum_drop(self, arc: Optional[numpy.ndarray] = None, projective: bool = False,
                     single_root: bool = True) -> Tuple["Constraints", Tuple[Unit, ...], bool]:
        """(kept, dropped, exact): the fewest constraints to drop so that the
        rest is ``feasible`` (module docstring); ``exact`` False when the
        greedy search chose them."""
        units = self.units()

        def feasible(kept) -> bool:
            return self.keeping(kept).feasible(arc, projective, single_root)

        if not feasible([]):
            raise NoTreeError("no tree avoids the excluded arcs, whatever the constraints")
        cores: List[List[Unit]] = []
        drop = _minimum_hitting_set(cores)
        while drop is not None:
            rest = [u for u in units if u not in drop]
            if feasible(rest):
                return self.keeping(rest), tuple(u for u in units if u in drop), True
            cores.append(_conflict([], rest, feasible, False))
            drop = _minimum_hitting_set(cores)
        drop = set()
        while True:   # greedy
            rest = [u for u in units if u not in drop]
            if feasible(rest):
                return self.keeping(rest), tuple(u for u in units if u in drop), False
            core = _conflict([], rest, feasible, False)
            cores.append(core)
            drop.add(max(reversed(core), key=lambda u: sum(u in c for c in cores)))

    def describe(self, unit: Unit) -> str:
        kind, h, c = unit
        return (f"the fixed head {self.name(h)} of {self.name(c)}" if kind == "fixed"
                else f"the forbidden head {self.name(h)} of {self.name(c)}")


def _conflict(background: List[Unit], candidates: List[Unit], feasible,
              checked: bool) -> List[Unit]:
    """QuickXplain (Junker 2004): a minimal subset X of ``candidates`` with
    ``background`` + X infeasible (``background`` + ``candidates`` is; the
    background alone is feasible). ``checked``: background just grew."""
    if checked and not feasible(background):
        return []
    if len(candidates) == 1:
        return list(candidates)
    half = len(candidates) // 2
    first, second = candidates[:half], candidates[half:]
    x2 = _conflict(background + first, second, feasible, True)
    x1 = _conflict(background + x2, first, feasible, bool(x2))
    return x1 + x2


def _minimum_hitting_set(cores: List[List[Unit]]) -> Optional[set]:
    """A smallest set meeting every core, by enumeration (first found in
    candidate order), or None when it has more than ``EXACT_DROPS`` members
    or the enumeration would try more than ``MAX_HITTING_CANDIDATES`` sets."""
    pool = sorted({u for core in cores for u in core},   # the order of ``units()``
                  key=lambda u: (u[0] == "fixed", u[2], u[1]))
    for size in range(0, EXACT_DROPS + 1):
        tried = 0
        for subset in itertools.combinations(pool, size):
            tried += 1
            if tried > MAX_HITTING_CANDIDATES:
                return None
            chosen = set(subset)
            if all(chosen.intersection(core) for core in cores):
                return chosen
    return None


class Resolution(NamedTuple):
    """What a policy made of a sentence's constraints."""
    constraints: Constraints      # the constraints kept
    projective: bool              # decode over projective trees (else over all trees)
    dropped: Tuple[Unit, ...]     # the constraints dropped (none: all kept)
    exact: bool                   # the drop set is minimum (else the greedy's)
    dropped_for: str = "tree"     # the trees the rest must allow: "tree", "projective tree"

    def warning(self) -> str:
        """The message naming the words whose constraints were dropped."""
        cons = self.constraints
        words = sorted({c for _, _, c in self.dropped})
        how = "the fewest" if self.exact else "by a greedy search, not always the fewest"
        return (f"no {self.dropped_for} satisfies the fixed and forbidden heads of "
                + ", ".join(cons.name(c) for c in words)
                + f"; dropped {len(self.dropped)} constraint(s) ({how}) and parsed with the "
                "rest: " + "; ".join(cons.describe(u) for u in self.dropped))


def resolve(constraints: Constraints, policy: str, projective: bool,
            arc: Optional[numpy.ndarray] = None, single_root: bool = True) -> Resolution:
    """What ``policy`` (``POLICIES``, module docstring) does with the
    constraints of a decoder over projective trees (``projective``) or all
    trees, under the -inf arcs of ``arc`` (None: none)."""
    check_policy(policy)
    if policy == "strict" or constraints.feasible(arc, projective, single_root):
        return Resolution(constraints, projective, (), True)
    if policy == "nonprojective":
        if projective and constraints.feasible(arc, False, single_root):
            return Resolution(constraints, False, (), True)
        kept, dropped, exact = constraints.minimum_drop(arc, False, single_root)
        return Resolution(kept, projective and kept.feasible(arc, True, single_root),
                          dropped, exact)
    kept, dropped, exact = constraints.minimum_drop(arc, projective, single_root)
    return Resolution(kept, projective, dropped, exact,
                      "projective tree" if projective else "tree")


def warn_dropped(resolution: Resolution, stacklevel: int = 3) -> None:
    """One ``ConstraintWarning`` naming the words, if constraints were dropped."""
    if resolution.dropped:
        warnings.warn(resolution.warning(), ConstraintWarning, stacklevel=stacklevel)
