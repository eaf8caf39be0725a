"""Pure-Python checks on head arrays.

A tree over n words is a sequence ``heads`` of length n+1 with ``heads[0] = -1``
(index 0 is the artificial root) and ``heads[c]`` the head of word c
(see ARCHITECTURE.md). ``is_valid_tree`` checks that the heads form a tree
rooted at 0; ``is_projective`` checks that no two arcs cross when the words are
laid out in order with the root at position 0, i.e. that the tree lies in the
search space of Eisner's algorithm (Eisner 1996; McDonald et al. 2005);
``nonprojective_arcs`` lists the arcs h -> c with a word between h and c that
h does not dominate (Nivre & Nilsson 2005's definition).
``NoTreeError`` is what the decoders raise when the forbidden arcs (score
-inf) leave no tree in their search space.
"""
from operator import index

__all__ = ["is_valid_tree", "is_projective", "nonprojective_arcs", "NoTreeError"]


class NoTreeError(ValueError):
    """No tree in the decoder's search space avoids every forbidden arc.

    A score of -inf forbids an arc (a fixed head is all other heads of the
    word forbidden). Subclass of ValueError."""


def is_valid_tree(heads, single_root=True):
    """Whether ``heads`` is a dependency tree rooted at node 0.

    Valid means: ``heads[0] == -1``; every ``heads[c]`` (c >= 1) is in 0..n and
    differs from c; following heads from any word reaches 0 without a cycle;
    and, if ``single_root``, exactly one word has head 0 (the empty sentence,
    n = 0, has no words and is valid).
    """
    h = [index(x) for x in heads]
    if not h or h[0] != -1:
        return False
    n = len(h) - 1
    for c in range(1, n + 1):
        if not 0 <= h[c] <= n or h[c] == c:
            return False
    if single_root and n > 0 and sum(1 for c in range(1, n + 1) if h[c] == 0) != 1:
        return False
    # 0 = not seen, 1 = on the current path, 2 = known to reach the root
    state = [0] * (n + 1)
    state[0] = 2
    for c in range(1, n + 1):
        path = []
        u = c
        while state[u] == 0:
            state[u] = 1
            path.append(u)
            u = h[u]
        if state[u] == 1:
            return False
        for v in path:
            state[v] = 2
    return True


def is_projective(heads):
    """Whether no two arcs of ``heads`` cross (the root sits at position 0).

    Arcs sharing an end point do not cross. For a valid tree this is the usual
    projectivity: every word between a head and its dependent is dominated by
    that head. A head of -1 (unknown: partial annotation) is no arc. Runs in
    O(n log n).
    """
    h = [index(x) for x in heads]
    # Arcs as intervals, sorted by left end, longer first on equal left ends.
    arcs = sorted((min(p, c), -max(p, c)) for c, p in enumerate(h) if c > 0 and p >= 0)
    open_right_ends = []   # right ends of the arcs enclosing the current one
    for lo, neg_hi in arcs:
        hi = -neg_hi
        while open_right_ends and open_right_ends[-1] <= lo:
            open_right_ends.pop()
        if open_right_ends and hi > open_right_ends[-1]:
            return False
        open_right_ends.append(hi)
    return True


def nonprojective_arcs(heads):
    """The words c (1-based, ascending) whose arc ``heads[c] -> c`` is
    non-projective: some word strictly between ``heads[c]`` and c is not
    dominated by ``heads[c]``. Empty exactly when a valid tree is projective.
    O(n * depth) after one depth pass: a word x between h and c is dominated
    by h iff x's ancestor at h's depth is h."""
    h = [index(x) for x in heads]
    n = len(h) - 1
    depth = [0] * (n + 1)
    for c in range(1, n + 1):
        path = []
        u = c
        while u != 0 and depth[u] == 0:
            path.append(u)
            u = h[u]
        d = depth[u]
        for v in reversed(path):
            d += 1
            depth[v] = d
    out = []
    for c in range(1, n + 1):
        p = h[c]
        for x in range(min(p, c) + 1, max(p, c)):
            a = x
            for _ in range(depth[x] - depth[p]):
                a = h[a]
            if a != p:
                out.append(c)
                break
    return out
