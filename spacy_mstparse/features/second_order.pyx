"""Second-order sibling features of McDonald & Pereira (2006).

A sibling factor (h, s, c) scores two dependents of head h that are adjacent
on the same side of h: s is the previous dependent (closer to h) and c the
next one outwards. For the first dependent on a side, s = h and the sibling
attributes are a "no sibling" start marker. Templates, for each tag column
(UPOS and/or XPOS):

* h-pos + s-pos + c-pos (the POS triple);
* s-pos + c-pos;  s-word + c-pos;  s-pos + c-word;
* and, once, s-word + c-word.

Each is emitted twice: conjoined with the attachment direction, and with the
direction plus the binned distance between s and c (between h and c for the
first dependent), as in MSTParser. Hashing is that of the first-order
features (``hashing.pxd``) into the same weight table, with template ids of
their own.

With ``stops`` (the ``sibling_stops`` feature setting), each word h also
gets a stop factor on each side (Koo & Collins 2010): which dependent is
its outermost one there, or that it has none. Templates, for each tag
column: h-pos + last-pos; last-pos; h-word + last-pos; and, once, h-word +
last-word ("last" is a "no dependent" marker when there is none), each
conjoined with the side and with the side plus the binned distance from h
to its outermost dependent. They give a second-order model valency: a verb
without a left dependent, a preposition with one right dependent.

Scoring fills an (n+1)^3 float32 array ``sib[h, s, c]`` (only cells with s
equal to h or strictly between h and c are used; the rest stay 0). The
templates without h do not depend on h when s != h, so their sums are
computed once per ordered pair (s, c) and only the POS triple costs O(n^3).
The stop factors live in cells the siblings never use, as the decoders read
them (``decoders/eisner_second_order.pyx``): ``sib[h, last, h]`` for the
outermost dependent ``last`` of word h on its side, ``sib[h, h, h]`` for no
right dependent, ``sib[h, 0, h]`` for no left dependent; O(n^2) of them.
"""
from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc
from libc.stdint cimport int32_t, uint64_t

import numpy

from .hashing import string_id as get_string_id

from .distance cimport direction_distance
from .hashing cimport mix, mix3
from .factor_features cimport FactorFeatures
from .sentence cimport Sentence
from .weights cimport Weights, prefetch_weight, weight_at
from .templates cimport (
    MAX_TAGSETS,
    SIB_BASE,
    SIB_STRIDE,
    S_PP,
    S_PW,
    S_STOP_HP,
    S_STOP_P,
    S_STOP_WP,
    S_STOP_WW,
    S_TRIP,
    S_WP,
    S_WW,
)

START_MARK = get_string_id("<mst-no-sibling>")

cdef uint64_t _START = START_MARK

# Template ids: 200 + tagset * 16 + template; the word pair has its own id.
# Pair bases per (s, c): 3 per tag column + the word pair.
DEF MAX_PAIR_BASES = 10   # 3 per tag column (MAX_TAGSETS) + 1


cdef inline uint64_t _dir(int s, int c) noexcept nogil:
    """Direction code: 1 = child right of the previous sibling, 2 = left."""
    return 1 if c > s else 2


cdef inline uint64_t _dir_dist(int s, int c) noexcept nogil:
    """Direction and binned distance (1..5, 6-10, >10) as 3..16."""
    return 3 + direction_distance(s, c)


cdef inline uint64_t _stop_side(int h, int last) noexcept nogil:
    """Side code of a stop factor: 1 = right (``last`` right of h, or h
    itself: no right dependent), 2 = left (``last`` left of h, or 0)."""
    return 1 if last >= h else 2


cdef inline uint64_t _stop_dist(int h, int last) noexcept nogil:
    """Side and binned distance from h to its outermost dependent (3..16),
    or 18 / 19 for no dependent on the right / left."""
    if last == h or last == 0:
        return 17 + _stop_side(h, last)
    return 3 + direction_distance(h, last)


cdef inline int conjoin(const uint64_t* bases, int k, uint64_t d1, uint64_t d2,
                        uint64_t mask, uint64_t* ids) noexcept nogil:
    """The bucket ids of ``k`` base hashes conjoined with d1 and with d2 into
    ``ids`` (2 per base); their number."""
    cdef int j
    for j in range(k):
        ids[2 * j] = mix(bases[j], d1) & mask
        ids[2 * j + 1] = mix(bases[j], d2) & mask
    return 2 * k


