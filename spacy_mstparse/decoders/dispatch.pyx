"""The one decode entry of the graph parser: factor scores in, k best trees out.

A sentence's scores are one factor container: arc scores (McDonald et al.
2005), optionally sibling scores with stop factors (McDonald & Pereira 2006;
Koo & Collins 2010) and grandparent scores (Carreras 2007; Koo & Collins
2010). ``decode_c`` picks the algorithm from the decoder and the factors'
order; the Python ``decode``, the batch parse and the parallel training
stage all call it, and ``serves_c`` / ``serves`` say which (decoder, order)
it serves, for any k:

- Eisner (1996), projective: first order (k-best: the chart of Huang &
  Chiang 2005 without sibling scores), second order (McDonald & Pereira
  2006 with k-best lists), third order (Koo & Collins 2010, model 1; exact
  1-best; its k-best list is approximate: the exact best tree and the
  second-order k best trees, rescored with the grandparent factors, the k
  best distinct ones, ties in that order).
- Chu-Liu-Edmonds, non-projective: first order (McDonald et al. 2005b;
  k-best: Camerini, Fratta & Maffioli 1980, Hall 2007); second order
  approximate (McDonald & Pereira 2006): the best projective tree climbed
  by single arc moves, or, when every projective tree is forbidden, the
  first-order best tree climbed; its k-best list is the k best projective
  trees, each climbed, climbed ones before their starts, the k best
  distinct ones (ties in that order). No third order.

``tree_score_c`` scores a tree as these decoders count it (double
precision); ``add_hamming_loss_c`` is the loss augmentation of training
(+1 on every non-gold arc of an annotated word). Python: ``Factors`` (the
container, ``tree_score``), ``decode``, ``serves``, ``add_hamming_loss``,
``DECODERS``.
"""
from collections import namedtuple

from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memcpy, memmove

import numpy as np

from .chu_liu_edmonds cimport chu_liu_edmonds_decode
from .eisner cimport eisner_decode
from .eisner_grandparent cimport eisner_grandparent_decode
from .eisner_grandparent import checked_cube
from .eisner_second_order cimport eisner_second_order_decode
from .factors cimport factor_order, tree_score_c
from .kbest_spanning_trees cimport chu_liu_edmonds_k_best_decode
from .second_order_nonprojective cimport approximate_nonprojective_c, improve_tree_c
from .trees import NoTreeError


cdef bint serves_c(int decoder, int order) noexcept nogil:
    if order < 1 or order > 3:
        return False
    if decoder == EISNER:
        return True
    if decoder == CHU_LIU_EDMONDS:
        return order <= 2
    return False


cdef void add_hamming_loss_c(float* arc, int n, const int* gold) noexcept nogil:
    cdef int N = n + 1, h, c
    for h in range(N):
        for c in range(1, N):
            if gold[c] >= 0:
                arc[h * N + c] = arc[h * N + c] + <float>1.0
    for c in range(1, N):
        if gold[c] >= 0:
            arc[gold[c] * N + c] = arc[gold[c] * N + c] - <float>1.0


cdef int _at_most_trees(int n, int k) noexcept nogil:
    """min(k, n^(n-1)): the number of single-root trees of n words, capped."""
    cdef long long t = 1
    cdef int i
    for i in range(n - 1):
        t *= n
        if t >= k:
            return k
    return <int>t if t < k else k


cdef int _add_distinct(int* trees, int count, const int* tree, int N) noexcept nogil:
    """Append ``tree`` to ``count`` rows of ``trees`` unless it is one of
    them (it may already sit in row ``count``); the new count."""
    cdef int i
    for i in range(count):
        if memcmp(trees + <size_t>i * N, tree, N * sizeof(int)) == 0:
            return count
    if tree != trees + <size_t>count * N:
        memmove(trees + <size_t>count * N, tree, N * sizeof(int))
    return count + 1


cdef int _best_of(const CFactors* f, int* trees, int count, int k, int* heads,
                  double* scores) noexcept nogil:
    """The k best of ``count`` distinct trees into heads / scores, by
    tree_score_c, ties in list order; the number written, -1 out of memory."""
    cdef int N = f.n + 1, i, j, x, m = count if count < k else k
    cdef double* value = <double*>malloc(count * sizeof(double))
    cdef int* order = <int*>malloc(count * sizeof(int))
    if value is NULL or order is NULL:
        free(value); free(order)
        return -1
    for i in range(count):
        value[i] = tree_score_c(f, trees + <size_t>i * N)
        x = i   # stable insertion sort, best first
        j = i - 1
        while j >= 0 and value[order[j]] < value[x]:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = x
    for i in range(m):
        memcpy(heads + <size_t>i * N, trees + <size_t>order[i] * N, N * sizeof(int))
        if scores != NULL:
            scores[i] = value[order[i]]
    free(value); free(order)
    return m


