"""Exact arc marginals and log partition function over all (non-projective)
spanning trees, first order: the matrix-tree theorem (Koo, Globerson,
Carreras & Collins 2007; Smith & Smith 2007; McDonald & Satta 2007), under
p(tree) proportional to exp(score(tree) / T) as in ``marginals`` (its
conventions, error codes and score checks).

Multiple root children: Z = det L with L[m, m] = r_m + sum_h w(h, m) and
L[h, m] = -w(h, m) over the words. Single root (Koo et al. 2007): the first
row of the word Laplacian is replaced by the root weights r_m. Marginals come from d log det L / d L =
L^-T. For stability every column m (all arcs into word m) is divided by
exp(max_h s(h, m) / T) and, for single root, the root row by its own
maximum; log Z adds those shifts back. The determinant and the inverse are
computed here in C without the GIL (Gaussian elimination with partial
pivoting), not with numpy.linalg.

Limit: marginal(h -> m) = w(h, m) (X[m, m] - X[m, h]), X = L^-1, is a
difference of two numbers of size up to C = w(h, m) max(|X[m, m]|, |X[m, h]|),
which is large when the per-word best heads form cycles that the best tree
must break at a cost of many T (small temperature, large score margins).
Its rounding error is about eps C (measured against 120-digit mpmath on
20-word sentences: 1.4 to 1.6 times eps C). Every call computes 4 eps max C
over the arcs; above 1e-6 (or if a marginal leaves [0, 1] by more than that)
it raises FloatingPointError rather than return inaccurate numbers. The
projective chart (``marginals``) has no such limit.
"""
from libc.float cimport DBL_EPSILON
from libc.math cimport INFINITY, exp, fabs, isfinite, log
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from .marginals cimport (
    MARG_NO_MEMORY,
    MARG_NO_TREE,
    MARG_OK,
    MARG_OVERFLOW,
    MARG_PRECISION,
    call_marginals,
    scaled_scores_c,
)

# Largest tolerated (estimated) absolute error of a marginal.
cdef double PRECISION_TOL = 1e-6


cdef void _reach(const double* A, int N, int start, bint forward, int* seen,
                 int* stack) noexcept nogil:
    """Mark the words reachable from ``start`` over allowed word -> word arcs
    (against the arcs if not ``forward``)."""
    cdef int top = 0, u, v
    seen[start] = 1
    stack[top] = start
    top += 1
    while top > 0:
        top -= 1
        u = stack[top]
        for v in range(1, N):
            if seen[v]:
                continue
            if (A[u * N + v] if forward else A[v * N + u]) != -INFINITY:
                seen[v] = 1
                stack[top] = v
                top += 1


cdef bint _has_tree(const double* A, int n, bint single_root, int* work) noexcept nogil:
    """Whether some tree (with one root child if ``single_root``) avoids every
    forbidden (-inf) arc. A: (n+1) x (n+1) with -inf on column 0 and the diagonal."""
    cdef int N = n + 1, u, v, cand = 0
    cdef int* seen = work
    cdef int* stack = work + N
    if n <= 0:
        return True
    memset(seen, 0, <size_t>N * sizeof(int))
    if not single_root:
        # Every word reachable from the root over allowed arcs.
        for v in range(1, N):
            if A[v] != -INFINITY and not seen[v]:
                _reach(A, N, v, True, seen, stack)
        for v in range(1, N):
            if not seen[v]:
                return False
        return True
    # Single root: some allowed root child must reach every word over word
    # arcs. The start of the last new search is the only candidate class
    # representative (if any word reaches all, so does it).
    for v in range(1, N):
        if not seen[v]:
            cand = v
            _reach(A, N, v, True, seen, stack)
    memset(seen, 0, <size_t>N * sizeof(int))
    _reach(A, N, cand, True, seen, stack)
    for v in range(1, N):
        if not seen[v]:
            return False
    # The words reaching every word are exactly those reaching cand.
    memset(seen, 0, <size_t>N * sizeof(int))
    _reach(A, N, cand, False, seen, stack)
    for u in range(1, N):
        if seen[u] and A[u] != -INFINITY:
            return True
    return False


cdef int _invert(double* M, double* X, int n, double* logdet) noexcept nogil:
    """X = M^-1 and log det M by Gaussian elimination with partial pivoting
    on [M | I] (M is overwritten). Returns 0, or 1 if a pivot is 0 or the
    determinant is not positive (a Laplacian's determinant is a sum of tree
    weights)."""
    cdef int i, j, k, p
    cdef double best, v, f, piv, ld = 0.0
    cdef double* Mk
    cdef double* Mi
    cdef double* Xk
    cdef double* Xi
    cdef int sign = 1
    memset(X, 0, <size_t>n * n * sizeof(double))
    for i in range(n):
        X[i * n + i] = 1.0
    for k in range(n):
        p = k
        best = fabs(M[k * n + k])
        for i in range(k + 1, n):
            v = fabs(M[i * n + k])
            if v > best:
                best = v
                p = i
        if best == 0.0:
            return 1
        if p != k:
            sign = -sign
            for j in range(k, n):
                v = M[k * n + j]
                M[k * n + j] = M[p * n + j]
                M[p * n + j] = v
            for j in range(n):
                v = X[k * n + j]
                X[k * n + j] = X[p * n + j]
                X[p * n + j] = v
        piv = M[k * n + k]
        if piv < 0.0:
            sign = -sign
        ld += log(fabs(piv))
        Mk = M + k * n
        Xk = X + k * n
        for i in range(k + 1, n):
            Mi = M + i * n
            f = Mi[k] / piv
            if f == 0.0:
                continue
            Xi = X + i * n
            for j in range(k + 1, n):
                Mi[j] -= f * Mk[j]
            for j in range(n):
                Xi[j] -= f * Xk[j]
    if sign < 0:
        return 1
    # Back substitution with the upper triangle.
    for k in range(n - 1, -1, -1):
        Xk = X + k * n
        for i in range(k + 1, n):
            f = M[k * n + i]
            if f == 0.0:
                continue
            Xi = X + i * n
            for j in range(n):
                Xk[j] -= f * Xi[j]
        f = 1.0 / M[k * n + k]
        for j in range(n):
            Xk[j] *= f
    logdet[0] = ld
    return 0


