# Exact arc marginals over all (non-projective) first-order trees: the
# matrix-tree theorem (single root: Koo et al. 2007), LU with partial pivoting
# and the inverse of the Laplacian, O(n^3). Arguments and return codes as
# marginals.pxd's projective_marginals_c.
cdef int nonprojective_marginals_c(const float* scores, int n, double temperature,
                                   bint single_root, double* marginals,
                                   double* log_z) noexcept nogil
