"""Approximate second-order non-projective decoding (McDonald & Pereira 2006,
Section 3.2), as used by Lee, Lim & Jang (2010).

Exact non-projective decoding with sibling scores is NP-hard, so: take the
best projective tree under the second-order scores (``eisner_second_order``),
then repeatedly make the single best arc change c: old head -> new head h,
among all changes that keep a valid single-root tree (h is not c or a
descendant of c; the root keeps its one child), as long as the second-order
score improves. Each candidate's score change is computed locally: the arc
scores plus the sibling factors around c in the old and new heads' dependent
chains (the chains of every other head are unchanged), so one sweep over all
candidates costs O(n^2 * chain scan) instead of rescoring n^2 trees.

The model is that of ``eisner_second_order``: arcs ``arc[h, c]`` plus
``sib[h, prev, c]`` for each head's dependents on each side taken outwards,
``prev = h`` for the first, plus every word's stop factors (Koo & Collins
2010): ``sib[h, last, h]`` for its outermost dependent on a side, or
``sib[h, h, h]`` / ``sib[h, 0, h]`` when it has no right / left one. A move
changes the stop factor of the old or new head's side when c is (or
becomes) the outermost dependent there, which the local gain includes.

Forbidden arcs: a score of -inf in ``scores`` forbids the arc. A move onto a
forbidden arc (or creating a -inf sibling pair or stop factor) has gain -inf
and is never made, so the climb keeps the start tree's property of avoiding
them. The start is the best projective tree; when every projective tree uses
a forbidden arc, it is the best first-order non-projective tree
(``chu_liu_edmonds`` on the arc scores), so an allowed tree is returned
whenever one exists, and ``NoTreeError`` is raised otherwise. -inf sibling
(and stop) scores are honoured exactly only by the projective decoders;
here, if the result still has a -inf sibling pair or stop factor (only
possible from the fallback start), ``NoTreeError`` is raised.
"""
from libc.math cimport INFINITY

import numpy as np

from .chu_liu_edmonds cimport chu_liu_edmonds_decode
from .eisner_second_order cimport eisner_second_order_decode
from .factors cimport CFactors, float_data, tree_score_c

from .eisner_second_order import _checked_scores
from .trees import NoTreeError

DEF GAIN_EPS = 1e-6


cdef inline double _sib(const float* sib, int N, int h, int s, int c) noexcept nogil:
    return sib[(<Py_ssize_t>h * N + s) * N + c]


cdef void _neighbours(const int* heads, int N, int h, int c, int* prev, int* nxt) noexcept nogil:
    """The dependents of h on c's side adjacent to position c, ignoring c
    itself: ``prev`` is the closest one between h and c (h if none), ``nxt``
    the closest one beyond c (-1 if none)."""
    cdef int x
    prev[0] = h
    nxt[0] = -1
    if c > h:
        x = c - 1
        while x > h:
            if heads[x] == h:
                prev[0] = x
                break
            x -= 1
        for x in range(c + 1, N):
            if heads[x] == h:
                nxt[0] = x
                break
    else:
        x = c + 1
        while x < h:
            if heads[x] == h:
                prev[0] = x
                break
            x += 1
        x = c - 1
        while x > 0:
            if heads[x] == h:
                nxt[0] = x
                break
            x -= 1


cdef double _attach_gain(const float* sib, const int* heads, int N, int h, int c) noexcept nogil:
    """Change of the sibling and stop factors when c joins h's dependents (c
    not among them yet)."""
    cdef int p, q
    cdef double g
    _neighbours(heads, N, h, c, &p, &q)
    g = _sib(sib, N, h, p, c)
    if q >= 0:
        g += _sib(sib, N, h, c, q) - _sib(sib, N, h, p, q)
    elif h > 0:
        # c becomes h's outermost dependent on its side: its stop factor
        # replaces p's (h's "none on the left" stop is sib[h, 0, h]).
        g += _sib(sib, N, h, c, h) - _sib(sib, N, h, p if p != h or c > h else 0, h)
    return g


cdef bint _is_descendant(const int* heads, int x, int c) noexcept nogil:
    """Whether x is c or lies below c (walk up from x to the root)."""
    while x > 0:
        if x == c:
            return True
        x = heads[x]
    return False


