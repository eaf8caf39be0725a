# Exact arc marginals and log partition function of projective single-root
# trees with arc and sibling scores (McDonald & Pereira 2006's factorization)
# under p(tree) proportional to exp(score(tree) / temperature).
# C-level API for other Cython modules; see marginals_second_order.pyx.
#
# arc:       row-major (n+1) x (n+1) float32 arc scores arc[h*(n+1)+c]
#            (index 0 = root; column 0 and the diagonal never read).
# sib:       NULL (first order) or (n+1)^3 float32 sibling scores
#            sib[(h*(n+1)+s)*(n+1)+c], s == h for h's first child on a side.
#            -INFINITY (in arc or sib) forbids what it scores; other values
#            must be finite (the Python wrapper checks them).
# marginals: (n+1) x (n+1) float64 output, marginals[h*(n+1)+c] = p(h -> c).
# log_z:     output, log sum over trees of exp(score(tree) / temperature).
# Returns one of the MARG_* codes of marginals.pxd (MARG_OK = 0).
cdef int second_order_marginals_c(const float* arc, const float* sib, int n,
                                  double temperature, double* marginals,
                                  double* log_z) noexcept nogil