cdef int _climb_k_best(const CFactors* f, int k, int* heads, double* scores) noexcept nogil:
    """Second-order Chu-Liu-Edmonds, k-best (module docstring)."""
    cdef int n = f.n, N = f.n + 1, r, i, count = 0
    cdef int* starts = <int*>malloc(<size_t>k * N * sizeof(int))
    cdef int* trees = <int*>malloc(2 * <size_t>k * N * sizeof(int))
    cdef double* ignored = <double*>malloc(k * sizeof(double))
    cdef int* climbed
    if starts is NULL or trees is NULL or ignored is NULL:
        r = -1
    else:
        r = eisner_second_order_decode(f.arc, f.sib, n, k, starts, ignored)
        if r == 0:
            r = approximate_nonprojective_c(f.arc, f.sib, n, starts)
    for i in range(r if r > 0 else 0):
        climbed = trees + <size_t>count * N
        memcpy(climbed, starts + <size_t>i * N, N * sizeof(int))
        climbed[0] = -1
        improve_tree_c(f.arc, f.sib, n, climbed, N * N)
        count = _add_distinct(trees, count, climbed, N)
        count = _add_distinct(trees, count, starts + <size_t>i * N, N)
    if r > 0:
        r = _best_of(f, trees, count, k, heads, scores)
    free(starts); free(trees); free(ignored)
    return r


cdef int _grand_k_best(const CFactors* f, int k, int* heads, double* scores) noexcept nogil:
    """Third-order Eisner, k-best (module docstring)."""
    cdef int n = f.n, N = f.n + 1, r, i, count
    cdef double best
    cdef int* trees = <int*>malloc((<size_t>k + 1) * N * sizeof(int))
    cdef double* ignored = <double*>malloc(k * sizeof(double))
    if trees is NULL or ignored is NULL:
        free(trees); free(ignored)
        return -1
    r = eisner_grandparent_decode(f.arc, f.sib, f.grand, n, trees, &best)
    if r > 0:
        r = eisner_second_order_decode(f.arc, f.sib, n, k, trees + N, ignored)
    if r > 0:
        count = 1
        for i in range(r):
            count = _add_distinct(trees, count, trees + <size_t>(i + 1) * N, N)
        r = _best_of(f, trees, count, k, heads, scores)
    free(trees); free(ignored)
    return r


cdef int decode_c(const CFactors* f, int decoder, int k, int* heads,
                  double* scores) noexcept nogil:
    cdef int n = f.n, order = factor_order(f), r, i
    cdef double best
    cdef double* tmp
    if not serves_c(decoder, order):
        return DECODE_NOT_SERVED
    if n < 0 or k < 1:
        return -1
    if n == 0:
        heads[0] = -1
        if scores != NULL:
            scores[0] = 0.0
        return 1
    if k > 1 and order == 3:
        return _grand_k_best(f, k, heads, scores)
    if k > 1 and order == 2 and decoder == CHU_LIU_EDMONDS:
        return _climb_k_best(f, k, heads, scores)
    if k == 1 and order == 1:
        r = eisner_decode(f.arc, n, heads, True) if decoder == EISNER else \
            chu_liu_edmonds_decode(f.arc, n, heads, True)
        r = 1 if r == 0 else (0 if r == 1 else -1)
    elif k == 1 and order == 3:
        r = eisner_grandparent_decode(f.arc, f.sib, f.grand, n, heads, &best)
    elif k == 1 and decoder == CHU_LIU_EDMONDS:
        r = approximate_nonprojective_c(f.arc, f.sib, n, heads)
    else:
        # Eisner's k-best chart (first or second order), or CLE's k-best list
        tmp = <double*>malloc(k * sizeof(double))
        if tmp is NULL:
            return -1
        if decoder == EISNER:
            r = eisner_second_order_decode(f.arc, f.sib, n, k, heads, tmp)
        else:
            r = chu_liu_edmonds_k_best_decode(f.arc, n, _at_most_trees(n, k), True, heads, tmp)
        free(tmp)
    if scores != NULL:
        for i in range(r):
            scores[i] = tree_score_c(f, heads + <size_t>i * (n + 1))
    return r


# -- Python ------------------------------------------------------------------------

Decoder = namedtuple("Decoder", ["code", "projective"])
Decoder.__doc__ = "A decoder of ``decode``: its code for ``decode_c`` and its search space."

DECODERS = {
    "eisner": Decoder(EISNER, True),
    "chu_liu_edmonds": Decoder(CHU_LIU_EDMONDS, False),
}


def decoder_code(str name) -> int:
    """The ``decode_c`` code of a decoder name (ValueError for other names)."""
    entry = DECODERS.get(name)
    if entry is None:
        raise ValueError(f"decoder must be one of {sorted(DECODERS)}, got {name!r}")
    return entry.code