cdef int improve_tree_c(const float* arc, const float* sib, int n, int* heads,
                        int max_moves) noexcept nogil:
    """Hill-climb in place; returns the number of moves made."""
    cdef int N = n + 1
    cdef int c, h, o, best_c, best_h, moves = 0
    cdef double gain, best_gain, detach
    while moves < max_moves:
        best_gain = GAIN_EPS
        best_c = -1
        best_h = -1
        for c in range(1, N):
            o = heads[c]
            if o == 0:
                continue  # the root keeps exactly one child
            # Removing c from o's chain: c's own factor goes, o's chain closes
            # over the gap, and o's stop moves inwards if c was outermost (c
            # is temporarily taken out of heads).
            heads[c] = -1
            detach = -arc[o * N + c]
            if sib is not NULL:
                detach -= _attach_gain(sib, heads, N, o, c)
            for h in range(1, N):
                if h == o or _is_descendant(heads, h, c):
                    continue
                gain = detach + arc[h * N + c]
                if sib is not NULL:
                    gain += _attach_gain(sib, heads, N, h, c)
                if gain > best_gain:
                    best_gain = gain
                    best_c = c
                    best_h = h
            heads[c] = o
        if best_c < 0:
            break
        heads[best_c] = best_h
        moves += 1
    return moves


def improve_tree(scores, sib, heads, max_moves=None):
    """Greedy single-arc improvement of a single-root tree under arc (and
    sibling) scores; returns the new heads (int32, ``heads[0] = -1``)."""
    arc, sib_arr = _checked_scores(scores, sib)
    cdef int N = arc.shape[0]
    out = np.array(heads, dtype=np.int32, copy=True)
    if out.shape != (N,):
        raise ValueError(f"heads must have length {N}, got {out.shape}")
    out[0] = -1
    if N <= 2:
        return out
    cdef const float[:, ::1] a = arc
    cdef const float* sp = float_data(sib_arr)
    cdef int[::1] hv = out
    cdef int limit = N * N if max_moves is None else max_moves
    with nogil:
        improve_tree_c(&a[0, 0], sp, N - 1, &hv[0], limit)
    return out


cdef int approximate_nonprojective_c(const float* arc, const float* sib, int n,
                                     int* heads) noexcept nogil:
    cdef int N = n + 1, r
    cdef double ignored
    cdef CFactors f
    r = eisner_second_order_decode(arc, sib, n, 1, heads, &ignored) if n > 0 else 1
    if n == 0:
        heads[0] = -1
    if r < 0:
        return -1
    if r == 1:
        improve_tree_c(arc, sib, n, heads, N * N)
        return 1
    # no allowed projective tree: climb from the best allowed first-order one
    r = chu_liu_edmonds_decode(arc, n, heads, True)
    if r != 0:
        return -1 if r < 0 else 0
    improve_tree_c(arc, sib, n, heads, N * N)
    f.arc, f.sib, f.grand, f.n = arc, sib, NULL, n
    if sib != NULL and tree_score_c(&f, heads) == -INFINITY:
        return 0   # the climb kept a forbidden sibling pair or stop factor
    return 1


def approximate_nonprojective(scores, sib=None):
    """Second-order non-projective tree: the best projective tree improved by
    single arc moves while the score rises (McDonald & Pereira 2006).

    -inf arc scores forbid arcs: returns a single-root tree avoiding them
    whenever one exists (projective or not), else raises ``NoTreeError``."""
    arc, sib_arr = _checked_scores(scores, sib)
    cdef const float[:, ::1] a = arc
    cdef const float* sp = float_data(sib_arr)
    heads = np.full(a.shape[0], -1, dtype=np.int32)
    cdef int[::1] hv = heads
    cdef int r
    with nogil:
        r = approximate_nonprojective_c(&a[0, 0], sp, <int>a.shape[0] - 1, &hv[0])
    if r < 0:
        raise MemoryError(f"approximate_nonprojective: could not allocate work memory")
    if r == 0:
        raise NoTreeError(
            "approximate_nonprojective: no tree satisfies the constraints: every single-root "
            "tree uses a forbidden arc, or the non-projective search kept a forbidden (-inf) "
            "sibling pair"
        )
    return heads
