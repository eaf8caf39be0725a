from libc.stdint cimport int64_t, uint64_t


cdef class OneVsRestSVM:
    cdef readonly int n_classes
    cdef readonly uint64_t n_buckets
    cdef readonly double lam
    cdef public int64_t t
    cdef readonly int64_t t0
    cdef readonly bint average
    cdef readonly bint compact
    cdef object _table, _acc, _stamp, _index
    cdef float* S
    cdef const int* index
    cdef float* acc
    cdef int64_t* stamp

    cdef void raw_scores(self, const uint64_t* ids, const float* vals, int nf,
                         float* out) noexcept nogil
    cdef void _compact_scores(self, const uint64_t* ids, const float* vals, int nf,
                              float* out) noexcept nogil
    cdef int step(self, const uint64_t* ids, const float* vals, int nf, int gold,
                  const float* raw, float* coef, double* hinge) noexcept nogil