def serves(str name, int order, int k=1) -> bool:
    """Whether ``decode`` serves decoder ``name`` at factor order ``order`` with k trees."""
    return name in DECODERS and k >= 1 and serves_c(DECODERS[name].code, order)


cdef class Factors:
    """The factor scores of one sentence: ``arc`` float32 (n+1) x (n+1)
    (``arc[h, c]``), ``sib`` None or float32 (n+1)^3 (``sib[h, s, c]``,
    siblings and stop factors), ``grand`` None or float32 (n+1)^3
    (``grand[g, h, c]``). -inf forbids. The arrays are held as given when
    they are C-contiguous float32 (so loss augmentation can change ``arc``
    in place), else converted."""
    cdef readonly object arc, sib, grand
    cdef CFactors c

    def __init__(self, arc, sib=None, grand=None):
        arc = np.ascontiguousarray(arc, dtype=np.float32)
        if arc.ndim != 2 or arc.shape[0] != arc.shape[1] or arc.shape[0] < 1:
            raise ValueError(
                "scores must be a square (n+1) x (n+1) matrix (row/column 0 = "
                f"root, n >= 0), got an array of shape {arc.shape}"
            )
        cdef int N = arc.shape[0]
        self.arc = arc
        self.sib = checked_cube(sib, N, "sib")
        self.grand = checked_cube(grand, N, "grand")
        cdef const float[:, ::1] av = self.arc
        cdef const float[:, :, ::1] cv
        self.c.arc = &av[0, 0]
        self.c.sib = NULL
        self.c.grand = NULL
        self.c.n = N - 1
        if self.sib is not None:
            cv = self.sib
            self.c.sib = &cv[0, 0, 0]
        if self.grand is not None:
            cv = self.grand
            self.c.grand = &cv[0, 0, 0]

    @property
    def n(self) -> int:
        """Words of the sentence."""
        return self.c.n

    @property
    def order(self) -> int:
        """1 (arcs), 2 (+ siblings) or 3 (+ grandparents)."""
        return factor_order(&self.c)

    def with_arc(self, arc):
        """The same higher-order factors with other arc scores (e.g. masked)."""
        return Factors(arc, self.sib, self.grand)

    def tree_score(self, heads) -> float:
        """The score of the tree ``heads`` (heads[0] = -1), as the decoders count it."""
        cdef const int[::1] hv = self._heads(heads)
        return tree_score_c(&self.c, &hv[0])

    cdef object _heads(self, heads):
        out = np.ascontiguousarray(heads, dtype=np.int32)
        if out.shape != (self.c.n + 1,) or (self.c.n and not (
                (out[1:] >= 0).all() and (out[1:] <= self.c.n).all())):
            raise ValueError(f"heads must be a tree of {self.c.n} words (n+1 heads in 0..n)")
        return out

    def __repr__(self):
        return f"Factors(n={self.c.n}, order={self.order})"


def decode(str name, Factors factors, int k=1) -> list:
    """The best tree of ``factors`` under decoder ``name`` (a key of
    ``DECODERS``), or up to ``k`` best, best first: int32 heads arrays,
    ``heads[0] = -1``. Raises ``NoTreeError`` when every tree of the
    decoder's search space uses a forbidden (-inf) score, ValueError for a
    combination ``serves`` refuses."""
    cdef int code = decoder_code(name)
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if not serves_c(code, factors.order):
        raise ValueError(f"decoder {name!r} has no order-{factors.order} variant "
                         "(grandparents are decoded projectively: use \"eisner\")")
    heads = np.empty((k, factors.c.n + 1), dtype=np.int32)
    cdef int[:, ::1] hv = heads
    cdef int m
    with nogil:
        m = decode_c(&factors.c, code, k, &hv[0, 0], NULL)
    if m == 0:
        raise NoTreeError(
            f"{name}: no tree satisfies the constraints: every tree of the decoder's search "
            "space uses a forbidden (-inf) score"
        )
    if m < 0:
        raise MemoryError(f"{name}: could not allocate work memory for n={factors.c.n}, k={k}")
    return list(heads[:m])


def add_hamming_loss(arc, heads) -> None:
    """arc + 1 on every arc that is not in the gold tree ``heads``, in place
    (``arc`` a C-contiguous float32 matrix); a word whose gold head is
    unknown (-1) adds no loss."""
    cdef float[:, ::1] av = arc
    gold = np.ascontiguousarray(heads, dtype=np.int32)
    cdef int N = av.shape[0]
    if av.shape[1] != N or gold.shape != (N,) or (N > 1 and gold[1:].max() >= N):
        raise ValueError(f"arc must be (n+1) x (n+1) and heads n+1 heads, got {arc.shape} "
                         f"and {gold.shape}")
    cdef const int[::1] gv = gold
    add_hamming_loss_c(&av[0, 0], N - 1, &gv[0])
