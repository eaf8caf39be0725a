from libc.stdint cimport uint64_t

cdef double sparse_sq_norm(const double[:] val) noexcept nogil
cdef double sparse_dot(const uint64_t[:] ia, const double[:] va,
                       const uint64_t[:] ib, const double[:] vb) noexcept nogil
# phi(gold) - phi(pred) from two sorted id lists with repetitions: sorted
# unique ids and count differences into out_idx / out_val (room for ng + np_).
cdef Py_ssize_t merge_sorted_counts(const uint64_t* g, Py_ssize_t ng, const uint64_t* p,
                                    Py_ssize_t np_, uint64_t* out_idx,
                                    double* out_val) noexcept nogil
