"""Exact arc marginals and log partition functions of first-order dependency trees.

Under p(tree) proportional to exp(score(tree) / T), score(tree) the sum of
its arc scores, this module computes log Z = log sum_tree exp(score(tree) / T)
and every arc's marginal probability p(h -> c) = d log Z / d (score[h, c] / T):

- ``projective_marginals``: projective trees, inside-outside over Eisner's
  chart (Eisner 1996; McDonald, Crammer & Pereira 2005's first-order chart).
  The inside pass replaces the decoder's max by a sum; the outside pass is
  its reverse-mode derivative, so every chart cell carries d log Z / d cell,
  the probability that the cell's item is part of the tree, a number in
  [0, 1]. The chart is first computed on weights, each word's column
  divided by its best head's weight (every tree is scaled alike), as sums
  of products without exp in the cubic loops; where Z then leaves the range
  in which every cell that matters is representable (the best tree far
  below the words' best heads, or hundreds of words at a high T), again in
  log space (log-sum-exp). With ``single_root`` the chart covers the words
  1..n and the root's one child r is summed out as
  log sum_r exp(s(0, r) / T + cl[1, r] + cr[r, n]), as in the project's
  Eisner decoder. Pure C loops without the GIL, O(n^3).
- ``nonprojective_marginals``: all spanning arborescences, the matrix-tree
  theorem (Koo, Globerson, Carreras & Collins 2007; Smith & Smith 2007;
  McDonald & Satta 2007). Multiple root children: Z = det L with
  L[m, m] = r_m + sum_h w(h, m) and L[h, m] = -w(h, m) over the words.
  Single root (Koo et al. 2007): the first row of the word Laplacian is
  replaced by the root weights r_m. Marginals come from d log det L / d L =
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
  over the arcs; above 1e-6 (or if a marginal
  leaves [0, 1] by more than that) it raises FloatingPointError rather than
  return inaccurate numbers. The projective chart has no such limit.

A score of -inf forbids an arc (probability 0); if every tree uses a
forbidden arc, ValueError. Conventions (see ARCHITECTURE.md): scores[h, c] is
the arc h -> c in a row-major (n+1) x (n+1) float32 matrix, index 0 the
artificial root, column 0 and the diagonal never read. Everything after
reading the scores is double precision.
"""
from libc.float cimport DBL_EPSILON
from libc.math cimport INFINITY, exp, fabs, isfinite, log
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset

import numpy as np

# Largest tolerated (estimated) absolute error of a non-projective marginal.
cdef double PRECISION_TOL = 1e-6
# The range of the scaled projective chart's Z (each column's largest weight
# 1, so a tree weighs at most 1) where it is used. Above 1e-280, every tree
# that matters (weight over 1e-15 Z) has all its partial products over
# 1e-295, clear of double precision's subnormal numbers (below 2.2e-308);
# below 1e280, far from overflow (a cell that overflows makes Z infinite or
# NaN, which is out of range too).
cdef double SCALED_MIN_Z = 1e-280
cdef double SCALED_MAX_Z = 1e280
# A return code of the scaled chart only: out of range, use the log chart.
cdef int MARG_OUT_OF_RANGE = -100


cdef int scaled_scores_c(const float* scores, int N, double temperature,
                        double* A) noexcept nogil:
    """A = scores / T (double); column 0 and the diagonal become -inf."""
    cdef int h, c
    cdef double v
    for h in range(N):
        for c in range(N):
            if c == 0 or c == h:
                A[h * N + c] = -INFINITY
            else:
                v = <double>scores[h * N + c] / temperature
                if v != v or v == INFINITY:
                    return MARG_OVERFLOW
                A[h * N + c] = v
    return MARG_OK


cdef int chart_workspace_c(const float* scores, int n, double temperature,
                           int charts, int grads, double* marginals, double* log_z,
                           double** A, double** G) noexcept nogil:
    cdef int N, rc
    cdef size_t NN
    A[0] = NULL
    G[0] = NULL
    if n < 0:
        return MARG_NO_MEMORY
    N = n + 1
    NN = <size_t>N * <size_t>N
    memset(marginals, 0, NN * sizeof(double))
    if n == 0:
        log_z[0] = 0.0
        return MARG_OK
    A[0] = <double*>malloc((charts * NN + N) * sizeof(double))
    G[0] = <double*>calloc(grads * NN, sizeof(double))
    if A[0] != NULL and G[0] != NULL:
        rc = scaled_scores_c(scores, N, temperature, A[0])
        if rc == MARG_OK:
            return MARG_OK
    else:
        rc = MARG_NO_MEMORY
    free(A[0])
    free(G[0])
    A[0] = NULL
    G[0] = NULL
    return rc


