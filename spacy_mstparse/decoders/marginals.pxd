# Exact arc marginals and log partition functions of first-order dependency
# trees under p(tree) proportional to exp(score(tree) / temperature).
# C-level API for other Cython modules; see marginals.pyx (the non-projective
# one: marginals_nonprojective.pxd).
#
# scores:    row-major (n+1) x (n+1) float32, scores[h*(n+1)+c] = score of the
#            arc h -> c, index 0 = artificial root (column 0 and the diagonal
#            are never read); -INFINITY forbids an arc. Other values must be
#            finite (not checked here: the Python wrappers check them).
# marginals: (n+1) x (n+1) float64 output, marginals[h*(n+1)+c] = p(h -> c);
#            column 0 and the diagonal are set to 0.
# log_z:     output, log sum over trees of exp(score(tree) / temperature).
# Returns MARG_OK (0) or one of the MARG_* error codes below.
cdef enum:
    MARG_OK = 0
    MARG_NO_MEMORY = -1     # allocation failure (or n < 0)
    MARG_NO_TREE = -2       # every tree uses a forbidden arc (Z = 0)
    MARG_OVERFLOW = -3      # scores / temperature overflow double precision
    MARG_PRECISION = -4     # matrix-tree theorem: estimated error of a marginal > 1e-6

# Projective trees: inside-outside over Eisner's chart on column-scaled weights
# (in log space where Z leaves their range), O(n^3).
cdef int projective_marginals_c(const float* scores, int n, double temperature,
                                bint single_root, double* marginals,
                                double* log_z) noexcept nogil

# The scores / temperature as doubles (column 0 and the diagonal -inf), or
# MARG_OVERFLOW if one is NaN or +inf.
cdef int scaled_scores_c(const float* scores, int N, double temperature,
                         double* A) noexcept nogil

# A marginals function of this signature (projective_marginals_c,
# marginals_nonprojective.nonprojective_marginals_c), and its Python call:
# the scores checked, the function run without the GIL, its error raised.
ctypedef int (*marginals_fn)(const float* scores, int n, double temperature,
                             bint single_root, double* marginals,
                             double* log_z) noexcept nogil
cdef object call_marginals(marginals_fn fn, object scores, object temperature,
                           bint single_root, str name)


# Shared by the first-order (marginals.pyx) and second-order
# (marginals_second_order.pyx) inside-outside passes.
from libc.math cimport INFINITY, exp, log


# Terms exp(x) with x below this are left out of sums whose largest term is
# exp(0) = 1: each is under 3e-20, so thousands of them stay below half the
# rounding unit of the sum; where the distribution is peaked (a very low
# temperature) most exp calls are skipped.
cdef extern from *:
    """
    #define LOG_NEGLIGIBLE (-45.0)
    """
    const double LOG_NEGLIGIBLE


# log sum_i exp(v[i]) over m values (-inf if all are -inf).
cdef inline double log_sum_exp(const double* v, int m) noexcept nogil:
    cdef int i
    cdef double mx = -INFINITY, acc = 0.0, x
    for i in range(m):
        if v[i] > mx:
            mx = v[i]
    if mx == -INFINITY:
        return -INFINITY
    for i in range(m):
        x = v[i] - mx
        if x > LOG_NEGLIGIBLE:
            acc += exp(x)
    return mx + log(acc)


# The start of an inside-outside pass over n words (N = n + 1, NN = N * N):
# marginals zeroed; for n == 0 log_z = 0 and *A = NULL (nothing to compute);
# else *A = charts * NN + N doubles, the first NN the scores / temperature
# (column 0 and the diagonal -inf), and *G = grads * NN zeroed doubles.
# MARG_OK, or an error code (n < 0, no memory, a score / T not finite) with
# nothing left allocated.
cdef int chart_workspace_c(const float* scores, int n, double temperature,
                           int charts, int grads, double* marginals, double* log_z,
                           double** A, double** G) noexcept nogil
