from libc.stdint cimport int32_t, uint8_t, uint64_t

from ..features.sentence cimport Sentence
from .label_features cimport RowTable
from .restrictions cimport LabelRestrictions


cdef class ArcLabeler:
    cdef readonly uint64_t n_rows
    cdef readonly int n_labels
    cdef readonly bint use_morph
    cdef readonly int version
    cdef readonly int flags
    cdef uint64_t mask
    cdef RowTable table           # mask and row width for label_features
    cdef LabelRestrictions restriction_table   # keys: (head tag, child tag, direction)

    cdef uint64_t _restriction_key(self, Sentence s, int h, int c) noexcept nogil
    cdef const uint8_t* _allowed_row(self, Sentence s, int h, int c) noexcept nogil
    cdef int arc_rows(self, Sentence s, const int32_t* heads, const int32_t* ctx, int c,
                      uint64_t* out, int32_t* kinds=*) noexcept nogil
    cdef int transition_rows(self, Sentence s, const int32_t* heads, const int32_t* ctx,
                             int c, int prev_label, uint64_t* out) noexcept nogil
    cdef object _context(self, Sentence s, const int32_t[:] heads)
    cdef void _arc_scores(self, Sentence s, const int32_t* heads, const int32_t* ctx,
                          const float* w, int c, double* e) noexcept nogil
    cdef void _emissions(self, Sentence s, const int32_t* heads, const int32_t* ctx,
                         const float* w, int root_label, double* E) noexcept nogil
    cdef void _viterbi(self, Sentence s, const int32_t* heads, const int32_t* ctx,
                       const float* w, const double* E, double* delta, int32_t* back,
                       int32_t* out) noexcept nogil
    cdef object _conditional_scores(self, Sentence s, const int32_t[:] heads,
                                    int32_t[:, ::1] ctx, const float* w, object pred,
                                    object scores)
    # Label ids of a valid tree into out[0..n] without the GIL; -1: no memory.
    cdef int predict_into(self, Sentence s, const int32_t* heads, const float* w,
                          int root_label, int32_t* out) noexcept nogil
