"""What the higher-order feature extractors share (siblings, McDonald &
Pereira 2006; grandparents, Carreras 2007): a hashed table of
``n_buckets`` weights, the tag rows they read, and the (n+1)^3 score array
of a sentence's factors, filled in C by each subclass's ``score_into``."""
from libc.stdint cimport uint64_t

import numpy

from .sentence cimport Sentence
from .templates cimport MAX_TAGSETS
from .weights cimport Weights, weights_view


cdef class FactorFeatures:  # attributes: factor_features.pxd
    """n_buckets (int): size of the (shared) weight table, a power of two.
    n_tagsets (int): 1 to MAX_TAGSETS (3) tag rows per Sentence."""

    def __init__(self, uint64_t n_buckets, int n_tagsets=1):
        if n_buckets < 2 or (n_buckets & (n_buckets - 1)) != 0:
            raise ValueError(f"n_buckets must be a power of two >= 2, got {n_buckets}")
        if not 1 <= n_tagsets <= MAX_TAGSETS:
            raise ValueError(f"n_tagsets must be 1 to {MAX_TAGSETS}, got {n_tagsets}")
        self.n_buckets = n_buckets
        self.mask = n_buckets - 1
        self.n_tagsets = n_tagsets

    def __reduce__(self):
        return (type(self), (self.n_buckets, self.n_tagsets))

    cdef int score_into(self, Sentence s, const Weights* w, float scale,
                        float* out, const float* arc=NULL) noexcept nogil:
        return -1

    def score(self, Sentence s, weights, float scale=1.0, arc=None):
        """Factor scores (float32, (n+1)^3) under ``scale * weights`` (a
        float32 vector, or ``QuantizedWeights``); with the arc scores
        ``arc``, the factors of -inf arcs are left 0."""
        cdef Weights w
        weights_view(weights, self.n_buckets, &w)
        self._check(s)
        N = s.n + 1
        scores = numpy.zeros((N, N, N), dtype="float32")
        cdef float[:, :, ::1] out = scores
        cdef const float[:, ::1] arc_view
        cdef const float* arc_ptr = NULL
        if arc is not None:
            arc_view = numpy.ascontiguousarray(arc, dtype="float32")
            if arc_view.shape[0] != N or arc_view.shape[1] != N:
                raise ValueError(f"arc must have shape {(N, N)}")
            arc_ptr = &arc_view[0, 0]
        cdef int status
        with nogil:
            status = self.score_into(s, &w, scale, &out[0, 0, 0], arc_ptr)
        if status != 0:
            raise MemoryError()
        return scores

    def _check(self, Sentence s):
        if s.n_tagsets != self.n_tagsets:
            raise ValueError(f"sentence has {s.n_tagsets} tag rows, features expect {self.n_tagsets}")
