from libc.stdint cimport uint64_t

from .factor_features cimport FactorFeatures
from .sentence cimport Sentence
from .weights cimport Weights


cdef class GrandparentFeatures(FactorFeatures):
    cdef int bases(self, Sentence s, int g, int h, int c, uint64_t* out) noexcept nogil
    # Fill out ((n+1)^3, zeroed by the caller) with grandparent scores
    # out[(g*(n+1)+h)*(n+1)+c] for the arcs g -> h and h -> c with finite
    # scores in arc ((n+1)^2; NULL: every triple); -1: no memory.
    cdef int score_into(self, Sentence s, const Weights* w, float scale,
                        float* out, const float* arc=*) noexcept nogil