# ---------------------------------------------------------------------------
# projective: inside-outside over Eisner's chart


cdef int projective_marginals_c(const float* scores, int n, double temperature,
                                bint single_root, double* marginals,
                                double* log_z) noexcept nogil:
    """The scaled chart where its numbers stay in range, else the log chart."""
    cdef int rc = _projective_scaled_c(scores, n, temperature, single_root, marginals, log_z)
    if rc == MARG_OUT_OF_RANGE:
        rc = _projective_log_c(scores, n, temperature, single_root, marginals, log_z)
    return rc


cdef int _projective_scaled_c(const float* scores, int n, double temperature,
                              bint single_root, double* marginals,
                              double* log_z) noexcept nogil:
    """Inside-outside over Eisner's chart on weights instead of logs: every
    column (the arcs into one word) is divided by its largest weight, which
    scales every tree by the same factor (each word has one head), so the
    weights are at most 1 and a chart cell is a plain sum of products, with
    no exp or log in the O(n^3) loops. The cells are those of the log chart
    below, exponentiated; the outside pass is the same derivative. Returns
    MARG_OUT_OF_RANGE (the caller then uses the log chart) when Z leaves
    [SCALED_MIN_Z, SCALED_MAX_Z] (very long sentences, very peaked
    distributions)."""
    cdef int N, s, t, r, w, start, rc
    cdef size_t NN
    cdef double X, g, p, z, shift = 0.0, top
    cdef double* A
    cdef double* cr
    cdef double* cr_t
    cdef double* cl
    cdef double* cl_t
    cdef double* ir
    cdef double* il_t
    cdef double* sp
    cdef double* grads
    cdef double* gcr
    cdef double* gcr_t
    cdef double* gcl
    cdef double* gcl_t
    cdef double* gir
    cdef double* gil_t
    rc = chart_workspace_c(scores, n, temperature, 8, 6, marginals, log_z, &A, &grads)
    if rc != MARG_OK or A == NULL:
        return rc
    N = n + 1
    NN = <size_t>N * <size_t>N
    start = 1 if single_root else 0
    # Weights, each column divided by its largest one.
    for t in range(1, N):
        top = -INFINITY
        for s in range(N):
            if A[s * N + t] > top:
                top = A[s * N + t]
        if top == -INFINITY:
            free(A)
            free(grads)
            return MARG_OUT_OF_RANGE   # no head for word t: the log chart says so
        shift += top
        for s in range(N):
            A[s * N + t] = exp(A[s * N + t] - top)
    cr = A + NN
    cr_t = A + 2 * NN
    cl = A + 3 * NN
    cl_t = A + 4 * NN
    ir = A + 5 * NN
    il_t = A + 6 * NN
    sp = A + 7 * NN
    gcr = grads
    gcr_t = grads + NN
    gcl = grads + 2 * NN
    gcl_t = grads + 3 * NN
    gir = grads + 4 * NN
    gil_t = grads + 5 * NN
    for s in range(N):
        cr[s * N + s] = 1.0
        cl[s * N + s] = 1.0
        cr_t[s * N + s] = 1.0
        cl_t[s * N + s] = 1.0

    for w in range(1, N):
        for s in range(start, N - w):
            t = s + w
            X = 0.0
            for r in range(s, t):
                X += cr[s * N + r] * cl_t[t * N + r + 1]
            sp[s * N + t] = X
            ir[s * N + t] = X * A[s * N + t]
            il_t[t * N + s] = X * A[t * N + s]
            X = 0.0
            for r in range(s + 1, t + 1):
                X += ir[s * N + r] * cr_t[t * N + r]
            cr[s * N + t] = X
            cr_t[t * N + s] = X
            X = 0.0
            if s > 0:
                for r in range(s, t):
                    X += cl[s * N + r] * il_t[t * N + r]
            cl[s * N + t] = X
            cl_t[t * N + s] = X

    if single_root:
        z = 0.0
        for r in range(1, N):
            z += A[r] * cl[1 * N + r] * cr[r * N + n]
    else:
        z = cr[n]
    if not (SCALED_MIN_Z <= z <= SCALED_MAX_Z):
        free(A)
        free(grads)
        return MARG_OUT_OF_RANGE
    if single_root:
        for r in range(1, N):
            p = A[r] * cl[1 * N + r] * cr[r * N + n] / z
            marginals[r] = min(p, 1.0)
            gcl[1 * N + r] += p
            gcr_t[n * N + r] += p
    else:
        gcr[n] = 1.0
    log_z[0] = log(z) + shift

    for w in range(N - 1, 0, -1):
        for s in range(start, N - w):
            t = s + w
            X = cl[s * N + t]
            g = gcl[s * N + t] + gcl_t[t * N + s]
            if g != 0.0 and X != 0.0:
                g /= X
                for r in range(s, t):
                    p = g * cl[s * N + r] * il_t[t * N + r]
                    gcl[s * N + r] += p
                    gil_t[t * N + r] += p
            X = cr[s * N + t]
            g = gcr[s * N + t] + gcr_t[t * N + s]
            if g != 0.0 and X != 0.0:
                g /= X
                for r in range(s + 1, t + 1):
                    p = g * ir[s * N + r] * cr_t[t * N + r]
                    gir[s * N + r] += p
                    gcr_t[t * N + r] += p
            marginals[s * N + t] = min(gir[s * N + t], 1.0)
            if s > 0:
                marginals[t * N + s] = min(gil_t[t * N + s], 1.0)
            X = sp[s * N + t]
            g = gir[s * N + t] + gil_t[t * N + s]
            if g != 0.0 and X != 0.0:
                g /= X
                for r in range(s, t):
                    p = g * cr[s * N + r] * cl_t[t * N + r + 1]
                    gcr[s * N + r] += p
                    gcl_t[t * N + r + 1] += p
    free(A)
    free(grads)
    return MARG_OK