cdef inline void conjoined_ids(const uint64_t* bases, int k, uint64_t d1, uint64_t d2,
                               uint64_t mask, const Weights* w, uint64_t* ids) noexcept nogil:
    """``conjoin``, the ids prefetched so that the cache misses overlap."""
    cdef int j
    conjoin(bases, k, d1, d2, mask, ids)
    for j in range(2 * k):
        prefetch_weight(w, ids[j])


cdef inline double ids_sum(const uint64_t* ids, int k, const Weights* w) noexcept nogil:
    """The summed weights of what ``conjoined_ids`` wrote."""
    cdef double total = 0.0
    cdef int j
    for j in range(k):
        total += weight_at(w, ids[2 * j]) + weight_at(w, ids[2 * j + 1])
    return total


cdef class SiblingFeatures(FactorFeatures):  # attributes: second_order.pxd
    """Hashed sibling features and sibling scoring (McDonald & Pereira 2006),
    with ``stops`` also the stop factors of every word (Koo & Collins 2010).
    (``FactorFeatures``: n_buckets, n_tagsets, ``score``.)
    """

    def __init__(self, uint64_t n_buckets, int n_tagsets=1, bint stops=False):
        FactorFeatures.__init__(self, n_buckets, n_tagsets)
        self.stops = stops

    def __reduce__(self):
        return (type(self), (self.n_buckets, self.n_tagsets, self.stops))

    cdef int stop_bases(self, Sentence s, int h, int last, uint64_t* out) noexcept nogil:
        """Base hashes of the stop factor of word h whose outermost dependent
        on one side is ``last`` (h: none on the right; 0: none on the left)."""
        cdef int k = 0, t
        cdef bint none = last == h or last == 0
        cdef uint64_t tid, lP
        cdef uint64_t hW = s.word[h]
        cdef uint64_t lW = _START if none else s.word[last]
        for t in range(s.n_tagsets):
            tid = SIB_BASE + t * SIB_STRIDE
            lP = _START if none else s.tag_row(t)[last]
            out[k] = mix3(tid + S_STOP_HP, s.tag_row(t)[h], lP); k += 1
            out[k] = mix(tid + S_STOP_P, lP); k += 1
            out[k] = mix3(tid + S_STOP_WP, hW, lP); k += 1
        out[k] = mix3(S_STOP_WW, hW, lW); k += 1
        return k

    cdef int pair_bases(self, Sentence s, int h, int sib, int c, uint64_t* out) noexcept nogil:
        """Base hashes of the templates that read the sibling and the child
        (the sibling is the start marker when ``sib == h``)."""
        cdef int k = 0, t
        cdef uint64_t tid, sP, cP
        cdef uint64_t sW = _START if sib == h else s.word[sib]
        cdef uint64_t cW = s.word[c]
        for t in range(s.n_tagsets):
            tid = SIB_BASE + t * SIB_STRIDE
            sP = _START if sib == h else s.tag_row(t)[sib]
            cP = s.tag_row(t)[c]
            out[k] = mix3(tid + S_PP, sP, cP); k += 1
            out[k] = mix3(tid + S_WP, sW, cP); k += 1
            out[k] = mix3(tid + S_PW, sP, cW); k += 1
        out[k] = mix3(S_WW, sW, cW); k += 1
        return k

    cdef uint64_t trip_base(self, Sentence s, int t, int h, int sib, int c) noexcept nogil:
        cdef uint64_t sP = _START if sib == h else s.tag_row(t)[sib]
        return mix(mix3(SIB_BASE + t * SIB_STRIDE + S_TRIP, s.tag_row(t)[h], sP),
                   s.tag_row(t)[c])

    cdef double conj_sum(self, const uint64_t* bases, int k, uint64_t d1, uint64_t d2,
                         const Weights* w) noexcept nogil:
        cdef uint64_t ids[2 * (MAX_PAIR_BASES + MAX_TAGSETS)]
        conjoined_ids(bases, k, d1, d2, self.mask, w, ids)
        return ids_sum(ids, k, w)

    cdef int score_into(self, Sentence s, const Weights* w, float scale, float* out,
                        const float* arc=NULL) noexcept nogil:
        """Fill ``out`` ((n+1)^3, zeroed by the caller) with sibling scores.
        ``arc`` (optional, the (n+1)^2 arc scores): factors (h, s, c) with
        an arc h -> c or h -> s scored -inf (pruned or forbidden) are skipped
        (left 0: no tree uses them). Returns -1 if memory could not be allocated."""
        cdef int N = s.n + 1
        cdef int h, sib, c, t, k = 0, lo, hi, j, per = 2 * s.n_tagsets
        cdef uint64_t bases[MAX_PAIR_BASES + MAX_TAGSETS]   # + the POS triples
        cdef uint64_t trip
        cdef uint64_t d1, d2
        cdef double total
        cdef uint64_t* row
        # pair[sib * N + c]: the templates without h, for sib != h.
        cdef double* pair = <double*>malloc(<size_t>N * N * sizeof(double))
        # the POS-triple bucket ids of every sibling between h and c, computed
        # and prefetched before they are read
        cdef uint64_t* ids = <uint64_t*>malloc(<size_t>N * per * sizeof(uint64_t))
        # head_sib[sib * n_tagsets + t]: the part of the POS triple (h, sib, c)
        # that does not depend on c (``trip_base`` is that part mixed with c's tag)
        cdef uint64_t* head_sib = <uint64_t*>malloc(<size_t>N * s.n_tagsets * sizeof(uint64_t))
        cdef uint64_t* pair_ids = <uint64_t*>malloc(<size_t>N * 2 * MAX_PAIR_BASES * sizeof(uint64_t))
        if pair is NULL or ids is NULL or head_sib is NULL or pair_ids is NULL:
            free(pair); free(ids); free(head_sib); free(pair_ids)
            return -1
        for sib in range(1, N):
            # the ids of all of this sibling's pairs first (prefetched), then their sums
            for c in range(1, N):
                if c != sib:
                    k = self.pair_bases(s, -1, sib, c, bases)
                    conjoined_ids(bases, k, _dir(sib, c), _dir_dist(sib, c), self.mask, w,
                                  pair_ids + c * 2 * MAX_PAIR_BASES)
            for c in range(1, N):
                if c != sib:
                    pair[sib * N + c] = ids_sum(pair_ids + c * 2 * MAX_PAIR_BASES, k, w)
        for h in range(N):
            for sib in range(1, N):
                for t in range(s.n_tagsets):
                    head_sib[sib * s.n_tagsets + t] = mix3(
                        SIB_BASE + t * SIB_STRIDE + S_TRIP, s.tag_row(t)[h], s.tag_row(t)[sib])
            for c in range(1, N):
                if c == h or (arc != NULL and arc[h * N + c] == -INFINITY):
                    continue
                d1 = _dir(h, c)
                # first dependent on this side: start marker, distance h..c
                k = self.pair_bases(s, h, h, c, bases)
                for t in range(s.n_tagsets):
                    bases[k] = self.trip_base(s, t, h, h, c); k += 1
                out[(<Py_ssize_t>h * N + h) * N + c] = <float>(
                    scale * self.conj_sum(bases, k, d1, _dir_dist(h, c), w))
                # a previous sibling strictly between h and c
                lo = h + 1 if c > h else c + 1
                hi = c if c > h else h
                for sib in range(lo, hi):
                    if arc != NULL and arc[h * N + sib] == -INFINITY:
                        continue    # no tree has both h -> sib and h -> c
                    row = ids + (sib - lo) * per
                    d2 = _dir_dist(sib, c)
                    for t in range(s.n_tagsets):
                        trip = mix(head_sib[sib * s.n_tagsets + t], s.tag_row(t)[c])
                        row[2 * t] = mix(trip, d1) & self.mask
                        row[2 * t + 1] = mix(trip, d2) & self.mask
                        prefetch_weight(w, row[2 * t])
                        prefetch_weight(w, row[2 * t + 1])
                for sib in range(lo, hi):
                    if arc != NULL and arc[h * N + sib] == -INFINITY:
                        continue
                    row = ids + (sib - lo) * per
                    total = pair[sib * N + c]
                    for t in range(s.n_tagsets):
                        total += weight_at(w, row[2 * t]) + weight_at(w, row[2 * t + 1])
                    out[(<Py_ssize_t>h * N + sib) * N + c] = <float>(scale * total)
        if self.stops:
            # cell [h, last, h]: last = h + 1..n or h (none) on the right,
            # 1..h - 1 or 0 (none) on the left; the ids of all of h's cells first (prefetched)
            for h in range(1, N):
                for c in range(N):
                    if c == h or c == 0 or arc == NULL or arc[h * N + c] != -INFINITY:
                        k = self.stop_bases(s, h, c, bases)
                        conjoined_ids(bases, k, _stop_side(h, c), _stop_dist(h, c), self.mask, w,
                                      pair_ids + c * 2 * MAX_PAIR_BASES)
                for c in range(N):
                    if c == h or c == 0 or arc == NULL or arc[h * N + c] != -INFINITY:
                        out[(<Py_ssize_t>h * N + c) * N + h] = <float>(
                            scale * ids_sum(pair_ids + c * 2 * MAX_PAIR_BASES, k, w))
        free(pair); free(ids); free(head_sib); free(pair_ids)
        return 0

    cdef int factor_ids(self, Sentence s, int h, int sib, int c, uint64_t* out) noexcept nogil:
        """The bucket ids of the sibling factor (h, sib, c) into ``out``; their number."""
        cdef uint64_t bases[MAX_PAIR_BASES + MAX_TAGSETS]
        cdef int k = self.pair_bases(s, h, sib, c, bases), t
        for t in range(s.n_tagsets):
            bases[k] = self.trip_base(s, t, h, sib, c); k += 1
        return conjoin(bases, k, _dir(h, c), _dir_dist(sib, c) if sib != h else _dir_dist(h, c),
                       self.mask, out)

    cdef int stop_ids(self, Sentence s, int h, int last, uint64_t* out) noexcept nogil:
        """The bucket ids of word h's stop factor with outermost dependent ``last``."""
        cdef uint64_t bases[MAX_PAIR_BASES]
        cdef int k = self.stop_bases(s, h, last, bases)
        return conjoin(bases, k, _stop_side(h, last), _stop_dist(h, last), self.mask, out)

    cdef int side_features_into(self, Sentence s, const int32_t* heads, int h, bint right,
                                uint64_t* out) noexcept nogil:
        """The bucket ids of word h's factors on its right (or left) side in
        the tree ``heads``: its dependents there from h outwards and, with
        ``stops``, its stop factor there; their number."""
        cdef int N = s.n + 1, k = 0, c, prev = h
        if right:
            for c in range(h + 1, N):
                if heads[c] == h:
                    k += self.factor_ids(s, h, prev, c, out + k)
                    prev = c
        else:
            for c in range(h - 1, 0, -1):
                if heads[c] == h:
                    k += self.factor_ids(s, h, prev, c, out + k)
                    prev = c
        if self.stops and h > 0:
            # no dependent on the side: the cell h (right) or 0 (left)
            k += self.stop_ids(s, h, prev if prev != h else (h if right else 0), out + k)
        return k

    cdef int tree_capacity(self, Sentence s) noexcept nogil:
        """At most n sibling factors and 2 (n + 1) stop factors per tree."""
        return (3 * s.n + 2) * 2 * (MAX_PAIR_BASES + MAX_TAGSETS)

    def factor_features(self, Sentence s, int h, int sib, int c):
        """Bucket ids (uint64, with repetitions) of the sibling factor (h, sib, c);
        ``sib == h`` for the first dependent on c's side."""
        self._check(s)
        if not (0 <= h <= s.n and 1 <= c <= s.n and h != c):
            raise ValueError(f"no arc {h} -> {c} in a sentence of {s.n} words")
        if sib != h and not (min(h, c) < sib < max(h, c)):
            raise ValueError(f"sibling {sib} is not between head {h} and child {c}")
        out = numpy.empty(2 * (MAX_PAIR_BASES + MAX_TAGSETS), dtype="uint64")
        cdef uint64_t[::1] view = out
        return out[:self.factor_ids(s, h, sib, c, &view[0])]

    def stop_features(self, Sentence s, int h, int last):
        """Bucket ids (uint64, with repetitions) of the stop factor of word h
        whose outermost dependent on one side is ``last``: a word right or
        left of h, or h for no right dependent, 0 for no left dependent (the
        cell ``sib[h, last, h]`` the scores put it in)."""
        self._check(s)
        if not (1 <= h <= s.n and 0 <= last <= s.n):
            raise ValueError(f"no stop factor ({h}, {last}) in a sentence of {s.n} words")
        out = numpy.empty(2 * MAX_PAIR_BASES, dtype="uint64")
        cdef uint64_t[::1] view = out
        return out[:self.stop_ids(s, h, last, &view[0])]

    def tree_features(self, Sentence s, const int32_t[:] heads):
        """Bucket ids (uint64, with repetitions) of all sibling factors of a
        tree: every head's dependents on each side, from the head outwards
        (and with ``stops`` every word's stop factor on each side)."""
        self._check(s)
        cdef int N = s.n + 1
        if heads.shape[0] != N:
            raise ValueError(f"heads has length {heads.shape[0]}, expected {N}")
        cdef const int32_t[::1] tree = numpy.ascontiguousarray(heads, dtype="int32")
        out = numpy.empty(self.tree_capacity(s), dtype="uint64")
        cdef uint64_t[::1] view = out
        cdef uint64_t* ids = &view[0]
        cdef int h, k = 0
        for h in range(N):
            k += self.side_features_into(s, &tree[0], h, True, ids + k)
            k += self.side_features_into(s, &tree[0], h, False, ids + k)
        return out[:k]
