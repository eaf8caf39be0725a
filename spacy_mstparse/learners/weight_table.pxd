from libc.stdint cimport uint64_t


cdef class WeightTable:
    # w = scale * v; running sum of w over ticks kept lazily per bucket.
    cdef readonly Py_ssize_t n_buckets
    cdef readonly double scale        # s
    cdef readonly double cum_scale    # S = sum of s over ticks since the last renormalisation
    cdef readonly long long n_ticks
    cdef readonly double sq_norm_v    # ||v||^2, kept incrementally
    # Private: only this module's code reads or writes the arrays.
    cdef object _v_arr                # numpy float32[n_buckets]
    cdef object _acc_arr              # numpy float64[n_buckets]
    cdef object _stamp_arr            # numpy float64[n_buckets]
    cdef float[::1] _v
    cdef double[::1] _acc
    cdef double[::1] _stamp

    cdef void _bind(self, object v, object acc, object stamp)
    cdef void _install(self, object v, object acc, object stamp, double scale,
                       double cum_scale, long long n_ticks, double sq_norm_v) except *
    cdef void _flush_all(self) noexcept nogil
    cdef void _renormalize(self) noexcept nogil
    cdef Py_ssize_t _checked_length(self, const uint64_t[:] idx, const double[:] val) except -1
    # Unchecked C-level helpers for other Cython modules (indices must be < n_buckets).
    cdef double dot_ptr(self, const uint64_t* idx, const double* val,
                        Py_ssize_t n) noexcept nogil
    cdef double sum_ids(self, const uint64_t* ids, Py_ssize_t n) noexcept nogil
    cdef void add_ptr(self, const uint64_t* idx, const double* val, Py_ssize_t n,
                      double step) noexcept nogil
    cdef double _store(self, uint64_t f, float value) noexcept nogil
    cdef float stored(self, uint64_t f) noexcept nogil
    cdef void scale_bucket(self, uint64_t f, double factor) noexcept nogil
    cdef void assign_ptr(self, const uint64_t* idx, const double* values,
                         Py_ssize_t n) noexcept nogil

    cpdef double dot(self, const uint64_t[:] idx, const double[:] val) except? -1.0
    cpdef void add(self, const uint64_t[:] idx, const double[:] val, double step) except *
    cpdef void scale_by(self, double factor) except *
    cpdef void tick(self) noexcept
    cpdef double sq_norm(self) noexcept
