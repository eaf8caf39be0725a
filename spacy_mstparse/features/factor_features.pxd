from libc.stdint cimport uint64_t

from .sentence cimport Sentence
from .weights cimport Weights


cdef class FactorFeatures:
    cdef readonly uint64_t n_buckets
    cdef readonly int n_tagsets
    cdef uint64_t mask

    # Fill out ((n+1)^3, zeroed by the caller) with the factor scores
    # out[(a*(n+1)+b)*(n+1)+c] of the subclass's factors over the arcs with
    # finite scores in arc ((n+1)^2; NULL: every factor); -1: no memory.
    cdef int score_into(self, Sentence s, const Weights* w, float scale,
                        float* out, const float* arc=*) noexcept nogil
