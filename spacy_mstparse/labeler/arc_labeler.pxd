from libc.stdint cimport int32_t, uint64_t

from ..features.sentence cimport Sentence


cdef class ArcLabeler:
    cdef readonly uint64_t n_rows
    cdef readonly int n_labels
    cdef readonly bint use_morph
    cdef uint64_t mask

    cdef int arc_rows(self, Sentence s, const int32_t* heads, const int32_t* n_left,
                      const int32_t* n_right, const int32_t* leftmost,
                      const int32_t* rightmost, int c, uint64_t* out,
                      int32_t* kinds=*) noexcept nogil
    cdef int _dependents(self, Sentence s, const int32_t[:] heads, int32_t* n_left,
                         int32_t* n_right, int32_t* leftmost, int32_t* rightmost) except -1
    # Label ids of a valid tree into out[0..n] without the GIL; -1: no memory.
    cdef int predict_into(self, Sentence s, const int32_t* heads, const float* w,
                          int root_label, int32_t* out) noexcept nogil