cdef int _projective_log_c(const float* scores, int n, double temperature,
                           bint single_root, double* marginals,
                           double* log_z) noexcept nogil:
    cdef int N, s, t, r, w, start, rc
    cdef size_t NN
    cdef double X, g, p, lz, x
    cdef double* A
    cdef double* cr     # cr[s*N+t]: log inside of the complete span s..t headed by s
    cdef double* cr_t   # cr_t[t*N+s] = cr[s*N+t]
    cdef double* cl     # cl[s*N+t]: complete span s..t headed by t
    cdef double* cl_t
    cdef double* ir     # ir[s*N+t]: incomplete span with arc s -> t
    cdef double* il_t   # il_t[t*N+s]: incomplete span with arc t -> s
    cdef double* sp     # sp[s*N+t]: log sum over splits of cr[s, r] + cl[r+1, t]
    cdef double* grads
    cdef double* gcr    # gradients d log Z / d cell; a cell's total is the sum of
    cdef double* gcr_t  # its row-major and transposed accumulators
    cdef double* gcl
    cdef double* gcl_t
    cdef double* gir
    cdef double* gil_t
    cdef double* buf
    rc = chart_workspace_c(scores, n, temperature, 8, 6, marginals, log_z, &A, &grads)
    if rc != MARG_OK or A == NULL:
        return rc
    N = n + 1
    NN = <size_t>N * <size_t>N
    cr = A + NN
    cr_t = A + 2 * NN
    cl = A + 3 * NN
    cl_t = A + 4 * NN
    ir = A + 5 * NN
    il_t = A + 6 * NN
    sp = A + 7 * NN
    buf = A + 8 * NN
    gcr = grads
    gcr_t = grads + NN
    gcl = grads + 2 * NN
    gcl_t = grads + 3 * NN
    gir = grads + 4 * NN
    gil_t = grads + 5 * NN
    for s in range(N):
        cr[s * N + s] = 0.0
        cl[s * N + s] = 0.0
        cr_t[s * N + s] = 0.0
        cl_t[s * N + s] = 0.0

    # Inside, by increasing span width. In single-root mode the root (node 0)
    # is handled after the chart.
    start = 1 if single_root else 0
    for w in range(1, N):
        for s in range(start, N - w):
            t = s + w
            for r in range(s, t):
                buf[r - s] = cr[s * N + r] + cl_t[t * N + r + 1]
            X = log_sum_exp(buf, w)
            sp[s * N + t] = X
            ir[s * N + t] = X + A[s * N + t]
            # No arc may enter the root (A's column 0 is -inf).
            il_t[t * N + s] = X + A[t * N + s]
            for r in range(s + 1, t + 1):
                buf[r - s - 1] = ir[s * N + r] + cr_t[t * N + r]
            X = log_sum_exp(buf, w)
            cr[s * N + t] = X
            cr_t[t * N + s] = X
            if s == 0:
                X = -INFINITY
            else:
                for r in range(s, t):
                    buf[r - s] = cl[s * N + r] + il_t[t * N + r]
                X = log_sum_exp(buf, w)
            cl[s * N + t] = X
            cl_t[t * N + s] = X

    # log Z, and the gradient of the top item(s).
    if single_root:
        for r in range(1, N):
            buf[r - 1] = A[r] + cl[1 * N + r] + cr[r * N + n]
        lz = log_sum_exp(buf, n)
        if lz != -INFINITY and isfinite(lz):
            for r in range(1, N):
                p = exp(buf[r - 1] - lz)
                marginals[r] = min(p, 1.0)
                gcl[1 * N + r] += p
                gcr_t[n * N + r] += p
    else:
        lz = cr[n]
        gcr[n] = 1.0
    if lz == -INFINITY:
        free(A)
        free(grads)
        return MARG_NO_TREE
    if not isfinite(lz):
        free(A)
        free(grads)
        return MARG_OVERFLOW
    log_z[0] = lz

    # Outside = reverse-mode derivative of the inside pass, by decreasing
    # width. A cell's gradient only receives contributions from wider spans,
    # except CL[s, t] -> IL[s, t] and CR[s, t] -> IR[s, t], which come first.
    for w in range(N - 1, 0, -1):
        for s in range(start, N - w):
            t = s + w
            X = cl[s * N + t]
            g = gcl[s * N + t] + gcl_t[t * N + s]
            if g != 0.0 and X != -INFINITY:
                for r in range(s, t):
                    x = cl[s * N + r] + il_t[t * N + r] - X
                    if x > LOG_NEGLIGIBLE:
                        p = g * exp(x)
                        gcl[s * N + r] += p
                        gil_t[t * N + r] += p
            X = cr[s * N + t]
            g = gcr[s * N + t] + gcr_t[t * N + s]
            if g != 0.0 and X != -INFINITY:
                for r in range(s + 1, t + 1):
                    x = ir[s * N + r] + cr_t[t * N + r] - X
                    if x > LOG_NEGLIGIBLE:
                        p = g * exp(x)
                        gir[s * N + r] += p
                        gcr_t[t * N + r] += p
            # (sums of probabilities can round a hair above 1)
            marginals[s * N + t] = min(gir[s * N + t], 1.0)
            if s > 0:
                marginals[t * N + s] = min(gil_t[t * N + s], 1.0)
            X = sp[s * N + t]
            g = gir[s * N + t] + gil_t[t * N + s]
            if g != 0.0 and X != -INFINITY:
                for r in range(s, t):
                    x = cr[s * N + r] + cl_t[t * N + r + 1] - X
                    if x > LOG_NEGLIGIBLE:
                        p = g * exp(x)
                        gcr[s * N + r] += p
                        gcl_t[t * N + r + 1] += p
    free(A)
    free(grads)
    return MARG_OK


