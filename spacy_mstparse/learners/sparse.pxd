from libc.stdint cimport uint64_t

cdef double sparse_sq_norm(const double[:] val) noexcept nogil
cdef double sparse_dot(const uint64_t[:] ia, const double[:] va,
                       const uint64_t[:] ib, const double[:] vb) noexcept nogil
