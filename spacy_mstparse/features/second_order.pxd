from libc.stdint cimport int32_t, uint64_t

from .factor_features cimport FactorFeatures
from .sentence cimport Sentence
from .weights cimport Weights


cdef class SiblingFeatures(FactorFeatures):
    # also score the stop factors (outermost dependent / none, each side)
    cdef readonly bint stops
    cdef int pair_bases(self, Sentence s, int h, int sib, int c, uint64_t* out) noexcept nogil
    cdef uint64_t trip_base(self, Sentence s, int t, int h, int sib, int c) noexcept nogil
    cdef int stop_bases(self, Sentence s, int h, int last, uint64_t* out) noexcept nogil
    # Bucket ids of one factor into out; their number.
    cdef int factor_ids(self, Sentence s, int h, int sib, int c, uint64_t* out) noexcept nogil
    cdef int stop_ids(self, Sentence s, int h, int last, uint64_t* out) noexcept nogil
    # Bucket ids of word h's factors on one side of the tree ``heads``: its
    # dependents there from h outwards and (with stops) its stop factor.
    cdef int side_features_into(self, Sentence s, const int32_t* heads, int h,
                                bint right, uint64_t* out) noexcept nogil
    # Upper bound on the ids of every side of one tree.
    cdef int tree_capacity(self, Sentence s) noexcept nogil
    cdef double conj_sum(self, const uint64_t* bases, int k, uint64_t d1, uint64_t d2,
                         const Weights* w) noexcept nogil
    # Fill out ((n+1)^3, zeroed by the caller) with sibling scores; -1: no memory.
    cdef int score_into(self, Sentence s, const Weights* w, float scale,
                        float* out, const float* arc=*) noexcept nogil