# ---------------------------------------------------------------------------
# non-projective: matrix-tree theorem


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


# ---------------------------------------------------------------------------
# Python entry points


ctypedef int (*marginals_fn)(const float* scores, int n, double temperature,
                             bint single_root, double* marginals,
                             double* log_z) noexcept nogil


def checked_scores(scores, temperature, name):
    """(float32 C-contiguous scores, temperature as float), or ValueError
    naming the first bad entry: scores must be a square (n+1) x (n+1) matrix,
    finite or -inf outside column 0 and the diagonal; T finite and > 0."""
    arr = np.ascontiguousarray(scores, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 1:
        raise ValueError(
            f"{name}: scores must be a square (n+1) x (n+1) matrix (row/column 0 = "
            f"root, n >= 0), got an array of shape {arr.shape}"
        )
    T = float(temperature)
    if not (T > 0.0 and T < INFINITY):
        raise ValueError(f"{name}: temperature must be a finite number > 0, got {temperature!r}")
    used = arr.copy()
    used[:, 0] = 0.0
    np.fill_diagonal(used, 0.0)
    bad = np.isnan(used) | (used == np.inf)
    if bad.any():
        h, c = (int(x) for x in np.argwhere(bad)[0])
        raise ValueError(
            f"{name}: scores[{h}, {c}] is {arr[h, c]} (after conversion to float32); "
            "arc scores must be finite, or -inf for a forbidden arc"
        )
    return arr, T


def raise_for_code(int rc, str name, int n, double T, bint single_root=True):
    """Raise the Python error of a MARG_* code (nothing for MARG_OK)."""
    if rc == MARG_NO_MEMORY:
        raise MemoryError(f"{name}: could not allocate work memory for n={n}")
    if rc == MARG_NO_TREE:
        kind = "single-root " if single_root else ""
        raise ValueError(
            f"{name}: every {kind}tree over the {n} words uses a forbidden (-inf) arc, "
            "so no tree has positive probability"
        )
    if rc == MARG_OVERFLOW:
        raise ValueError(
            f"{name}: scores / temperature (temperature={T!r}) overflow double precision"
        )
    if rc == MARG_PRECISION:
        raise FloatingPointError(
            f"{name}: the matrix-tree marginals would be inaccurate at "
            f"temperature={T!r} (n={n}): estimated rounding error above 1e-6, as "
            "the distribution is too peaked for the determinant in double "
            "precision; use a larger temperature, or projective_marginals"
        )


cdef object _call(marginals_fn fn, object scores, object temperature,
                  bint single_root, str name):
    arr, T = checked_scores(scores, temperature, name)
    cdef const float[:, ::1] view = arr
    cdef int n = arr.shape[0] - 1
    cdef int rc
    cdef double t = T
    cdef double lz = 0.0
    out = np.empty((n + 1, n + 1), dtype=np.float64)
    cdef double[:, ::1] ov = out
    with nogil:
        rc = fn(&view[0, 0], n, t, single_root, &ov[0, 0], &lz)
    raise_for_code(rc, name, n, t, single_root)
    return out, float(lz)


def projective_marginals(scores, temperature=1.0, single_root=True):
    """Arc marginals and log partition function over projective trees.

    scores: (n+1) x (n+1) arc scores (converted to float32), ``scores[h, c]``
        for h -> c, index 0 the root; -inf forbids an arc. Column 0 and the
        diagonal are ignored.
    temperature: T > 0, p(tree) proportional to exp(score(tree) / T).
    single_root: exactly one word attached to the root (default), as eisner.

    Returns ``(marginals, log_z)``: float64 (n+1, n+1) array with
    ``marginals[h, c] = p(h -> c)`` (column 0 and the diagonal 0, each word's
    column sums to 1), and log Z as a Python float. d log Z / d scores[h, c]
    = marginals[h, c] / T. Inside-outside over Eisner's chart (on scaled
    weights, in log space where they leave their range).
    Raises ValueError if every tree uses a forbidden arc.
    """
    return _call(projective_marginals_c, scores, temperature, single_root,
                 "projective_marginals")


def nonprojective_marginals(scores, temperature=1.0, single_root=True):
    """Arc marginals and log partition function over all (non-projective) trees.

    Same arguments and results as ``projective_marginals``; computed with the
    matrix-tree theorem (single root: Koo et al. 2007), column-shifted
    weights and an LU inverse in C. Raises ValueError if every tree uses a
    forbidden arc, FloatingPointError if the distribution is too peaked for
    the determinant in double precision (very small temperature; see the
    module docstring).
    """
    return _call(nonprojective_marginals_c, scores, temperature, single_root,
                 "nonprojective_marginals")
