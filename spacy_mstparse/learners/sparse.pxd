cdef double sparse_sq_norm(const double[:] val) noexcept nogil
