cdef int hildreth_solve(const double* G, const double* b, int k, double C,
                        double* alpha, int max_iter, double eps) noexcept nogil
