"""Grandparent features (Carreras 2007; Koo & Collins 2010).

A grandparent factor (g, h, c) scores the arc h -> c together with the arc
g -> h above it (g is the head of h; arcs from the root have no such factor).
Templates, for each tag column (UPOS and/or XPOS):

* g-pos + h-pos + c-pos (the POS triple);
* g-pos + c-pos;  g-word + c-pos;  g-pos + c-word;
* g-pos + h-word + c-pos;  g-pos + h-pos + c-word;
* and, once, g-word + c-word.

Each is conjoined with the direction pattern of the two arcs (g -> h left
or right, h -> c left or right), and with that pattern plus the binned
distance between h and c, as the sibling templates (``second_order.pyx``)
are. Hashing is that of the first-order features into the same weight
table, with template ids of their own (``templates.pxd``).

Scoring fills an (n+1)^3 float32 array ``grand[g, h, c]`` for the triples
whose two arcs are allowed (finite arc scores): with arcs pruned to the K
best heads per word (``decoders.pruning``) that is O(K^2 n) triples.
"""
from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc
from libc.stdint cimport int32_t, uint64_t

import numpy

from .distance cimport direction_distance
from .hashing cimport mix, mix3
from .factor_features cimport FactorFeatures
from .sentence cimport Sentence
from .weights cimport Weights, prefetch_weight, weight_at
from .templates cimport (
    G_GC,
    G_GCW,
    G_GHW,
    G_GWC,
    G_HPCW,
    G_TRIP,
    G_WW,
    GRAND_BASE,
    GRAND_STRIDE,
)

# Bases per triple: 6 per tag column + the word pair.
DEF MAX_BASES = 19   # 6 per tag column (MAX_TAGSETS) + 1


cdef inline uint64_t _pattern(int g, int h, int c) noexcept nogil:
    """Direction pattern of g -> h and h -> c as 1..4."""
    return 1 + (2 if h > g else 0) + (1 if c > h else 0)


cdef inline uint64_t _pattern_dist(int g, int h, int c) noexcept nogil:
    """The pattern with the binned h..c distance: 5..60."""
    return 5 + 14 * (_pattern(g, h, c) - 1) + direction_distance(h, c)


cdef class GrandparentFeatures(FactorFeatures):  # attributes: grandparent.pxd
    """Hashed grandparent features and grandparent scoring.
    (``FactorFeatures``: n_buckets, n_tagsets, ``score``.)
    """

    cdef int bases(self, Sentence s, int g, int h, int c, uint64_t* out) noexcept nogil:
        cdef int k = 0, t
        cdef uint64_t tid, gP, hP, cP
        cdef uint64_t gW = s.word[g], hW = s.word[h], cW = s.word[c]
        for t in range(s.n_tagsets):
            tid = GRAND_BASE + t * GRAND_STRIDE
            gP = s.tag_row(t)[g]
            hP = s.tag_row(t)[h]
            cP = s.tag_row(t)[c]
            out[k] = mix(mix3(tid + G_TRIP, gP, hP), cP); k += 1
            out[k] = mix3(tid + G_GC, gP, cP); k += 1
            out[k] = mix3(tid + G_GWC, gW, cP); k += 1
            out[k] = mix3(tid + G_GCW, gP, cW); k += 1
            out[k] = mix(mix3(tid + G_GHW, gP, hW), cP); k += 1
            out[k] = mix(mix3(tid + G_HPCW, gP, hP), cW); k += 1
        out[k] = mix3(G_WW, gW, cW); k += 1
        return k

    cdef int score_into(self, Sentence s, const Weights* w, float scale, float* out,
                        const float* arc=NULL) noexcept nogil:
        cdef int N = s.n + 1
        cdef int g, h, c, k, j
        cdef uint64_t b[MAX_BASES]
        cdef uint64_t ids[2 * MAX_BASES]
        cdef uint64_t d1, d2
        cdef double total
        for h in range(1, N):
            for g in range(N):
                if g == h or (arc != NULL and arc[g * N + h] == -INFINITY):
                    continue
                for c in range(1, N):
                    if c == h or c == g or (arc != NULL and arc[h * N + c] == -INFINITY):
                        continue
                    k = self.bases(s, g, h, c, b)
                    d1 = _pattern(g, h, c)
                    d2 = _pattern_dist(g, h, c)
                    for j in range(k):
                        ids[2 * j] = mix(b[j], d1) & self.mask
                        ids[2 * j + 1] = mix(b[j], d2) & self.mask
                        prefetch_weight(w, ids[2 * j])
                        prefetch_weight(w, ids[2 * j + 1])
                    total = 0.0
                    for j in range(2 * k):
                        total += weight_at(w, ids[j])
                    out[(<Py_ssize_t>g * N + h) * N + c] = <float>(scale * total)
        return 0

    def factor_features(self, Sentence s, int g, int h, int c):
        """Bucket ids (uint64, with repetitions) of the grandparent factor (g, h, c)."""
        self._check(s)
        if not (0 <= g <= s.n and 1 <= h <= s.n and 1 <= c <= s.n) or len({g, h, c}) < 3:
            raise ValueError(f"no grandparent factor ({g}, {h}, {c}) in a sentence of {s.n} words")
        cdef uint64_t b[MAX_BASES]
        cdef int k = self.bases(s, g, h, c, b)
        cdef uint64_t d1 = _pattern(g, h, c), d2 = _pattern_dist(g, h, c)
        out = numpy.empty(2 * k, dtype="uint64")
        cdef int j
        for j in range(k):
            out[2 * j] = mix(b[j], d1) & self.mask
            out[2 * j + 1] = mix(b[j], d2) & self.mask
        return out

    def tree_features(self, Sentence s, const int32_t[:] heads):
        """Bucket ids (uint64, with repetitions) of all grandparent factors of a tree."""
        self._check(s)
        cdef int N = s.n + 1
        if heads.shape[0] != N:
            raise ValueError(f"heads has length {heads.shape[0]}, expected {N}")
        parts = [self.factor_features(s, heads[heads[c]], heads[c], c)
                 for c in range(1, N) if heads[c] > 0]
        if not parts:
            return numpy.zeros(0, dtype="uint64")
        return numpy.concatenate(parts)