cdef int nonprojective_marginals_c(const float* scores, int n, double temperature,
                                   bint single_root, double* marginals,
                                   double* log_z) noexcept nogil:
    cdef int N, h, c, i, j, rc
    cdef size_t NN, nn
    cdef double v, mx, R, shift, logdet, total, lz, xm, xh
    cdef double cancel = 0.0   # max over arcs of w(h, m) max(|X[m, m]|, |X[m, h]|)
    cdef double* A
    cdef double* L    # n x n Laplacian over the words (word c is index c-1)
    cdef double* X    # its inverse
    cdef double* Wt   # Wt[i*n+j]: shifted weight of the arc word j+1 -> word i+1
    cdef double* rw   # shifted root weights
    cdef double* col  # per-column shifts
    cdef int* work
    if n < 0:
        return MARG_NO_MEMORY
    N = n + 1
    NN = <size_t>N * <size_t>N
    nn = <size_t>n * <size_t>n
    memset(marginals, 0, NN * sizeof(double))
    if n == 0:
        log_z[0] = 0.0
        return MARG_OK
    A = <double*>malloc((NN + 3 * nn + 2 * <size_t>n) * sizeof(double))
    work = <int*>malloc(2 * <size_t>N * sizeof(int))
    if A == NULL or work == NULL:
        free(A)
        free(work)
        return MARG_NO_MEMORY
    L = A + NN
    X = L + nn
    Wt = X + nn
    rw = Wt + nn
    col = rw + n
    rc = scaled_scores_c(scores, N, temperature, A)
    if rc == MARG_OK and not _has_tree(A, n, single_root, work):
        rc = MARG_NO_TREE
    free(work)
    if rc != MARG_OK:
        free(A)
        return rc

    # Column shifts: the best arc into each word (single root: the best word
    # arc, the root row gets one shift R of its own).
    R = 0.0
    for c in range(1, N):
        mx = -INFINITY
        for h in range(1 if single_root else 0, N):
            if A[h * N + c] > mx:
                mx = A[h * N + c]
        if mx == -INFINITY:
            mx = 0.0   # (single root) only the root arc enters c
        col[c - 1] = mx
    if single_root:
        R = -INFINITY
        for c in range(1, N):
            v = A[c] - col[c - 1]
            if v > R:
                R = v
    for c in range(1, N):
        i = c - 1
        shift = col[i]
        rw[i] = exp(A[c] - shift - R)
        total = 0.0
        for h in range(1, N):
            j = h - 1
            v = exp(A[h * N + c] - shift)   # 0 on the diagonal
            Wt[i * n + j] = v
            L[j * n + i] = -v
            total += v
        L[i * n + i] = total if single_root else total + rw[i]
    if single_root:
        for i in range(n):
            L[i] = rw[i]
    if _invert(L, X, n, &logdet) != 0:
        free(A)
        return MARG_PRECISION
    lz = logdet + R
    for i in range(n):
        lz += col[i]
    if not isfinite(lz):
        free(A)
        return MARG_OVERFLOW
    log_z[0] = lz

    # marginal(h -> m) = weight(h, m) * d log det / d weight(h, m), with
    # d log det L / d L[a, b] = X[b, a]. Word m = i + 1, head word h = j + 1.
    rc = MARG_OK
    for i in range(n):
        c = i + 1
        v = rw[i] * (X[i * n] if single_root else X[i * n + i])
        total = v
        marginals[c] = v
        for j in range(n):
            if j == i:
                continue
            xm = X[i * n + i]
            xh = X[i * n + j]
            if single_root:
                # Koo et al.: word 1's column has no diagonal term, head word 1's
                # row is the root row.
                if i == 0:
                    xm = 0.0
                if j == 0:
                    xh = 0.0
            v = Wt[i * n + j] * (xm - xh)
            marginals[(j + 1) * N + c] = v
            total += v
            v = Wt[i * n + j] * max(fabs(xm), fabs(xh))
            if v > cancel:
                cancel = v
        if not fabs(total - 1.0) <= PRECISION_TOL:
            rc = MARG_PRECISION
        for h in range(N):
            v = marginals[h * N + c]
            if not (v >= -PRECISION_TOL and v <= 1.0 + PRECISION_TOL):
                rc = MARG_PRECISION
            elif v < 0.0:
                marginals[h * N + c] = 0.0
            elif v > 1.0:
                marginals[h * N + c] = 1.0
    if 4.0 * DBL_EPSILON * cancel > PRECISION_TOL:
        rc = MARG_PRECISION
    free(A)
    return rc


def nonprojective_marginals(scores, temperature=1.0, single_root=True):
    """Arc marginals and log partition function over all (non-projective) trees.

    Same arguments and results as ``projective_marginals``; computed with the
    matrix-tree theorem (single root: Koo et al. 2007), column-shifted
    weights and an LU inverse in C. Raises ValueError if every tree uses a
    forbidden arc, FloatingPointError if the distribution is too peaked for
    the determinant in double precision (very small temperature; see the
    module docstring).
    """
    return call_marginals(nonprojective_marginals_c, scores, temperature, single_root,
                 "nonprojective_marginals")
